"""Analytical compute (b 3F / R) + alpha-beta ring all-reduce, after Castello et al. 2021.

    t_iter = b 3F / R  +  2 (p-1)/p * 4 W / B  +  2 (p-1) alpha
    T      = I(p, b, d) * t_iter

F is the forward FLOPs per sample (``flops_per_sample``); training costs about 3F per sample
(the backward pass computes gradients of activations and of weights, each about the forward's
cost), so R is the sustained training FLOP rate. B is the all-reduce bandwidth (bytes/s, FP32
gradients of W parameters) and alpha the per-message latency. The three hardware constants (as
1/R, 1/B, alpha) are fitted by NNLS on relative error. F and W come from the table when it has
them; otherwise they are taken as 1 and absorbed into the fitted constants.

Where the points cannot tell the latency term from the bandwidth term (the design has less than
full rank: one worker count above 1, or two with one batch size), the latency term is left out:
fitted to one step, 2 (p-1) alpha would carry it on linearly in p (NVIDIA's BART trained on 1
and 8 GPUs: 1.3-2.3x the measured time at 160-320), where the ring's bandwidth term saturates.

It is not a roofline. A roofline takes per-iteration compute as max(b 3F / R, b M / BW) for the
bytes M a sample moves; no table here has M, and within one network's fit both ceilings grow
with b alike, so the data could not tell them apart (docs/model.md, "castello").
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.optimize import nnls

from .base import (
    NO_NODE_TREND,
    Capabilities,
    InsufficientData,
    PerformanceModel,
    accumulation_steps,
    iteration_seconds,
    iterations,
)

BYTES_PER_PARAM = 4.0  # FP32 gradients
# Training FLOPs per sample over forward FLOPs: forward, plus a backward pass of about twice it.
TRAINING_FLOPS_FACTOR = 3.0


def _column(frame: pd.DataFrame, name: str) -> np.ndarray | None:
    if name not in frame.columns:
        return None
    values = pd.to_numeric(frame[name], errors="coerce").to_numpy(float)
    return values if np.all(np.isfinite(values) & (values > 0)) else None


def _rank(design: np.ndarray) -> int:
    """The rank of ``design`` with its columns scaled alike (they differ by orders of magnitude)."""
    norms = np.linalg.norm(design, axis=0)
    return int(np.linalg.matrix_rank(design[:, norms > 0] / norms[norms > 0], tol=1e-6))


class CastelloModel(PerformanceModel):
    name = "castello"
    description = (
        "analytical compute + alpha-beta ring all-reduce (after Castello et al.): "
        "I*(b 3F/R + 2(p-1)/p 4W/B + 2(p-1) alpha)"
    )
    min_points = 2
    # Compute scales with F and the all-reduce with W of each row when the table has them; no
    # term depends on the node count.
    capabilities = Capabilities(
        uses_network_features=True,
        extrapolates_in=NO_NODE_TREND,
        per_iteration=True,
        collective_model=True,
    )

    def _feature(self, frame: pd.DataFrame, name: str, fitted: float | None) -> np.ndarray:
        if fitted is None:
            return np.ones(len(frame))
        values = _column(frame, name)
        return np.full(len(frame), fitted) if values is None else values

    def _design(self, frame: pd.DataFrame) -> np.ndarray:
        p = frame["procs"].to_numpy(float)
        b = frame["batch_size"].to_numpy(float)
        flops = self._feature(frame, "flops_per_sample", self.flops_)
        params = self._feature(frame, "param_count", self.params_)
        # The all-reduce runs once per optimizer step of `steps` micro-batch iterations.
        steps = accumulation_steps(frame)
        return np.column_stack(
            [
                b * TRAINING_FLOPS_FACTOR * flops,
                2.0 * (p - 1.0) / p * BYTES_PER_PARAM * params / steps,
                2.0 * (p - 1.0) / steps,
            ]
        )

    def fit(self, frame: pd.DataFrame) -> CastelloModel:
        self.check_enough(frame)
        flops = _column(frame, "flops_per_sample")
        params = _column(frame, "param_count")
        # F and W of the network fitted on: rows to predict that lack the columns (a report's
        # prediction grid, `dlperf predict`) are that network.
        self.flops_ = float(np.median(flops)) if flops is not None else None
        self.params_ = float(np.median(params)) if params is not None else None
        t = iteration_seconds(frame)
        design = self._design(frame)
        scaled = design / t[:, None]
        if _rank(scaled) < design.shape[1]:
            scaled = scaled * np.array([1.0, 1.0, 0.0])
        coef, _ = nnls(scaled, np.ones_like(t))
        if coef[0] <= 0:
            raise InsufficientData("castello: no positive compute rate fits these points")
        self.inv_rate_, self.inv_bandwidth_, self.latency_ = map(float, coef)
        return self

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        coef = np.array([self.inv_rate_, self.inv_bandwidth_, self.latency_])
        return iterations(frame) * (self._design(frame) @ coef)

    def to_dict(self) -> dict:
        return self._entry(
            # The network's F and W when the table had them (null: absorbed in the constants).
            flops_per_sample=self.flops_,
            param_count=self.params_,
            constants={
                "inv_flop_rate": self.inv_rate_,
                "inv_bandwidth": self.inv_bandwidth_,
                "latency_s": self.latency_,
            },
            # Readable hardware numbers (per unit F/W when the table had none); the FLOP rate
            # counts training FLOPs (3F per sample).
            hardware={
                "flop_rate": 1.0 / self.inv_rate_ if self.inv_rate_ > 0 else None,
                "bandwidth_bytes_per_s": (
                    1.0 / self.inv_bandwidth_ if self.inv_bandwidth_ > 0 else None
                ),
            },
        )

    @classmethod
    def from_dict(cls, data: dict) -> CastelloModel:
        model = cls._unfitted(data)
        c = data["constants"]
        model.inv_rate_, model.inv_bandwidth_ = float(c["inv_flop_rate"]), float(c["inv_bandwidth"])
        model.latency_ = float(c["latency_s"])
        model.flops_ = data.get("flops_per_sample")
        model.params_ = data.get("param_count")
        return model
