"""Ernest (Venkataraman et al., NSDI 2016): non-negative least squares on 1, d/p, log p, p.

    T = theta0 + theta1 d/p + theta2 log2(p) + theta3 p

theta1 is the per-sample work a worker does, log p a tree-shaped aggregation and p a
per-worker (all-to-one) cost. Rows are weighted by 1/T so the fit minimises relative
error, the error every model here is judged by.

It has no notion of iterations, so gradient accumulation (``grad_accum_steps``) is not in it:
dividing log p and p by the micro-batches per step was measured worse on both published tables
that carry accumulation (docs/model.md, "Gradient accumulation").
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.optimize import nnls

from .base import Capabilities, InsufficientData, PerformanceModel, positive_target

# The regressors of its linear model, in the order of its constants (not configuration features).
REGRESSORS = ("1", "d/p", "log2(p)", "p")


def _design(frame: pd.DataFrame) -> np.ndarray:
    p = frame["procs"].to_numpy(float)
    d = frame["data_size"].to_numpy(float)
    return np.column_stack([np.ones_like(p), d / p, np.log2(p), p])


class ErnestModel(PerformanceModel):
    name = "ernest"
    description = "Ernest: NNLS on T = t0 + t1 d/p + t2 log2 p + t3 p"
    min_points = 3
    # Its features are d/p, log p and p: no batch-size or node-count trend.
    capabilities = Capabilities(extrapolates_in=frozenset({"procs", "data_size"}))

    def fit(self, frame: pd.DataFrame) -> ErnestModel:
        self.check_enough(frame)
        target = positive_target(frame, self.name)
        design = _design(frame)
        self.theta_, _ = nnls(design / target[:, None], np.ones_like(target))
        if not np.any(self.theta_ > 0):
            raise InsufficientData("ernest: NNLS found no non-negative fit to these points")
        return self

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        return _design(frame) @ self.theta_

    def to_dict(self) -> dict:
        return self._entry(constants=dict(zip(REGRESSORS, map(float, self.theta_), strict=True)))

    @classmethod
    def from_dict(cls, data: dict) -> ErnestModel:
        model = cls._unfitted(data)
        model.theta_ = np.array([float(data["constants"][k]) for k in REGRESSORS])
        return model
