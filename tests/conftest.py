"""Shared fixtures: the repository root, the workflow's interpreter, synthetic points."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def workflow_bin() -> Path:
    """The directory holding this interpreter's `snakemake`, `dlperf` and `snakefmt`."""
    return Path(sys.executable).parent
