"""A small synthetic dataset taken through the real fit, validate and report functions.

Timings follow the generic model's own form with multiplicative noise, for two networks of one
framework; one framework (tensorflow) only failed. Asked for, other frameworks measure lenet
too, each with its own overhead, compute and communication (frameworks side by side). Besides
the generic model a second, linear model is registered for the duration, so the report is built
with more than one model and the cross-network protocol has a model that can run it.
"""

from __future__ import annotations

import contextlib
import itertools
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from dlperf.measurements import tables
from dlperf.measurements.points import to_points
from dlperf.models import MODELS, Capabilities
from dlperf.models.artifact import fit_framework
from dlperf.models.base import TARGET, InsufficientData, PerformanceModel, iterations
from dlperf.models.series import as_series
from dlperf.report.page import build_report
from dlperf.report.study import Study
from dlperf.validate.crossval import cross_validate
from gpupoints import gpu_points

FAST_GENERIC = {"lambdas": [0.0], "popsize": 6, "maxiter": 30, "tol": 1e-6}
PROTOCOLS = {
    "kfold": {"k": 3},
    "loo_procs": {},
    "loo_batch": {},
    "extrapolation_procs": {"train_max_procs": 2},
    "extrapolation_batch": {},
    "cross_network": {},
}


class LinearTestModel(PerformanceModel):
    """Least squares on [1, I, I*b, I*(p-1)/p]: quick, and it claims network features so the
    cross-network protocol runs for it."""

    name = "lineartest"
    description = "test-only linear model"
    min_points = 4
    capabilities = Capabilities(uses_network_features=True)

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.coef = np.zeros(4)

    @staticmethod
    def _design(frame: pd.DataFrame) -> np.ndarray:
        i = iterations(frame)
        p = frame["procs"].to_numpy(float)
        b = frame["batch_size"].to_numpy(float)
        return np.column_stack([np.ones_like(i), i, i * b, i * (p - 1) / p])

    def fit(self, frame):
        if len(frame) < self.min_points:
            raise InsufficientData(f"lineartest needs {self.min_points} points, got {len(frame)}")
        self.coef = np.linalg.lstsq(self._design(frame), frame[TARGET].to_numpy(float), rcond=None)[
            0
        ]
        return self

    def predict(self, frame):
        return np.maximum(self._design(frame) @ self.coef, 1e-6)

    def to_dict(self):
        return {"model": self.name, "formula": self.description, "coef": self.coef.tolist()}

    @classmethod
    def from_dict(cls, data):
        model = cls()
        model.coef = np.asarray(data["coef"], dtype=float)
        return model


@contextlib.contextmanager
def test_model_registered():
    MODELS[LinearTestModel.name] = LinearTestModel
    try:
        yield
    finally:
        MODELS.pop(LinearTestModel.name, None)


class Profile(NamedTuple):
    """How one synthetic framework spends an iteration: seconds of overhead, compute per
    network (times b^0.9), all-reduce (times (p-1)/p), and the share spent waiting for data."""

    overhead: float
    compute: dict[str, float]
    allreduce: float
    data_wait: float


PROFILES = {
    "pytorch": Profile(1e-3, {"mlp": 2e-4, "lenet": 6e-4}, 4e-3, 0.02),
    # slower per iteration by its overhead
    "tensorflow": Profile(4e-3, {"lenet": 6e-4}, 4e-3, 0.04),
    # slower by its communication (parameter server)
    "mxnet": Profile(1e-3, {"lenet": 6.5e-4}, 12e-3, 0.02),
}


def synthetic_timings(
    seed: int = 0, data_sizes=(512, 1024), frameworks=("pytorch",)
) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    sweep = (
        (framework, network, p, b, d, rep)
        for framework in frameworks
        for network, p, b, d, rep in itertools.product(
            PROFILES[framework].compute, [1, 2, 4], [8, 16, 32], data_sizes, range(2)
        )
    )
    for framework, network, p, b, d, rep in sweep:
        cost = PROFILES[framework]
        iters = np.ceil(d / (p * b))
        t_iter = cost.overhead + cost.compute[network] * b**0.9 + cost.allreduce * (p - 1) / p
        noise = 1 + 0.03 * rng.standard_normal()
        epoch = (0.05 + iters * t_iter) * noise
        rows.append(
            {
                "framework": framework,
                "network": network,
                "device": "cpu",
                "nodes": 1,
                "procs": p,
                "batch_size": b,
                "data_size": d,
                "rep": rep,
                "global_batch": p * b,
                "iters_per_epoch": int(iters),
                "epoch_time_s": epoch,
                "iter_time_median_s": t_iter * noise,
                "data_wait_fraction": cost.data_wait,
                "samples_per_s": d / epoch,
                "framework_version": "2.3.1+cpu",
                "threads_per_worker": 1,
                "hostname": "node001",
                "cpu_model": "Synthetic CPU @ 3.0GHz",
                "gpu_names": "",
                "slurm_job_id": "4242",
                "git_commit": "0123abcd",
                "peak_host_memory_mb": 250.0 + 10.0 * b + rng.uniform(0, 5),
                "cpu_utilisation": 0.9,
                # one run disturbed by another program on the host
                "foreign_cpu_fraction": 0.3
                if (framework, network, p, b, rep) == ("pytorch", "mlp", 2, 8, 1)
                else 0.01,
            }
        )
    return pd.DataFrame(rows).reindex(columns=tables.TIMING_COLUMNS)


def synthetic_failures() -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "framework": "tensorflow",
                "network": "mlp",
                "device": "cpu",
                "nodes": 1,
                "procs": 2,
                "batch_size": 8,
                "data_size": 512,
                "rep": 0,
                "status": "failed",
                "error": "ImportError: No module named 'tensorflow'",
                "hostname": "node001",
                "slurm_job_id": "4243",
                "record": "results/runs/tensorflow/mlp/n1_p2_b8_d512_r0.json",
            }
        ],
        columns=tables.FAILURE_COLUMNS,
    )


def validated(
    seed: int = 0,
    n_boot: int = 200,
    data_sizes=(512, 1024),
    protocols: dict | None = None,
    frameworks=("pytorch",),
) -> dict:
    """Timings, failures, points, the fitted artifacts, predictions and summary."""
    timings = synthetic_timings(seed, data_sizes, frameworks)
    points = to_points(timings)
    models = {"generic": FAST_GENERIC, LinearTestModel.name: {}}
    artifacts, predictions, summaries = {}, [], []
    with test_model_registered():
        for framework in frameworks:
            own = points[points["framework"] == framework].reset_index(drop=True)
            artifacts[framework] = fit_framework(own, framework, models, seed)
            held_out, summary = cross_validate(
                own, framework, models, protocols or PROTOCOLS, seed, n_boot
            )
            predictions.append(held_out)
            summaries.append(summary)
    return {
        "timings": timings,
        "failures": synthetic_failures(),
        "points": points,
        "artifacts": artifacts,
        "predictions": pd.concat(predictions, ignore_index=True),
        "summary": pd.concat(summaries, ignore_index=True),
        "config": {
            "frameworks": ["pytorch", "tensorflow"],
            "networks": ["mlp", "lenet"],
            "seed": seed,
            "validation": {"protocols": protocols or PROTOCOLS, "bootstrap": n_boot},
            "report": {"target": {"data_size": 100_000, "epochs": 10, "deadline": "10m"}},
        },
    }


# GPU types pytorch's mlp is measured on in :func:`across_hardware`, and those its config's
# report.target.gpus names (one not measured).
MEASURED_GPUS = ("V100-SXM2-16GB", "A100-SXM4-80GB", "A10")
TARGET_GPUS = ("H100 80GB HBM3", "A100 80GB SXM4", "A10")


def across_hardware(seed: int = 0, n_boot: int = 100) -> dict:
    """As :func:`validated`, for pytorch's mlp measured (as external timings: no run records)
    on the three :data:`MEASURED_GPUS` at amp_fp16, validated by k-fold and leaving one GPU type
    out, with a report target planned on :data:`TARGET_GPUS`."""
    measured = gpu_points(MEASURED_GPUS).assign(rep=0)
    rates = measured["data_size"] / measured[TARGET]
    # As the report's Study reads them: one series per GPU type (dlperf.models.series).
    points = as_series(to_points(measured.assign(samples_per_s=rates)))
    models = {"generic": FAST_GENERIC}
    protocols = {"kfold": {"k": 3}, "cross_hardware": {}}
    artifact = fit_framework(points, "pytorch", models, seed)
    held_out, summary = cross_validate(points, "pytorch", models, protocols, seed, n_boot)
    target = {"data_size": 1_281_167, "epochs": 90, "deadline": "8h", "gpus": list(TARGET_GPUS)}
    return {
        "timings": pd.DataFrame(columns=tables.TIMING_COLUMNS),
        "failures": pd.DataFrame(columns=tables.FAILURE_COLUMNS),
        "points": points,
        "artifacts": {"pytorch": artifact},
        "predictions": held_out,
        "summary": summary,
        "config": {
            "frameworks": [],
            "seed": seed,
            "validation": {"protocols": protocols, "bootstrap": n_boot},
            "report": {"target": target},
        },
    }


def write_report(data: dict, out_html: Path) -> list[Path]:
    with test_model_registered():
        return build_report(study(data), out_html)


def study(data: dict) -> Study:
    return Study(
        timings=data["timings"],
        failures=data["failures"],
        points=data["points"],
        artifacts=data["artifacts"],
        summary=data["summary"],
        predictions=data["predictions"],
        config=data["config"],
    )
