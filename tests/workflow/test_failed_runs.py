"""A configuration that cannot run is recorded as failed, and the rest of the workflow completes."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
import yaml
from snakerun import snakemake

pytestmark = [pytest.mark.slow, pytest.mark.framework]

IMPOSSIBLE_BATCH = 10**9  # a billion 3x32x32 images per step: no machine holds that


def test_impossible_batch_is_a_failure_not_a_crash(workflow_bin, repo, tmp_path):
    config = {
        "frameworks": ["pytorch"],
        "networks": ["mlp"],
        "procs": [1, 2],
        "batch_sizes": [8, 16, 32, IMPOSSIBLE_BATCH],
        "data_sizes": [64],
        "repeats": 1,
        "warmup_iters": 1,
        "timeout_s": 300,
        "models": {"generic": {"popsize": 8, "maxiter": 60}, "ernest": {}},
        "validation": {"protocols": {"kfold": {"k": 3}}, "bootstrap": 50},
        # A test machine is shared: keep going whatever share of the runs was disturbed.
        "preflight": {"max_disturbed_fraction": 1.0},
    }
    path = tmp_path / "failing.yaml"
    path.write_text(yaml.safe_dump(config))
    proc = snakemake(workflow_bin, repo, tmp_path, configfile=path, timeout=1200)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]

    results = tmp_path / "results"
    failures = pd.read_csv(results / "failures.csv")
    assert sorted(failures["batch_size"]) == [IMPOSSIBLE_BATCH, IMPOSSIBLE_BATCH]
    assert set(failures["status"]) <= {"oom", "failed"}
    assert failures["error"].str.len().min() > 10
    timings = pd.read_csv(results / "timings.csv")
    assert len(timings) == 6 and IMPOSSIBLE_BATCH not in set(timings["batch_size"])
    record = json.loads(
        next((results / "runs").rglob(f"n1_p1_b{IMPOSSIBLE_BATCH}_*.json")).read_text()
    )
    assert record["status"] in {"oom", "failed"} and record["error"]
    page = (results / "report" / "index.html").read_text()
    assert str(IMPOSSIBLE_BATCH) in page  # the failures table names the configuration


def test_a_sweep_whose_every_run_fails_still_gets_its_report(workflow_bin, repo, tmp_path):
    """One run, of a batch no machine holds: it fails; the report and `--report` say why, and
    the workflow's last line names the cause (not Snakemake's file-system-latency hint)."""
    config = yaml.safe_load((repo / "tests" / "workflow" / "tiny.yaml").read_text())
    config.update(procs=[1], batch_sizes=[IMPOSSIBLE_BATCH], data_sizes=[64])
    path = tmp_path / "impossible.yaml"
    path.write_text(yaml.safe_dump(config))
    proc = snakemake(workflow_bin, repo, tmp_path, configfile=path, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "filesystem latency" not in proc.stderr
    last = [line for line in proc.stderr.splitlines() if line.startswith("dlperf: ")][-1]
    assert re.match(r"dlperf: all 1 benchmark run\(s\) failed, 1 with (oom|failed): ", last)
    page = (tmp_path / "results" / "report" / "index.html").read_text()
    assert "The one benchmark run failed" in page
    archive = tmp_path / "report.zip"
    proc = snakemake(workflow_bin, repo, tmp_path, "--report", str(archive), configfile=path)
    assert proc.returncode == 0 and archive.is_file(), proc.stderr[-3000:]
