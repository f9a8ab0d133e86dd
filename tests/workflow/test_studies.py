"""Every study in its own directory: a second study leaves the first untouched and archives only
its own records; outputs a changed configuration no longer produces go to the study's history
and out of its archive."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tarfile

import pytest
import yaml
from snakerun import TINY, snakemake

pytestmark = [pytest.mark.slow, pytest.mark.framework]


def digests(directory):
    return {
        p.relative_to(directory): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.rglob("*"))
        if p.is_file() and ".snakemake" not in p.parts
    }


def sweep_config(tmp_path, name: str, **changes):
    config = {**yaml.safe_load(TINY.read_text()), **changes}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def archived_records(study):
    archive = study / "results" / "dlperf-archive.tar.gz"
    with tarfile.open(archive) as tar:
        return sorted(n for n in tar.getnames() if n.startswith("results/runs/"))


def verify(study):
    archive = study / "results" / "dlperf-archive.tar.gz"
    command = [sys.executable, "-m", "dlperf", "verify-archive", str(archive)]
    return subprocess.run(command, capture_output=True, text=True, timeout=600)


def test_a_second_study_in_its_own_directory(finished_run, workflow_bin, repo, tmp_path):
    before = digests(finished_run)
    second = tmp_path / "second study"
    second.mkdir()
    config = sweep_config(tmp_path, "second", procs=[1], data_sizes=[128])
    proc = snakemake(workflow_bin, repo, second, "archive", configfile=config, timeout=1500)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert archived_records(second) == [
        f"results/runs/pytorch/mlp/n1_p1_b{b}_d128_r0.json" for b in (16, 32, 8)
    ]
    assert verify(second).returncode == 0
    assert digests(finished_run) == before


def test_outputs_a_changed_config_drops_are_retired(finished_run, workflow_bin, repo, tmp_path):
    study = tmp_path / "study"
    shutil.copytree(finished_run, study, symlinks=True)
    dropped = sorted((study / "results" / "runs").rglob("*_b32_*.json"))
    assert len(dropped) == 4
    config = sweep_config(tmp_path, "fewer", batch_sizes=[8, 16])
    proc = snakemake(workflow_bin, repo, study, "archive", configfile=config, timeout=1500)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "4 output(s) the configuration no longer produces" in proc.stdout + proc.stderr
    assert not any(p.exists() for p in dropped)
    retired = sorted((study / "results" / "history" / "retired").rglob("*_b32_*.json"))
    assert [p.name for p in retired] == [p.name for p in dropped]
    records = archived_records(study)
    assert len(records) == 8 and not any("_b32_" in n for n in records)
    assert verify(study).returncode == 0


def test_records_asked_for_again_are_restored_not_measured(
    finished_run, workflow_bin, repo, tmp_path
):
    study = tmp_path / "study"
    shutil.copytree(finished_run, study, symlinks=True)
    dropped = sorted((study / "results" / "runs").rglob("*_b32_*.json"))
    before = {p: p.read_bytes() for p in dropped}
    fewer = sweep_config(tmp_path, "fewer", batch_sizes=[8, 16])
    dry = snakemake(workflow_bin, repo, study, "-n", configfile=fewer)
    assert "a run would retire 4 output(s)" in dry.stdout + dry.stderr
    assert all(p.exists() for p in dropped)  # a dry run moves nothing
    proc = snakemake(workflow_bin, repo, study, configfile=fewer, timeout=1500)
    assert proc.returncode == 0 and not any(p.exists() for p in dropped), proc.stderr[-3000:]
    dry = snakemake(workflow_bin, repo, study, "-n", configfile=TINY)
    assert "a run would restore 4 retired run record(s)" in dry.stdout + dry.stderr
    assert "rule benchmark" not in dry.stdout + dry.stderr, dry.stdout[-3000:]
    proc = snakemake(workflow_bin, repo, study, configfile=TINY, timeout=1500)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "4 retired run record(s) the configuration asks for again restored" in proc.stdout
    assert "rule benchmark" not in proc.stdout + proc.stderr
    assert {p: p.read_bytes() for p in dropped} == before
