"""Points: one row per measured configuration, the repetitions of its runs summarised (median,
quartiles, spread) with the disturbed runs left out; what every model is fitted on."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dlperf.measurements.tables import (
    ACCUMULATION,
    FOREIGN_CPU,
    LAYOUT_COLUMNS,
    NETWORK_FEATURES,
    POINT_KEYS,
    SERIES_COLUMNS,
    disturbed,
    left_out,
    node_capacity,
)


def with_accumulation(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its :data:`ACCUMULATION` column, 1 where absent or empty."""
    frame = frame.copy()
    values = frame[ACCUMULATION] if ACCUMULATION in frame.columns else pd.Series(1, frame.index)
    frame[ACCUMULATION] = pd.to_numeric(values, errors="coerce").fillna(1).astype(int)
    return frame


def to_points(timings: pd.DataFrame) -> pd.DataFrame:
    """One row per measured configuration: median and quartiles of epoch time over repetitions,
    and their spread (``rep_ape``); disturbed runs are left out
    (:func:`dlperf.measurements.tables.left_out`). ``runs_disturbed`` counts the
    configuration's disturbed runs, left out or not, of ``runs_measured`` (NaN where the
    host's load was not measured); ``node_capacity`` is
    the most workers a node of its runs holds (:func:`dlperf.measurements.tables.node_capacity`)."""
    measured = (
        timings[FOREIGN_CPU].notna() if FOREIGN_CPU in timings else pd.Series(False, timings.index)
    )
    timings = timings.assign(
        node_capacity=node_capacity(timings),
        disturbed_run=disturbed(timings).astype(float).where(measured),  # NaN: not measured
    )
    every_run = with_accumulation(timings)
    timings = timings[~left_out(timings)]
    if timings.empty:
        return pd.DataFrame(
            columns=POINT_KEYS
            + [
                ACCUMULATION,
                "iters_per_epoch",
                "epoch_time_s",
                "epoch_time_q25_s",
                "epoch_time_q75_s",
                "samples_per_s",
                "n_reps",
                "rep_ape",
                "node_capacity",
                "runs_measured",
                "runs_disturbed",
            ]
        )
    # Rows that do not say (a table written before the column, an external one) did not
    # accumulate.
    timings = with_accumulation(timings)
    keys = POINT_KEYS + [ACCUMULATION] + [c for c in SERIES_COLUMNS if c in timings.columns]
    grouped = timings.groupby(keys, sort=True, dropna=False)
    # Network features (for across-network models) and the cores setting are the same in
    # every repetition.
    carried = NETWORK_FEATURES + LAYOUT_COLUMNS
    features = {c: (c, "first") for c in carried if c in timings.columns}
    points = grouped.agg(
        epoch_time_s=("epoch_time_s", "median"),
        samples_per_s=("samples_per_s", "median"),
        n_reps=("epoch_time_s", "size"),
        node_capacity=("node_capacity", "max"),
        **features,
    )
    # Grouped quantiles and sums, not a Python function per group: with one run per
    # configuration that was most of the time a fit spends reading its timings.
    times = grouped["epoch_time_s"]
    points.insert(1, "epoch_time_q25_s", times.quantile(0.25))
    points.insert(2, "epoch_time_q75_s", times.quantile(0.75))
    points = points.reset_index()
    flags = every_run.groupby(keys, sort=True, dropna=False)["disturbed_run"]
    counted = pd.DataFrame(
        {"runs_measured": flags.size(), "runs_disturbed": flags.sum(min_count=1)}
    )
    points = points.merge(counted.reset_index(), on=keys, how="left")
    # Spread of the repetitions: mean absolute percentage deviation from their median (NaN with
    # one repetition). Validation reports it as the noise floor a perfect model would score.
    median = grouped["epoch_time_s"].transform("median")
    deviation = (timings["epoch_time_s"] - median).abs() / median * 100.0
    spread = deviation.groupby([timings[k] for k in keys], sort=True, dropna=False).mean()
    points["rep_ape"] = np.where(points["n_reps"] > 1, spread.to_numpy(), np.nan)
    # Micro-batches per epoch, in whole optimizer steps (RunConfig.iters_per_epoch).
    accum = points["grad_accum_steps"] if "grad_accum_steps" in points else 1
    points["iters_per_epoch"] = (
        np.ceil(points["data_size"] / (points["procs"] * points["batch_size"] * accum)) * accum
    ).astype(int)
    return points
