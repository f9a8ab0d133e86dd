"""The real pipeline, end to end, on the tiny config in a temporary directory."""

from __future__ import annotations

import json
import subprocess

import pandas as pd
import pytest
from snakerun import planned_jobs, snakemake

from dlperf.measurements.tables import TIMING_COLUMNS

pytestmark = [pytest.mark.slow, pytest.mark.framework]


def test_every_output_is_there_and_sound(finished_run, repo):
    results = finished_run / "results"
    timings = pd.read_csv(results / "timings.csv")
    assert list(timings.columns) == TIMING_COLUMNS
    assert len(timings) == 2 * 3 * 2  # procs x batch sizes x data sizes, one repetition
    assert set(timings["procs"]) == {1, 2}
    assert (timings["epoch_time_s"] > 0).all()
    assert (timings["iter_time_n"] == timings["iters_per_epoch"]).all()
    assert pd.read_parquet(results / "timings.parquet").shape == timings.shape
    assert pd.read_csv(results / "failures.csv").empty

    record = json.loads(
        next((results / "runs" / "pytorch" / "mlp").glob("n1_p2_*.json")).read_text()
    )
    assert record["status"] == "ok" and record["ranks"] == 2
    assert record["warmup_iters"] == 2 and len(record["warmup_times_s"]) == 2
    assert record["environment"]["framework_version"].startswith("2.13.0")
    assert record["schema_version"] == 1
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True)
    assert record["environment"]["git_commit"] == head.stdout.strip()  # the workflow's commit

    artifact = json.loads((results / "models" / "pytorch.json").read_text())
    generic = artifact["networks"]["mlp"]["models"]["generic"]
    assert generic["status"] == "ok" and generic["train_mape"] < 100

    summary = pd.read_csv(results / "validation" / "summary.csv")
    kfold = summary[(summary["protocol"] == "kfold") & (summary["model"] == "generic")]
    assert kfold["status"].tolist() == ["ok"]
    assert kfold["mape_lo"].iloc[0] <= kfold["mape"].iloc[0] <= kfold["mape_hi"].iloc[0]

    page = (results / "report" / "index.html").read_text()
    assert page.count("data:image/png;base64,") >= 2
    assert 'id="validation-table"' in page
    assert (results / "report" / "figures" / "pytorch" / "scaling_mlp.svg").exists()


def test_second_run_does_nothing(finished_run, workflow_bin, repo):
    proc = snakemake(workflow_bin, repo, finished_run, "--dry-run", timeout=300)
    assert planned_jobs(proc) == {}


def test_lint_and_format_are_clean(workflow_bin, repo):
    def run(*argv):
        return subprocess.run(argv, cwd=repo, capture_output=True, text=True, timeout=300)

    lint = run(str(workflow_bin / "snakemake"), "--lint")
    assert lint.returncode == 0 and "Lints for" not in lint.stdout + lint.stderr, (
        lint.stdout + lint.stderr
    )
    for check in (
        [str(workflow_bin / "snakefmt"), "--check", "."],
        [str(workflow_bin / "ruff"), "check", "src", "tests", "benchmarks"],
        [str(workflow_bin / "ruff"), "format", "--check", "src", "tests", "benchmarks"],
    ):
        proc = run(*check)
        assert proc.returncode == 0, proc.stdout + proc.stderr
