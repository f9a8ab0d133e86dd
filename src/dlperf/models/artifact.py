"""Fit every configured model on one framework's points and describe the result."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pandas as pd

import dlperf
from dlperf.io import SCHEMA_VERSION, read_json

from . import MODELS, InsufficientData, ModelUnavailable, make_model, model_from_dict
from .base import FEATURES, TARGET, PerformanceModel, capabilities_of
from .identifiability import identifiability_block
from .intervals import DEFAULT_REFITS, bootstrap_interval
from .terms import TERMS


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
    if capabilities_of(model).has_breakdown:
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
        "schema_version": SCHEMA_VERSION,
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
        "multi_node": bool((points["nodes"] > 1).any()),
    }


def fit_framework(
    points: pd.DataFrame,
    framework: str,
    models: dict[str, dict],
    seed: int,
    refits: int = DEFAULT_REFITS,
) -> dict:
    """The model artifact of one framework: every model per network, and the across-network
    models (``generic_xnet``) once over all networks; each with ``refits`` bootstrap refits for
    its prediction interval."""
    selected = points[points["framework"] == framework].reset_index(drop=True)
    per_network = {n: s for n, s in models.items() if not _across_networks(n)}
    across = {n: s for n, s in models.items() if _across_networks(n)}
    networks = {}
    for network, group in selected.groupby("network", sort=True):
        group = group.reset_index(drop=True)
        networks[network] = {
            "points": int(len(group)),
            "device": sorted(group["device"].astype(str).unique().tolist()),
            "measured": measured_levels(group),
            "models": {
                name: fit_one(name, settings or {}, group, seed, refits)
                for name, settings in per_network.items()
            },
        }
    artifact = {**_header(framework, seed), "networks": networks}
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
        raise KeyError(
            f"the artifact for {artifact.get('framework')} has no model {name!r} for network "
            f"{network!r}; it has {available}. Pick one of those with --network/--model-name, or "
            "add the model to the config's models: and fit again"
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


class ArtifactError(ValueError):
    """A model artifact that cannot be trusted: wrong version, unknown model or term, or a
    constant that is not a finite number. The message names the file and the field."""


def _non_finite(value: object, path: str) -> str | None:
    """The path of the first number in a JSON-like value that is not finite (NaN, inf)."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"{path} is {'NaN' if math.isnan(value) else value}"
    if isinstance(value, dict):
        for key, item in value.items():
            found = _non_finite(item, f"{path}.{key}")
            if found:
                return found
    if isinstance(value, list):
        for i, item in enumerate(value):
            found = _non_finite(item, f"{path}[{i}]")
            if found:
                return found
    return None


def _check_model_entry(name: str, entry: object, path: str) -> None:
    if not isinstance(entry, dict):
        raise ArtifactError(f"{path} is not a model entry (a JSON object)")
    if name not in MODELS:
        raise ArtifactError(
            f"{path} names an unknown model {name!r}; this dlperf knows {', '.join(MODELS)}"
        )
    if entry.get("status", "ok") == "ok" and entry.get("model") != name:
        raise ArtifactError(f"{path}.model is {entry.get('model')!r}, expected {name!r}")
    for i, term in enumerate(entry.get("terms") or []):
        term_name = term.get("name") if isinstance(term, dict) else None
        if term_name not in TERMS:
            raise ArtifactError(
                f"{path}.terms[{i}].name is {term_name!r}, not a term of the generic model "
                f"({', '.join(TERMS)})"
            )
    found = _non_finite(entry, path)
    if found:
        raise ArtifactError(found)
    for i, refit in enumerate((entry.get("interval") or {}).get("refits") or []):
        _check_model_entry(name, refit, f"{path}.interval.refits[{i}]")


def check_artifact(artifact: object, source: str) -> dict:
    """The artifact itself when it is one this dlperf can trust; otherwise an ArtifactError
    naming the field, e.g. ``networks.lenet.models.generic.terms[2].value is NaN``."""
    if not isinstance(artifact, dict) or not isinstance(artifact.get("networks"), dict):
        raise ArtifactError(f"{source} is not a model artifact; write one with `dlperf fit`")
    version = artifact.get("schema_version")
    if version != SCHEMA_VERSION:
        raise ArtifactError(
            f"{source}: schema_version is {version!r}, this dlperf reads {SCHEMA_VERSION}; "
            "fit the models again with `dlperf fit` (or `snakemake`)"
        )
    groups = [(f"networks.{n}", info) for n, info in artifact["networks"].items()]
    if "all_networks" in artifact:
        groups.append(("all_networks", artifact["all_networks"]))
    try:
        for path, info in groups:
            models = info.get("models") if isinstance(info, dict) else None
            if not isinstance(models, dict):
                raise ArtifactError(f"{path}.models is missing or not a JSON object")
            for name, entry in models.items():
                _check_model_entry(name, entry, f"{path}.models.{name}")
    except ArtifactError as exc:
        raise ArtifactError(f"{source}: {exc}") from None
    return artifact


def load_artifact(path: str | os.PathLike) -> dict:
    """Read and check a model artifact (what predict, plan and the report read)."""
    try:
        artifact = read_json(path)
    except json.JSONDecodeError as exc:
        raise ArtifactError(
            f"{path} is not a model artifact (invalid JSON: {exc}); write one with `dlperf fit`"
        ) from None
    return check_artifact(artifact, str(path))
