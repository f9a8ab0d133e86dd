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

from .base import (
    Capabilities,
    InsufficientData,
    PerformanceModel,
    iteration_seconds,
    iterations,
)

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
    # Compute scales with F and the all-reduce with W of each row when the table has them.
    capabilities = Capabilities(
        uses_network_features=True,
        extrapolates_in=frozenset({"procs", "batch_size", "data_size"}),
    )

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.inv_rate = self.inv_bandwidth = self.latency = 0.0
        # F and W of the network fitted on (one network per fit): rows to predict that lack
        # the columns (a report's prediction grid, `dlperf predict`) are that network.
        self.flops: float | None = None
        self.params: float | None = None

    def _feature(self, frame: pd.DataFrame, name: str, fitted: float | None) -> np.ndarray:
        if fitted is None:
            return np.ones(len(frame))
        values = _column(frame, name)
        return np.full(len(frame), fitted) if values is None else values

    def _design(self, frame: pd.DataFrame) -> np.ndarray:
        p = frame["procs"].to_numpy(float)
        b = frame["batch_size"].to_numpy(float)
        flops = self._feature(frame, "flops_per_sample", self.flops)
        params = self._feature(frame, "param_count", self.params)
        return np.column_stack(
            [
                b * flops,
                2.0 * (p - 1.0) / p * BYTES_PER_PARAM * params,
                2.0 * (p - 1.0),
            ]
        )

    def fit(self, frame: pd.DataFrame) -> CastelloModel:
        self.check_enough(frame)
        flops = _column(frame, "flops_per_sample")
        params = _column(frame, "param_count")
        self.flops = float(np.median(flops)) if flops is not None else None
        self.params = float(np.median(params)) if params is not None else None
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
            # The network's F and W when the table had them (null: absorbed in the constants).
            "flops_per_sample": self.flops,
            "param_count": self.params,
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
        model.flops = data.get("flops_per_sample")
        model.params = data.get("param_count")
        return model
