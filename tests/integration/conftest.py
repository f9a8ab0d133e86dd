"""Framework environments for integration tests, and a helper that runs `dlperf bench`.

Environments are built (or reused from the shared cache, ~/.cache/dlperf/envs or
$DLPERF_ENV_ROOT) once per session; their descriptions go into a temporary directory.
"""

from __future__ import annotations

import json
import os
import random
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from dlperf.bench.ranks import slurm_port
from dlperf.environments.requirements import build_and_describe, default_root
from dlperf.io import read_json

REPO = Path(__file__).resolve().parents[2]


class FrameworkEnvs:
    """Builds each framework's environment on first use; returns its description file."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.built: dict[str, Path] = {}

    def __call__(self, framework: str) -> Path:
        if framework not in self.built:
            out = self.directory / f"{framework}.json"
            with open(self.directory / f"{framework}.log", "w") as log:
                build_and_describe(
                    framework, REPO / "envs" / f"{framework}.txt", default_root(), out, log=log
                )
            self.built[framework] = out
        return self.built[framework]


@pytest.fixture(scope="session")
def framework_env(tmp_path_factory) -> FrameworkEnvs:
    return FrameworkEnvs(tmp_path_factory.mktemp("envs"))


def env_python(env_file: Path) -> str:
    return read_json(env_file)["python"]


def _run_bench(
    env_file: Path, framework: str, out: Path, env: dict | None = None, **options
) -> dict:
    """Run `dlperf bench` as the workflow does (options become --flags); return the run record."""
    settings = {"network": "lenet", "batch_size": 8, "data_size": 64, "warmup_iters": 2}
    settings["timeout"] = 120
    settings.update(options)
    argv = [sys.executable, "-m", "dlperf", "bench", "--env", str(env_file)]
    argv += ["--framework", framework, "--out", str(out)]
    for key, value in settings.items():
        argv += [f"--{key.replace('_', '-')}", str(value)]
    limit = float(settings["timeout"]) + 120
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=limit)
    assert proc.returncode == 0, (
        f"dlperf bench exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    )
    record = json.loads(out.read_text())
    record["_stdout"] = proc.stdout
    return record


def _run_in_env(env_file: Path, code_args: list[str]) -> str:
    """Run a module of ours with a framework environment's interpreter; return its stdout."""
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"), TF_CPP_MIN_LOG_LEVEL="2")
    proc = subprocess.run(
        [env_python(env_file), *code_args], capture_output=True, text=True, env=env, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc.stdout


@pytest.fixture(scope="session")
def run_bench():
    """``run_bench(env_file, framework, out, **options) -> run record``."""
    return _run_bench


@pytest.fixture(scope="session")
def run_in_env():
    """``run_in_env(env_file, argv) -> stdout``, with this checkout's ``dlperf`` importable."""
    return _run_in_env


@pytest.fixture
def fake_srun_env(tmp_path) -> dict:
    """An environment whose ``srun`` is tests/integration/fake_srun.py (one host, no Slurm)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "srun").symlink_to(Path(__file__).with_name("fake_srun.py"))
    return dict(
        os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", SLURM_JOB_ID=job_id_with_free_ports()
    )


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("", port))
        except OSError:
            return False
    return True


def job_id_with_free_ports(ports: int = 8) -> str:
    """A Slurm job id whose ports (the workers derive them from it: ranks.slurm_port and one per
    task above) are free now. Each test gets ports of its own, as each Slurm job would, and none
    an earlier test's socket still holds (a fixed id once gave the three frameworks' tests the
    same ports, and a TensorFlow run hung until its time limit)."""
    draw = random.Random()
    for _ in range(1000):
        job_id = str(draw.randrange(1000, 1_000_000))
        port = slurm_port({"SLURM_JOB_ID": job_id})
        if all(_bindable(port + offset) for offset in range(ports)):
            return job_id
    raise RuntimeError("no Slurm job id whose derived ports are free: is the machine out of ports?")
