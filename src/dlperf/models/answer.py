"""One answer per question: the fitted models combined by how well they extrapolated
(docs/model.md, "The answer").

For a configuration asked at extrapolation ratio r (:func:`dlperf.models.backtest.ratio_of`
against the measured range), the answer is the weighted median (in log time) of the models
:mod:`dlperf.models.answer_weights` chooses (by their backtest errors near r; inside the range
by their training errors), or their median when no backtest was possible.

Its interval is normalized conformal: the answer's own backtest errors (the same combination
applied to the records), each divided by its difficulty sqrt(noise^2 + spread^2) (training
scatter; the combined models' spread there), their ``level`` quantile at ratios near r with the
finite-sample correction (n + 1) / n, growing beyond the largest ratio the backtest reached by
its growth over the last doubling seen, times the row's own difficulty. Inside the measured
range (r = 1) the quantile is that of the answer's training residuals. Without a backtest the
half-width is the models' full spread plus a distance term per doubling. The interval is never
narrower than the median of the combined models' bootstrap intervals (constants uncertainty)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dlperf.errors import UnknownName, UnusablePrediction

from . import MODELS, InsufficientData, capabilities_of
from .answer_weights import (
    Records,
    fitted_models,
    kernel,
    records_of,
    weights_at,
    weights_from,
)
from .backtest import ratio_of
from .base import iterations
from .combination import bootstrap_floor, model_spread, weighted_median

ANSWER = "answer"
# The weighted spread of the combined models' log times, times this (a normal 90 % quantile),
# is the least half-width of the interval: the forms the data cannot tell apart.
SPREAD_Z = 1.645
# Without any backtest record (two measured worker counts everywhere): the log error added to the
# models' spread per doubling beyond the measured range. Chosen on the published tables' series
# measured at two worker counts (benchmarks/answer_backtest.py; the models chosen by training
# error): 0.06 covered 70-98 % of their held-out points, 0.08 70-99 %, 0.10 90-100 % at median
# widths 29-57 % (docs/model.md).
PRIOR_LOG_ERROR_PER_DOUBLING = 0.10
# Difficulties (log) below this are all alike: a record's score is not divided by nearly zero.
NOISE_FLOOR = 0.005
# Rows whose extrapolation ratios lie within 1/RATIO_STEPS of a doubling share weights and width.
RATIO_STEPS = 16


def answer_errors(records: Records, fitted: list[str]) -> tuple[np.ndarray, ...]:
    """The answer's own backtest errors: at each record (network, cutoff, configuration) the
    weighted median of the models' log errors with the weights the answer would use at its
    ratio (:func:`dlperf.models.combination.weighted_median`), and the models' spread there
    (root-mean-square distance of their log errors from the answer's). Returns (ratios, log
    errors, spreads, record weights, networks)."""
    by_key: dict[tuple, dict[str, float]] = {}
    meta: dict[tuple, tuple[float, float]] = {}
    for name, keys in records.key.items():
        for i, key in enumerate(keys):
            by_key.setdefault(key, {})[name] = records.error[name][i]
            meta[key] = (records.ratio[name][i], records.weight[name][i])
    cache: dict[float, dict[str, float]] = {}
    ratios, errors, spreads, weights, networks = [], [], [], [], []
    for key, errs in by_key.items():
        ratio, weight = meta[key]
        if ratio not in cache:
            cache[ratio] = weights_from(records, ratio, fitted)
        w = {m: v for m, v in cache[ratio].items() if m in errs}
        if not w or sum(w.values()) <= 0:
            continue
        total = sum(w.values())
        shares = np.asarray(list(w.values())) / total
        error = float(weighted_median(np.asarray([[errs[m]] for m in w]), shares)[0])
        ratios.append(ratio)
        errors.append(error)
        spreads.append(float(model_spread(np.asarray([errs[m] for m in w]), shares, error)))
        weights.append(weight)
        networks.append(key[0])
    return (
        np.asarray(ratios, float),
        np.asarray(errors, float),
        np.asarray(spreads, float),
        np.asarray(weights, float),
        np.asarray(networks, object),
    )


def weighted_quantile(values: np.ndarray, weights: np.ndarray, level: float) -> float:
    """The ``level`` quantile of |values| under ``weights``, with the conformal finite-sample
    correction level * (n + 1) / n on the effective sample size n = (sum w)^2 / sum w^2."""
    order = np.argsort(values)
    values, weights = values[order], weights[order]
    n = weights.sum() ** 2 / np.sum(weights**2)
    target = min(1.0, level * (n + 1.0) / n)
    cumulative = np.cumsum(weights) / weights.sum()
    index = min(int(np.searchsorted(cumulative, target - 1e-12)), len(values) - 1)
    # Beyond what the records can show (target 1 with few of them): the largest, widened.
    return float(values[index] * (1.0 + 1.0 / n if target >= 1.0 else 1.0))


def training_quantile(artifact: dict, network: str, weights: dict, level: float) -> float:
    """The ``level`` quantile of the answer's training residuals (|log measured/predicted|)."""
    models = artifact["networks"][network]["models"]
    residuals = [
        np.log1p(
            np.asarray((models[m].get("interval") or {}).get("relative_residuals") or [], float)
        )
        for m in weights
    ]
    sizes = {r.size for r in residuals}
    if len(sizes) != 1 or 0 in sizes:
        return 0.0
    total = sum(weights.values())
    shares = [w / total if total > 0 else 1.0 / len(weights) for w in weights.values()]
    combined = sum(w * r for w, r in zip(shares, residuals, strict=True))
    combined = np.abs(combined[np.isfinite(combined)])
    if combined.size == 0:
        return 0.0
    return weighted_quantile(combined, np.ones_like(combined), level)


@dataclass(frozen=True)
class Calibration:
    """How wide the answer's interval is at each extrapolation ratio: normalized conformal on
    the backtest. Each record's score is |answer's log error| / its difficulty, the difficulty
    being sqrt(noise^2 + spread^2) (the series' training noise, the models' spread there); the
    half-width at a row is the scores' ``level`` quantile near its ratio times the row's own
    difficulty."""

    ratios: np.ndarray
    scores: np.ndarray
    weights: np.ndarray
    inside: float  # at ratio 1, from the training residuals
    noise: float  # this network's training noise (log), in the row's difficulty

    def without_backtest(self) -> Calibration:
        """The width without a backtest: the models' spread plus the distance prior."""
        none = np.zeros(0)
        return Calibration(none, none, none, self.inside, self.noise)

    def half_width(self, ratio: float, level: float, spread: np.ndarray) -> np.ndarray:
        difficulty = np.sqrt(self.noise**2 + spread**2)
        if self.ratios.size == 0:
            # Nothing calibrates it: the models' spread plus a distance term (_combine).
            return self.inside + PRIOR_LOG_ERROR_PER_DOUBLING * math.log2(ratio) + spread
        nearest, top = float(self.ratios.min()), float(self.ratios.max())
        quantile = self.quantile(min(max(ratio, nearest), top), level)
        if ratio > top:
            # Beyond the ratios backtested: the scores' growth per doubling over the last
            # doubling the backtest saw, carried on (none when it saw one ratio only).
            below = max(top / 2.0, nearest)
            if below < top:
                per_doubling = (quantile - self.quantile(below, level)) / math.log2(top / below)
                quantile += max(per_doubling, 0.0) * math.log2(ratio / top)
        width = quantile * difficulty
        if ratio < nearest:
            share = math.log2(ratio) / math.log2(nearest) if nearest > 1 else 1.0
            width = self.inside + share * (width - self.inside)
        return np.maximum(width, self.inside)

    def quantile(self, ratio: float, level: float) -> float:
        return weighted_quantile(self.scores, kernel(self.ratios, ratio) * self.weights, level)


def calibration(artifact: dict, network: str, level: float) -> Calibration:
    fitted = fitted_models(artifact, network)
    records = records_of(artifact, network, fitted)
    ratios, errors, spreads, weights, networks = answer_errors(records, fitted)
    noise = {n: training_noise(artifact, n) for n in set(networks) | {network}}
    difficulty = np.sqrt(np.asarray([noise[n] for n in networks]) ** 2 + spreads**2)
    scores_ = np.abs(errors) / np.maximum(difficulty, NOISE_FLOOR)
    inside = training_quantile(
        artifact, network, weights_at(artifact, network, 1.0, records), level
    )
    return Calibration(ratios, scores_, weights, inside, max(noise[network], NOISE_FLOOR))


def training_noise(artifact: dict, network: str) -> float:
    """Root-mean-square log residual of the network's models on their training points (the
    median over its fitted models): the measurements' own scatter."""
    models = artifact["networks"][network]["models"]
    found = []
    for name in fitted_models(artifact, network):
        stored = (models[name].get("interval") or {}).get("relative_residuals") or []
        logs = np.log1p(np.asarray(stored, float))
        logs = logs[np.isfinite(logs)]
        if logs.size:
            found.append(float(np.sqrt(np.mean(logs**2))))
    return float(np.median(found)) if found else 0.0


def asked_ratios(artifact: dict, network: str, rows: pd.DataFrame) -> np.ndarray:
    measured = artifact["networks"][network].get("measured") or {}
    most_procs = max(measured.get("procs") or [1])
    most_nodes = max(measured.get("nodes") or [1])
    return ratio_of(rows, most_procs, most_nodes)


def answer_table(
    artifact: dict,
    network: str,
    rows: pd.DataFrame,
    level: float,
    seed: int,
    model_table,
) -> pd.DataFrame:
    """The answer at each row, in :func:`dlperf.models.prediction.prediction_table`'s columns,
    plus ``ratio`` and ``models`` (the weights, as text). ``model_table(name, rows)`` is one
    model's prediction table (with its bootstrap interval)."""
    if network not in artifact.get("networks", {}):
        raise UnknownName(
            f"the artifact for {artifact.get('framework')} has no network {network!r}, so there "
            f"is no answer for it; it has {', '.join(artifact.get('networks', {})) or 'none'}. "
            "Pick one with --network, or predict an unseen network with --model-name "
            "generic_xnet"
        )
    fitted = fitted_models(artifact, network)
    if not fitted:
        reasons = {
            n: e.get("reason")
            for n, e in artifact.get("networks", {}).get(network, {}).get("models", {}).items()
        }
        raise InsufficientData(
            f"no model could be fitted for {network!r}, so there is no answer: {reasons}; "
            "measure more configurations"
        )
    rows = rows.reset_index(drop=True)
    records = records_of(artifact, network, fitted)
    calibrated = calibration(artifact, network, level)
    ratios = asked_ratios(artifact, network, rows)
    longer = other_epochs(artifact, network, rows)
    # Weights and widths change little within a fraction of a doubling: rows are grouped by
    # their ratio rounded to 1/RATIO_STEPS of a doubling, so a plan over many layouts stays quick.
    steps = np.round(np.log2(ratios) * RATIO_STEPS).astype(int)
    unseen = untested_nodes(artifact, network, rows, records)
    tables: dict[str, pd.DataFrame] = {}
    parts = []
    for step, other, blind in sorted(set(zip(steps, longer, unseen, strict=True))):
        at = np.flatnonzero((steps == step) & (longer == other) & (unseen == blind))
        ratio = 2.0 ** (step / RATIO_STEPS)
        # Only models that predict a positive time at every row of the group take part, so
        # one model's nonsense far from the data (a linear fit crossing zero) leaves the others.
        usable = _positive(fitted, tables, model_table, rows, at)
        if not usable:
            raise UnusablePrediction(
                f"no model of {network!r} predicts a positive epoch time at "
                f"{len(at)} of the rows asked; ask nearer the measured configurations"
            )
        preferred = per_iteration_models(usable) if other else usable
        # A question on more nodes than any backtest record crossed to: the records cannot rank
        # the models there (the inter-node cost is in none of them), so no backtest speaks.
        evidence = records.without_backtest() if blind else records
        weights = weights_from(evidence, float(ratio), preferred or usable)
        part = _combine(
            {m: _table(tables, model_table, m, rows) for m in weights},
            weights,
            at,
            calibrated.without_backtest() if blind else calibrated,
            float(ratio),
            level,
        )
        part["ratio"] = ratios[at]
        part["models"] = describe(weights)
        parts.append(part)
    return pd.concat(parts).sort_index()


def untested_nodes(
    artifact: dict, network: str, rows: pd.DataFrame, records: Records
) -> np.ndarray:
    """Per row: whether it asks for more nodes than measured while no backtest record asked for
    more nodes than its refit was trained on."""
    measured = artifact["networks"][network].get("measured") or {}
    beyond = rows["nodes"].to_numpy(int) > max(measured.get("nodes") or [1])
    return beyond & (not records.crossed_nodes) & (not records.empty)


def other_epochs(artifact: dict, network: str, rows: pd.DataFrame) -> np.ndarray:
    """Per row: whether it asks for an epoch of more or fewer iterations than any measured."""
    span = (artifact["networks"][network].get("measured") or {}).get("iterations")
    if not span:
        return np.zeros(len(rows), bool)
    asked = iterations(rows)
    return (asked < span[0]) | (asked > span[1])


def per_iteration_models(names: list[str]) -> list[str]:
    """The models whose epoch time is iterations x per-iteration time (capabilities)."""
    return [n for n in names if n in MODELS and capabilities_of(MODELS[n]).per_iteration]


def _positive(names: list[str], cache: dict, model_table, rows: pd.DataFrame, at) -> list[str]:
    """The models among ``names`` that predict a finite positive epoch time at every row ``at``."""
    kept = []
    for name in names:
        epoch = _table(cache, model_table, name, rows)["epoch_time_s"].to_numpy(float)[at]
        if np.all(np.isfinite(epoch) & (epoch > 0)):
            kept.append(name)
    return kept


def describe(weights: dict[str, float]) -> str:
    """'castello 0.62, loglin 0.38', or 'median of usl, castello, loglin' without a backtest."""
    if weights and sum(weights.values()) == 0:
        return "median of " + ", ".join(weights)
    return ", ".join(f"{m} {w:.2f}" for m, w in weights.items())


def _table(cache: dict, model_table, name: str, rows: pd.DataFrame) -> pd.DataFrame:
    if name not in cache:
        cache[name] = model_table(name, rows)
    return cache[name]


def _combine(
    tables: dict[str, pd.DataFrame],
    weights: dict,
    at: np.ndarray,
    calibrated: Calibration,
    ratio: float,
    level: float,
):
    """The weighted median of the models' log times at rows ``at`` (their median without a
    backtest), with the interval: the calibrated half-width at the row's difficulty (the
    combined models' spread there), or the median of the models' bootstrap intervals
    (constants uncertainty), whichever is wider."""
    leading = max(weights, key=lambda m: (weights[m], m))
    first = tables[leading].iloc[at].copy()
    logs = np.stack([np.log(tables[m]["epoch_time_s"].to_numpy(float)[at]) for m in weights])
    w = np.asarray(list(weights.values()))[:, None]
    if w.sum() > 0:
        center = weighted_median(logs, w[:, 0])
        spread = model_spread(logs, w[:, 0] / w.sum(), center)
    else:
        # Without a backtest (all weights 0): the median model at each row, robust to one
        # outlier, and every model's distance from it is form uncertainty.
        center = np.median(logs, axis=0)
        spread = np.max(np.abs(logs - center), axis=0)
    half = calibrated.half_width(ratio, level, spread)
    lo, hi = np.exp(center - half), np.exp(center + half)
    boot_lo, boot_hi = bootstrap_floor(tables, weights, at)
    lo = np.where(np.isfinite(boot_lo), np.minimum(lo, boot_lo), lo)
    hi = np.where(np.isfinite(boot_hi), np.maximum(hi, boot_hi), hi)
    data = first["data_size"].to_numpy(float)
    first["epoch_time_s"] = np.exp(center)
    first["epoch_time_lo_s"] = lo
    first["epoch_time_hi_s"] = hi
    first["samples_per_s"] = data / first["epoch_time_s"]
    first["samples_per_s_lo"] = data / hi
    first["samples_per_s_hi"] = data / lo
    return first
