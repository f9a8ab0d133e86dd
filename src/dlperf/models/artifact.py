"""Fit every configured model on one framework's points and describe the result."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

import dlperf
from dlperf.errors import UnknownName
from dlperf.quoting import listing

from . import MODELS, InsufficientData, ModelUnavailable, make_model, model_from_dict
from .answer import growth_scores
from .answer_explained import answer_block
from .artifact_check import VERSION
from .backtest import CONFIGURATION, backtest
from .base import (
    FEATURES,
    TARGET,
    PerformanceModel,
    accumulation_steps,
    capabilities_of,
    iterations,
)
from .hardware_answer import fit_across_hardware
from .identifiability import identifiability_block
from .intervals import DEFAULT_REFITS, bootstrap_interval
from .series import BASE_NETWORK, as_series
from .terms import measured_layout


def _finite(value: float) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def fit_one(
    name: str, settings: dict, points: pd.DataFrame, seed: int, refits: int = DEFAULT_REFITS
) -> dict:
    """One model's artifact entry; a model that cannot be fitted says why instead of failing.
    Every fitted model gets its prediction interval (``refits`` bootstrap refits)."""
    try:
        model = make_model(name, settings, seed).fit(points)
    except ModelUnavailable as exc:
        return {"model": name, "status": "unavailable", "reason": str(exc)}
    except InsufficientData as exc:
        return {"model": name, "status": "insufficient_data", "reason": str(exc)}
    entry = {"status": "ok", **model.to_dict()}
    measured = points[TARGET].to_numpy(float)
    predicted = model.predict(points)
    entry["train_points"] = int(len(points))
    entry["train_mape"] = _finite(float(np.mean(np.abs(predicted - measured) / measured) * 100))
    if capabilities_of(model).has_breakdown:
        entry["breakdown"] = breakdown_table(model, points)
    entry["interval"] = bootstrap_interval(model, points, seed, refits)
    if capabilities_of(model).has_term_list:
        # Which terms of the breakdown the refits support (docs/model.md, identifiability).
        entry["identifiability"] = identifiability_block(entry, points)
    return entry


def breakdown_table(model: PerformanceModel, points: pd.DataFrame) -> list[dict]:
    """Where the time goes: each term's seconds and share of the prediction at every point."""
    seconds = model.term_seconds(points)
    terms = list(seconds.columns)
    # Plain arrays and lists: indexing pandas cell by cell took most of the fit stage's time.
    values = seconds.to_numpy(float)
    total = values.sum(axis=1)
    features = {k: points[k].to_numpy() for k in FEATURES}
    measured = points[TARGET].to_numpy(float)
    networks = points["network"].astype(str).tolist() if "network" in points else None
    rows = []
    for i in range(len(points)):
        row = values[i]
        rows.append(
            {
                **({"network": networks[i]} if networks is not None else {}),
                **{k: int(features[k][i]) for k in FEATURES},
                "measured_s": float(measured[i]),
                "predicted_s": float(total[i]),
                "seconds": {t: float(row[j]) for j, t in enumerate(terms)},
                "share": {
                    t: float(row[j] / total[i]) if total[i] > 0 else 0.0
                    for j, t in enumerate(terms)
                },
            }
        )
    return rows


def _header(framework: str, seed: int) -> dict:
    """What every artifact starts with: whose models, fitted how, by which dlperf."""
    return {
        "schema_version": VERSION,
        "framework": framework,
        "dlperf_version": dlperf.__version__,
        "seed": seed,
        "target": TARGET,
        "features": FEATURES,
    }


def unfitted_artifact(framework: str, seed: int, reason: str) -> dict:
    """The artifact of a framework that has no measurement to fit: no networks, and why."""
    return {**_header(framework, seed), "networks": {}, "reason": reason}


def measured_levels(points: pd.DataFrame) -> dict:
    """The levels the models were fitted on, so predictions beyond them can be flagged."""
    return {
        "procs": sorted(int(v) for v in points["procs"].unique()),
        "nodes": sorted(int(v) for v in points["nodes"].unique()),
        "batch_size": sorted(int(v) for v in points["batch_size"].unique()),
        "grad_accum_steps": sorted(int(v) for v in np.unique(accumulation_steps(points))),
        "multi_node": bool((points["nodes"] > 1).any()),
        # Iterations per epoch, least and most: a question outside asks for an epoch length
        # the measurements never had (the answer then uses per-iteration models only).
        "iterations": [int(iterations(points).min()), int(iterations(points).max())],
        # Nothing the answer says runs faster than perfect scaling of this (docs/model.md).
        "best_samples_per_s_per_worker": best_per_worker(points),
        "node_capacity": recorded_capacity(points),
        "disturbed_share": disturbed_share(points),
    }


def recorded_capacity(points: pd.DataFrame) -> int | None:
    """The most workers a measured node holds, its GPUs (cuda) or cores (CPU), as the runs
    recorded them (points' ``node_capacity``); None where they did not (brought-in tables)."""
    if "node_capacity" in points and points["node_capacity"].notna().any():
        return int(pd.to_numeric(points["node_capacity"]).max())
    return None


def node_capacity(points: pd.DataFrame) -> int:
    """:func:`recorded_capacity`, else the most workers per node measured."""
    recorded = recorded_capacity(points)
    return recorded if recorded is not None else int((points["procs"] / points["nodes"]).max())


def disturbed_share(points: pd.DataFrame) -> float | None:
    """The share of the runs behind the points that other programs disturbed (None where the
    timings did not measure it: an external table)."""
    if "runs_disturbed" not in points or not points["runs_disturbed"].notna().any():
        return None
    counted = points["runs_disturbed"].notna()
    return float(points["runs_disturbed"].sum() / points.loc[counted, "runs_measured"].sum())


def best_per_worker(points: pd.DataFrame) -> float:
    """The best per-worker throughput measured: the largest over configurations of the median
    over their repetitions of d / (T p)."""
    rate = points["data_size"] / points[TARGET] / points["procs"]
    return float(rate.groupby([points[c] for c in CONFIGURATION]).median().max())


def fit_framework(
    points: pd.DataFrame,
    framework: str,
    models: dict[str, dict],
    seed: int,
    refits: int = DEFAULT_REFITS,
    hardware: str | None = None,
) -> dict:
    """The model artifact of one framework: every model per network, and the across-network
    models (``generic_xnet``) once over all networks; each with ``refits`` bootstrap refits for
    its prediction interval."""
    # A network measured on several GPU types or precisions: one series each (as_series).
    selected = as_series(points[points["framework"] == framework].reset_index(drop=True))
    per_network = {n: s for n, s in models.items() if not _across_networks(n)}
    across = {n: s for n, s in models.items() if _across_networks(n)}
    networks = {}
    for network, group in selected.groupby("network", sort=True):
        group = group.reset_index(drop=True)
        networks[network] = {
            "points": int(len(group)),
            "device": sorted(group["device"].astype(str).unique().tolist()),
            "measured": measured_levels(group),
            "layout": measured_layout(group),
            "models": {
                name: fit_one(name, settings or {}, group, seed, refits)
                for name, settings in per_network.items()
            },
            "backtest": backtest(group, per_network, seed),
            **series_of(group),
        }
    artifact = {**_header(framework, seed), "networks": networks}
    # Networks measured on a GPU the catalogue names: the answer across hardware (docs/hardware.md).
    across_hardware = fit_across_hardware(selected, hardware)
    if across_hardware:
        artifact["across_hardware"] = across_hardware
    # How fast the answer's error grew with distance in the backtest, over every network.
    artifact["answer_growth_scores"] = growth_scores(artifact)
    for network in networks:
        networks[network]["answer"] = answer_block(artifact, network)
    if across:
        artifact["all_networks"] = {
            "points": int(len(selected)),
            "networks": sorted(networks),
            "device": sorted(selected["device"].astype(str).unique().tolist()),
            "measured": measured_levels(selected),
            "models": {
                name: fit_one(name, settings or {}, selected, seed, refits)
                for name, settings in across.items()
            },
        }
    return artifact


def series_of(group: pd.DataFrame) -> dict:
    """A series' network entry says which network, GPU type and precision it is (as_series);
    empty for a network measured as one series."""
    first = group.iloc[0]
    if BASE_NETWORK not in group.columns or first[BASE_NETWORK] == first["network"]:
        return {}
    return {
        "series": {
            "network": str(first[BASE_NETWORK]),
            "gpu": str(first["gpu"]) if pd.notna(first["gpu"]) else "",
            "precision": str(first["precision"]),
        }
    }


def trained_networks(artifact: dict) -> dict[str, list[str]]:
    """Each network trained -> the artifact's networks that are its series (itself when it was
    measured as one series)."""
    found: dict[str, list[str]] = {}
    for name, entry in artifact["networks"].items():
        found.setdefault(entry.get("series", {}).get("network", name), []).append(name)
    return found


def trained_network(artifact: dict, network: str) -> str:
    """The network trained of ``network``, one of its series or itself."""
    return artifact["networks"].get(network, {}).get("series", {}).get("network", network)


def series_on(artifact: dict, network: str, gpu: str, precision: str, catalogue) -> str | None:
    """The artifact's series of ``network`` (trained, or one of its series) measured on the
    catalogue's ``gpu`` at ``precision``; None when that GPU type and precision were not
    measured as a series of their own."""
    for name in trained_networks(artifact).get(trained_network(artifact, network), []):
        series = artifact["networks"][name].get("series")
        if series is None or series["precision"] != precision or not series["gpu"]:
            continue
        try:
            if catalogue.match(series["gpu"]).name == gpu:
                return name
        except UnknownName:
            continue  # a GPU the catalogue does not know is not the one asked for
    return None


def _across_networks(name: str) -> bool:
    return name in MODELS and capabilities_of(MODELS[name]).across_networks


ALL_NETWORKS = "all"


def model_entry(artifact: dict, network: str, name: str) -> dict:
    """The artifact entry of one model; across-network models live under ``all_networks``."""
    if _across_networks(name):
        entry = artifact.get("all_networks", {}).get("models", {}).get(name)
    else:
        entry = artifact.get("networks", {}).get(network, {}).get("models", {}).get(name)
    if entry is None:
        available = {n: list(v["models"]) for n, v in artifact.get("networks", {}).items()}
        if "all_networks" in artifact:
            available[ALL_NETWORKS] = list(artifact["all_networks"]["models"])
        raise UnknownName(
            f"the artifact for {artifact.get('framework')} has no model {name!r} for network "
            f"{network!r}; it has {listing(available)}. Pick one of those networks and models, "
            "or add the model to the config's models: and fit again"
        )
    return entry


def load_model(artifact: dict, network: str, name: str):
    entry = model_entry(artifact, network, name)
    if entry.get("status") != "ok":
        raise InsufficientData(
            f"model {name!r} for {network!r} was not fitted ({entry.get('status')}): "
            f"{entry.get('reason')}"
        )
    return model_from_dict(entry)
