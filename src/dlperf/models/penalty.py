"""The choice of the generic model's L1 penalty weight by inner cross-validation (docs/model.md).

The inner folds are grouped by configuration (:func:`dlperf.folds.grouped_kfold`): rows that
differ only in data size or repetition are near-copies, and a fold that held one of them out while
training on its twin would reward the weakest penalty.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from dlperf.folds import grouped_kfold, n_configurations

from .base import TARGET

# Fits the training rows at one penalty weight and returns a predictor of epoch times.
FitAtLambda = Callable[[pd.DataFrame, float], Callable[[pd.DataFrame], np.ndarray]]


def choose_lambda(
    frame: pd.DataFrame,
    lambdas: Sequence[float],
    inner_folds: int,
    seed: int,
    fit: FitAtLambda,
) -> tuple[float, dict[str, float]]:
    """The penalty weight and the inner-CV MAPE (%) of each candidate (empty when not run).

    The largest weight within 2% of the best error wins: the simplest model the data allow."""
    if len(lambdas) == 1:
        return float(lambdas[0]), {}
    # Too few configurations for folds of two or more each: the weakest penalty, untested.
    if n_configurations(frame) < 2 * inner_folds:
        return float(min(lambdas)), {}
    splits = grouped_kfold(frame, inner_folds, seed)
    measured = frame[TARGET].to_numpy(float)
    scores = {}
    for lam in lambdas:
        errors = []
        for train, test in splits:
            predict = fit(frame.iloc[train].reset_index(drop=True), lam)
            pred = predict(frame.iloc[test])
            errors.append(np.abs(pred - measured[test]) / measured[test])
        scores[lam] = float(np.mean(np.concatenate(errors)) * 100)
    best = min(scores.values())
    chosen = float(max(lam for lam, s in scores.items() if s <= best * 1.02 + 1e-9))
    return chosen, {repr(k): v for k, v in scores.items()}
