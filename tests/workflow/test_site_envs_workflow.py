"""The site's own framework builds: an existing interpreter runs the benchmarks (here the
interpreter of a built environment stands in for a module's python), and one that lacks the
framework stops the workflow before any benchmark, naming what is missing."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest
import yaml
from snakerun import snakemake

from dlperf.environments.requirements import build, default_root

pytestmark = [pytest.mark.slow, pytest.mark.framework]


@pytest.fixture(scope="module")
def torch_python(repo) -> str:
    env = build("pytorch", repo / "envs" / "pytorch.txt", default_root(), log=io.StringIO())
    return str(env / "bin" / "python")


def write_config(tmp_path, **settings) -> object:
    config = {
        "frameworks": ["pytorch"],
        "networks": ["bert_tiny"],
        "seq_len": 16,
        "precision": "bf16",
        "procs": [1, 2],
        "accumulation_steps": [1, 2],
        "batch_sizes": [4],
        "data_sizes": [32],
        "repeats": 1,
        "warmup_iters": 1,
        "timeout_s": 300,
        **settings,
    }
    path = tmp_path / "site.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_an_existing_interpreter_runs_the_sweep(workflow_bin, repo, tmp_path, torch_python):
    path = write_config(tmp_path, framework_envs={"pytorch": {"python": torch_python}})
    proc = snakemake(workflow_bin, repo, tmp_path, "results/timings.csv", configfile=path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    results = tmp_path / "results"
    env = json.loads((results / "envs" / "pytorch.json").read_text())
    assert env["kind"] == "python" and env["python"] == torch_python
    assert any(p.startswith("torch==") for p in env["packages"])
    runs = results / "runs" / "pytorch" / "bert_tiny"
    # Accumulation 1 keeps the record name of a sweep without it; 2 adds _a2.
    assert sorted(p.name for p in runs.glob("*.json")) == [
        "n1_p1_b4_d32_r0.json",
        "n1_p1_b4_d32_r0_a2.json",
        "n1_p2_b4_d32_r0.json",
        "n1_p2_b4_d32_r0_a2.json",
    ]
    timings = pd.read_csv(results / "timings.csv")
    assert sorted(timings["grad_accum_steps"]) == [1, 1, 2, 2]
    assert set(timings["precision"]) == {"bf16"} and set(timings["seq_len"]) == {16}
    record = json.loads((runs / "n1_p2_b4_d32_r0_a2.json").read_text())
    assert record["environment"]["framework_version"].startswith("2.")
    assert record["grad_accum_steps"] == 2 and len(record["iter_times_s"]) == 4


def test_an_interpreter_without_the_framework_stops_before_any_benchmark(
    workflow_bin, repo, tmp_path, torch_python
):
    path = write_config(
        tmp_path, frameworks=["mxnet"], framework_envs={"mxnet": {"python": torch_python}}
    )
    proc = snakemake(workflow_bin, repo, tmp_path, "results/timings.csv", configfile=path)
    assert proc.returncode != 0
    log = (tmp_path / "logs" / "envs" / "mxnet.log").read_text()
    assert f"the interpreter {torch_python} lacks what the mxnet benchmarks import" in log
    assert "No module named 'mxnet'" in log
    assert not (tmp_path / "results" / "runs").exists()
