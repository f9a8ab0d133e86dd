"""Bring-your-own timings through the real workflow: no benchmark; the same fit, validation
and report."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest
import yaml
from snakerun import external_only, planned_jobs, snakemake

pytestmark = pytest.mark.slow


def test_external_timings_alone(workflow_bin, repo, tmp_path):
    config = {
        "frameworks": [],
        "batch_sizes": [1],
        "data_sizes": [1],
        "external_timings": str(repo / "examples" / "timings-example.csv"),
        "models": {"generic": {"popsize": 10, "maxiter": 100}, "ernest": {}},
        "validation": {"protocols": {"kfold": {"k": 3}}, "bootstrap": 100},
    }
    path = tmp_path / "external.yaml"
    path.write_text(yaml.safe_dump(config))
    plan = planned_jobs(snakemake(workflow_bin, repo, tmp_path, "-n", configfile=path, timeout=300))
    assert "bench" not in plan and "aggregate" not in plan and plan["fit"] == 1
    proc = snakemake(workflow_bin, repo, tmp_path, configfile=path, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    artifact = json.loads((tmp_path / "results" / "models" / "pytorch.json").read_text())
    assert artifact["networks"]["lenet"]["models"]["generic"]["status"] == "ok"
    summary = pd.read_csv(tmp_path / "results" / "validation" / "summary.csv")
    assert set(summary["model"]) == {"generic", "ernest"}
    assert (tmp_path / "results" / "report" / "index.html").exists()
    assert not (tmp_path / "results" / "runs").exists()

    # The archive carries the external file, so the study reproduces from the archive alone.
    proc = snakemake(workflow_bin, repo, tmp_path, "archive", configfile=path, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    verify = subprocess.run(
        [
            sys.executable,
            "-m",
            "dlperf",
            "verify-archive",
            str(tmp_path / "results" / "dlperf-archive.tar.gz"),
            "--rerun",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert "reproduced: results/models/pytorch.json" in verify.stdout


def test_nothing_to_do_is_a_clear_error(workflow_bin, repo, tmp_path):
    path = tmp_path / "empty.yaml"
    path.write_text(yaml.safe_dump({"frameworks": [], "batch_sizes": [8], "data_sizes": [64]}))
    proc = snakemake(workflow_bin, repo, tmp_path, "-n", configfile=path, timeout=300)
    assert proc.returncode != 0
    assert "nothing to benchmark or model" in proc.stdout + proc.stderr


def test_external_timings_path_with_a_space_fits_and_validates(workflow_bin, repo, tmp_path):
    # The path reached the shell unquoted: `dlperf fit --timings my timings.csv` read "my".
    timings = tmp_path / "my data" / "timings example.csv"
    timings.parent.mkdir()
    timings.write_bytes((repo / "examples" / "timings-example.csv").read_bytes())
    config = external_only(
        timings,
        models={"ernest": {}},
        validation={"protocols": {"kfold": {"k": 3}}, "bootstrap": 50},
    )
    path = tmp_path / "external.yaml"
    path.write_text(yaml.safe_dump(config))
    targets = ("results/models/pytorch.json", "results/validation/pytorch.csv")
    proc = snakemake(workflow_bin, repo, tmp_path, *targets, configfile=path, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    artifact = json.loads((tmp_path / "results" / "models" / "pytorch.json").read_text())
    assert artifact["networks"]["lenet"]["models"]["ernest"]["status"] == "ok"
