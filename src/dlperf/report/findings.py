"""What the Summary says about one framework and network, as data: how far it scales, which
model to believe, where the time goes, what to run for the configured target, and what to
distrust. Rendering is report/summary.py's job."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dlperf.models.generic import TERMS
from dlperf.models.planning import DEFAULT_MAX_PROCS, parse_duration, planned
from dlperf.models.prediction import predict_rows

from . import disturbed
from .scaling import Scaling, largest_scale  # noqa: F401 (the Summary's findings)
from .study import Study

# Which protocol's ranking stands for "the model to believe": the first one that ran.
PROTOCOL_ORDER = ("kfold", "loo_procs", "loo_batch", "extrapolation_procs", "extrapolation_batch")
VS_BEST_ORDER = {"best": 0, "not_shown_worse": 1, "worse": 2}
COMMUNICATION_TERMS = (
    "allreduce_bw",
    "allreduce_lat",
    "internode",
    "internode_scaling",
    "sync_linear",
    "ps_sync",
)
INTERVAL_LEVEL = 0.9


def reference_point(points: pd.DataFrame, scales: list[Scaling]) -> pd.Series:
    """The configuration the Summary quotes interval and breakdown at: the best-scaling batch
    at the largest scale, else the largest configuration measured."""
    if not scales:
        return points.sort_values(["procs", "data_size", "batch_size"]).iloc[-1]
    best = scales[0]
    chosen = (
        (points["procs"] == best.procs)
        & (points["batch_size"] == best.batch_size)
        & (points["data_size"] == best.data_size)
    )
    return points[chosen].iloc[0]


@dataclass(frozen=True)
class Belief:
    model: str
    protocol: str
    mape: float
    mape_lo: float
    mape_hi: float
    vs_best: str | None  # best | not_shown_worse | worse; None when the summary has no ranking
    noise_ape: float | None  # the measurements' own noise floor, %
    others: int  # other models validated under the same protocol


def model_to_believe(summary: pd.DataFrame) -> Belief | None:
    """The model ranked first under the first protocol that ran: by ``vs_best`` (best, then
    within the noise of the best), then by MAPE; by MAPE alone when the summary has no
    ``vs_best``."""
    if summary.empty:
        return None
    ok = summary[(summary["status"] == "ok") & summary["mape"].notna()]
    for protocol in PROTOCOL_ORDER + tuple(sorted(set(ok["protocol"]) - set(PROTOCOL_ORDER))):
        rows = ok[ok["protocol"] == protocol]
        if rows.empty:
            continue
        vs_best = rows["vs_best"] if "vs_best" in rows else pd.Series(np.nan, index=rows.index)
        order = vs_best.map(lambda v: VS_BEST_ORDER.get(v, len(VS_BEST_ORDER)))
        ranked = rows.assign(_order=order).sort_values(["_order", "mape", "model"], kind="stable")
        first = ranked.iloc[0]
        noise = first.get("noise_ape")
        return Belief(
            model=str(first["model"]),
            protocol=protocol,
            mape=float(first["mape"]),
            mape_lo=float(first.get("mape_lo", math.nan)),
            mape_hi=float(first.get("mape_hi", math.nan)),
            vs_best=first["vs_best"] if isinstance(first.get("vs_best"), str) else None,
            noise_ape=None if noise is None or pd.isna(noise) else float(noise),
            others=len(ranked) - 1,
        )
    return None


@dataclass(frozen=True)
class Interval:
    predicted_s: float
    lo_s: float
    hi_s: float


def prediction_interval(
    artifact: dict, network: str, model: str, row: pd.Series | dict
) -> Interval | None:
    """The model's prediction and interval at one configuration; None when the model stores no
    interval. A model that cannot predict there raises ValueError (predict_rows says why)."""
    frame = pd.DataFrame([{k: row[k] for k in ("nodes", "procs", "batch_size", "data_size")}])
    out = predict_rows(artifact, network, model, frame, level=INTERVAL_LEVEL).iloc[0]
    if pd.isna(out["epoch_time_lo_s"]):
        return None
    return Interval(
        float(out["epoch_time_s"]), float(out["epoch_time_lo_s"]), float(out["epoch_time_hi_s"])
    )


@dataclass(frozen=True)
class Breakdown:
    procs: int
    batch_size: int
    data_size: int
    term: str  # the term with the largest share of an iteration
    description: str
    share: float  # of the per-iteration time
    communication_share: float  # all-reduce and inter-node terms together
    # Terms whose constant the bootstrap refits do not pin away from zero (the artifact's
    # identifiability block): their shares are not facts, and the Summary says so.
    not_identified: tuple[str, ...] = ()


def dominant_term(generic: dict, procs: int, batch: int, data: int) -> Breakdown | None:
    """Where an iteration's time goes at one measured configuration, by the generic model."""
    rows = [
        r
        for r in generic.get("breakdown") or []
        if (r["procs"], r["batch_size"], r["data_size"]) == (procs, batch, data)
    ]
    if not rows:
        return None
    seconds = rows[0]["seconds"]
    per_iteration = {t: s for t, s in seconds.items() if t in TERMS and TERMS[t].per_iteration}
    total = sum(per_iteration.values())
    if total <= 0:
        return None
    term = max(sorted(per_iteration), key=lambda t: per_iteration[t])
    communication = sum(s for t, s in per_iteration.items() if t in COMMUNICATION_TERMS)
    return Breakdown(
        procs,
        batch,
        data,
        term,
        TERMS[term].description,
        per_iteration[term] / total,
        communication / total,
        not_identified(generic),
    )


def not_identified(generic: dict) -> tuple[str, ...]:
    """The generic model's terms that are on but whose constant the refits do not identify."""
    terms = ((generic.get("identifiability") or {}).get("terms")) or {}
    if not terms:
        return ()
    on = {t["name"] for t in generic["terms"] if t["state"] == "on"}
    return tuple(sorted(n for n, t in terms.items() if n in on and t.get("identified") is False))


def _seconds(value: float) -> str:
    if value >= 1:
        return f"{value:.3g} s"
    if value >= 1e-3:
        return f"{value * 1e3:.3g} ms"
    return f"{value * 1e6:.3g} µs"


def expression_in_words(generic: dict) -> str:
    """The fitted generic model as a sentence: each term that stayed on, with its constant."""
    exponent = generic["exponent"]["value"]
    fixed, per_iteration = [], []
    for term in generic["terms"]:
        if term["state"] != "on" or term["value"] <= 0:
            continue
        factor = term["formula"].split("*", 1)[1] if "*" in term["formula"] else ""
        factor = factor.replace("b^a", f"b^{exponent:.2f}")
        text = f"{_seconds(term['value'])}{' × ' + factor if factor else ''} {term['description']}"
        is_fixed = term["name"] in TERMS and not TERMS[term["name"]].per_iteration
        (fixed if is_fixed else per_iteration).append(text)
    parts = fixed + ([f"iterations × ({' + '.join(per_iteration)})"] if per_iteration else [])
    return "epoch time = " + (" + ".join(parts) if parts else "0")


@dataclass(frozen=True)
class PlanAnswer:
    model: str
    batch_size: int
    data_size: int
    epochs: float
    deadline_s: float
    choice: dict | None  # the chosen layout's row (nodes, procs, total_time_s, ...), or None
    fastest: dict  # the fastest layout considered, for when none meets the deadline
    max_procs: int
    # Where the answer leaves the measurements (dlperf.models.prediction.extrapolation_warnings,
    # the warnings `dlperf predict` and `dlperf plan` print).
    extrapolated: list[str]


def planning_answer(study: Study, framework: str, network: str, model: str) -> PlanAnswer | None:
    """The fewest workers that meet the config's ``report.target``; None without a target."""
    target = (study.config.get("report") or {}).get("target")
    points = study.points_of(framework, network)
    if not target or points.empty:
        return None
    per_node = int(target.get("procs_per_node") or (points["procs"] / points["nodes"]).max())
    batch = int(target.get("batch_size") or points["batch_size"].max())
    # What the target asks, in the words of both plan() and PlanAnswer.
    asked = {
        "batch_size": batch,
        "data_size": int(target["data_size"]),
        "epochs": float(target["epochs"]),
        "deadline_s": parse_duration(str(target["deadline"])),
        "max_procs": int(target.get("max_procs") or DEFAULT_MAX_PROCS),
    }
    found = planned(
        study.artifacts[framework],
        network,
        model,
        **asked,
        gpus_per_node=per_node,
        level=INTERVAL_LEVEL,
    )
    return PlanAnswer(
        model, choice=found.choice, fastest=found.fastest, extrapolated=found.extrapolated, **asked
    )


def plan_answer_warnings(answer: PlanAnswer | None) -> list[str]:
    """Every place the Summary's answers rest on a model outside its measurements."""
    if answer is None or not answer.extrapolated:
        return []
    return [
        f"The planning answer extrapolates the {answer.model} model beyond the measurements: "
        + "; ".join(answer.extrapolated)
        + ". Measure a configuration near it before relying on it."
    ]


def network_warnings(
    study: Study, framework: str, network: str, answer: PlanAnswer | None
) -> list[str]:
    """The warnings that matter for this network: noisy runs, failed runs, extrapolation."""
    found = disturbed.run_warnings(study.timings_of(framework, network))
    failed = study.failures_of(framework, network)
    if not failed.empty:
        statuses = failed["status"].value_counts().sort_index()
        kinds = ", ".join(f"{n} {s}" for s, n in statuses.items())
        found.append(f"{len(failed)} run(s) did not finish ({kinds}); see Failed runs.")
    return found + plan_answer_warnings(answer)


@dataclass(frozen=True)
class Resources:
    peak_host_memory_mb: float | None
    device_memory_mb: float | None
    energy_per_sample_j: float | None  # median over the runs at the largest scale
    at_procs: int


def resources(timings: pd.DataFrame) -> Resources | None:
    if timings.empty or "peak_host_memory_mb" not in timings:
        return None

    def largest(column: str) -> float | None:
        values = timings[column].dropna() if column in timings else pd.Series(dtype=float)
        return float(values.max()) if not values.empty else None

    top = int(timings["procs"].max())
    energy = timings.loc[timings["procs"] == top, "energy_per_sample_j"].dropna()
    found = Resources(
        largest("peak_host_memory_mb"),
        largest("device_memory_mb"),
        float(energy.median()) if not energy.empty else None,
        top,
    )
    if found.peak_host_memory_mb is None and found.energy_per_sample_j is None:
        return None
    return found
