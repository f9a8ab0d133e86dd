"""The adaptive mode of the workflow: the candidate grid from the config, the measured points from
the run records, and one round's choice written for the next checkpoint to read.

A round file (results/adaptive/round{r}.json) lists the runs chosen for round r (a configuration
and its repetition each), why, and, when the sweep stops there, the reason; the workflow measures
them with the ordinary benchmark rule, so a finished round is never measured again.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import pandas as pd

from dlperf.config import run_configs
from dlperf.io import atomic_write_json
from dlperf.measurements import tables
from dlperf.measurements.points import to_points

from .design import series_keys
from .loop import CONFIGURATION, AdaptiveSettings, next_round
from .rounds import read_round, record_paths  # noqa: F401 (the workflow's adaptive mode)
from .scoring import kfold_mape


def candidate_grid(config: dict) -> pd.DataFrame:
    """Every configuration of the configured sweep, with its cost in runs (the repetitions)."""
    runs = pd.DataFrame([vars(run) for run in run_configs(config)])
    grid = runs.groupby(CONFIGURATION, sort=True).size().rename("n_reps").reset_index()
    return grid


def settings_of(config: dict) -> AdaptiveSettings:
    section = dict(config.get("adaptive") or {})
    section.setdefault("seed", config["seed"])
    return AdaptiveSettings.from_config(section)


def choose_round(
    config: dict, records: Sequence[str | os.PathLike], number: int, out: str | os.PathLike
) -> dict:
    """Round ``number``'s configurations from the records measured so far -> ``out`` (JSON)."""
    settings = settings_of(config)
    grid = candidate_grid(config)
    timings, failures = tables.build_tables(records)
    measured = to_points(timings) if len(timings) else grid.iloc[0:0]
    # A configuration that failed (out of memory, crashed) was measured as far as it can be: it
    # leaves the grid, or every round would choose it again.
    if len(failures):
        failed = set(map(tuple, failures[CONFIGURATION].astype(str).to_numpy()))
        keep = [tuple(map(str, row)) not in failed for row in grid[CONFIGURATION].to_numpy()]
        grid = grid[np.array(keep, bool)]
    choice = next_round(grid, measured, settings, runs_used=len(records))
    chosen = [
        {
            **{c: _plain(row[c]) for c in CONFIGURATION},
            "rep": int(row["rep"]),
            "reason": str(row["reason"]),
            "score": _plain(row.get("score", np.nan)),
        }
        for _, row in choice.chosen.iterrows()
    ]
    result = {
        "round": number,
        "runs_before": len(records),
        "measured_configurations": int(len(measured)),
        "widest_interval": _plain(choice.widest),
        "kfold_mape": _plain(_validation_error(measured, settings)),
        "stop": choice.stop,
        "chosen": chosen,
        "series": sorted(grid[series_keys(grid)].astype(str).agg("/".join, axis=1).unique()),
    }
    atomic_write_json(out, result)
    return result


def _plain(value):
    """JSON-safe scalars: NumPy numbers as Python ones, non-finite floats as None."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


def _validation_error(measured: pd.DataFrame, settings: AdaptiveSettings) -> float:
    """Mean over series of the main model's grouped k-fold MAPE on what is measured so far."""
    if measured.empty:
        return float("nan")
    errors = [
        kfold_mape(
            series.reset_index(drop=True), settings.model, settings.model_settings, settings.seed
        )
        for _, series in measured.groupby(series_keys(measured), sort=True)
    ]
    finite = [e for e in errors if np.isfinite(e)]
    return float(np.mean(finite)) if finite else float("nan")
