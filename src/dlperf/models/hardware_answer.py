"""The answer across hardware: the models that see hardware, weighed and given an interval by a
leave-one-GPU-type-out backtest on the GPU types measured, the same way as for worker counts.

Backtest: each measured GPU type is held out in turn, every model is fitted on the others and
predicts it; a model's errors are the log ratios predicted/measured. The answer is the geometric
mean of the models' predictions weighted by the inverse of their mean squared log error, shrunk
towards equal weights the more, the fewer GPU types the backtest held out (:func:`kept_share`;
``combine="weighted"``; ``"unshrunk"`` keeps the inverse-error weights whole, ``"best"`` takes
the model with the lowest, ``"equal"`` weighs all alike), and its interval spreads the answer by
the split-conformal quantile of the combined backtest's absolute log errors (the ceil((n + 1)
level)-th smallest of n), symmetric in log space. Where a GPU's figures lie beyond every
question the backtest asked (its reach above the largest reach of a GPU type held out there),
the backtest never scored that question: there each form of the time's dependence on the
hardware (``Capabilities.hardware_form``: a roofline, whose gains beyond the measured rates
saturate, and a power law, whose gains go on) weighs alike, as the answer for worker counts
rests on no single untested form, and the interval's half-width grows with the doublings D of
reach beyond the backtested, sqrt(q^2 + (s log2(1 + D))^2) with the worker-count answer's s and
q the wider of the two combinations' conformal quantiles (beyond the backtest nothing is known
better than within it). The backtest asks each GPU type at the workers the others measured: beyond
the workers and nodes measured, D also counts their doublings, combined with the reach's as the
answer for worker counts combines its dimensions (:func:`dlperf.models.answer.distance`), on the
upper side only: more workers never shorten an iteration, and the answer scales from the counts
measured.
Which combination and interval hold on GPU types left out is measured by
``benchmarks/hardware_backtest.py`` (docs/hardware.md). One or two GPU types leave no backtest
that fits. Two are answered by the geometric mean with each form alike, one by the models that
fit on one (prior_hw: its slopes a published table taught, anchored on it); the interval is
that answer's on the published table, each of its GPU types asked from two others or from each
other one alone (:func:`dlperf.models.prior_hw.answer_interval`, scored by
``benchmarks/hardware_prior.py``), whose reach plays the backtested reach's part (it asked every
configuration, beyond the workers measured too, so those do not widen it); none where no
model carries one (slopes of the user's), and the answer says so. Every model's prediction, in
the backtest as in the answer, and the interval are held to what physics allows from the GPU
types measured (:mod:`dlperf.models.hardware_envelope`).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dlperf.errors import DlperfError, UsageError
from dlperf.hardware import gpu_names, load

from . import model_from_dict
from .answer import RULES, combined, distance, growth, half_width, prior_per_doubling
from .base import TARGET, InsufficientData, PerformanceModel, capabilities_of, clone
from .hardware_envelope import envelope, envelope_points
from .hardware_features import gpu_types, leave_one_gpu_out
from .hardware_reach import backtested_reach, hardware_range, reach, workers_measured
from .prior_hw import answer_interval
from .series import base_networks

COMBINATIONS = ("weighted", "unshrunk", "best", "equal")
INTERVAL_SHAPES = ("symmetric", "asymmetric")
# The models the answer combines, judged on GPU types left out of Lambda's, CSC's and 16 held-out
# tables (docs/hardware.md): lattuada_hw's feature selection on a dozen GPU types costs more than
# it gains, so it is fitted and reported but not combined; prior_hw (slopes learned on a published
# table of 12 GPU types) in place of anchored_hw (slopes learned from the GPU types measured)
# lowers the answer's error on all of them.
ANSWER_MODELS = ("powerlaw_hw", "generic_hw", "prior_hw")
DEFAULT_LEVEL = 0.9


@dataclass(frozen=True)
class HardwareAnswer:
    """Predicted epoch seconds per row, the interval (None without a backtest), the weight of
    each model, and how far each row's GPU lies from the GPU types measured."""

    predicted: np.ndarray
    lo: np.ndarray | None
    hi: np.ndarray | None
    weights: dict[str, float]
    measured: np.ndarray
    reach: np.ndarray
    method: str
    # Rows beyond the backtested reach, answered with each form alike (module docstring).
    beyond_backtest: np.ndarray
    # Rows where a model's prediction lay outside what physics allows and was held to it
    # (:mod:`dlperf.models.hardware_envelope`).
    held_to_envelope: np.ndarray


def backtest_log_errors(
    models: list[PerformanceModel], frame: pd.DataFrame, hardware: str | None = None
) -> pd.DataFrame:
    """log(predicted / measured) of every model at every row, each GPU type predicted by a fit
    on the others and held to the envelope the others allow, as the answer holds it (figures
    from the catalogue with ``hardware``, a user's file); a model that cannot be fitted on a
    fold leaves NaN there."""
    measured = frame[TARGET].to_numpy(float)
    errors = pd.DataFrame(np.nan, index=range(len(frame)), columns=[m.name for m in models])
    for train, test in leave_one_gpu_out(frame):
        low, high = envelope(envelope_points(frame.iloc[train]), frame.iloc[test], hardware)
        for model in models:
            try:
                fitted = clone(model).fit(frame.iloc[train])
            except InsufficientData:
                continue
            predicted = np.clip(fitted.predict(frame.iloc[test]), low, high)
            errors.loc[test, model.name] = np.log(predicted / measured[test])
    return errors


def model_weights(errors: pd.DataFrame, combine: str, gpu_count: int) -> dict[str, float]:
    """Each model's weight from its backtest errors over ``gpu_count`` GPU types held out
    (module docstring)."""
    if combine not in COMBINATIONS:
        raise UsageError(f"unknown combination {combine!r}; choose from {', '.join(COMBINATIONS)}")
    scored = errors.dropna(axis=1, how="any")
    if scored.shape[1] == 0 or combine == "equal":
        names = list(scored.columns) or list(errors.columns)
        return {name: 1.0 / len(names) for name in names}
    msle = (scored**2).mean()
    if combine == "best":
        return {str(msle.idxmin()): 1.0}
    inverse = 1.0 / np.maximum(msle, 1e-12)
    weights = inverse / inverse.sum()
    if combine == "weighted":
        kept = kept_share(len(weights), gpu_count)
        weights = kept * weights + (1.0 - kept) / len(weights)
    return {str(name): float(w) for name, w in weights.items()}


def kept_share(models: int, gpu_count: int) -> float:
    """How much of the inverse-error weights the answer keeps, the rest spread equally, from
    how many GPU types the backtest held out: 1 - M / (G - M), none where G <= 2M (Stock and
    Watson's shrinkage of forecast-combination weights, with kappa = 1). Weights estimated
    from a few GPU types chase their noise; each GPU type held out is one draw of each model's
    error, the M models' weights M - 1 unknowns."""
    return 1.0 - models / (gpu_count - models) if gpu_count > 2 * models else 0.0


def form_weights(models: dict[str, PerformanceModel]) -> dict[str, float]:
    """Each declared form (``Capabilities.hardware_form``) alike, its models alike within it."""
    forms = {name: capabilities_of(model).hardware_form for name, model in models.items()}
    count = Counter(forms.values())
    return {name: 1.0 / (len(count) * count[form]) for name, form in forms.items()}


def conformal_radius(log_errors: np.ndarray, level: float) -> float:
    """The split-conformal quantile of |log error| at ``level``; inf when too few errors."""
    values = np.sort(np.abs(log_errors[np.isfinite(log_errors)]))
    rank = math.ceil((len(values) + 1) * level)
    return float(values[rank - 1]) if 0 < rank <= len(values) else math.inf


def interval_factors(log_errors: np.ndarray, level: float, shape: str) -> tuple[float, float]:
    """(lower, upper) factors on the answer: ``symmetric`` spreads it by the conformal radius
    both ways; ``asymmetric`` takes the conformal quantiles of the signed errors at each tail
    (an answer that tends to be high gets more room below)."""
    if shape not in INTERVAL_SHAPES:
        raise UsageError(f"unknown interval {shape!r}; choose from {', '.join(INTERVAL_SHAPES)}")
    if shape == "symmetric":
        radius = conformal_radius(log_errors, level)
        return math.exp(-radius), math.exp(radius)
    tail = (1 + level) / 2
    # measured = answer * exp(-error): high errors bound it from below, low ones from above.
    high = conformal_radius(np.maximum(log_errors, 0.0), tail)
    low = conformal_radius(np.maximum(-log_errors, 0.0), tail)
    return math.exp(-high), math.exp(low)


@dataclass(frozen=True)
class Backtest:
    """The models fitted on every measured GPU type, and their leave-one-GPU-type-out errors
    (None with fewer than three GPU types)."""

    frame: pd.DataFrame
    fitted: dict[str, PerformanceModel]
    errors: pd.DataFrame | None


def backtest(
    models: list[PerformanceModel], frame: pd.DataFrame, hardware: str | None = None
) -> Backtest:
    """Fit ``models`` (each declared across hardware) on ``frame`` and backtest them, the GPU
    types' figures from the catalogue with ``hardware`` (a user's file), as the models read."""
    for model in models:
        if not capabilities_of(model).across_hardware:
            raise UsageError(f"{model.name} does not predict across hardware; leave it out")
    fitted = {}
    for model in models:
        try:
            fitted[model.name] = clone(model).fit(frame)
        except InsufficientData:
            continue
    if not fitted:
        raise InsufficientData("no model across hardware could be fitted on these timings")
    usable = [m for m in models if m.name in fitted]
    errors = backtest_log_errors(usable, frame, hardware) if len(gpu_types(frame)) >= 3 else None
    return Backtest(frame, fitted, errors)


def summary(
    tested: Backtest,
    level: float = DEFAULT_LEVEL,
    combine: str = "weighted",
    hardware: str | None = None,
    shape: str = "symmetric",
) -> dict:
    """What the answer needs, as JSON (the artifact's ``across_hardware`` entry): the fitted
    models, their weights, the interval's factors (None without a backtest), the same for rows
    beyond the backtested reach (``beyond_backtest``: that reach, each form alike, the factors
    of that combination's backtest errors), the GPU types measured and the range of their
    figures."""
    if tested.errors is None:
        return _without_backtest(tested, level, hardware)
    fitted, errors = tested.fitted, tested.errors
    alike = form_weights(fitted)
    weights = model_weights(errors, combine, len(gpu_types(tested.frame)))
    tested_reach = backtested_reach(tested.frame, hardware)
    factors = _factors(errors, weights, level, shape)
    alike_factors = _factors(errors, alike, level, shape)
    if factors is not None and alike_factors is not None:
        # Beyond what the backtest asked nothing is known better than within it: the wider
        # of the two combinations' quantiles, before the widening with reach.
        (alike_down, alike_up), (down, up) = alike_factors, factors
        alike_factors = [min(alike_down, down), max(alike_up, up)]
    method = (
        f"{combine} geometric mean of the models, interval from a leave-one-GPU-type-out "
        f"backtest over {len(gpu_types(tested.frame))} GPU types "
        f"(split-conformal, {shape}, {level:.0%}); beyond the backtested reach "
        f"({tested_reach:.3g}x) each form alike, the interval widened"
    )
    return _block(
        tested,
        level,
        hardware,
        weights,
        factors,
        tested_reach,
        alike,
        alike_factors,
        method,
        workers_measured(tested.frame),
    )


def _without_backtest(tested: Backtest, level: float, hardware: str | None) -> dict:
    """The :func:`summary` of timings of one or two GPU types, too few for a backtest: the
    models that fit, each form alike (on one GPU type prior_hw alone, whose slopes a published
    table taught), with the interval that table gave such an answer
    (:func:`dlperf.models.prior_hw.answer_interval`), whose reach plays the backtested reach's
    part; else none."""
    fitted = tested.fitted
    weights = form_weights(fitted)
    gpus = sorted({load(hardware).match(g).name for g in gpu_types(tested.frame)})
    published = answer_interval(fitted, len(gpus), level)
    if len(gpus) == 1:
        answered, asked_from = f"{', '.join(fitted)} anchored", "each other one alone"
        answered += f" on the one GPU type measured ({gpus[0]})"
    else:
        answered = "geometric mean of the models, each form alike"
        answered += f" ({len(gpus)} GPU types measured leave no backtest)"
        asked_from = f"{len(gpus)} others"
    factors = published_reach = None
    method = f"{answered}; no interval"
    if published is not None:
        radius, published_reach = published
        factors = [math.exp(-radius), math.exp(radius)]
        method = (
            f"{answered}; interval from a published table, each GPU type asked from "
            f"{asked_from} (split-conformal, symmetric, {level:.0%}); beyond the reach those "
            f"questions went ({published_reach:.3g}x) the interval widened"
        )
    # The published table asked every configuration of each GPU type, beyond the workers the
    # others measured too: its interval already holds that, and is not widened for it.
    return _block(
        tested, level, hardware, weights, factors, published_reach, weights, factors, method, None
    )


def _block(
    tested: Backtest,
    level: float,
    hardware: str | None,
    weights: dict[str, float],
    factors: list[float] | None,
    tested_reach: float | None,
    alike: dict[str, float],
    alike_factors: list[float] | None,
    method: str,
    widened_beyond: dict[str, list[int]] | None,
) -> dict:
    """The artifact's entry of an answer (:func:`summary`); ``widened_beyond``: the workers and
    nodes measured, beyond which the interval widens (None: it does not)."""
    catalogue = load(hardware)
    return {
        "status": "ok",
        "models": {
            name: _without_catalogue(model.to_dict()) for name, model in tested.fitted.items()
        },
        "weights": weights,
        "level": level,
        "interval_factors": factors,
        "beyond_backtest": {
            "reach": tested_reach,
            "weights": alike,
            "interval_factors": alike_factors,
        },
        "method": method,
        "widened_beyond_workers": widened_beyond,
        "gpus": sorted({catalogue.match(g).name for g in tested.frame["gpu"].unique()}),
        "hardware_range": hardware_range(tested.frame, hardware),
        "envelope": envelope_points(tested.frame),
    }


def _factors(
    errors: pd.DataFrame, weights: dict[str, float], level: float, shape: str
) -> list[float] | None:
    """The interval's factors from the backtest errors of the combination ``weights``; None
    where they are too few for a quantile at ``level``."""
    combined = sum(w * errors[n].to_numpy() for n, w in weights.items())
    factors = list(interval_factors(np.asarray(combined, float), level, shape))
    return factors if all(math.isfinite(f) and f > 0 for f in factors) else None


def _without_catalogue(entry: dict) -> dict:
    """A fitted model's entry without the path of the catalogue it read: that path is this
    machine's, and an artifact that named it would not reproduce elsewhere; whoever asks gives
    the catalogue again (:func:`answer_at`)."""
    settings = {k: v for k, v in entry["settings"].items() if k != "hardware"}
    return {**entry, "settings": settings}


def answer_at(block: dict, rows: pd.DataFrame, hardware: str | None = None) -> HardwareAnswer:
    """The answer at ``rows`` (configurations with a ``gpu`` and ``precision``, measured or
    not) from a :func:`summary` (module docstring)."""
    weights = block["weights"]
    beyond_backtest = block["beyond_backtest"]
    alike = beyond_backtest["weights"]
    entries = {n: block["models"][n] for n in {**weights, **alike}}
    # The catalogue asked with (a user's file adds GPUs the fit never saw) replaces the fit's.
    if hardware is not None:
        entries = {
            n: {**e, "settings": {**e["settings"], "hardware": hardware}}
            for n, e in entries.items()
        }
    models = {n: model_from_dict(e) for n, e in entries.items()}
    catalogue = load(hardware)
    measured = np.array([catalogue.match(g).name in block["gpus"] for g in rows["gpu"]], bool)
    reached = reach(block["hardware_range"], rows, hardware)
    tested_reach = beyond_backtest["reach"]
    beyond = (
        np.ones(len(rows), bool) if tested_reach is None else reached > tested_reach * (1 + 1e-9)
    )
    low, high = envelope(block["envelope"], rows, hardware)
    unbounded = {n: model.predict(rows) for n, model in models.items()}
    held = np.any([(t < low) | (t > high) for t in unbounded.values()], axis=0)
    log_times = {n: np.log(np.clip(t, low, high)) for n, t in unbounded.items()}
    log_prediction = np.where(
        beyond,
        sum(w * log_times[n] for n, w in alike.items()),
        sum(w * log_times[n] for n, w in weights.items()),
    )
    predicted = np.exp(np.asarray(log_prediction, float))
    lo = hi = None
    if block["interval_factors"] is not None and beyond_backtest["interval_factors"] is not None:
        # Per row the factors of the combination it is answered with, widened beyond the reach.
        factors = np.where(
            beyond[:, None], beyond_backtest["interval_factors"], block["interval_factors"]
        )
        down, up = np.log(factors).T
        steps = [np.log2(np.maximum(reached / tested_reach, 1.0))]
        grown_down = grown_up = grown_with(steps, block["level"])
        if block["widened_beyond_workers"] is not None:
            # A backtest asks a GPU type at the workers the others measured, rarely beyond:
            # there the interval widens as the answer for worker counts widens, upwards only:
            # at the same batch per worker more workers never shorten an iteration, and the
            # answer scales from the counts measured (the envelope holds the side below).
            steps.append(distance(block["widened_beyond_workers"], rows, RULES.distance))
            grown_up = grown_with(steps, block["level"])
        lo = np.maximum(predicted * np.exp(-half_width(-down, grown_down, RULES.width)), low)
        hi = np.minimum(predicted * np.exp(half_width(up, grown_up, RULES.width)), high)
    return HardwareAnswer(
        predicted, lo, hi, weights, measured, reached, block["method"], beyond, held
    )


def grown_with(steps: list[np.ndarray], level: float) -> np.ndarray:
    """Per row, how much the interval's half-width grows with the doublings ``steps`` (root of
    the sum of their squares), as the answer for worker counts grows (docs/model.md)."""
    doublings = combined(steps, RULES.distance)
    return prior_per_doubling(RULES, level) * growth(doublings, 1.0, RULES.width)


def answer_from(
    tested: Backtest,
    rows: pd.DataFrame,
    level: float = DEFAULT_LEVEL,
    combine: str = "weighted",
    hardware: str | None = None,
    shape: str = "symmetric",
) -> HardwareAnswer:
    """The answer at ``rows`` from a backtest."""
    return answer_at(summary(tested, level, combine, hardware, shape), rows, hardware)


def answer(
    models: list[PerformanceModel],
    frame: pd.DataFrame,
    rows: pd.DataFrame,
    level: float = DEFAULT_LEVEL,
    combine: str = "weighted",
    hardware: str | None = None,
) -> HardwareAnswer:
    """Fit and backtest ``models`` on the measured ``frame``; answer at ``rows``."""
    return answer_from(backtest(models, frame, hardware), rows, level, combine, hardware)


def fit_across_hardware(points: pd.DataFrame, hardware: str | None = None) -> dict:
    """Per network and precision measured on a GPU type the rows name: the answer's
    :func:`summary` (on two or more GPU types ``lattuada_hw`` fitted too and kept apart, as
    reported in docs/hardware.md), or why it could not be fitted. Empty when no row names a
    GPU."""
    from . import make_model

    if "gpu" not in points.columns or "precision" not in points.columns:
        return {}
    named = points[gpu_names(points["gpu"]) != ""]
    blocks: dict[str, dict] = {}
    # Across hardware by the network trained: its series per GPU type together (as_series).
    trained = base_networks(named).rename("network")
    for (network, precision), series in named.groupby([trained, "precision"], sort=True):
        series = series.reset_index(drop=True)
        try:
            tested = backtest(
                [make_model(m, {"hardware": hardware}) for m in ANSWER_MODELS], series, hardware
            )
            block = summary(tested, hardware=hardware)
            if series["gpu"].nunique() >= 2:
                lattuada = make_model("lattuada_hw", {"hardware": hardware}).fit(series)
                block["apart"] = {"lattuada_hw": _without_catalogue(lattuada.to_dict())}
        except DlperfError as exc:
            block = {"status": "not_fitted", "reason": str(exc)}
        blocks.setdefault(str(network), {})[str(precision)] = block
    return blocks
