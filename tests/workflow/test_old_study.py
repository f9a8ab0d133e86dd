"""A study made by older code stays valid: made by an older commit with today's benchmark code,
it plans no benchmark on today's code, and today's code verifies its archive.

Everything that changed since that commit (the packages, the rules, the analysis) is what this
guards: a change outside the benchmark's code must never make a user re-measure a study."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from snakerun import planned_jobs, snakemake

pytestmark = [pytest.mark.slow, pytest.mark.framework]


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


#: A commit whose benchmark code is today's (the first after its last change whose `dlperf` runs).
#: A change to the benchmark's code re-measures every study: when one is meant, move this to a
#: commit with the new code and say so in the README's Changes.
BENCHMARK_COMMIT = "cbd7f63058ebf8676adc29387648a3092f3b1a57"

#: What updating a checkout replaces: the workflow (today's package is the installed one).
CHECKOUT = ("Snakefile", "workflow", "config", "envs", "profiles")


@pytest.fixture(scope="module")
def old_code(repo, tmp_path_factory) -> tuple[Path, dict, str]:
    """The repository at BENCHMARK_COMMIT, and an environment that runs its package."""
    if not (repo / ".git").exists() or _git(repo, "rev-parse", "--is-shallow-repository") == "true":
        pytest.skip("needs the repository's history (a full git clone)")
    commit = BENCHMARK_COMMIT
    checkout = tmp_path_factory.mktemp("old-code")
    archive = checkout / "code.tar"
    _git(repo, "archive", "--format=tar", f"--output={archive}", commit)
    with tarfile.open(archive) as tar:
        tar.extractall(checkout, filter="data")
    archive.unlink()
    # The old code's package first on the path: the jobs' `dlperf` runs it, not today's.
    env = {**os.environ, "PYTHONPATH": str(checkout / "src"), "DLPERF_GIT_COMMIT": commit}
    return checkout, env, commit


def _old_snakemake(workflow_bin, old_code, study, *args, timeout=1500):
    checkout, env, _ = old_code
    tiny = checkout / "tests" / "workflow" / "tiny.yaml"
    proc = snakemake(
        workflow_bin, checkout, study, *args, configfile=tiny, env=env, timeout=timeout
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]


@pytest.fixture(scope="module")
def old_study(workflow_bin, old_code) -> Path:
    """The tiny config run to the end, and archived, by the code of BENCHMARK_COMMIT in its own
    checkout (as `make run` leaves a study)."""
    checkout = old_code[0]
    _old_snakemake(workflow_bin, old_code, checkout)
    _old_snakemake(workflow_bin, old_code, checkout, "archive", timeout=900)
    return checkout


def test_an_old_archive_verifies_on_todays_code(old_study):
    """An archive the old code made is read and checked by today's: its format still holds."""
    archive = old_study / "results" / "dlperf-archive.tar.gz"
    verify = subprocess.run(
        [sys.executable, "-m", "dlperf", "verify-archive", str(archive)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert "NOT intact" not in verify.stdout


def test_an_old_study_plans_no_benchmark_after_an_update(old_study, workflow_bin, repo):
    """The checkout updated to today's workflow (as `git pull` does), the study measures nothing
    again; the analysis stages may re-run."""
    for name in CHECKOUT:
        old, today = old_study / name, repo / name
        if today.is_dir():
            shutil.rmtree(old)
            shutil.copytree(today, old, symlinks=True)
        else:
            shutil.copy2(today, old)
    tiny = old_study / "tests" / "workflow" / "tiny.yaml"
    jobs = planned_jobs(
        snakemake(workflow_bin, old_study, old_study, "-n", configfile=tiny, timeout=300)
    )
    assert "bench" not in jobs, (
        f"today's code re-measures a study made by {BENCHMARK_COMMIT[:9]}: {jobs}; if the "
        "benchmark's change is meant, move BENCHMARK_COMMIT and say so in the README's Changes"
    )
