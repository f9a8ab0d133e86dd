"""Every framework, end to end through `dlperf bench`: 1 and 2 workers, the digits
pipeline, and the failures a run record must capture (impossible batch, missing GPU,
timeout with MXNet's scheduler and server to tear down)."""

from __future__ import annotations

import json
import os

import pytest

from dlperf.bench.count_params import network_sizes
from dlperf.bench.spec import FRAMEWORKS, param_count

pytestmark = [pytest.mark.framework, pytest.mark.slow]


@pytest.mark.parametrize("procs", [1, 2])
@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_bench_runs_and_records_every_iteration(
    framework_env, run_bench, tmp_path, framework, procs
):
    record = run_bench(framework_env(framework), framework, tmp_path / "run.json", procs=procs)
    assert record["status"] == "ok", f"{record.get('error')}\n{record['_stdout'][-6000:]}"
    assert record["ranks"] == procs
    iters = -(-64 // (8 * procs))
    assert record["iters_per_epoch"] == iters
    assert len(record["iter_times_s"]) == iters and all(t > 0 for t in record["iter_times_s"])
    assert len(record["data_wait_s"]) == iters
    assert record["warmup_iters"] == 2 and len(record["warmup_times_s"]) == 2
    assert record["epoch_time_s"] >= sum(record["iter_times_s"]) * 0.99
    assert record["param_count"] == param_count("lenet")
    env = record["environment"]
    assert env["framework"] == framework and env["framework_version"]
    assert env["threads"] >= 1 and env["threads_per_worker"] >= 1
    assert record["dist"]["world_size"] == procs
    if procs > 1:
        assert env["distributed_backend"]
    if framework == "tensorflow":
        assert record["graph_build_s"] > 0  # tf.function tracing, measured apart
    assert record["noise"]["foreign_cpu_s"] >= 0
    assert record["noise"]["cpu_window_rank0"]["process_cpu_s"] > 0
    # MXNet's parameter server works during the epoch; its CPU is the run's, not a neighbour's.
    services = record["noise"]["service_cpu_s"]
    assert services > 0 if framework == "mxnet" and procs > 1 else services == 0.0


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_srun_launcher_workers_find_their_peers_from_slurm(
    framework_env, run_bench, fake_srun_env, tmp_path, framework
):
    env_file = framework_env(framework)
    out = tmp_path / "run.json"
    record = run_bench(env_file, framework, out, env=fake_srun_env, procs=2, launcher="srun")
    assert record["status"] == "ok", f"{record.get('error')}\n{record['_stdout'][-6000:]}"
    assert record["launcher"] == "srun"
    assert record["dist"]["source"] == "slurm" and record["dist"]["world_size"] == 2
    assert record["ranks"] == 2


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_digits_go_through_the_framework_loader(framework_env, run_bench, tmp_path, framework):
    record = run_bench(
        framework_env(framework), framework, tmp_path / "run.json", procs=2, dataset="digits"
    )
    assert record["status"] == "ok", f"{record.get('error')}\n{record['_stdout'][-6000:]}"
    assert record["config"]["dataset"] == "digits"
    assert len(record["data_wait_s"]) == record["iters_per_epoch"]
    assert all(w > 0 for w in record["data_wait_s"])
    assert 0 < record["data_wait_fraction"] < 1


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_impossible_batch_is_recorded_as_out_of_memory(
    framework_env, run_bench, tmp_path, framework
):
    record = run_bench(
        framework_env(framework), framework, tmp_path / "run.json", procs=2, batch_size=10**9
    )
    assert record["status"] == "oom"
    assert "Unable to allocate" in record["error"]


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_cuda_request_without_a_gpu_fails_fast_and_says_why(
    framework_env, run_bench, tmp_path, framework
):
    record = run_bench(
        framework_env(framework), framework, tmp_path / "run.json", procs=2, device="cuda"
    )
    assert record["status"] == "failed"
    assert "no usable CUDA device" in record["error"]
    assert "set device: cpu" in record["error"]


def test_timeout_ends_workers_and_parameter_server(framework_env, run_bench, tmp_path):
    out = tmp_path / "run.json"
    record = run_bench(framework_env("mxnet"), "mxnet", out, procs=2, data_size=10**7, timeout=12)
    assert record["status"] == "timeout"
    assert "time limit of 12 s" in record["error"]
    assert not any(name.endswith(".tmp") for name in os.listdir(tmp_path))  # no half-written file
    # Every process of the run (workers, scheduler, server) names its work directory
    # on its command line: none may outlive the run.
    work_dir = str(tmp_path / f".{out.stem}.work")
    assert processes_mentioning(work_dir) == []


def processes_mentioning(text: str) -> list[str]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode()
        except OSError:  # ended while we looked
            continue
        if text in cmdline:
            found.append(f"{pid}: {cmdline}")
    return found


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_trainable_parameters_match_the_spec(framework_env, run_in_env, framework):
    argv = ["-m", "dlperf.bench.count_params", "--framework", framework]
    counts = json.loads(run_in_env(framework_env(framework), argv))
    assert counts == {f"{name}@{size}": param_count(name, size) for name, size in network_sizes()}
