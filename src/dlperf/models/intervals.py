"""Prediction intervals for every model: one bootstrap over configurations, one stored format.

Fitting: the measured configurations (rows that differ only in data size or repetition are one
configuration, :func:`dlperf.folds.configuration_groups`) are resampled with replacement and the
model is refitted on each resample as ``type(model)(**model.refit_params())``, so a model that
chose hyper-parameters keeps them and only its constants vary. Each refit is stored as its
``to_dict()``, with the model's relative training residuals, under the artifact entry's
``interval`` key.

Predicting: the interval at a row is a pair of quantiles of the refits' predictions, each
multiplied by (1 + a resampled relative residual), so it covers both the uncertain constants and
the scatter of single runs. :func:`interval` is the one implementation; ``dlperf predict``,
``dlperf plan`` and the report's bands all reach it through
:func:`dlperf.models.prediction.predict_rows`.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dlperf.folds import configuration_groups

from . import model_from_dict
from .artifact_check import non_finite_field
from .base import TARGET, InsufficientData, PerformanceModel

METHOD = (
    "bootstrap over configurations (nodes, procs, batch_size): each resample refitted with "
    "the fitted model's refit_params(); quantiles of refit predictions x (1 + resampled "
    "relative training residual)"
)
DEFAULT_REFITS = 20
DEFAULT_LEVEL = 0.9
# Residual draws laid over each refit's prediction; fixed so a row's interval does not depend
# on which other rows are predicted with it.
RESIDUAL_DRAWS = 20


def resample_configurations(frame: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """The rows of as many configurations as the frame has, drawn with replacement."""
    groups = configuration_groups(frame)
    n_groups = int(groups.max()) + 1
    rows_of = [np.flatnonzero(groups == g) for g in range(n_groups)]
    chosen = rng.integers(0, n_groups, n_groups)
    rows = np.concatenate([rows_of[g] for g in np.sort(chosen)])
    return frame.iloc[rows].reset_index(drop=True)


def bootstrap_interval(
    model: PerformanceModel, points: pd.DataFrame, seed: int, refits: int = DEFAULT_REFITS
) -> dict:
    """The ``interval`` entry of a fitted model: its refits on resampled configurations.

    A resample the model cannot fit (too few levels left, or constants that are not finite) is
    skipped and counted, never replaced by something else."""
    if refits < 0:
        raise ValueError(f"the number of interval refits must be 0 or more, got {refits}")
    points = points.reset_index(drop=True)
    measured = points[TARGET].to_numpy(float)
    predicted = np.asarray(model.predict(points), dtype=float)
    residuals = (measured - predicted) / predicted
    rng = np.random.default_rng(seed)
    params, name = model.refit_params(), type(model).name
    stored, skipped = [], 0
    for _ in range(refits):
        resample = resample_configurations(points, rng)
        try:
            refit = type(model)(**params).fit(resample)
        except InsufficientData:
            skipped += 1
            continue
        entry = refit.to_dict()
        if non_finite_field(entry, name):
            skipped += 1
            continue
        stored.append(entry)
    return {
        "method": METHOD,
        "level_default": DEFAULT_LEVEL,
        "refits": stored,
        "relative_residuals": [float(r) for r in residuals if math.isfinite(r)],
        "skipped": skipped,
    }


def interval(
    stored: dict | None, rows: pd.DataFrame, level: float, seed: int
) -> tuple[np.ndarray, np.ndarray] | None:
    """(lo, hi) epoch time at each row at the given level, or None without refits."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"the interval level must be between 0 and 1, got {level}")
    refits = (stored or {}).get("refits") or []
    residuals = np.asarray((stored or {}).get("relative_residuals") or [], dtype=float)
    if not refits or residuals.size == 0:
        return None
    preds = np.stack([np.asarray(model_from_dict(r).predict(rows), float) for r in refits])
    rng = np.random.default_rng(seed)
    noise = 1.0 + rng.choice(residuals, size=(len(refits), RESIDUAL_DRAWS, 1))
    spread = (preds[:, None, :] * noise).reshape(-1, len(rows))
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(spread, [alpha, 1.0 - alpha], axis=0)
    return lo, hi


def no_interval_reason(stored: dict | None) -> str:
    """Why an entry has no interval, for captions and errors ("" when it has one)."""
    if not stored:
        return "the artifact stores no bootstrap refits for it (fitted by an older dlperf?)"
    if not stored.get("refits") and not stored.get("skipped"):
        return "it was fitted with no bootstrap refits (interval refits set to 0)"
    if not stored.get("refits"):
        return (
            f"none of its {stored.get('skipped', 0)} bootstrap refits could be fitted "
            "(too few configurations in the resamples)"
        )
    if not stored.get("relative_residuals"):
        return "it has no finite training residual"
    return ""
