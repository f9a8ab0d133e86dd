"""Universal Scalability Law (Gunther) on per-iteration time; Amdahl when kappa is unidentifiable.

Global throughput X(p) = lambda p / (1 + sigma (p-1) + kappa p (p-1)) with per-worker batch b
held fixed, i.e. per-iteration time

    t_iter(p, b) = (alpha + beta b) * (1 + sigma (p-1) + kappa p (p-1))

where alpha + beta b is one worker's iteration time (batch as a compute term),
sigma the contention (serial) share and kappa the coherency (crosstalk) cost.
Epoch time is I(p, b, d) * t_iter. Fitted by bounded least squares on relative error.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.optimize import least_squares

from .base import (
    NO_NODE_TREND,
    Capabilities,
    InsufficientData,
    PerformanceModel,
    accumulation_steps,
    iteration_seconds,
    iterations,
    levels,
)

PARAMS = ("alpha", "beta", "sigma", "kappa")


def _iteration_time(
    params: np.ndarray, p: np.ndarray, b: np.ndarray, steps: np.ndarray
) -> np.ndarray:
    """Contention and coherency are paid per optimizer step: once per ``steps`` micro-batches."""
    alpha, beta, sigma, kappa = params
    return (alpha + beta * b) * (1.0 + (sigma * (p - 1.0) + kappa * p * (p - 1.0)) / steps)


class USLModel(PerformanceModel):
    name = "usl"
    description = "USL: I * (alpha + beta b) (1 + sigma (p-1) + kappa p (p-1))"
    min_points = 2
    capabilities = Capabilities(
        extrapolates_in=NO_NODE_TREND,
        min_levels={"procs": 2},
        per_iteration=True,
    )

    def fit(self, frame: pd.DataFrame) -> USLModel:
        self.check_enough(frame)
        if levels(frame, "procs") < 2:
            raise InsufficientData("usl needs at least 2 levels of procs to fit its scaling terms")
        t = iteration_seconds(frame)
        p = frame["procs"].to_numpy(float)
        b = frame["batch_size"].to_numpy(float)
        steps = accumulation_steps(frame)
        # Identifiable parameters only: kappa needs 3 procs levels, beta 2 batch levels.
        free = [True, levels(frame, "batch_size") >= 2, True, levels(frame, "procs") >= 3]
        self.variant_ = "usl" if free[3] else "amdahl"
        start = np.array([t.min() * 0.5, 0.0, 0.05, 0.0])
        mask = np.array(free)

        def residual(x: np.ndarray) -> np.ndarray:
            full = np.where(mask, 0.0, start)
            full[mask] = x
            return _iteration_time(full, p, b, steps) / t - 1.0

        first = np.array([t.min(), t.min() / max(b.max(), 1.0), 0.05, 1e-3])[mask]
        result = least_squares(residual, first, bounds=(0.0, np.inf), method="trf")
        full = np.zeros(4)
        full[mask] = result.x
        self.constants_ = {k: float(v) for k, v in zip(PARAMS, full, strict=True)}
        return self

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        p = frame["procs"].to_numpy(float)
        b = frame["batch_size"].to_numpy(float)
        params = np.array([self.constants_[k] for k in PARAMS])
        return iterations(frame) * _iteration_time(params, p, b, accumulation_steps(frame))

    def to_dict(self) -> dict:
        return self._entry(variant=self.variant_, constants=self.constants_)

    @classmethod
    def from_dict(cls, data: dict) -> USLModel:
        model = cls._unfitted(data)
        model.constants_ = {k: float(data["constants"][k]) for k in PARAMS}
        model.variant_ = data.get("variant", "usl")
        return model
