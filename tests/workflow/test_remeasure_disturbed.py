"""`snakemake remeasure_disturbed` measures the disturbed runs again, and only them."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest
from snakerun import snakemake

pytestmark = [pytest.mark.slow, pytest.mark.framework]


def test_only_the_disturbed_runs_are_measured_again(finished_run, workflow_bin, repo, tmp_path):
    study = tmp_path / "study"
    shutil.copytree(finished_run, study, symlinks=True)
    results = study / "results"
    timings = pd.read_csv(results / "timings.csv")
    # As if another program had used half the CPU during one run's epoch.
    timings["foreign_cpu_fraction"] = [0.5] + [0.0] * (len(timings) - 1)
    timings.to_csv(results / "timings.csv", index=False)
    run = timings.iloc[0]
    name = f"n{run['nodes']}_p{run['procs']}_b{run['batch_size']}_d{run['data_size']}_r{run['rep']}"
    record = results / "runs" / run["framework"] / run["network"] / f"{name}.json"
    before = {p: p.read_bytes() for p in (results / "runs").rglob("*.json")}

    proc = snakemake(workflow_bin, repo, study, "remeasure_disturbed", timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    after = {p: p.read_bytes() for p in (results / "runs").rglob("*.json")}
    assert set(after) == set(before)
    assert [p for p in before if after[p] != before[p]] == [record]
    kept = list((results / "history" / "runs").rglob(f"{name}.*.json"))
    assert [p.read_bytes() for p in kept] == [before[record]]
