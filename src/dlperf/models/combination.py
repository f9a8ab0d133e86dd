"""How the answer combines its models at a row: the weighted median of their log times, the
models' spread about it (form uncertainty), and the floor their bootstrap intervals set
(constants uncertainty). docs/model.md, "The answer".

``dlperf.validate.metrics`` has a weighted median of whole-number (bootstrap count) weights over
one vector; this one takes real weights over the models, per row, and treats two models apart.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def weighted_median(logs: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per column of ``logs`` (one row per model), the weighted median under ``weights``: the
    value at which the models below hold half the weight (midway where a model's weight ends
    exactly at half). Unlike a weighted mean, one model far from the others (a form running
    away beyond the data) moves it no further than the next model. Measured on the published
    tables (benchmarks/answer_backtest.py, p_max/2): MAPE 3.96 against 4.23 % on Lambda's, 2.89
    against 3.11 on NVIDIA's grid, 2.96 against 3.63 on CSC's. Of two models neither is the
    outlier: their weighted mean, as the median of two is their mean (the heavier one alone
    measured 3.34 against 2.89 % on the grid)."""
    shares = np.asarray(weights, float) / np.sum(weights)
    if len(logs) < 3:
        return np.sum(shares[:, None] * logs, axis=0)
    order = np.argsort(logs, axis=0, kind="stable")
    values = np.take_along_axis(logs, order, axis=0)
    below = np.cumsum(shares[order], axis=0)
    index = np.argmax(below >= 0.5 - 1e-9, axis=0)
    columns = np.arange(logs.shape[1])
    median = values[index, columns]
    # The weight ends at half on a model: midway to the next one (two equal weights: the mean).
    at_half = np.abs(below[index, columns] - 0.5) < 1e-9
    upper = values[np.minimum(index + 1, len(values) - 1), columns]
    return np.where(at_half, (median + upper) / 2.0, median)


def model_spread(logs: np.ndarray, shares: np.ndarray, center) -> np.ndarray:
    """Weighted root-mean-square distance of the combined models' log times (rows of
    ``logs``, weights ``shares`` summing to 1) from ``center``: the forms the backtest cannot
    tell apart, and how far apart they are there."""
    shares = shares.reshape((-1,) + (1,) * (np.ndim(logs) - 1))
    return np.sqrt(np.sum(shares * (logs - center) ** 2, axis=0))


def bootstrap_floor(tables: dict[str, pd.DataFrame], models, at: np.ndarray):
    """The median over the combined ``models`` of their bootstrap bounds at rows ``at`` (over
    the models that have them; NaN where none has). Not weighted: the weights say how well a
    form extrapolated, not how steady its constants are. The median, not the leading model's:
    a model refitted on resampled configurations of three or four worker counts can swing far
    (Ernest's bootstrap on NVIDIA's BART series reached 2.7x its prediction, with over half
    the weight), and the interval takes the models' own errors from the backtest already
    (benchmarks/answer_backtest.py, NVIDIA multi-node, p_max/2: median width 25.6 % against 33.0
    % weighted, coverage 94 % both)."""
    names = [
        m
        for m in models
        if np.all(np.isfinite(tables[m]["epoch_time_lo_s"].to_numpy(float)[at]))
        and np.all(np.isfinite(tables[m]["epoch_time_hi_s"].to_numpy(float)[at]))
    ]
    if not names:
        return np.full(len(at), np.nan), np.full(len(at), np.nan)
    bounds = []
    for column in ("epoch_time_lo_s", "epoch_time_hi_s"):
        logs = np.stack([np.log(tables[m][column].to_numpy(float)[at]) for m in names])
        bounds.append(np.exp(np.median(logs, axis=0)))
    return bounds[0], bounds[1]
