"""Across hardware through the real workflow: external timings of two GPU types (or of one) are
fitted by the workflow's fit rule, and `dlperf predict --gpu` answers for a GPU type never
measured, saying so and how far it reaches."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import yaml
from snakerun import external_only, planned_jobs, snakemake

from gpupoints import USER_CATALOGUE, gpu_points

pytestmark = pytest.mark.slow

MEASURED = ["V100-SXM2-16GB", "A100-SXM4-80GB"]


def predict(model, gpu: str) -> dict:
    """`dlperf predict --gpu` at 1 and 4 GPUs, batch 32, 6400 samples; its JSON answer."""
    asked = subprocess.run(
        [sys.executable, "-m", "dlperf", "predict", "--model", str(model), "--procs", "1", "4",
         "--batch-size", "32", "--data-size", "6400", "--gpu", gpu, "--precision", "AMP/FP16",
         "--json"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert asked.returncode == 0, asked.stdout + asked.stderr
    return json.loads(asked.stdout)


def fitted(points, workflow_bin, repo, tmp_path):
    """The workflow's fit rule on ``points`` as external timings: the artifact's path."""
    timings = tmp_path / "timings.csv"
    points.drop(columns=["device"]).to_csv(timings, index=False)
    config = external_only(
        timings, models={"ernest": {}}, preflight={"max_disturbed_fraction": 1.0}
    )
    path = tmp_path / "hardware.yaml"
    path.write_text(yaml.safe_dump(config))
    target = "results/models/pytorch.json"
    proc = snakemake(workflow_bin, repo, tmp_path, target, configfile=path, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return tmp_path / target


def test_a_gpu_not_measured_is_predicted_from_two_measured(workflow_bin, repo, tmp_path):
    points = gpu_points(MEASURED)
    # As NVML names them: the catalogue matches them to its entries.
    points["gpu"] = points["gpu"].map(lambda g: f"NVIDIA {g}")
    model = fitted(points, workflow_bin, repo, tmp_path)
    artifact = json.loads(model.read_text())
    block = artifact["across_hardware"]["mlp"]["amp_fp16"]
    assert block["status"] == "ok" and block["gpus"] == sorted(MEASURED)

    answer = predict(model, "NVIDIA H100 80GB HBM3")
    assert answer["gpu"] == "H100-SXM5-80GB" and answer["precision"] == "amp_fp16"
    assert "not measured" in answer["said"] and "beyond those of the GPU types" in answer["said"]
    # Two GPU types leave no backtest: the interval a published table gave that answer.
    assert "published table, each GPU type asked from 2 others" in answer["said"]
    rows = answer["predictions"]
    assert [r["procs"] for r in rows] == [1, 4]
    assert all(r["reach"] > 1 and r["epoch_time_s"] > 0 for r in rows)
    assert all(r["epoch_time_lo_s"] < r["epoch_time_s"] < r["epoch_time_hi_s"] for r in rows)
    # The H100 computes faster than both GPU types measured: its single-GPU epoch is faster.
    measured_fastest = points[(points["procs"] == 1) & (points["batch_size"] == 32)]
    assert rows[0]["epoch_time_s"] < measured_fastest["epoch_time_s"].min()
    # A GPU type measured answers from its own series (docs/hardware.md, "Series").
    own = predict(model, "A100 80GB SXM4")
    assert own["network"] == "mlp (NVIDIA A100-SXM4-80GB, amp_fp16)" and "measured" in own["said"]
    # ernest alone, on 9 points: near the A100's own times, far from the V100's.
    at = points[points["batch_size"] == 32].set_index(["gpu", "procs"])["epoch_time_s"]
    predicted = np.array([r["epoch_time_s"] for r in own["predictions"]])
    for gpu, near in (("NVIDIA A100-SXM4-80GB", True), ("NVIDIA V100-SXM2-16GB", False)):
        error = np.abs(predicted / at.loc[gpu].loc[[1, 4]].to_numpy() - 1)
        assert (error.max() < 0.2) if near else (error.min() > 0.3), (gpu, error)


def test_a_gpu_not_measured_is_predicted_from_one_measured(workflow_bin, repo, tmp_path):
    """ "We measured on V100s; how long on an H100?": the workflow's fit rule stores prior_hw
    anchored on the one GPU type measured, and `predict --gpu` answers with the interval its
    published table gave."""
    points = gpu_points(MEASURED[:1])
    points["gpu"] = points["gpu"].map(lambda g: f"Tesla {g}")
    model = fitted(points, workflow_bin, repo, tmp_path)
    block = json.loads(model.read_text())["across_hardware"]["mlp"]["amp_fp16"]
    assert block["weights"] == {"prior_hw": 1.0} and block["gpus"] == MEASURED[:1]

    answer = predict(model, "NVIDIA H100 80GB HBM3")
    assert "not measured" in answer["said"] and "one GPU type measured" in answer["said"]
    rows = answer["predictions"]
    assert all(r["epoch_time_lo_s"] < r["epoch_time_s"] < r["epoch_time_hi_s"] for r in rows)
    measured = points[points["batch_size"] == 32].set_index("procs")["epoch_time_s"]
    assert all(r["epoch_time_s"] < measured.loc[r["procs"]] for r in rows)  # the H100 is faster


def test_a_study_with_its_own_gpu_catalogue_runs_to_the_report(workflow_bin, repo, tmp_path):
    """A GPU only the user's catalogue holds: fit, cross_hardware validation and the report
    read the catalogue (config key hardware), and editing it re-runs them."""
    catalogue = tmp_path / "gpus.yaml"
    catalogue.write_text(USER_CATALOGUE)
    timings = tmp_path / "three-gpus.csv"
    points = gpu_points()
    points[points["gpu"] != "H100-SXM5-80GB"].replace({"A10": "Z9000"}).to_csv(timings, index=False)
    config = external_only(
        timings,
        models={"ernest": {}},
        hardware=str(catalogue),
        validation={"protocols": {"cross_hardware": {}}, "bootstrap": 20},
        preflight={"max_disturbed_fraction": 1.0},
    )
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump(config))
    proc = snakemake(workflow_bin, repo, tmp_path, "report", configfile=path, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    summary = (tmp_path / "results" / "validation" / "summary.csv").read_text()
    assert "generic_hw" in summary and ",cross_hardware,ok," in summary, summary
    assert "Z9000" in (tmp_path / "results" / "report" / "index.html").read_text()
    catalogue.write_text(USER_CATALOGUE.replace("memory_gb: 64", "memory_gb: 96"))
    plan = planned_jobs(
        snakemake(workflow_bin, repo, tmp_path, "report", "-n", configfile=path, timeout=300)
    )
    assert {"fit", "validate", "report"} <= set(plan), plan
