"""Paired comparison of every model with the best one of its group (docs/report.md).

A group is one (framework, network, protocol). Its best model has the lowest MAPE among the
rows that are ``ok``. Every other ok model is compared with it on the held-out points both
predicted (a model that skipped a fold is compared on the points they share): the difference
of their MAPEs (model - best) gets a bootstrap interval that resamples the SAME held-out units
(folds, levels or configurations) for both, so the errors they share cancel. ``vs_best`` is

- ``best``: the best model of the group (difference 0);
- ``worse``: the interval of the difference lies above 0;
- ``not_shown_worse``: the interval includes 0 (or lies below it, which can happen on the common
  points of a model that skipped a fold), or there is no interval (a single common unit), so
  the data do not show the model worse than the best.

Rows that are not ok get no ``vs_best``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .metrics import LEVEL, unit_bootstrap, weighted_mape

VS_BEST_COLUMNS = ["vs_best", "vs_best_diff", "vs_best_diff_lo", "vs_best_diff_hi"]
# Columns of a model's held-out points the comparison reads: which split and row a point is
# (the same point for every model of the group), its resampling unit and its error.
POINT_KEY = ["fold", "row"]


def _note(row: dict, text: str) -> None:
    row["reason"] = f"{row['reason']}; {text}" if row.get("reason") else text


def _difference(
    model: pd.DataFrame, best: pd.DataFrame, n_boot: int, seed: int, level: float
) -> tuple[float, float, float, int]:
    """MAPE difference (model - best) on the points both predicted, its interval, and the
    number of held-out units those points span."""
    common = model[POINT_KEY + ["unit", "ape"]].merge(
        best[POINT_KEY + ["ape"]], on=POINT_KEY, suffixes=("", "_best")
    )
    if common.empty:
        return np.nan, np.nan, np.nan, 0
    errors, best_errors = common["ape"].to_numpy(float), common["ape_best"].to_numpy(float)
    units, index = np.unique(common["unit"].to_numpy(), return_inverse=True)

    def statistic(counts: np.ndarray) -> np.ndarray:
        weights = counts[:, index]
        return (weighted_mape(errors, weights) - weighted_mape(best_errors, weights))[None, :]

    (low,), (high,) = unit_bootstrap(statistic, len(units), n_boot, seed, level)
    diff = float(errors.mean() - best_errors.mean())
    if np.isfinite(low):
        low, high = min(low, diff), max(high, diff)
    return diff, float(low), float(high), len(units)


def compare_with_best(
    rows: list[dict],
    held_out: dict[str, pd.DataFrame],
    n_boot: int,
    seed: int,
    level: float = LEVEL,
) -> None:
    """Fill the ``vs_best`` columns of one group's summary rows (in place).

    ``held_out`` maps each ok model to its held-out points (columns fold, row, unit, ape)."""
    candidates = [r for r in rows if r["status"] == "ok" and np.isfinite(r["mape"])]
    if not candidates:
        return
    # Lowest MAPE; ties go to the first model name, so exactly one row is the best.
    best = min(candidates, key=lambda r: (r["mape"], r["model"]))
    best.update(vs_best="best", vs_best_diff=0.0, vs_best_diff_lo=0.0, vs_best_diff_hi=0.0)
    for row in candidates:
        if row is best:
            continue
        diff, low, high, n_units = _difference(
            held_out[row["model"]], held_out[best["model"]], n_boot, seed, level
        )
        row.update(vs_best_diff=diff, vs_best_diff_lo=low, vs_best_diff_hi=high)
        if n_units == 0:
            _note(row, f"no held-out point in common with the best model {best['model']}")
            continue
        row["vs_best"] = "worse" if np.isfinite(low) and low > 0 else "not_shown_worse"
        if not np.isfinite(low):
            why = "they share one held-out unit" if n_units < 2 else "no bootstrap resamples"
            _note(
                row,
                f"no interval for the difference with {best['model']} ({why}), "
                "so it is not shown worse",
            )
