"""Model curves for the scaling figures: a fitted model's prediction with its prediction interval.

Curve and band come from :func:`dlperf.models.prediction.prediction_table`, the function behind
``dlperf predict`` and ``dlperf plan``, at the same level, so the band at a point is the interval
``dlperf predict`` prints there, drawn within physics (never faster than perfect scaling of the
best per-worker throughput measured, never at a non-positive time). A model without bootstrap
refits has no band, and the curve says why for the caption.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dlperf.models.answer import ANSWER, within_physics
from dlperf.models.artifact import model_entry
from dlperf.models.intervals import DEFAULT_LEVEL
from dlperf.models.prediction import interval_missing, prediction_table


@dataclass
class Curve:
    model: str
    predict: Callable[[pd.DataFrame], np.ndarray]
    band: Callable[[pd.DataFrame], tuple[np.ndarray, np.ndarray]] | None
    band_source: str  # what the band is, for the caption; "" when there is none
    no_band_reason: str = ""  # why there is no band, for the caption


def model_curve(name: str, artifact: dict, network: str, level: float = DEFAULT_LEVEL) -> Curve:
    """The curve of one fitted model of an artifact, with its band at ``level``."""

    measured = (artifact.get("networks", {}).get(network) or {}).get("measured") or {}

    def table(rows: pd.DataFrame) -> pd.DataFrame:
        # Drawn within physics: never above perfect scaling of the best measured per-worker
        # throughput, never at a non-positive time (docs/model.md, "The answer").
        return within_physics(prediction_table(artifact, network, name, rows, level), measured)

    def predict(rows: pd.DataFrame) -> np.ndarray:
        return table(rows)["epoch_time_s"].to_numpy(float)

    missing = interval_missing(artifact, network, name)
    if missing:
        return Curve(name, predict, None, "", missing)

    def band(rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        out = table(rows)
        return out["epoch_time_lo_s"].to_numpy(float), out["epoch_time_hi_s"].to_numpy(float)

    if name == ANSWER:
        return Curve(name, predict, band, f"the answer's {level:.0%} interval (docs/model.md)")
    refits = len(model_entry(artifact, network, name)["interval"]["refits"])
    return Curve(
        name,
        predict,
        band,
        f"{level:.0%} prediction interval, {refits} refits",
    )
