"""Model curves for the scaling figures: a fitted model's prediction with an uncertainty band.

The band comes from the model artifact's bootstrap refits when the artifact has them (each
entry of ``bootstrap`` is a set of fitted values that, laid over the model's own entry, gives
one refitted model); otherwise from the model's held-out error: ± its median APE under the first
validation protocol that ran (k-fold preferred). The curve says which, for the caption.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dlperf.models import model_from_dict

# Which protocol's error stands for a model's uncertainty when there is no bootstrap.
BAND_PROTOCOLS = ("kfold", "loo_batch", "loo_procs", "extrapolation_batch", "extrapolation_procs")


@dataclass
class Curve:
    model: str
    predict: Callable[[pd.DataFrame], np.ndarray]
    band: Callable[[pd.DataFrame], tuple[np.ndarray, np.ndarray]] | None
    band_source: str  # how the band was made, for the caption; "" when there is none


def _bootstrap_band(entry: dict) -> Callable | None:
    samples = entry.get("bootstrap")
    if not isinstance(samples, list) or len(samples) < 2:
        return None
    try:
        refits = [model_from_dict({**entry, **sample}) for sample in samples]
    except (KeyError, TypeError, ValueError):
        return None  # a bootstrap format this version cannot read: fall back to residuals

    def band(rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        preds = np.vstack([np.asarray(m.predict(rows), dtype=float) for m in refits])
        return np.quantile(preds, 0.025, axis=0), np.quantile(preds, 0.975, axis=0)

    return band


def _residual_spread(summary: pd.DataFrame, framework: str, network: str, model: str):
    """(protocol, median APE %) of the model's first validated protocol, or None."""
    if summary.empty:
        return None
    mine = summary[
        (summary["framework"] == framework)
        & (summary["network"] == network)
        & (summary["model"] == model)
        & (summary["status"] == "ok")
    ]
    for protocol in BAND_PROTOCOLS:
        row = mine[mine["protocol"] == protocol]
        if not row.empty and np.isfinite(row["median_ape"].iloc[0]):
            return protocol, float(row["median_ape"].iloc[0])
    return None


def model_curve(
    name: str, entry: dict, framework: str, network: str, summary: pd.DataFrame
) -> Curve:
    model = model_from_dict(entry)
    band = _bootstrap_band(entry)
    if band is not None:
        return Curve(
            name, model.predict, band, f"bootstrap 95% band ({len(entry['bootstrap'])} refits)"
        )
    spread = _residual_spread(summary, framework, network, name)
    if spread is None:
        return Curve(name, model.predict, None, "")
    protocol, median_ape = spread
    scale = median_ape / 100.0

    def residual_band(rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        mid = np.asarray(model.predict(rows), dtype=float)
        return mid * (1 - scale), mid * (1 + scale)

    return Curve(name, model.predict, residual_band, f"± {median_ape:.3g}% ({protocol} median APE)")
