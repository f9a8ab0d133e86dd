"""Predictions from a model artifact alone, with a bootstrap prediction interval if it has one."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .artifact import load_model, model_entry
from .base import FEATURES
from .generic import GenericModel


def _interval(model: GenericModel, entry: dict, rows: pd.DataFrame, level: float, seed: int):
    """Quantiles over the bootstrap refits, each with a resampled relative training residual,
    so the interval covers both the uncertain constants and the scatter of single runs."""
    boot = entry.get("bootstrap") or {}
    samples, residuals = boot.get("samples") or [], np.asarray(boot.get("relative_residuals") or [])
    if not samples or residuals.size == 0:
        return None, None
    refits = [model.with_constants(s["values"], s["exponent"]) for s in samples]
    preds = np.stack([refit.predict(rows) for refit in refits])
    rng = np.random.default_rng(seed)
    draws = 20  # residual draws per refit
    noise = 1.0 + rng.choice(residuals, size=(len(samples), draws, 1))
    spread = (preds[:, None, :] * noise).reshape(-1, len(rows))
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(spread, [alpha, 1.0 - alpha], axis=0)
    return lo, hi


def predict_rows(
    artifact: dict,
    network: str,
    model_name: str,
    rows: pd.DataFrame,
    level: float = 0.9,
    seed: int = 0,
) -> pd.DataFrame:
    """Epoch time and throughput for each row (nodes, procs, batch_size, data_size)."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"the interval level must be between 0 and 1, got {level}")
    model = load_model(artifact, network, model_name)
    rows = rows.reset_index(drop=True).copy()
    rows["network"] = rows.get("network", network)
    epoch = model.predict(rows)
    out = rows[[c for c in ["network"] + FEATURES if c in rows]].copy()
    out["epoch_time_s"] = epoch
    out["samples_per_s"] = rows["data_size"].to_numpy(float) / epoch
    lo = hi = None
    if isinstance(model, GenericModel):
        lo, hi = _interval(model, model_entry(artifact, network, model_name), rows, level, seed)
    out["epoch_time_lo_s"] = lo if lo is not None else np.nan
    out["epoch_time_hi_s"] = hi if hi is not None else np.nan
    out["samples_per_s_lo"] = rows["data_size"].to_numpy(float) / out["epoch_time_hi_s"]
    out["samples_per_s_hi"] = rows["data_size"].to_numpy(float) / out["epoch_time_lo_s"]
    if np.any(~np.isfinite(epoch)) or np.any(epoch <= 0):
        raise ValueError(
            f"model {model_name!r} predicts a non-positive epoch time for some rows; it is not "
            "usable there (try the generic model, or a configuration nearer the measured ones)"
        )
    return out
