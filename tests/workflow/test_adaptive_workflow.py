"""Adaptive mode end to end: rounds as checkpoints, a budget that holds, no run measured twice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from snakerun import planned_jobs, snakemake

pytestmark = [pytest.mark.slow, pytest.mark.framework]

ADAPTIVE = Path(__file__).with_name("adaptive_tiny.yaml")


def records(workdir):
    return {p.name: p.stat().st_mtime_ns for p in (workdir / "results/runs").rglob("*.json")}


def test_adaptive_rounds_keep_the_budget_and_never_remeasure(workflow_bin, repo, tmp_path):
    workdir = tmp_path / "study"
    workdir.mkdir()
    proc = snakemake(workflow_bin, repo, workdir, configfile=ADAPTIVE)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    config = yaml.safe_load(ADAPTIVE.read_text())
    budget = config["adaptive"]["budget_runs"]
    rounds = sorted((workdir / "results/adaptive").glob("round*.json"))
    chosen = [json.loads(p.read_text()) for p in rounds]
    assert chosen[0]["chosen"] and all(c["reason"] for r in chosen for c in r["chosen"])
    first = records(workdir)
    assert len(first) == sum(len(r["chosen"]) for r in chosen) <= budget
    assert len(first) < 12  # fewer runs than the grid's
    assert chosen[-1]["stop"] or len(rounds) == config["adaptive"]["max_rounds"]
    timings = (workdir / "results/timings.csv").read_text().splitlines()
    assert len(timings) - 1 == len(first)

    assert planned_jobs(snakemake(workflow_bin, repo, workdir, "-n", configfile=ADAPTIVE)) == {}

    config["adaptive"]["budget_runs"] = budget + 2
    raised = tmp_path / "raised.yaml"
    raised.write_text(yaml.safe_dump(config))
    proc = snakemake(workflow_bin, repo, workdir, configfile=raised)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    second = records(workdir)
    new = set(second) - set(first)
    assert 0 < len(new) <= 2
    assert {name: second[name] for name in first} == first  # nothing measured again
    assert (proc.stdout + proc.stderr).count("rule bench:") == len(new)
