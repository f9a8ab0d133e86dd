"""Site environments: an existing interpreter, or a container image (here a stand-in
`apptainer` that runs this interpreter: the image "has" what this environment has)."""

from __future__ import annotations

import json
import sys

import pytest

from dlperf.environments import site as site_envs
from dlperf.environments.site import EnvironmentProblem, describe_site_env, env_kind, env_options


@pytest.fixture
def fake_apptainer(tmp_path, monkeypatch):
    """`apptainer exec [--nv] --bind A:A IMAGE python3 ARGS` -> this interpreter with ARGS."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "apptainer"
    script.write_text(
        f'#!/bin/sh\nwhile [ "$1" != python3 ]; do shift; done; shift\nexec {sys.executable} "$@"\n'
    )
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    return script


def test_an_image_without_the_framework_is_refused_naming_what_it_lacks(tmp_path, fake_apptainer):
    image = "docker://nvcr.io/nvidia/pytorch:24.05-py3"
    with pytest.raises(EnvironmentProblem) as error:
        describe_site_env("mxnet", "container", image, tmp_path / "e.json", tmp_path, gpus=True)
    message = str(error.value)
    assert f"the container image {image} lacks what the mxnet benchmarks import: mxnet" in message
    assert "No module named 'mxnet'" in message
    assert not (tmp_path / "e.json").exists()
    (launcher,) = tmp_path.glob("mxnet-container-*/bin/python")
    text = launcher.read_text()
    assert f"{fake_apptainer} exec --nv --bind " in text and f" {image} python3 " in text


def test_the_probe_lists_the_versions_found(tmp_path, monkeypatch):
    # This interpreter has NumPy; let "pytorch" be NumPy here, so the probe succeeds.
    monkeypatch.setitem(site_envs.FRAMEWORK_MODULES, "pytorch", "numpy")
    info = describe_site_env(
        "pytorch", "python", sys.executable, tmp_path / "e.json", tmp_path, False
    )
    written = json.loads((tmp_path / "e.json").read_text())
    assert written == info and info["kind"] == "python" and info["python"] == sys.executable
    assert any(p.startswith("numpy==") for p in info["packages"])


def test_no_apptainer_and_no_interpreter_are_named(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(EnvironmentProblem, match="neither apptainer nor singularity"):
        describe_site_env("mxnet", "container", "x.sif", tmp_path / "e.json", tmp_path, False)
    with pytest.raises(EnvironmentProblem, match="is not an executable file"):
        describe_site_env("mxnet", "python", "/no/python", tmp_path / "e.json", tmp_path, False)


def test_the_config_names_the_kind_per_framework():
    config = {
        "device": "cuda",
        "framework_envs": {"mxnet": {"container": "mx.sif"}, "pytorch": {"python": "/p/python"}},
    }
    assert env_kind(config, "tensorflow") == ("requirements", None)
    options = env_options(config)
    wildcards = type("W", (), {"framework": "mxnet"})
    assert options(wildcards) == "--container mx.sif --gpus"
    wildcards.framework = "pytorch"
    assert options(wildcards) == "--python /p/python"
