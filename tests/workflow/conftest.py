"""The tiny config run to the end once per session, shared by the workflow tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from snakerun import snakemake


@pytest.fixture(scope="session")
def finished_run(workflow_bin, repo, tmp_path_factory) -> Path:
    """A working directory in which the tiny config has run to the end."""
    workdir = tmp_path_factory.mktemp("pipeline")
    proc = snakemake(workflow_bin, repo, workdir)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    return workdir
