"""The adaptive loop on a table that is already measured: what it would have saved.

Measuring a configuration means reading its row of the table (every repetition: its ``n_reps``
runs). The loop's model, fitted on the configurations it chose, is judged on every configuration of
the grid, beside the same model fitted on random subsets of the same number of runs and on the
whole grid.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dlperf.models import InsufficientData, make_model
from dlperf.models.base import TARGET

from .design import series_keys
from .loop import AdaptiveSettings, _cost, next_round

RANDOM_SEEDS = 5  # random subsets averaged for mape_random
ROUND_COLUMNS = [
    "round",
    "framework",
    "network",
    "device",
    "nodes",
    "procs",
    "batch_size",
    "data_size",
    "runs",
    "reason",
    "runs_used",
    "widest_interval",
    "mape_after",
]


def grid_mape(grid: pd.DataFrame, train: pd.DataFrame, settings: AdaptiveSettings) -> float:
    """MAPE (%) over every configuration of the grid of the model fitted per series on ``train``.

    A series the model cannot be fitted on makes the error undefined (NaN): the loop and the
    random subsets guarantee each series enough configurations."""
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
        except InsufficientData:
            return float("nan")
        measured = series[TARGET].to_numpy(float)
        errors.append(np.abs(model.predict(series) - measured) / measured)
    return float(np.mean(np.concatenate(errors)) * 100)


def random_subset(grid: pd.DataFrame, runs: int, minimum: int, rng) -> pd.DataFrame | None:
    """Random configurations costing at most ``runs`` runs, at least ``minimum`` per series (so
    the model can be fitted everywhere); None when no such subset was drawn."""
    cost = _cost(grid)
    series = grid.groupby(series_keys(grid), sort=True).ngroup().to_numpy()
    for _ in range(200):
        order = rng.permutation(len(grid))
        take = order[np.cumsum(cost[order]) <= runs]
        counts = np.bincount(series[take], minlength=series.max() + 1)
        if counts.min() >= minimum:
            return grid.iloc[np.sort(take)]
    return None


def replay(
    grid: pd.DataFrame, budget_fraction: float, settings: AdaptiveSettings
) -> tuple[pd.DataFrame, dict]:
    """(rounds, summary) of the adaptive loop on a measured grid within a share of its runs."""
    if not 0.0 < budget_fraction <= 1.0:
        raise ValueError(
            f"--budget is a fraction of the grid's runs in (0, 1], got {budget_fraction}"
        )
    grid = grid.reset_index(drop=True)
    runs_total = int(_cost(grid).sum())
    budget = int(np.floor(budget_fraction * runs_total))
    loop_settings = AdaptiveSettings(**{**settings.__dict__, "budget_runs": budget})
    measured = grid.iloc[0:0]
    rounds, runs_used, number = [], 0, 0
    while True:
        choice = next_round(grid, measured, loop_settings, runs_used)
        if choice.chosen.empty:
            stop = choice.stop
            break
        chosen = grid.loc[choice.chosen.index] if number == 0 else choice.chosen
        measured = pd.concat([measured, grid.loc[chosen.index]])
        runs_used += int(_cost(chosen).sum())
        mape = grid_mape(grid, measured, settings)
        for index, row in chosen.iterrows():
            rounds.append(
                {
                    **{c: row[c] for c in ROUND_COLUMNS[1:8] if c in row},
                    "round": number,
                    "runs": int(_cost(grid.loc[[index]])[0]),
                    "reason": choice.chosen.loc[index, "reason"],
                    "runs_used": runs_used,
                    "widest_interval": choice.widest,
                    "mape_after": mape,
                }
            )
        number += 1
    rng = np.random.default_rng(settings.seed)
    minimum = int(measured.groupby(series_keys(grid)).size().min()) if len(measured) else 1
    random_errors = []
    for _ in range(RANDOM_SEEDS):
        subset = random_subset(grid, runs_used, min(minimum, settings.initial), rng)
        if subset is not None:
            random_errors.append(grid_mape(grid, subset, settings))
    summary = {
        "runs_used": runs_used,
        "runs_total": runs_total,
        "budget_runs": budget,
        "configurations_used": int(len(measured)),
        "configurations_total": int(len(grid)),
        "rounds": number,
        "stop": stop,
        "model": settings.model,
        "mape_adaptive": grid_mape(grid, measured, settings),
        "mape_random": float(np.mean(random_errors)) if random_errors else None,
        "mape_random_seeds": len(random_errors),
        "mape_full": grid_mape(grid, grid, settings),
        "seed": settings.seed,
    }
    return pd.DataFrame(rounds, columns=ROUND_COLUMNS), summary
