"""The adaptive loop on a table that is already measured: what it would have saved.

Measuring a run means reading one row of the table (one repetition of a configuration; the
repetitions of a configuration are read in the table's order). The loop's model, fitted on the runs
it chose (the median over the repetitions read, per configuration), is judged on every
configuration of the grid (the median over all its repetitions), beside the same model fitted on
random subsets of as many runs and on the whole grid.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dlperf.measurements.points import to_points
from dlperf.models import InsufficientData, ModelUnavailable, make_model
from dlperf.models.base import TARGET

from .design import series_keys
from .loop import CONFIGURATION, AdaptiveSettings, next_round

RANDOM_SEEDS = 5  # random subsets averaged for mape_random
ROUND_COLUMNS = [
    "round",
    *CONFIGURATION,
    "rep",
    "reason",
    "runs_used",
    "widest_interval",
    "mape_after",
]


def points_of(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per configuration: the median epoch time over its runs, and how many."""
    return to_points(runs)


def grid_mape(grid: pd.DataFrame, train: pd.DataFrame, settings: AdaptiveSettings) -> float:
    """MAPE (%) over every configuration of the grid of the model fitted per series on ``train``
    (points). A series the model cannot be fitted on makes the error undefined (NaN)."""
    errors = []
    keys = series_keys(grid)
    trained = dict(tuple(train.groupby(keys, sort=True)))
    for key, series in grid.groupby(keys, sort=True):
        points = trained.get(key)
        if points is None:
            return float("nan")
        try:
            model = make_model(settings.model, settings.model_settings, settings.seed)
            model.fit(points.reset_index(drop=True))
        except (InsufficientData, ModelUnavailable):
            return float("nan")
        measured = series[TARGET].to_numpy(float)
        errors.append(np.abs(model.predict(series) - measured) / measured)
    return float(np.mean(np.concatenate(errors)) * 100)


def random_runs(runs: pd.DataFrame, count: int, minimum: int, rng) -> pd.DataFrame | None:
    """``count`` random runs covering at least ``minimum`` configurations of every series (so the
    model can be fitted everywhere); None when no such draw was found."""
    config = runs.groupby(CONFIGURATION, sort=True).ngroup().to_numpy()
    series = runs.groupby(series_keys(runs), sort=True).ngroup().to_numpy()
    for _ in range(200):
        take = rng.choice(len(runs), size=min(count, len(runs)), replace=False)
        covered = pd.Series(config[take]).groupby(series[take]).nunique()
        if len(covered) == series.max() + 1 and covered.min() >= minimum:
            return runs.iloc[np.sort(take)]
    return None


def replay(
    runs: pd.DataFrame, budget_fraction: float, settings: AdaptiveSettings
) -> tuple[pd.DataFrame, dict]:
    """(rounds, summary) of the adaptive loop on measured runs within a share of them."""
    if not 0.0 < budget_fraction <= 1.0:
        raise ValueError(
            f"--budget is a fraction of the grid's runs in (0, 1], got {budget_fraction}"
        )
    runs = runs.sort_values(CONFIGURATION + ["rep"], kind="stable").reset_index(drop=True)
    runs["_rep_order"] = runs.groupby(CONFIGURATION, sort=False).cumcount()
    grid = points_of(runs)
    runs_total = len(runs)
    budget = int(np.floor(budget_fraction * runs_total))
    loop_settings = AdaptiveSettings(**{**settings.__dict__, "budget_runs": budget})
    taken = np.zeros(runs_total, bool)
    lookup = {
        (*key, rep): i
        for i, (key, rep) in enumerate(
            zip(
                runs[CONFIGURATION].itertuples(index=False, name=None),
                runs["_rep_order"],
                strict=True,
            )
        )
    }
    rounds, number, stop = [], 0, None
    measured = grid.iloc[0:0]
    while True:
        choice = next_round(grid, measured, loop_settings, int(taken.sum()))
        if choice.chosen.empty:
            stop = choice.stop
            break
        for _, row in choice.chosen.iterrows():
            taken[lookup[(*(row[c] for c in CONFIGURATION), int(row["rep"]))]] = True
        measured = points_of(runs[taken])
        mape = grid_mape(grid, measured, settings)
        for _, row in choice.chosen.iterrows():
            rounds.append(
                {
                    **{c: row[c] for c in CONFIGURATION},
                    "round": number,
                    "rep": int(row["rep"]),
                    "reason": row["reason"],
                    "runs_used": int(taken.sum()),
                    "widest_interval": choice.widest,
                    "mape_after": mape,
                }
            )
        number += 1
    runs_used = int(taken.sum())
    rng = np.random.default_rng(settings.seed)
    # A budget too small for any round measured nothing: no series to take the minimum of.
    sizes = measured.groupby(series_keys(grid)).size()
    minimum = min(int(sizes.min()), settings.initial) if len(sizes) else settings.initial
    random_errors = []
    for _ in range(RANDOM_SEEDS):
        subset = random_runs(runs, runs_used, minimum, rng)
        if subset is not None:
            random_errors.append(grid_mape(grid, points_of(subset), settings))
    # An error that cannot be computed (a series the model cannot be fitted on) is null.
    summary = {
        "runs_used": runs_used,
        "runs_total": runs_total,
        "budget_runs": budget,
        "configurations_used": int(len(measured)),
        "configurations_total": int(len(grid)),
        "rounds": number,
        "stop": stop,
        "model": settings.model,
        "mape_adaptive": _finite(grid_mape(grid, measured, settings)),
        "mape_random": _finite(np.mean(random_errors)) if random_errors else None,
        "mape_random_seeds": len(random_errors),
        "mape_full": _finite(grid_mape(grid, grid, settings)),
        "seed": settings.seed,
    }
    return pd.DataFrame(rounds, columns=ROUND_COLUMNS), summary


def _finite(value: float) -> float | None:
    value = float(value)
    return value if np.isfinite(value) else None
