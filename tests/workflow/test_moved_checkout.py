"""A study inside its checkout (as `make run` leaves it), moved and copied elsewhere, has
nothing to do: no input or param of any rule holds the checkout's absolute path."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from snakerun import TINY, planned_jobs, snakemake

pytestmark = [pytest.mark.slow, pytest.mark.framework]

CHECKOUT = ("Snakefile", "workflow", "config", "envs", "profiles")


def test_moved_and_copied_checkout_has_nothing_to_do(workflow_bin, repo, tmp_path):
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    for name in CHECKOUT:
        source = repo / name
        if source.is_dir():
            shutil.copytree(source, checkout / name, symlinks=True)
        else:
            shutil.copy2(source, checkout / name)
    shutil.copy2(TINY, checkout / "config" / "tiny.yaml")

    def run(where, *args):
        return snakemake(
            workflow_bin, where, where, *args, configfile=where / "config" / "tiny.yaml"
        )

    first = run(checkout)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    moved = tmp_path / "elsewhere" / "deeper" / "moved"
    moved.parent.mkdir(parents=True)
    checkout.rename(moved)
    assert planned_jobs(run(moved, "-n")) == {}
    copied = tmp_path / "copied"
    subprocess.run(["cp", "-r", str(moved), str(copied)], check=True)  # new file times
    assert planned_jobs(run(copied, "-n")) == {}
