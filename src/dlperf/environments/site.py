"""Framework environments a site provides: an existing interpreter, or a container image.

Besides the pip requirements dlperf builds itself (:mod:`dlperf.environments.requirements`),
a framework can run
in an interpreter the site installed (a module's or a conda environment's ``python``), or
in a container image (an NGC-style image run with Apptainer). Either is probed once, by the
workflow's environment rule and before any benchmark: the framework and NumPy must import,
and the description (the lock) lists the versions found, as for a built environment.

A container is entered per process: the description's interpreter is a small launcher script
(``apptainer exec [--nv] IMAGE python3``) that the driver, and ``srun`` on every node, start
as they would start any interpreter. The driver itself and ``srun`` stay outside the image.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path

from dlperf.environments.requirements import VERSION
from dlperf.errors import EnvironmentProblem
from dlperf.io import atomic_write_json, atomic_write_text

#: The module a framework imports as, and the distributions whose versions are its own.
FRAMEWORK_MODULES = {"pytorch": "torch", "tensorflow": "tensorflow", "mxnet": "mxnet"}
KINDS = ("requirements", "python", "container")

# Run by the probed interpreter: import what a worker imports, report versions (stdlib only).
PROBE = r"""
import importlib, importlib.metadata as md, json, platform, sys
missing = []
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except Exception as exc:  # reported: the probe's whole point
        first = (str(exc).splitlines() or [""])[0]
        missing.append(f"{name} ({type(exc).__name__}: {first})")
names = {(d.metadata["Name"], d.version) for d in md.distributions() if d.metadata["Name"]}
packages = sorted(f"{name}=={version}" for name, version in names)
print(json.dumps({"python_version": platform.python_version(), "executable": sys.executable,
                  "missing": missing, "packages": packages}))
"""


def probe(framework: str, python: str, where: str) -> dict:
    """Run :data:`PROBE` with ``python``; EnvironmentProblem naming what is missing."""
    modules = [FRAMEWORK_MODULES[framework], "numpy"]
    try:
        proc = subprocess.run(
            [python, "-c", PROBE, *modules], capture_output=True, text=True, timeout=600
        )
    except OSError as exc:
        raise EnvironmentProblem(
            f"{where} cannot be started ({exc}); give the path of a Python interpreter"
        ) from None
    if proc.returncode != 0:
        raise EnvironmentProblem(
            f"{where} did not run Python (exit {proc.returncode}): {proc.stderr.strip()[-800:]}"
        )
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    if found["missing"]:
        raise EnvironmentProblem(
            f"{where} lacks what the {framework} benchmarks import: "
            + "; ".join(found["missing"])
            + f". Use one that has {' and '.join(modules)} (or list {framework} under "
            "framework_envs with another kind)"
        )
    return found


def container_launcher(framework: str, image: str, root: Path, gpus: bool) -> Path:
    """An executable that runs ``python3`` inside ``image`` with Apptainer, binding the dlperf
    package (the workers import it from the host) and passing ``--nv`` for GPUs."""
    apptainer = shutil.which("apptainer") or shutil.which("singularity")
    if apptainer is None:
        raise EnvironmentProblem(
            f"{framework} is to run in the container {image}, but neither apptainer nor "
            "singularity is on the PATH; load the site's apptainer module"
        )
    package = Path(__file__).resolve().parents[1]  # src/dlperf
    argv = [apptainer, "exec", *(["--nv"] if gpus else [])]
    argv += ["--bind", f"{package}:{package}", image, "python3"]
    digest = hashlib.sha256(" ".join(argv).encode()).hexdigest()[:16]
    launcher = root / f"{framework}-container-{digest}" / "bin" / "python"
    script = f'#!/bin/sh\nexec {shlex.join(argv)} "$@"\n'
    launcher.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(launcher, script)
    launcher.chmod(0o755)
    return launcher


def describe_site_env(framework: str, kind: str, value: str, out: Path, root: Path, gpus: bool):
    """Probe a site environment (``kind`` python or container) and write its description."""
    if kind == "python":
        python = Path(value).expanduser()
        if not (python.is_file() and os.access(python, os.X_OK)):
            raise EnvironmentProblem(
                f"the interpreter {value} given for {framework} is not an executable file; "
                "give the full path of the site's python (e.g. `which python` after "
                "`module load`)"
            )
        where = f"the interpreter {python}"
    else:
        python = container_launcher(framework, value, root, gpus)
        where = f"the container image {value}"
    found = probe(framework, str(python), where)
    description = {
        "schema_version": VERSION,
        "framework": framework,
        "kind": kind,
        "python": str(python),
        "python_version": found["python_version"],
        "env_dir": str(python.parent.parent),
        "source": value,
        "packages": found["packages"],
    }
    atomic_write_json(out, description)
    return description


def env_kind(config: dict, framework: str) -> tuple[str, str | None]:
    """(kind, value) of ``framework``'s environment in the workflow config: ("requirements",
    None) unless ``framework_envs`` names an interpreter or an image for it."""
    given = (config.get("framework_envs") or {}).get(framework) or {}
    for kind in ("python", "container"):
        if kind in given:
            return kind, given[kind]
    return "requirements", None


def requirements_input(config: dict, envs_dir: str):
    """The environment rule's input: the requirements file for a built environment, nothing
    for a site's interpreter or image (their setting is a param: a change re-probes)."""
    from dlperf.environments.requirements import requirements_input as requirements_path

    def requirements(wildcards) -> list[str]:
        if env_kind(config, wildcards.framework)[0] != "requirements":
            return []
        return [requirements_path(envs_dir, wildcards.framework)]

    return requirements


def env_options(config: dict):
    """The environment rule's ``dlperf env`` options naming the site environment (empty for a
    built one: the rule passes its requirements file)."""

    def options(wildcards) -> str:
        kind, value = env_kind(config, wildcards.framework)
        if kind == "requirements":
            return ""
        gpus = ["--gpus"] if kind == "container" and config["device"] == "cuda" else []
        return shlex.join([f"--{kind}", value, *gpus])

    return options
