"""Shared fixtures: the repository root, the workflow's interpreter, synthetic points, the
report's synthetic study."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from recordmaker import make_record

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def workflow_bin() -> Path:
    """The directory holding this interpreter's `snakemake`, `dlperf` and `snakefmt`."""
    return Path(sys.executable).parent


@pytest.fixture
def record_factory():
    """``make_record(procs=..., batch=..., ...)``: a run record as `dlperf bench` writes it."""
    return make_record


@pytest.fixture(scope="session")
def report_synthetic():
    """tests/report/synthetic.py, the synthetic study the report tests build (loaded by path:
    tests/report is not on the import path of tests elsewhere)."""
    spec = importlib.util.spec_from_file_location(
        "report_synthetic", REPO / "tests" / "report" / "synthetic.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pytest_collection_modifyitems(config, items):
    """The Slurm tests run last. They install Slurm and stop their cluster afterwards; from
    then on every Snakemake start waits about 10 s for `scontrol show config` (the Slurm
    executor plugin asks it when it is imported), which would slow every later workflow
    test. The sort is stable: the rest keep their order."""
    items.sort(key=lambda item: item.get_closest_marker("slurm") is not None)
