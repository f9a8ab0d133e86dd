"""Shared fixtures: the repository root, the workflow's interpreter, synthetic points."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from dlperf.bench.spec import RunConfig

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def workflow_bin() -> Path:
    """The directory holding this interpreter's `snakemake`, `dlperf` and `snakefmt`."""
    return Path(sys.executable).parent


def make_record(procs=1, batch=8, data=64, rep=0, iter_s=0.01, status="ok", network="mlp"):
    config = RunConfig("pytorch", network, "cpu", 1, procs, batch, data, rep, warmup_iters=2)
    record = {
        "schema_version": 1,
        "config": config.to_dict(),
        "status": status,
        "error": None if status == "ok" else "boom",
        "environment": {"hostname": "h", "framework_version": "2.13.0", "threads_per_worker": 1},
    }
    if status == "ok":
        iters = config.iters_per_epoch
        times = [iter_s * (1 + 0.01 * i) for i in range(iters)]
        record.update(
            warmup_iters=2,
            iter_times_s=times,
            iters_per_epoch=iters,
            epoch_time_s=sum(times),
            samples_per_s=iters * config.global_batch / sum(times),
            param_count=1000,
            ranks=procs,
        )
    return record


@pytest.fixture
def record_factory():
    """``make_record(procs=..., batch=..., ...)``: a run record as `dlperf bench` writes it."""
    return make_record


def pytest_collection_modifyitems(config, items):
    """The Slurm tests run last. They install Slurm and stop their cluster afterwards; from
    then on every Snakemake start waits about 10 s for `scontrol show config` (the Slurm
    executor plugin asks it when it is imported), which would slow every later workflow
    test. The sort is stable: the rest keep their order."""
    items.sort(key=lambda item: item.get_closest_marker("slurm") is not None)
