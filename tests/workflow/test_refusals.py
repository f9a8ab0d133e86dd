"""Sweeps that cannot run are refused while the workflow loads: no job is planned, and the
last lines name the key, the value and the fix."""

from __future__ import annotations

import os
import subprocess

import yaml
from snakerun import snakemake

from dlperf.bench.envinfo import available_cores


def refused(workflow_bin, repo, tmp_path, config: dict, env: dict | None = None) -> str:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({"frameworks": ["pytorch"], "networks": ["mlp"], **config}))
    proc = snakemake(workflow_bin, repo, tmp_path, "-n", configfile=path, timeout=300, env=env)
    text = proc.stdout + proc.stderr
    assert proc.returncode != 0, text[-3000:]
    assert "Job stats" not in text and not (tmp_path / "results").exists()
    return text


def test_workers_beyond_the_machines_cores_are_refused(workflow_bin, repo, tmp_path):
    procs = available_cores() + 1
    text = refused(
        workflow_bin, repo, tmp_path, {"procs": [1, procs], "batch_sizes": [8], "data_sizes": [64]}
    )
    assert f"procs: {procs} workers on a local run" in text
    assert f"give procs up to {available_cores()}" in text


def test_cuda_without_a_visible_gpu_is_refused(workflow_bin, repo, tmp_path):
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "-1"}
    config = {"device": "cuda", "procs": [1], "batch_sizes": [8], "data_sizes": [64]}
    text = refused(workflow_bin, repo, tmp_path, config, env=env)
    assert "device: cuda, but this machine has no visible GPU" in text


def test_sizes_beyond_the_command_lines_limits_and_an_unreadable_deadline_are_refused(
    workflow_bin, repo, tmp_path
):
    config = {
        "procs": [1],
        "batch_sizes": [8],
        "data_sizes": [10**15],
        "report": {"target": {"data_size": 100, "epochs": 1, "deadline": "2 hours"}},
    }
    text = refused(workflow_bin, repo, tmp_path, config)
    assert "data_sizes: 1000000000000000 is beyond the command line's limit" in text
    assert "report.target.deadline: cannot read the deadline '2 hours'" in text


def test_archiving_where_no_study_is_refuses_instead_of_running_the_default_sweep(
    workflow_bin, repo, tmp_path
):
    """A mistyped `snakemake --directory STUDY archive` planned the whole default sweep."""
    missing = tmp_path / "no-such-study"
    argv = [str(workflow_bin / "snakemake"), "--snakefile", str(repo / "Snakefile")]
    argv += ["--directory", str(missing), "--cores", "1", "-n", "archive"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    text = proc.stdout + proc.stderr
    assert proc.returncode != 0, text[-3000:]
    assert "Job stats" not in text
    assert "no study here (results/config.json is missing): `archive`" in text
