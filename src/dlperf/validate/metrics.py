"""Prediction-error metrics with bootstrap confidence intervals."""

from __future__ import annotations

import numpy as np

METRICS = ("mape", "median_ape", "max_ape", "rmse", "r2")


def ape(measured: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """Absolute percentage error of each prediction."""
    return np.abs(predicted - measured) / measured * 100.0


def _metric_rows(measured: np.ndarray, predicted: np.ndarray) -> dict[str, np.ndarray]:
    """Every metric for each row of 2-D (resamples, points) arrays at once."""
    errors = np.abs(predicted - measured) / measured * 100.0
    residual = predicted - measured
    ss_res = np.sum(residual**2, axis=-1)
    centred = measured - measured.mean(axis=-1, keepdims=True)
    ss_tot = np.sum(centred**2, axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        r2 = np.where(ss_tot > 0, 1.0 - ss_res / np.where(ss_tot > 0, ss_tot, 1.0), np.nan)
    return {
        "mape": errors.mean(axis=-1),
        "median_ape": np.median(errors, axis=-1),
        "max_ape": errors.max(axis=-1),
        "rmse": np.sqrt(np.mean(residual**2, axis=-1)),
        "r2": r2,
    }


def summarise(
    measured: np.ndarray,
    predicted: np.ndarray,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> dict[str, float]:
    """Each metric with a percentile-bootstrap interval over the test points.

    Fewer than two points, or ``n_boot`` 0, give no interval (NaN bounds). R² is NaN when the
    measured values do not vary (nothing to explain)."""
    measured = np.asarray(measured, dtype=float)
    predicted = np.asarray(predicted, dtype=float)
    rows = _metric_rows(measured[None, :], predicted[None, :])
    point = {k: float(v[0]) for k, v in rows.items()}  # one resample: take its only row
    out: dict[str, float] = {}
    n = measured.size
    if n >= 2 and n_boot > 0:
        idx = np.random.default_rng(seed).integers(0, n, size=(n_boot, n))
        boot = _metric_rows(measured[idx], predicted[idx])
        alpha = (1.0 - level) / 2.0
        for key, values in boot.items():
            finite = values[np.isfinite(values)]
            if not finite.size or not np.isfinite(point[key]):
                out[f"{key}_lo"] = out[f"{key}_hi"] = float("nan")
                continue
            lo, hi = np.quantile(finite, [alpha, 1 - alpha])
            # A percentile interval of a skewed statistic (max APE, R²) can miss the estimate
            # itself; widen it to include the estimate so the table never reads as a contradiction.
            out[f"{key}_lo"] = float(min(lo, point[key]))
            out[f"{key}_hi"] = float(max(hi, point[key]))
    else:
        for key in METRICS:
            out[f"{key}_lo"] = out[f"{key}_hi"] = float("nan")
    out.update(point)
    return out
