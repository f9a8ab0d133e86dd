"""Prediction-error metrics with confidence intervals from a bootstrap over held-out units.

The errors of the points of one held-out fold, level or configuration move together (one fit
predicted them, near-copies share their error), so the points are not independent draws. The
bootstrap therefore resamples whole units (``scipy.stats.bootstrap`` on unit numbers) and pools
the points of the units it drew. A resample that draws a unit twice counts its points twice, so
every statistic here is computed from per-point counts.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
from scipy.stats import DegenerateDataWarning, bootstrap

METRICS = ("mape", "median_ape", "max_ape", "rmse", "r2")
LEVEL = 0.95


def ape(measured: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """Absolute percentage error of each prediction."""
    return np.abs(predicted - measured) / measured * 100.0


def weighted_mape(errors: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Mean of ``errors`` with each point counted ``weights[..., i]`` times."""
    return (weights * errors).sum(axis=-1) / weights.sum(axis=-1)


def _weighted_median(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Median of the multiset in which values[i] occurs weights[..., i] times (whole numbers)."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    cumulative = np.cumsum(weights[..., order], axis=-1)
    total = cumulative[..., -1:]
    # The two middle positions (0-based) of the expanded, sorted multiset.
    low = np.argmax(cumulative > (total - 1) // 2, axis=-1)
    high = np.argmax(cumulative > total // 2, axis=-1)
    return (ordered[low] + ordered[high]) / 2.0


def metric_values(
    measured: np.ndarray, predicted: np.ndarray, weights: np.ndarray
) -> dict[str, np.ndarray]:
    """Every metric of the pooled points, each counted ``weights[..., i]`` times.

    ``weights`` is (points,) or (resamples, points); each metric comes back with the leading
    shape. R² is NaN where the counted measured values do not vary (nothing to explain)."""
    weights = np.asarray(weights, dtype=float)
    errors = ape(measured, predicted)
    residual2 = (predicted - measured) ** 2
    total = weights.sum(axis=-1)
    mean = (weights * measured).sum(axis=-1) / total
    ss_res = (weights * residual2).sum(axis=-1)
    ss_tot = (weights * (measured - mean[..., None]) ** 2).sum(axis=-1)
    # Relative tolerance: a constant column leaves rounding noise in ss_tot, not a true spread.
    varies = ss_tot > 1e-12 * (weights * measured**2).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        r2 = np.where(varies, 1.0 - ss_res / np.where(varies, ss_tot, 1.0), np.nan)
    return {
        "mape": weighted_mape(errors, weights),
        "median_ape": _weighted_median(errors, weights),
        "max_ape": np.where(weights > 0, errors, -np.inf).max(axis=-1),
        "rmse": np.sqrt(ss_res / total),
        "r2": r2,
    }


def unit_counts(sample: np.ndarray, n_units: int) -> np.ndarray:
    """How often each unit occurs in each resample: (..., units drawn) -> (..., n_units)."""
    return (sample[..., :, None] == np.arange(n_units)).sum(axis=-2)


def unit_bootstrap(
    statistic: Callable[[np.ndarray], np.ndarray],
    n_units: int,
    n_boot: int,
    seed: int,
    level: float = LEVEL,
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval of ``statistic(counts)`` over resamples of ``n_units`` units.

    ``statistic`` maps unit counts (resamples, n_units) to (k, resamples) values. Percentile,
    not BCa: with the 3 to 10 units of a typical protocol BCa's jackknife acceleration is
    unstable. Fewer than 2 units (or ``n_boot`` 0) give NaN bounds: one unit cannot show how
    much the result varies from unit to unit."""
    if n_units < 2 or n_boot <= 0:
        shape = np.shape(statistic(np.ones((1, max(n_units, 1)))))[:-1]
        return np.full(shape, np.nan), np.full(shape, np.nan)

    def on_units(sample: np.ndarray, axis: int = -1) -> np.ndarray:
        counts = unit_counts(np.moveaxis(sample, axis, -1).astype(int), n_units)
        values = statistic(counts.reshape(-1, n_units))
        return values.reshape(values.shape[:1] + counts.shape[:-1])

    result = bootstrap(
        (np.arange(n_units),),
        on_units,
        vectorized=True,
        n_resamples=n_boot,
        confidence_level=level,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    interval = result.confidence_interval
    return np.asarray(interval.low, dtype=float), np.asarray(interval.high, dtype=float)


def summarise(
    measured: np.ndarray,
    predicted: np.ndarray,
    units: np.ndarray,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = LEVEL,
) -> dict[str, float]:
    """Each metric over the held-out points, with a bootstrap interval over their ``units``.

    ``units`` labels each point with the held-out group it belongs to (fold, level or
    configuration). Fewer than two units, or ``n_boot`` 0, give no interval (NaN bounds). An
    interval whose resamples include an undefined value (R² of a resample whose measured times
    do not vary) is NaN."""
    measured = np.asarray(measured, dtype=float)
    predicted = np.asarray(predicted, dtype=float)
    unit_ids, index = np.unique(np.asarray(units), return_inverse=True)
    point = {
        k: float(v) for k, v in metric_values(measured, predicted, np.ones(len(measured))).items()
    }

    def statistic(counts: np.ndarray) -> np.ndarray:
        values = metric_values(measured, predicted, counts[:, index])
        return np.stack([values[k] for k in METRICS])

    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        # SciPy warns when a resampled statistic is NaN (R² of constant times); the bound is
        # then NaN, which is what the table should say.
        warnings.simplefilter("ignore", DegenerateDataWarning)
        low, high = unit_bootstrap(statistic, len(unit_ids), n_boot, seed, level)
    out: dict[str, float] = {}
    for key, lo, hi in zip(METRICS, low, high, strict=True):
        if np.isfinite(lo) and np.isfinite(hi) and np.isfinite(point[key]):
            # A percentile interval of a skewed statistic (max APE, R²) can miss the estimate
            # itself; widen it to include the estimate so the table never reads as a contradiction.
            out[f"{key}_lo"], out[f"{key}_hi"] = (
                float(min(lo, point[key])),
                float(max(hi, point[key])),
            )
        else:
            out[f"{key}_lo"] = out[f"{key}_hi"] = float("nan")
    out.update(point)
    return out


def noise_floor(rep_ape: np.ndarray, n_reps: np.ndarray) -> float:
    """Mean absolute percentage deviation of every repetition of the given points from its
    configuration's median (at the same data size): what a model predicting that median would
    score on single repetitions. Points measured once carry no spread and are left out; NaN
    when none was repeated."""
    rep_ape = np.asarray(rep_ape, dtype=float)
    n_reps = np.asarray(n_reps, dtype=float)
    repeated = (n_reps > 1) & np.isfinite(rep_ape)
    if not repeated.any():
        return float("nan")
    return float((rep_ape[repeated] * n_reps[repeated]).sum() / n_reps[repeated].sum())
