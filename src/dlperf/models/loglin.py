"""The simplest fit a performance model must beat: a + c*log2 per series (docs/model.md).

Per-iteration time is fitted, per batch size, as a straight line in log2 p

    t_iter(p | b) = a_b + c_b * log2 p / g

(g the micro-batches per optimizer step, ``grad_accum_steps``: the exchange is once per step)

(points that differ only in node count or data size belong to the same series), and, for a batch
size that was not measured, per worker count as a line in log2 b

    t_iter(b | p) = a_p + c_p * log2 b.

A line is used only where it has a trend: a batch size measured at a single worker count says
nothing about how its time grows with p, so a point off that level is predicted by the line in
log2 b at its worker count (a constant series would predict no cost of adding workers at all:
k-fold errors of 100-150 % on the default run, where holding out one configuration leaves such
series). A point in no line with a trend (an unmeasured batch size at an unmeasured worker
count) uses one line in both, a + c_p*log2 p + c_b*log2 b, fitted on all points. Epoch time is
I(p, b, d) * t_iter. Each line minimises the squared relative error of t_iter by ordinary least
squares.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .base import (
    NO_NODE_TREND,
    Capabilities,
    PerformanceModel,
    accumulation_steps,
    iteration_seconds,
    iterations,
    positive_target,
)


def _relative_line(columns: list[np.ndarray], t: np.ndarray) -> np.ndarray:
    """Least-squares coefficients of sum_k x_k col_k ~ t in relative error; constant columns
    beyond the intercept (a single level) get 0."""
    design = np.column_stack(columns)
    varying = [0] + [k for k in range(1, design.shape[1]) if np.ptp(design[:, k]) > 0]
    coefficients = np.zeros(design.shape[1])
    weighted = design[:, varying] / t[:, None]
    coefficients[varying] = np.linalg.lstsq(weighted, np.ones(len(t)), rcond=None)[0]
    return coefficients


def _series(keys: np.ndarray, x: np.ndarray, t: np.ndarray) -> dict[float, tuple[float, float]]:
    """The line a + c*x of every key measured at two or more levels of x (a trend)."""
    lines = {}
    for key in np.unique(keys):
        rows = keys == key
        if np.unique(x[rows]).size < 2:
            continue
        a, c = _relative_line([np.ones(rows.sum()), x[rows]], t[rows])
        lines[float(key)] = (float(a), float(c))
    return lines


class LogLinearModel(PerformanceModel):
    name = "loglin"
    description = "loglin: I * (a + c log2 p) per batch size; a + c log2 b per worker count"
    min_points = 2
    # c log2 p is a tree all-reduce's cost: the collective's shape, fitted per batch size.
    capabilities = Capabilities(
        extrapolates_in=NO_NODE_TREND,
        per_iteration=True,
        collective_model=True,
    )

    def fit(self, frame: pd.DataFrame) -> LogLinearModel:
        self.check_enough(frame)
        positive_target(frame, self.name)
        t = iteration_seconds(frame)
        # The cost of more workers is an exchange per optimizer step of `steps` micro-batches.
        log_p = np.log2(frame["procs"].to_numpy(float)) / accumulation_steps(frame)
        log_b = np.log2(frame["batch_size"].to_numpy(float))
        self.procs_lines_ = _series(frame["batch_size"].to_numpy(float), log_p, t)
        self.batch_lines_ = _series(frame["procs"].to_numpy(float), log_b, t)
        a, c_p, c_b = _relative_line([np.ones(len(t)), log_p, log_b], t)
        self.pooled_ = (float(a), float(c_p), float(c_b))
        return self

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        p = frame["procs"].to_numpy(float)
        b = frame["batch_size"].to_numpy(float)
        log_p = np.log2(p) / accumulation_steps(frame)
        a, c_p, c_b = self.pooled_
        t_iter = a + c_p * log_p + c_b * np.log2(b)
        for row, (procs, batch) in enumerate(zip(p, b, strict=True)):
            if batch in self.procs_lines_:
                a_b, c = self.procs_lines_[batch]
                t_iter[row] = a_b + c * log_p[row]
            elif procs in self.batch_lines_:
                a_p, c = self.batch_lines_[procs]
                t_iter[row] = a_p + c * np.log2(batch)
        return iterations(frame) * t_iter

    def to_dict(self) -> dict:
        return self._entry(
            procs_lines=[
                {"batch_size": b, "a": a, "c": c} for b, (a, c) in self.procs_lines_.items()
            ],
            batch_lines=[{"procs": p, "a": a, "c": c} for p, (a, c) in self.batch_lines_.items()],
            pooled=dict(zip(("a", "c_procs", "c_batch"), self.pooled_, strict=True)),
        )

    @classmethod
    def from_dict(cls, data: dict) -> LogLinearModel:
        model = cls._unfitted(data)
        model.procs_lines_ = {
            float(line["batch_size"]): (float(line["a"]), float(line["c"]))
            for line in data["procs_lines"]
        }
        model.batch_lines_ = {
            float(line["procs"]): (float(line["a"]), float(line["c"]))
            for line in data["batch_lines"]
        }
        pooled = data["pooled"]
        model.pooled_ = (float(pooled["a"]), float(pooled["c_procs"]), float(pooled["c_batch"]))
        return model
