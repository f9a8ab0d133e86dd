"""Framework environments: one isolated virtual environment per framework.

The three frameworks need incompatible NumPy versions, so each gets its own
venv, built from ``envs/<framework>.txt``. A venv lives under a directory named
after the SHA-256 of its requirements file: a changed file gives a new
environment, an unchanged one is reused across workflow runs and checkouts.
The workflow records what was built in ``results/envs/<framework>.json``
(interpreter, requirements, exact package versions: the lock); the benchmarks depend on
that file's content, so it names nothing about where the checkout lives.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from dlperf.errors import EnvironmentProblem, InputFileError
from dlperf.io import atomic_write_json

#: The format version of an environment description (results/envs/<framework>.json), built
#: here or by a site (dlperf.environments.site).
VERSION = 1

COMPLETE_MARKER = ".dlperf-complete"


def default_root() -> Path:
    if os.environ.get("DLPERF_ENV_ROOT"):
        return Path(os.environ["DLPERF_ENV_ROOT"])
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return cache / "dlperf" / "envs"


def requirements_digest(requirements: Path) -> str:
    return hashlib.sha256(requirements.read_bytes()).hexdigest()


def env_dir(framework: str, requirements: Path, root: Path) -> Path:
    return root / f"{framework}-{requirements_digest(requirements)[:16]}"


@contextlib.contextmanager
def _locked(path: Path):
    """Two workflows building the same environment at once wait for each other."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _run(argv: list[str], log) -> None:
    print("+", " ".join(argv), file=log, flush=True)
    proc = subprocess.run(argv, stdout=log, stderr=subprocess.STDOUT)
    if proc.returncode != 0:
        raise EnvironmentProblem(
            f"building the environment failed: `{' '.join(argv)}` exited with {proc.returncode}; "
            "the log above shows pip's error (a pin that does not exist for this Python or "
            "platform, or a package index that cannot be reached)"
        )


def build(
    framework: str, requirements: Path, root: Path, python: str = sys.executable, log=None
) -> Path:
    """Create (or reuse) the environment for ``requirements``; return its directory."""
    log = log or sys.stdout
    if not requirements.exists():
        raise InputFileError(
            f"no requirements file for framework {framework!r}: {requirements} does not exist. "
            f"Add envs/{framework}.txt or remove {framework!r} from `frameworks` in the config."
        )
    target = env_dir(framework, requirements, root)
    with _locked(target.with_suffix(".lock")):
        if (target / COMPLETE_MARKER).exists():
            print(f"reusing {target}", file=log, flush=True)
            return target
        # A half-built venv (interrupted install) is never trusted: start again.
        shutil.rmtree(target, ignore_errors=True)
        _run([python, "-m", "venv", str(target)], log)
        env_python = str(target / "bin" / "python")
        _run([env_python, "-m", "pip", "install", "--quiet", "--upgrade", "pip"], log)
        _run([env_python, "-m", "pip", "install", "--quiet", "-r", str(requirements)], log)
        (target / COMPLETE_MARKER).write_text(requirements_digest(requirements) + "\n")
    return target


def freeze(env: Path) -> list[str]:
    out = subprocess.run(
        [str(env / "bin" / "python"), "-m", "pip", "freeze", "--all"],
        capture_output=True,
        text=True,
        check=True,
    )
    return sorted(line for line in out.stdout.splitlines() if line.strip())


def python_version(env: Path) -> str:
    out = subprocess.run(
        [str(env / "bin" / "python"), "-c", "import platform; print(platform.python_version())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip()


def build_and_describe(framework: str, requirements: Path, root: Path, out: Path, log=None) -> dict:
    """Build the environment and write its description (the lock) to ``out``."""
    env = build(framework, requirements, root, log=log)
    description = {
        "schema_version": VERSION,
        "framework": framework,
        "python": str(env / "bin" / "python"),
        "python_version": python_version(env),
        "env_dir": str(env),
        # The file's name, not its path: the description stays the same when the checkout
        # moves, so the benchmarks that read it are not measured again.
        "requirements_file": requirements.name,
        "requirements_sha256": requirements_digest(requirements),
        "requirements": requirements.read_text().splitlines(),
        "packages": freeze(env),
    }
    atomic_write_json(out, description)
    return description


def requirements_input(envs_dir: str | os.PathLike, framework: str) -> str:
    """The framework_env rule's input ``<envs_dir>/<framework>.txt``: relative to the working
    directory when it lies below it (Snakemake re-runs a job whose input paths change, and an
    absolute path changes whenever the checkout moves), absolute otherwise."""
    path = Path(os.path.abspath(os.path.join(envs_dir, f"{framework}.txt")))
    cwd = Path.cwd()
    return str(path.relative_to(cwd)) if path.is_relative_to(cwd) else str(path)
