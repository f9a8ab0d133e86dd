"""Analytical roofline compute + alpha-beta ring all-reduce, in the manner of Castello et al. 2021.

    t_iter = b F / R  +  2 (p-1)/p * 4 W / B  +  2 (p-1) alpha
    T      = I(p, b, d) * t_iter

R is the sustained FLOP rate, B the all-reduce bandwidth (bytes/s, FP32 gradients) and
alpha the per-message latency. The three hardware constants (as 1/R, 1/B, alpha) are fitted
by NNLS on relative error. F (flops_per_sample) and W (param_count) come from the table when
it has them; otherwise they are taken as 1 and absorbed into the fitted constants.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.optimize import nnls

from .base import InsufficientData, PerformanceModel, iteration_seconds, iterations

BYTES_PER_PARAM = 4.0  # FP32 gradients


def _column(frame: pd.DataFrame, name: str) -> np.ndarray | None:
    if name not in frame.columns:
        return None
    values = pd.to_numeric(frame[name], errors="coerce").to_numpy(float)
    return values if np.all(np.isfinite(values) & (values > 0)) else None


class CastelloModel(PerformanceModel):
    name = "castello"
    description = "roofline + alpha-beta ring all-reduce: I*(b F/R + 2(p-1)/p 4W/B + 2(p-1) alpha)"
    min_points = 2

    def __init__(self) -> None:
        self.inv_rate = self.inv_bandwidth = self.latency = 0.0
        self.uses_flops = self.uses_params = False

    def _design(self, frame: pd.DataFrame) -> np.ndarray:
        p = frame["procs"].to_numpy(float)
        b = frame["batch_size"].to_numpy(float)
        flops = _column(frame, "flops_per_sample") if self.uses_flops else None
        params = _column(frame, "param_count") if self.uses_params else None
        if (self.uses_flops and flops is None) or (self.uses_params and params is None):
            raise InsufficientData(
                "castello was fitted with flops_per_sample/param_count; "
                "the rows to predict need those columns too"
            )
        flops = np.ones_like(p) if flops is None else flops
        params = np.ones_like(p) if params is None else params
        return np.column_stack(
            [
                b * flops,
                2.0 * (p - 1.0) / p * BYTES_PER_PARAM * params,
                2.0 * (p - 1.0),
            ]
        )

    def fit(self, frame: pd.DataFrame, seed: int = 0) -> CastelloModel:
        self.check_enough(frame)
        self.uses_flops = _column(frame, "flops_per_sample") is not None
        self.uses_params = _column(frame, "param_count") is not None
        t = iteration_seconds(frame)
        design = self._design(frame)
        coef, _ = nnls(design / t[:, None], np.ones_like(t))
        if coef[0] <= 0:
            raise InsufficientData("castello: no positive compute rate fits these points")
        self.inv_rate, self.inv_bandwidth, self.latency = map(float, coef)
        return self

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        coef = np.array([self.inv_rate, self.inv_bandwidth, self.latency])
        return iterations(frame) * (self._design(frame) @ coef)

    def to_dict(self) -> dict:
        return {
            "model": self.name,
            "formula": self.description,
            "uses_flops_per_sample": self.uses_flops,
            "uses_param_count": self.uses_params,
            "constants": {
                "inv_flop_rate": self.inv_rate,
                "inv_bandwidth": self.inv_bandwidth,
                "latency_s": self.latency,
            },
            # Readable hardware numbers (per unit F/W when the table had none).
            "hardware": {
                "flop_rate": 1.0 / self.inv_rate if self.inv_rate > 0 else None,
                "bandwidth_bytes_per_s": (
                    1.0 / self.inv_bandwidth if self.inv_bandwidth > 0 else None
                ),
            },
        }

    @classmethod
    def from_dict(cls, data: dict) -> CastelloModel:
        model = cls()
        c = data["constants"]
        model.inv_rate, model.inv_bandwidth = float(c["inv_flop_rate"]), float(c["inv_bandwidth"])
        model.latency = float(c["latency_s"])
        model.uses_flops = bool(data["uses_flops_per_sample"])
        model.uses_params = bool(data["uses_param_count"])
        return model
