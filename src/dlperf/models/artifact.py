"""Fit every configured model on one framework's points and describe the result."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

import dlperf
from dlperf.io import SCHEMA_VERSION

from . import InsufficientData, make_model, model_from_dict
from .base import FEATURES, TARGET
from .generic import GenericModel


def _finite(value: float) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def fit_one(name: str, settings: dict, points: pd.DataFrame, seed: int) -> dict:
    """One model's artifact entry; a model that cannot be fitted says why instead of failing."""
    try:
        model = make_model(name, settings).fit(points, seed)
    except InsufficientData as exc:
        return {"model": name, "status": "insufficient_data", "reason": str(exc)}
    entry = {"status": "ok", **model.to_dict()}
    measured = points[TARGET].to_numpy(float)
    predicted = model.predict(points)
    entry["train_mape"] = _finite(float(np.mean(np.abs(predicted - measured) / measured) * 100))
    if isinstance(model, GenericModel):
        entry["breakdown"] = breakdown_table(model, points)
    return entry


def breakdown_table(model: GenericModel, points: pd.DataFrame) -> list[dict]:
    """Where the time goes: each term's seconds and share of the prediction at every point."""
    seconds = model.term_seconds(points)
    total = seconds.sum(axis=1)
    rows = []
    for i in range(len(points)):
        rows.append(
            {
                **{k: int(points[k].iloc[i]) for k in FEATURES},
                "measured_s": float(points[TARGET].iloc[i]),
                "predicted_s": float(total.iloc[i]),
                "seconds": {t: float(seconds[t].iloc[i]) for t in seconds.columns},
                "share": {
                    t: float(seconds[t].iloc[i] / total.iloc[i]) if total.iloc[i] > 0 else 0.0
                    for t in seconds.columns
                },
            }
        )
    return rows


def fit_framework(points: pd.DataFrame, framework: str, models: dict[str, dict], seed: int) -> dict:
    """The model artifact of one framework: every model, per network."""
    selected = points[points["framework"] == framework]
    networks = {}
    for network, group in selected.groupby("network", sort=True):
        group = group.reset_index(drop=True)
        networks[network] = {
            "points": int(len(group)),
            "device": sorted(group["device"].unique().tolist()),
            "models": {name: fit_one(name, settings or {}, group, seed) for name, settings in models.items()},
        }
    return {
        "schema_version": SCHEMA_VERSION,
        "framework": framework,
        "dlperf_version": dlperf.__version__,
        "seed": seed,
        "target": TARGET,
        "features": FEATURES,
        "networks": networks,
    }


def load_model(artifact: dict, network: str, name: str):
    try:
        entry = artifact["networks"][network]["models"][name]
    except KeyError:
        available = {n: list(v["models"]) for n, v in artifact.get("networks", {}).items()}
        raise KeyError(
            f"the artifact for {artifact.get('framework')} has no model {name!r} for network "
            f"{network!r}; it has {available}"
        ) from None
    if entry.get("status") != "ok":
        raise InsufficientData(f"model {name!r} for {network!r} was not fitted: {entry.get('reason')}")
    return model_from_dict(entry)
