"""scripts/gpu-check.sh in its dry-run mode: the GPU check's whole path (harness runs of the
new networks in two precisions on 1 and 2 workers, aggregation, fits, summary, references) on
the CPU, and its --workflow mode (the real Snakemake workflow through the report) on the CPU;
and --make-wheels, the wheel folder --workflow installs from on a machine without network.
(That the harness check imports nothing of the workflow's: tests/unit/cli/test_gpucheck.py.)"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig

import pandas as pd
import pytest

from dlperf.io import read_json

pytestmark = [pytest.mark.framework, pytest.mark.slow]


def test_dry_run_measures_aggregates_fits_and_summarises(framework_env, repo, tmp_path):
    # The torch environment's interpreter; pandas, SciPy and scikit-learn come from this one's
    # site-packages (the GPU machine has them installed beside PyTorch).
    python = read_json(framework_env("pytorch"))["python"]
    env = dict(os.environ, PYTHON=python, PYTHONPATH=sysconfig.get_paths()["purelib"])
    out = tmp_path / "check"
    argv = [str(repo / "scripts" / "gpu-check.sh"), "--dry-run", "--iterations", "2"]
    proc = subprocess.run(
        [*argv, "--out", str(out)], capture_output=True, text=True, env=env, timeout=1500
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    timings = pd.read_csv(out / "timings.csv")
    assert len(timings) == 16  # 2 networks x 2 precisions x 2 worker counts x 2 batch sizes
    assert set(timings["network"]) == {"resnet18", "bert_tiny"}
    assert set(timings["precision"]) == {"fp32", "bf16"} and set(timings["procs"]) == {1, 2}
    assert set(timings.loc[timings["network"] == "resnet18", "image_size"]) == {224}
    summary = (out / "summary.txt").read_text()
    assert "samples/s" in summary and "peak dev MiB" in summary and "GPU util %" in summary
    assert "bf16 is" in summary and "the fp32 throughput" in summary
    assert "resnet18 bf16 loglin: fitted on 4 points" in summary
    assert summary.strip() in proc.stdout


def test_a_missing_package_is_named_before_anything_runs(framework_env, repo, tmp_path):
    python = read_json(framework_env("pytorch"))["python"]  # has torch and NumPy, not pandas
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [str(repo / "scripts" / "gpu-check.sh"), "--dry-run", "--out", str(tmp_path / "c")],
        capture_output=True,
        text=True,
        env={**env, "PYTHON": python},
        timeout=120,
    )
    assert proc.returncode == 2
    assert "lacks: pandas scipy sklearn" in proc.stderr
    assert not (tmp_path / "c").exists()


def test_workflow_dry_run_runs_the_real_workflow_through_the_report(framework_env, repo, tmp_path):
    # The GPU node's --workflow on the CPU: the Snakefile through aggregate, fit, validate and
    # report, the torch environment's interpreter as the site's framework build.
    python = read_json(framework_env("pytorch"))["python"]
    env = dict(os.environ, PYTHON=python, PYTHONPATH=sysconfig.get_paths()["purelib"])
    out = tmp_path / "check"
    argv = [str(repo / "scripts" / "gpu-check.sh"), "--workflow", "--dry-run", "--iterations", "3"]
    proc = subprocess.run(
        [*argv, "--out", str(out)], capture_output=True, text=True, env=env, timeout=1500
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    results = out / "study" / "results"
    assert (results / "report" / "index.html").exists()
    assert (results / "validation" / "summary.csv").exists()
    timings = pd.read_csv(results / "timings.csv")
    assert set(timings["network"]) == {"lenet", "bert_tiny"} and set(timings["procs"]) == {1, 2}
    record = read_json(next((results / "runs" / "pytorch" / "lenet").glob("*.json")))
    assert record["settings"]["input"] == "device"
    assert record["settings"]["matmul_precision"] == "highest"
    assert read_json(results / "envs" / "pytorch.json")["python"] == python
    summary = (out / "summary.txt").read_text()
    assert "lenet fp32: no reference for this device (CPU)" in summary
    assert f"Report: {results / 'report' / 'index.html'}" in summary


def test_make_wheels_makes_a_folder_the_workflow_side_installs_from_alone(repo, tmp_path):
    # --make-wheels on a networked machine, then what --wheels does on the GPU machine (pip
    # install --no-index into a folder of its own): the packages import from that folder and
    # the standard library alone (-S), so no need is missing from the wheels. Snakemake's
    # connection_pool is published as a source archive only: the script builds its wheel.
    python = sys.executable  # wheels for this interpreter's version, installed by it
    wheels, site = tmp_path / "wheels", tmp_path / "site"
    proc = subprocess.run(
        [str(repo / "scripts" / "gpu-check.sh"), "--make-wheels", str(wheels)],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHON=python),
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    assert f"--workflow --wheels {wheels}" in proc.stdout
    assert list(wheels.glob("connection_pool-*-none-any.whl"))
    install = [python, "-m", "pip", "install", "--quiet", "--no-index", "--find-links", str(wheels)]
    install += ["--target", str(site), "snakemake==9.27.1", "jsonschema", "rocrate", "marshmallow"]
    subprocess.run(install, check=True, capture_output=True, timeout=600)
    probe = "import snakemake.api, snakemake.cli, jsonschema, rocrate.rocrate, marshmallow, yaml"
    subprocess.run(
        [python, "-S", "-c", probe], check=True, env={"PYTHONPATH": str(site)}, timeout=120
    )
