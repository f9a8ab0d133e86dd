"""The environment a run happened in, as far as the standard library can tell."""

from __future__ import annotations

import datetime as dt
import os
import platform
import socket
import subprocess
from pathlib import Path

import dlperf

SLURM_VARIABLES = (
    "SLURM_JOB_ID",
    "SLURM_JOB_NAME",
    "SLURM_JOB_NODELIST",
    "SLURM_JOB_NUM_NODES",
    "SLURM_NTASKS",
    "SLURM_CPUS_PER_TASK",
    "SLURM_JOB_PARTITION",
    "SLURM_JOB_GPUS",
    "SLURM_STEP_GPUS",
    "CUDA_VISIBLE_DEVICES",
)


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def available_cores() -> int:
    """Cores this process may run on (Slurm's cpus-per-task, taskset), not the machine's."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def git_commit(directory: str | os.PathLike = ".") -> str | None:
    if os.environ.get("DLPERF_GIT_COMMIT"):
        return os.environ["DLPERF_GIT_COMMIT"]
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=directory,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def host_environment() -> dict:
    """Facts about the host and the job, read by the driver before the workers start."""
    return {
        "hostname": socket.gethostname(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "cores_available": available_cores(),
        "load_avg_1m": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "slurm": {k: os.environ[k] for k in SLURM_VARIABLES if k in os.environ},
        "slurm_job_id": os.environ.get("SLURM_JOB_ID"),
        "git_commit": git_commit(),
        "dlperf_version": dlperf.__version__,
        "start_time": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    }
