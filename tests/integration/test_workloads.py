"""The GPU users' workloads on this CPU, end to end through `dlperf bench` in every framework:
224-pixel ResNet-18 and bert_tiny, fp32 and bf16, 1 and 2 workers, accumulation 1 and 4
(each network once in each half of the design), and the refusal of a precision a framework
cannot run."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest

from dlperf.bench.spec import FRAMEWORKS, flops_per_sample, param_count
from dlperf.io import read_json

pytestmark = [pytest.mark.framework, pytest.mark.slow]

# Tiny data: a 224-pixel ResNet-18 step takes about a second on 2 cores.
NETWORKS = {
    "resnet18": {"image_size": 224, "batch_size": 2, "data_size": 16},
    "bert_tiny": {"seq_len": 32, "batch_size": 4, "data_size": 64},
}
DESIGN = [  # (precision, procs, accumulation)
    ("fp32", 1, 1),
    ("bf16", 2, 4),
]


@pytest.mark.parametrize(("precision", "procs", "accumulation"), DESIGN)
@pytest.mark.parametrize("network", sorted(NETWORKS))
@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_workload_runs_with_its_precision_and_accumulation(
    framework_env, run_bench, tmp_path, framework, network, precision, procs, accumulation
):
    settings = NETWORKS[network]
    record = run_bench(
        framework_env(framework),
        framework,
        tmp_path / "run.json",
        network=network,
        procs=procs,
        precision=precision,
        accumulation_steps=accumulation,
        warmup_iters=1,
        timeout=300,
        **settings,
    )
    assert record["status"] == "ok", f"{record.get('error')}\n{record['_stdout'][-6000:]}"
    config = record["config"]
    size = config["image_size"]
    assert record["param_count"] == param_count(network, size)
    assert record["network_features"]["flops_per_sample"] == flops_per_sample(
        network, size, config["seq_len"]
    )
    assert record["precision"] == config["precision"] == precision
    assert record["grad_accum_steps"] == config["grad_accum_steps"] == accumulation
    # Every micro-batch timed, the epoch in whole optimizer steps, the warm-up too.
    micro_batches = -(-settings["data_size"] // (settings["batch_size"] * procs))
    iters = -(-micro_batches // accumulation) * accumulation
    assert record["iters_per_epoch"] == len(record["iter_times_s"]) == iters
    assert record["warmup_iters"] == accumulation == len(record["warmup_times_s"])
    mechanism = record["environment"]["precision_mechanism"]
    assert ("16" in mechanism) == (precision == "bf16")


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_fp16_on_the_cpu_is_refused_before_anything_runs(framework_env, tmp_path, framework):
    argv = [sys.executable, "-m", "dlperf", "bench", "--env", str(framework_env(framework))]
    argv += ["--framework", framework, "--network", "bert_tiny", "--batch-size", "2"]
    argv += ["--data-size", "4", "--precision", "amp_fp16", "--out", str(tmp_path / "r.json")]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert f"{framework} cannot train in amp_fp16 on cpu" in proc.stderr
    assert not (tmp_path / "r.json").exists()


@pytest.mark.parametrize("accumulation", [1, 4])
def test_pytorch_exchanges_gradients_once_per_optimizer_step(framework_env, repo, accumulation):
    python = read_json(framework_env("pytorch"))["python"]
    probe = repo / "tests" / "integration" / "torch_exchange_probe.py"
    port = str(free_port())
    env = dict(os.environ, PYTHONPATH=str(repo / "src"))
    ranks = [
        subprocess.Popen(
            [python, str(probe), str(rank), port, str(accumulation)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for rank in (0, 1)
    ]
    outputs = [rank.communicate(timeout=300) for rank in ranks]
    assert all(rank.returncode == 0 for rank in ranks), [err[-3000:] for _, err in outputs]
    results = [json.loads(out.strip().splitlines()[-1]) for out, _ in outputs]
    for result in results:
        # 8 micro-batches: 8 optimizer steps, or 2 of 4 micro-batches each (the 4th and 8th).
        assert result["exchanged"] == list(range(accumulation - 1, 8, accumulation))
    assert results[0]["checksum"] == results[1]["checksum"]  # the workers stay in step


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
