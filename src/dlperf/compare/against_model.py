"""Runs of a new study outside the baseline's fitted model: each candidate configuration's
median epoch time against the baseline model's prediction interval. One outside is flagged,
unless the baseline's own measurement there lies outside too (then the model, not the new
study, is off). This catches configurations the baseline never measured.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dlperf.errors import DlperfError
from dlperf.measurements.configuration import CONFIG_KEYS, POINT_KEYS, label
from dlperf.measurements.records import RunRecord
from dlperf.models.prediction import predict_rows
from dlperf.study.files import StudyFiles

MODEL_COLUMNS = POINT_KEYS + [
    "configuration",
    "candidate_epoch_s",
    "predicted_s",
    "predicted_lo_s",
    "predicted_hi_s",
    "baseline_epoch_s",
    "baseline_inside",
]


def _epoch_medians(records: list[RunRecord]) -> pd.DataFrame:
    """The median epoch time of each configuration (the whole key: another precision or
    accumulation is another configuration, predicted at its own accumulation)."""
    frame = pd.DataFrame(
        [[*r.key, r.epoch_time_s] for r in records if r.ok],
        columns=CONFIG_KEYS + ["epoch_time_s"],
    )
    return frame.groupby(CONFIG_KEYS, sort=True, as_index=False)["epoch_time_s"].median()


def check_against_model(
    baseline: StudyFiles, candidate: StudyFiles, model: str, level: float
) -> tuple[pd.DataFrame, list[str]]:
    """Candidate configurations outside the baseline model's prediction interval, and notes on
    what could not be checked (no artifact, no interval, model not fitted)."""
    cand = _epoch_medians(candidate.records)
    base = _epoch_medians(baseline.records).rename(columns={"epoch_time_s": "baseline_epoch_s"})
    merged = cand.merge(base, on=CONFIG_KEYS, how="left")
    flags, notes = [], []
    for (framework, network), group in merged.groupby(["framework", "network"], sort=True):
        artifact = baseline.artifacts.get(framework)
        if artifact is None:
            notes.append(
                f"{framework}: the baseline has no model artifact (models/{framework}.json), "
                "so its runs were not checked against a model"
            )
            continue
        group = group.reset_index(drop=True)
        try:
            predicted = predict_rows(artifact, network, model, group, level=level)
        except DlperfError as exc:  # not enough data, an unknown name; a bug propagates
            notes.append(f"{framework}/{network}: not checked against the model ({exc})")
            continue
        lo, hi = predicted["epoch_time_lo_s"], predicted["epoch_time_hi_s"]
        if lo.isna().any():
            notes.append(
                f"{framework}/{network}: the baseline's {model} model stores no "
                "prediction interval, so runs were not checked against it (fit it again with "
                "a dlperf that writes intervals)"
            )
            continue
        measured, base_epoch = group["epoch_time_s"], group["baseline_epoch_s"]
        outside = (measured < lo) | (measured > hi)
        base_inside = base_epoch.between(lo, hi) | base_epoch.isna()
        for i in np.flatnonzero(outside & base_inside):
            row = group.iloc[i]
            flags.append(
                {
                    **{k: row[k] for k in POINT_KEYS},
                    "configuration": label(row),
                    "candidate_epoch_s": float(measured.iloc[i]),
                    "predicted_s": float(predicted["epoch_time_s"].iloc[i]),
                    "predicted_lo_s": float(lo.iloc[i]),
                    "predicted_hi_s": float(hi.iloc[i]),
                    "baseline_epoch_s": float(base_epoch.iloc[i]),
                    "baseline_inside": bool(pd.notna(base_epoch.iloc[i])),
                }
            )
    return pd.DataFrame(flags, columns=MODEL_COLUMNS), notes
