"""How uncertain, and how informative, each unmeasured configuration is.

Three signals, each relative so configurations of different series compare:
- the width of the main model's bootstrap prediction interval, relative to its prediction;
- the disagreement between models: the spread of log predictions of the main model and the
  comparison models (where models that fit the measured points equally well part ways, a
  measurement decides between them);
- coverage: a level of an axis (a node count, a worker count, a batch size) the series has never
  measured; a new node count weighs most, since no single-node point informs the inter-node cost.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from dlperf.folds import grouped_kfold
from dlperf.models import InsufficientData, ModelUnavailable, intervals, make_model
from dlperf.models.base import TARGET

from .design import AXES

# Weight of a never-measured level, per axis, in units of relative interval width.
NOVELTY_WEIGHT = {"nodes": 1.0, "procs": 0.5, "batch_size": 0.25, "data_size": 0.0}


@dataclass(frozen=True)
class Scores:
    """Per candidate row: prediction, interval, and the parts of the score."""

    prediction: np.ndarray
    relative_width: np.ndarray
    disagreement: np.ndarray
    novelty: np.ndarray
    new_levels: list[str]

    @property
    def total(self) -> np.ndarray:
        """(1 + novelty) x (width + disagreement), each capped at 1.

        Capped: fitted on a handful of configurations, bootstrap refits can be wild, and a width
        of 300% says no more than one of 100% (the prediction is not known); a level never
        measured multiplies, so new worker and node counts come first where widths are alike."""
        width = np.where(np.isfinite(self.relative_width), self.relative_width, 1.0)
        return (1.0 + self.novelty) * (np.minimum(width, 1.0) + np.minimum(self.disagreement, 1.0))


def novelty(measured: pd.DataFrame, candidates: pd.DataFrame) -> tuple[np.ndarray, list[str]]:
    """Weighted count of never-measured levels per candidate, and their description."""
    weight = np.zeros(len(candidates))
    described = [[] for _ in range(len(candidates))]
    for axis in (a for a in AXES if NOVELTY_WEIGHT[a] > 0):
        seen = set(measured[axis].tolist())
        new = ~candidates[axis].isin(seen).to_numpy()
        weight += NOVELTY_WEIGHT[axis] * new
        for i in np.flatnonzero(new):
            described[i].append(f"{axis}={candidates[axis].iloc[i]}")
    return weight, [", ".join(d) for d in described]


def score_series(
    measured: pd.DataFrame,
    candidates: pd.DataFrame,
    model: str,
    model_settings: dict,
    compare_models: tuple[str, ...],
    n_boot: int,
    level: float,
    seed: int,
) -> Scores:
    """Scores of one series' unmeasured candidates, from its measured points."""
    fresh, described = novelty(measured, candidates)
    try:
        main = make_model(model, model_settings, seed).fit(measured)
    except (InsufficientData, ModelUnavailable):
        # Too few points for the model, or it cannot run here: only coverage can guide.
        nan = np.full(len(candidates), np.nan)
        return Scores(
            nan, np.full(len(candidates), np.inf), np.zeros(len(candidates)), fresh, described
        )
    prediction = np.asarray(main.predict(candidates), float)
    stored = intervals.bootstrap_interval(main, measured, seed, refits=n_boot)
    bounds = intervals.interval(stored, candidates, level, seed)
    if bounds is None:  # no refit could be fitted: nothing is known about the spread
        lo, hi = np.full(len(candidates), -np.inf), np.full(len(candidates), np.inf)
    else:
        lo, hi = bounds
    width = (hi - lo) / prediction
    logs = [np.log(prediction)]
    for name in compare_models:
        try:
            other = make_model(name, {}, seed).fit(measured)
        except (InsufficientData, ModelUnavailable):
            continue
        predicted = np.asarray(other.predict(candidates), float)
        if np.all(np.isfinite(predicted) & (predicted > 0)):
            logs.append(np.log(predicted))
    disagreement = np.std(np.vstack(logs), axis=0) if len(logs) > 1 else np.zeros(len(candidates))
    return Scores(prediction, width, disagreement, fresh, described)


def kfold_mape(measured: pd.DataFrame, model: str, model_settings: dict, seed: int) -> float:
    """Grouped 3-fold MAPE (%) of the model on the measured points of one series (NaN when the
    points are too few to hold any out)."""
    errors = []
    for train, test in grouped_kfold(measured, 3, seed):
        if len(test) == 0 or len(train) == 0:
            continue
        try:
            fitted = make_model(model, model_settings, seed).fit(measured.iloc[train])
        except (InsufficientData, ModelUnavailable):
            continue
        truth = measured[TARGET].to_numpy(float)[test]
        errors.append(np.abs(fitted.predict(measured.iloc[test]) - truth) / truth)
    return float(np.mean(np.concatenate(errors)) * 100) if errors else float("nan")
