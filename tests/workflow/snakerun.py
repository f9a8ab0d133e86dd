"""Run the real workflow in temporary directories, always bounded by a kill timeout."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

TINY = Path(__file__).with_name("tiny.yaml")


def snakemake(
    workflow_bin: Path,
    repo: Path,
    workdir: Path,
    *args: str,
    configfile: Path = TINY,
    timeout: float = 1500,
    env: dict | None = None,
) -> subprocess.CompletedProcess:
    """Snakemake on the project's Snakefile in ``workdir`` (the default profile applies)."""
    argv = [
        str(workflow_bin / "snakemake"),
        "--snakefile",
        str(repo / "Snakefile"),
        "--directory",
        str(workdir),
        "--configfile",
        str(configfile),
        "--cores",
        "2",
        *args,
    ]
    return subprocess.run(
        argv, capture_output=True, text=True, timeout=timeout, cwd=workdir, env=env
    )


def external_only(timings: Path, **settings) -> dict:
    """A config that models the external ``timings`` alone (no benchmark), with ``settings``."""
    return {
        "frameworks": [],
        "batch_sizes": [1],
        "data_sizes": [1],
        "external_timings": str(timings),
        **settings,
    }


def planned_jobs(proc: subprocess.CompletedProcess) -> dict[str, int]:
    """Rule -> job count from a dry run's "Job stats" table (empty when nothing is to be done)."""
    text = proc.stdout + proc.stderr
    assert proc.returncode == 0, text[-4000:]
    if "Nothing to be done" in text:
        return {}
    table = text.split("Job stats:", 1)[1]
    counts = {}
    for line in table.splitlines()[3:]:
        match = re.fullmatch(r"(\w+)\s+(\d+)", line.strip())
        if not match:
            break
        counts[match.group(1)] = int(match.group(2))
    counts.pop("total", None)
    return counts
