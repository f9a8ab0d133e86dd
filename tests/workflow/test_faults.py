"""Faults: a killed workflow loses nothing it finished; a hung benchmark is ended and recorded."""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest
from snakerun import TINY, snakemake

pytestmark = [pytest.mark.slow, pytest.mark.framework]

TABLES = ("timings.csv", "timings.parquet", "failures.csv")


def run_records(workdir):
    """The finished run records (hidden work directories of running jobs left out)."""
    runs = workdir / "results" / "runs"
    return {
        p: p.read_bytes()
        for p in sorted(runs.rglob("*.json"))
        if not any(part.startswith(".") for part in p.relative_to(runs).parts)
    }


def incomplete_outputs(workdir):
    """Outputs Snakemake marks incomplete (base64 names, in chunks, under .snakemake/incomplete)."""
    root = workdir / ".snakemake" / "incomplete"
    paths = set()
    for marker in root.rglob("*") if root.exists() else []:
        if marker.is_file():
            encoded = "".join(part.removeprefix("@") for part in marker.relative_to(root).parts)
            paths.add((workdir / base64.urlsafe_b64decode(encoded).decode()).resolve())
    return paths


def test_killed_run_keeps_finished_records_and_resumes(workflow_bin, repo, tmp_path):
    argv = [
        str(workflow_bin / "snakemake"),
        "--snakefile",
        str(repo / "Snakefile"),
        "--directory",
        str(tmp_path),
        "--configfile",
        str(TINY),
        "--cores",
        "2",
    ]
    with open(tmp_path / "first.log", "w") as log:
        first = subprocess.Popen(
            argv, cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        deadline = time.monotonic() + 900
        while (
            len(run_records(tmp_path)) < 3 and first.poll() is None and time.monotonic() < deadline
        ):
            time.sleep(0.5)
        assert first.poll() is None, "the workflow ended before it could be killed"
        os.killpg(first.pid, signal.SIGKILL)  # the worst case: no chance to clean up
        first.wait(timeout=60)
    before = run_records(tmp_path)
    assert len(before) >= 3
    for data in before.values():
        assert json.loads(data)["status"] in {
            "ok",
            "failed",
            "timeout",
            "oom",
        }  # whole, never truncated
    # A job whose record was written but which Snakemake had not yet seen finish is still marked
    # incomplete, and is measured again: only the jobs Snakemake had finished must stay as they are.
    in_flight = incomplete_outputs(tmp_path)
    finished = {path: data for path, data in before.items() if path.resolve() not in in_flight}
    assert finished

    # A hard kill leaves Snakemake's lock behind; --unlock is the documented first step.
    unlock = snakemake(workflow_bin, repo, tmp_path, "--unlock", timeout=300)
    assert unlock.returncode == 0, unlock.stderr[-2000:]
    proc = snakemake(workflow_bin, repo, tmp_path)  # profiles/default sets rerun-incomplete
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    after = run_records(tmp_path)
    assert len(after) == 12
    for path, data in finished.items():
        assert after[path] == data, f"{path.name} was measured again although it had finished"


def test_hung_benchmark_is_ended_and_recorded(finished_run, tmp_path):
    out = tmp_path / "hung.json"
    argv = [
        sys.executable,
        "-m",
        "dlperf",
        "bench",
        "--env",
        str(finished_run / "results/envs/pytorch.json"),
        "--framework",
        "pytorch",
        "--network",
        "mlp",
        "--batch-size",
        "8",
        "--data-size",
        str(10**8),
        "--timeout",
        "8",
        "--out",
        str(out),
    ]
    started = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert time.monotonic() - started < 60
    record = json.loads(out.read_text())
    assert record["status"] == "timeout"
    assert "time limit of 8 s" in record["error"]
    assert not list(tmp_path.glob(".hung*"))  # the work directory is cleaned up


def test_failed_aggregate_keeps_the_previous_tables(finished_run, workflow_bin, repo, tmp_path):
    study = tmp_path / "study"
    shutil.copytree(finished_run, study, symlinks=True)
    tables = {name: (study / "results" / name).read_bytes() for name in TABLES}
    record = sorted((study / "results" / "runs").rglob("*.json"))[0]
    record.write_text(record.read_text()[:40])  # a damaged record: aggregate refuses it
    proc = snakemake(workflow_bin, repo, study, "results/timings.csv")
    assert proc.returncode != 0
    assert "truncated" in (study / "logs" / "aggregate.log").read_text()
    # The cause is among the last lines the user sees, not above the job's kilobytes of inputs.
    last = "\n".join(proc.stderr.strip().splitlines()[-8:])
    assert "aggregate (logs/aggregate.log): dlperf aggregate: error: run record" in last, last
    assert {name: (study / "results" / name).read_bytes() for name in TABLES} == tables
