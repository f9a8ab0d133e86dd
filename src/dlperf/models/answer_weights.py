"""Which models make the answer, and with what weight (docs/model.md, "The answer").

A model's *score* at extrapolation ratio r is its mean absolute log error in the backtest
(:mod:`dlperf.models.backtest`) at ratios near r: a Gaussian kernel in log2 of the ratio,
bandwidth one doubling, over this network's records and, at :data:`POOLED_WEIGHT`, the other
networks' of the artifact. Inside the measured range (r = 1) it is the model's training error.
The models within :data:`WITHIN_BEST` of the best score take part, weighted by score^-2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# Kernel bandwidth in log2 of the extrapolation ratio: records a doubling away weigh e^-1/2.
BANDWIDTH = 1.0
# Weight of the other networks' backtest records beside this network's own.
POOLED_WEIGHT = 0.25
# Models whose backtest score is within this factor of the best one take part.
WITHIN_BEST = 2.0
# Records weigh (worker counts trained on)^this: the larger cutoffs are more like the answer's
# own fit on every measured count.
TRAINED_LEVELS_POWER = 2.0
# Training errors (mean |log error|) below this are all alike: an exact fit of two points.
TRAINING_ERROR_FLOOR = 0.01
# A backtest prediction that was not positive counts as this log error (a factor e^3 ~ 20).
FAILED_LOG_ERROR = 3.0


@dataclass(frozen=True)
class Records:
    """Backtest errors of every model: ratio, signed log error (capped), record weight and key
    (network, cutoff, nodes, procs, batch_size)."""

    ratio: dict[str, np.ndarray]
    error: dict[str, np.ndarray]
    weight: dict[str, np.ndarray]
    key: dict[str, list[tuple]]
    # Mean |log(measured / predicted)| on the network's own training points: the score inside
    # the measured range (ratio 1), where a question is interpolation.
    inside: dict[str, float]

    @property
    def empty(self) -> bool:
        return not any(len(v) for v in self.ratio.values())


def records_of(artifact: dict, network: str, models: list[str]) -> Records:
    """The backtest records of ``models``: this network's at weight 1, the others' at
    :data:`POOLED_WEIGHT`."""
    ratio, error, weight, key = {}, {}, {}, {}
    for name in models:
        r, e, w, k = [], [], [], []
        for other, info in artifact.get("networks", {}).items():
            rows = ((info.get("backtest") or {}).get("models") or {}).get(name) or []
            own = 1.0 if other == network else POOLED_WEIGHT
            levels = np.asarray((info.get("measured") or {}).get("procs") or [], float)
            for row in rows:
                value = row["log_error"]
                r.append(row["ratio"])
                e.append(
                    FAILED_LOG_ERROR
                    if value is None
                    else float(np.clip(value, -FAILED_LOG_ERROR, FAILED_LOG_ERROR))
                )
                # A refit on more worker counts is more like the fit that answers.
                trained = max(1, int(np.sum(levels <= row["train_max_procs"])))
                w.append(own * trained**TRAINED_LEVELS_POWER)
                k.append(
                    (other, row["train_max_procs"], row["nodes"], row["procs"], row["batch_size"])
                )
        ratio[name], error[name] = np.asarray(r, float), np.asarray(e, float)
        weight[name], key[name] = np.asarray(w, float), k
    return Records(ratio, error, weight, key, _training_errors(artifact, network, models))


def _training_errors(artifact: dict, network: str, models: list[str]) -> dict[str, float]:
    entries = artifact.get("networks", {}).get(network, {}).get("models", {})
    found = {}
    for name in models:
        stored = (entries.get(name, {}).get("interval") or {}).get("relative_residuals") or []
        logs = np.abs(np.log1p(np.asarray(stored, float)))
        logs = logs[np.isfinite(logs)]
        if logs.size:
            found[name] = float(logs.mean())
    return found


def kernel(ratios: np.ndarray, at: float) -> np.ndarray:
    return np.exp(-0.5 * ((np.log2(ratios) - math.log2(at)) / BANDWIDTH) ** 2)


def scores(records: Records, at: float) -> dict[str, float]:
    """Each model's kernel-weighted mean |log error| in the backtest at ratio ``at`` (models
    with records); inside the measured range (``at`` <= 1), its training error."""
    if at <= 1.0 and records.inside:
        return dict(records.inside)
    found = {}
    for name, ratios in records.ratio.items():
        if ratios.size == 0:
            continue
        w = kernel(ratios, at) * records.weight[name]
        if w.sum() > 0:
            found[name] = float(np.sum(w * np.abs(records.error[name])) / w.sum())
    return found


def weights_from(
    found: dict[str, float], fitted: list[str], inside: dict[str, float] | None = None
) -> dict[str, float]:
    """score^-2 weights of the models within :data:`WITHIN_BEST` of the best score (and the
    lowest of those for a fitted model without a backtest score). When no
    model has a score (no backtest was possible), the candidates are the models whose training
    error (``inside``) is within :data:`WITHIN_BEST` of the best (at least
    :data:`TRAINING_ERROR_FLOOR`), each with weight 0: the answer is then their median."""
    usable = {m: s for m, s in found.items() if m in fitted}
    if not usable:
        errors = {m: e for m, e in (inside or {}).items() if m in fitted}
        if not errors:
            return {m: 0.0 for m in fitted}
        limit = WITHIN_BEST * max(min(errors.values()), TRAINING_ERROR_FLOOR)
        return {m: 0.0 for m in fitted if errors.get(m, math.inf) <= limit}
    best = min(usable.values())
    floor = max(best, 1e-3)  # a perfect backtest must not take every weight by division by 0
    kept = {m: max(s, floor) ** -2 for m, s in usable.items() if s <= WITHIN_BEST * floor}
    # A fitted model the backtest could not refit (it needs more worker counts than a cutoff
    # leaves) is neither trusted nor dropped: it takes part at the lowest weight of the others.
    # Measured on the published tables: MAPE 3.13 % against 3.74 % (CSC, train <= p_max/2),
    # 2.85 against 3.01 (NVIDIA grid), 3.61 against 3.81 (multi-node); 4.00 against 3.79 (Lambda).
    lowest = min(kept.values())
    kept.update({m: lowest for m in fitted if m not in usable})
    total = sum(kept.values())
    return {m: w / total for m, w in sorted(kept.items())}


def fitted_models(artifact: dict, network: str) -> list[str]:
    models = artifact.get("networks", {}).get(network, {}).get("models", {})
    return sorted(n for n, e in models.items() if e.get("status") == "ok")


def weights_at(artifact: dict, network: str, ratio: float, records: Records | None = None) -> dict:
    """The answer's models and weights for a question at extrapolation ratio ``ratio``."""
    fitted = fitted_models(artifact, network)
    if not fitted:
        return {}
    records = records_of(artifact, network, fitted) if records is None else records
    return weights_from(scores(records, ratio), fitted)
