"""One answer per question: the median of the fitted models that cost the all-reduce, an
interval that grows with the distance from the measurements, and nothing faster than perfect
scaling (docs/model.md, "The answer").

At each row asked:

1. Candidates: the fitted *collective* models (``Capabilities.collective_model``: generic,
   castello, loglin) that predict a positive time there, castello only where it is needed to
   have two (:data:`RULES`); every fitted model when no collective model was fitted.
2. Centre: the median of their log times (of two, their geometric mean).
3. Half-width in log time: sqrt(q^2 + (s log2(1 + D))^2), the two errors independent. q is
   the ``level`` quantile of the candidates' training residuals (the measurements' own
   scatter); D the distance from the measured range in doublings, the root of the sum of
   squares over workers, nodes and batch size; s a constant, 0.15 in log time at 90 % (scaled
   by the normal quantile for another level), chosen by leave-one-table-out. Errors grow with
   distance, but slower than linearly (the published tables' held-out errors barely grow from
   1 to 10 doublings).
4. Physics: neither the centre nor the interval's lower end is faster than perfect scaling of
   the best per-worker throughput measured, d / (p x_best).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import norm

from dlperf.errors import UnknownName, UnusablePrediction

from . import MODELS, InsufficientData, capabilities_of
from .backtest import ratio_of
from .base import accumulation_steps

ANSWER = "answer"
# The level s is measured at.
CALIBRATED_LEVEL = 0.9


@dataclass(frozen=True)
class AnswerRules:
    """The answer's choices that data decide, each chosen by leave-one-table-out
    (benchmarks/answer_backtest.py --leave-one-table-out; docs/model.md lists each one's effect).

    ``per_doubling``: s, the 90 % log error per unit of :func:`growth`. ``measured_growth``: s
    measured on the fit's backtest (:func:`growth_scores`) where it has records, instead of the
    constant. ``width``: how distance widens the interval, "relative" (log2(1 + D / R), in
    quadrature with q), "doublings" (log2(1 + D), in quadrature) or "linear" (D, added to q).
    ``distance``: how D combines the doublings in workers, nodes and batch size (:func:`distance`).
    ``accumulation``: the doublings of the gradient-accumulation steps g beyond the measured ones
    are a fourth dimension of D. ``collective``: only collective models are candidates.
    ``excluded``: models left out where two candidates remain without them. ``physics``: the
    perfect-scaling bound."""

    per_doubling: float = 0.15
    measured_growth: bool = False
    width: str = "doublings"
    distance: str = "euclidean"
    accumulation: bool = False
    collective: bool = True
    excluded: tuple[str, ...] = ("castello",)
    physics: bool = True


RULES = AnswerRules()


def fitted_models(artifact: dict, network: str) -> list[str]:
    models = artifact.get("networks", {}).get(network, {}).get("models", {})
    return sorted(n for n, e in models.items() if e.get("status") == "ok")


def candidates(artifact: dict, network: str, rules: AnswerRules = RULES) -> list[str]:
    """The fitted models the answer combines: the collective ones (every fitted one if none
    is, or with ``rules.collective`` off), less ``rules.excluded`` where two others remain."""
    fitted = fitted_models(artifact, network)
    collective = [n for n in fitted if n in MODELS and capabilities_of(MODELS[n]).collective_model]
    chosen = (collective if rules.collective else []) or fitted
    kept = [n for n in chosen if n not in rules.excluded]
    # An excluded model still takes part where it leaves one form alone.
    return kept if len(kept) >= 2 else chosen


def distance(
    measured: dict, rows: pd.DataFrame, how: str = "euclidean", accumulation: bool = False
) -> np.ndarray:
    """Per row: doublings beyond the measured range in workers, nodes and batch size (below the
    least measured level counts as well as above the largest), and with ``accumulation`` in the
    gradient-accumulation steps g (where the artifact records them), combined as ``how``:
    "euclidean" (the root of their sum of squares: workers and nodes doubled together are one
    step of sqrt(2), not 2) or "sum"."""
    asked_levels = {c: rows[c].to_numpy(float) for c in ("procs", "nodes", "batch_size")}
    if accumulation:
        asked_levels["grad_accum_steps"] = accumulation_steps(rows)
    steps = [np.zeros(len(rows))]
    for column, values in asked_levels.items():
        levels = measured.get(column) or []
        if not levels:
            continue
        asked = np.log2(values)
        lo, hi = np.log2(min(levels)), np.log2(max(levels))
        steps.append(np.maximum(asked - hi, 0.0) + np.maximum(lo - asked, 0.0))
    return combined(steps, how)


def combined(steps, how: str) -> np.ndarray:
    """Doublings in several dimensions as one distance: "euclidean" or "sum" (:func:`distance`)."""
    steps = np.asarray(steps, float)
    return np.sqrt(np.sum(steps**2, axis=0)) if how == "euclidean" else np.sum(steps, axis=0)


def span(measured: dict) -> float:
    """R: the doublings the measured worker counts span, at least one."""
    levels = measured.get("procs") or [1]
    return max(1.0, float(np.log2(max(levels) / min(levels))))


def growth(doublings, spanned: float, width: str) -> np.ndarray:
    """The factor s multiplies at ``doublings`` beyond a measured range spanning ``spanned``
    doublings of workers, as ``width`` (:class:`AnswerRules`) grows it."""
    doublings = np.asarray(doublings, float)
    if width == "linear":
        return doublings
    return np.log2(1.0 + doublings / (spanned if width == "relative" else 1.0))


def half_width(scatter: float, grown: np.ndarray, width: str) -> np.ndarray:
    """The measurements' scatter and the growth with distance, combined: added for "linear",
    in quadrature (independent errors) otherwise."""
    return scatter + grown if width == "linear" else np.hypot(scatter, grown)


def fastest_epoch(measured: dict, rows: pd.DataFrame) -> np.ndarray:
    """Per row: the epoch time of perfect scaling of the best per-worker throughput measured,
    d / (p x_best) (0 where the artifact does not record x_best)."""
    best = measured.get("best_samples_per_s_per_worker")
    if not best:
        return np.zeros(len(rows))
    return rows["data_size"].to_numpy(float) / (rows["procs"].to_numpy(float) * float(best))


def within_physics(table: pd.DataFrame, measured: dict) -> pd.DataFrame:
    """A prediction table as the report draws it: epoch times (and interval ends) no faster
    than :func:`fastest_epoch`, and NaN where a model predicts no positive time (nothing is
    drawn above the ideal speed-up or below zero throughput)."""
    out = table.copy()
    floor = fastest_epoch(measured, out)
    data = out["data_size"].to_numpy(float)
    for column, rate in (
        ("epoch_time_s", "samples_per_s"),
        ("epoch_time_lo_s", "samples_per_s_hi"),
        ("epoch_time_hi_s", "samples_per_s_lo"),
    ):
        epoch = out[column].to_numpy(float)
        with np.errstate(invalid="ignore"):
            epoch = np.where(epoch > 0, np.maximum(epoch, floor), np.nan)
        out[column] = epoch
        out[rate] = data / epoch
    return out


def weighted_quantile(values: np.ndarray, weights: np.ndarray, level: float) -> float:
    """The ``level`` quantile of |values| under ``weights``, with the conformal finite-sample
    correction level * (n + 1) / n on the effective sample size n = (sum w)^2 / sum w^2."""
    values = np.abs(values)
    order = np.argsort(values)
    values, weights = values[order], weights[order]
    n = weights.sum() ** 2 / np.sum(weights**2)
    target = min(1.0, level * (n + 1.0) / n)
    cumulative = np.cumsum(weights) / weights.sum()
    index = min(int(np.searchsorted(cumulative, target - 1e-12)), len(values) - 1)
    # Beyond what the values can show (target 1 with few of them): the largest, widened.
    return float(values[index] * (1.0 + 1.0 / n if target >= 1.0 else 1.0))


def training_quantile(artifact: dict, network: str, names: list[str], level: float) -> float:
    """The ``level`` quantile of the candidates' training residuals |log measured/predicted|,
    pooled: the measurements' own scatter around the forms."""
    models = artifact["networks"][network]["models"]
    found = []
    for name in names:
        stored = (models[name].get("interval") or {}).get("relative_residuals") or []
        logs = np.log1p(np.asarray(stored, float))
        found.append(logs[np.isfinite(logs)])
    pooled = np.concatenate(found) if found else np.zeros(0)
    if pooled.size == 0:
        return 0.0
    return weighted_quantile(pooled, np.ones_like(pooled), level)


def growth_scores(artifact: dict, rules: AnswerRules = RULES) -> list[float]:
    """The answer's backtest errors per unit of :func:`growth`, pooled over the artifact's
    networks: at each record (network, cutoff, configuration asked) |median of its candidates'
    log errors| / the growth at the record's distance in doublings from the refit's range."""
    found = []
    for network, info in artifact.get("networks", {}).items():
        names = candidates(artifact, network, rules)
        least = min((info.get("measured") or {}).get("procs") or [1])
        rows: dict[tuple, list[float]] = {}
        for name in names:
            for row in ((info.get("backtest") or {}).get("models") or {}).get(name) or []:
                key = (row["train_max_procs"], row.get("train_max_nodes") or 1, row["nodes"])
                key += (row["procs"], row["batch_size"])
                rows.setdefault(key, []).append(
                    np.inf if row["log_error"] is None else row["log_error"]
                )
        for (procs_in, nodes_in, nodes, procs, _), errors in rows.items():
            steps = (np.log2(max(1.0, procs / procs_in)), np.log2(max(1.0, nodes / nodes_in)))
            far = float(combined(steps, rules.distance))
            if far > 0:
                grown = growth(far, max(1.0, np.log2(procs_in / least)), rules.width)
                found.append(float(min(abs(np.median(errors)), 10.0) / grown))
    return found


def per_doubling(artifact: dict, rules: AnswerRules, level: float) -> float:
    """s at ``level``: the ``level`` quantile of :func:`growth_scores` where the backtest has
    records and ``rules.measured_growth``; else the prior, scaled as a normal quantile would."""
    scores = np.asarray(artifact.get("answer_growth_scores") or [], float)
    if rules.measured_growth and scores.size:
        return weighted_quantile(scores, np.ones_like(scores), level)
    return prior_per_doubling(rules, level)


def prior_per_doubling(rules: AnswerRules, level: float) -> float:
    """The constant s at ``level``, scaled from its calibrated level as a normal quantile."""
    scale = norm.ppf(0.5 + level / 2.0) / norm.ppf(0.5 + CALIBRATED_LEVEL / 2.0)
    return rules.per_doubling * float(scale)


def answer_table(
    artifact: dict,
    network: str,
    rows: pd.DataFrame,
    level: float,
    seed: int,
    model_table,
    rules: AnswerRules = RULES,
) -> pd.DataFrame:
    """The answer at each row, in :func:`dlperf.models.prediction.prediction_table`'s columns,
    plus ``ratio`` (how far beyond the measured workers and nodes) and ``models`` (which were
    combined). ``model_table(name, rows)`` is one model's prediction table."""
    if network not in artifact.get("networks", {}):
        raise UnknownName(
            f"the artifact for {artifact.get('framework')} has no network {network!r}, so there "
            f"is no answer for it; it has {', '.join(artifact.get('networks', {})) or 'none'}. "
            "Pick one of them, or predict an unseen network with the model generic_xnet"
        )
    names = candidates(artifact, network, rules)
    if not names:
        models = artifact["networks"][network]["models"]
        reasons = "; ".join(f"{name}: {entry.get('reason')}" for name, entry in models.items())
        raise InsufficientData(
            f"no model could be fitted for {network!r}, so there is no answer: {reasons}; "
            "measure more configurations"
        )
    rows = rows.reset_index(drop=True)
    tables = {m: model_table(m, rows) for m in names}
    epochs = np.stack([tables[m]["epoch_time_s"].to_numpy(float) for m in names])
    usable = np.isfinite(epochs) & (epochs > 0)
    if not usable.any(axis=0).all():
        raise UnusablePrediction(
            f"no model of {network!r} predicts a positive epoch time at "
            f"{int((~usable.any(axis=0)).sum())} of the rows asked; ask nearer the measured "
            "configurations"
        )
    logs = np.where(usable, np.log(np.where(usable, epochs, 1.0)), np.nan)
    center = np.nanmedian(logs, axis=0)
    measured = artifact["networks"][network].get("measured") or {}
    grown = per_doubling(artifact, rules, level) * growth(
        distance(measured, rows, rules.distance, rules.accumulation), span(measured), rules.width
    )
    half = half_width(training_quantile(artifact, network, names, level), grown, rules.width)
    lo = center - half
    if rules.physics:
        # Raised to the bound, the centre keeps its half-width above it.
        floor = np.log(np.maximum(fastest_epoch(measured, rows), 1e-300))
        lo, center = np.maximum(lo, floor), np.maximum(center, floor)
    hi = center + half
    out = tables[names[0]].copy()
    data = out["data_size"].to_numpy(float)
    out["epoch_time_s"] = np.exp(center)
    out["epoch_time_lo_s"] = np.exp(lo)
    out["epoch_time_hi_s"] = np.exp(hi)
    out["samples_per_s"] = data / out["epoch_time_s"]
    out["samples_per_s_lo"] = data / out["epoch_time_hi_s"]
    out["samples_per_s_hi"] = data / out["epoch_time_lo_s"]
    out["ratio"] = asked_ratios(measured, rows)
    out["models"] = [
        "median of " + ", ".join(m for m, ok in zip(names, usable[:, i], strict=True) if ok)
        for i in range(len(rows))
    ]
    return out


def asked_ratios(measured: dict, rows: pd.DataFrame) -> np.ndarray:
    return ratio_of(rows, max(measured.get("procs") or [1]), max(measured.get("nodes") or [1]))
