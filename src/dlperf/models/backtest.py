"""The extrapolation backtest inside the measured range (docs/model.md, "The answer").

Per series (one network's points), every model is refitted on the smaller worker counts and
scored on the larger ones it did not see: for each training cutoff P (a measured worker count
with at least two measured counts at or below it), train on procs <= P and predict every
configuration with procs > P. A held-out configuration's *extrapolation ratio* is how far it
lies beyond the training range, max(p / P, n / N) with N the most nodes trained on; its error is
log(predicted / measured), averaged over the rows that differ only in data size or repetition.

The artifact stores, per model, the errors as a function of the ratio; the answer
(:mod:`dlperf.models.answer`) weights the models and calibrates its interval on them. The
refits use each model's own fit from scratch (hyper-parameters chosen again on the training
points), so nothing of the held-out counts leaks into them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import InsufficientData, ModelUnavailable, make_model
from .base import TARGET

METHOD = (
    "per training cutoff P (a measured worker count with two or more counts <= P): every model "
    "refitted from scratch on procs <= P, scored on each held-out configuration (procs > P) by "
    "log(predicted / measured); ratio = max(procs / P, nodes / most nodes trained on)"
)
# The largest cutoffs are kept (they are nearest the questions asked beyond the measured range);
# fewer bound the fit stage's time on long series.
MAX_CUTOFFS = 4
CONFIGURATION = ["nodes", "procs", "batch_size"]


def cutoffs(points: pd.DataFrame) -> list[int]:
    """Training cutoffs: measured worker counts with two or more counts at or below them and at
    least one above, the largest :data:`MAX_CUTOFFS` of them."""
    levels = np.sort(points["procs"].unique())
    return [int(v) for v in levels[1:-1]][-MAX_CUTOFFS:]


def ratio_of(rows: pd.DataFrame, max_procs: float, max_nodes: float) -> np.ndarray:
    """How far each row lies beyond (max_procs, max_nodes): 1 inside, p / P or n / N beyond."""
    procs = rows["procs"].to_numpy(float) / max_procs
    nodes = rows["nodes"].to_numpy(float) / max_nodes
    return np.maximum(1.0, np.maximum(procs, nodes))


def _held_out_errors(model, train: pd.DataFrame, test: pd.DataFrame) -> pd.DataFrame:
    predicted = np.asarray(model.predict(test), dtype=float)
    measured = test[TARGET].to_numpy(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        error = np.log(predicted / measured)
    frame = test[CONFIGURATION].copy()
    frame["log_error"] = error
    frame["ratio"] = ratio_of(test, train["procs"].max(), train["nodes"].max())
    # A model predicting a non-positive time there has an infinite error: kept as such.
    grouped = frame.groupby(CONFIGURATION, sort=True).agg(
        log_error=("log_error", "mean"), ratio=("ratio", "first")
    )
    return grouped.reset_index()


def backtest(points: pd.DataFrame, models: dict[str, dict], seed: int) -> dict:
    """The ``backtest`` block of one network: per model, its held-out errors per cutoff."""
    points = points.reset_index(drop=True)
    found: dict[str, list[dict]] = {name: [] for name in models}
    skipped: dict[str, list[str]] = {name: [] for name in models}
    chosen = cutoffs(points)
    for cutoff in chosen:
        train = points[points["procs"] <= cutoff].reset_index(drop=True)
        test = points[points["procs"] > cutoff].reset_index(drop=True)
        for name, settings in models.items():
            try:
                model = make_model(name, settings or {}, seed).fit(train)
            except (InsufficientData, ModelUnavailable) as exc:
                skipped[name].append(f"procs<={cutoff}: {exc}")
                continue
            errors = _held_out_errors(model, train, test)
            for row in errors.itertuples(index=False):
                found[name].append(
                    {
                        "train_max_procs": cutoff,
                        # Whether the record crossed to more nodes than it was trained on.
                        "train_max_nodes": int(train["nodes"].max()),
                        "nodes": int(row.nodes),
                        "procs": int(row.procs),
                        "batch_size": int(row.batch_size),
                        "ratio": float(row.ratio),
                        # JSON has no infinity: a non-positive prediction is stored as None.
                        "log_error": float(row.log_error) if np.isfinite(row.log_error) else None,
                    }
                )
    reason = (
        ""
        if chosen
        else (
            f"needs at least 3 measured worker counts, found {points['procs'].nunique()}: "
            "no smaller range to train on and larger one to test on"
        )
    )
    return {
        "method": METHOD,
        "cutoffs": chosen,
        "reason": reason,
        "models": {name: rows for name, rows in found.items()},
        "skipped": {name: reasons for name, reasons in skipped.items() if reasons},
    }
