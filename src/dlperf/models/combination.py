"""How the answer combines its models at a row: the weighted median of their log times, the
models' spread about it (form uncertainty), and the floor their bootstrap intervals set
(constants uncertainty). docs/model.md, "The answer".

``dlperf.validate.metrics`` has a weighted median of whole-number (bootstrap count) weights over
one vector; this one takes real weights over the models, per row, and interpolates.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def weighted_median(logs: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per column of ``logs`` (one row per model), the weighted median under ``weights``,
    interpolated: each model stands at the middle of its share of the cumulative weight, and
    the median is read off the straight line between the two models around one half (the
    first or last model's value beyond them). Unlike a weighted mean, one model far from the
    others (a form running away beyond the data) moves it no further than its neighbours;
    unlike a plain weighted median it moves continuously with the weights (no jump where the
    half passes from one model to the next as the weights change with the ratio asked), and of
    two models it is their weighted mean, with no case apart. Measured with the answer's other
    rules in place (benchmarks/answer_backtest.py, p_max/2): MAPE 3.12 % against 3.36 for the
    weighted mean on NVIDIA's grid (2.89 for the plain weighted median), the same within 0.05 on
    the other tables."""
    shares = np.asarray(weights, float) / np.sum(weights)
    order = np.argsort(logs, axis=0, kind="stable")
    values = np.take_along_axis(logs, order, axis=0)
    ordered = shares[order]
    middles = np.cumsum(ordered, axis=0) - ordered / 2.0
    return np.asarray(
        [np.interp(0.5, middles[:, j], values[:, j]) for j in range(logs.shape[1])], float
    )


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
