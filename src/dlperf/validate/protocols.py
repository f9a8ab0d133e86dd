"""Validation protocols (DESIGN.md section 5): which points train a model and which test it."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from dlperf.folds import kfold_indices

PROTOCOLS = ("kfold", "loo_procs", "loo_batch", "extrapolation_procs", "extrapolation_batch")


@dataclass
class Split:
    fold: str
    train: np.ndarray
    test: np.ndarray


@dataclass
class Plan:
    protocol: str
    splits: list[Split] = field(default_factory=list)
    reason: str | None = None  # why the protocol cannot run on these points


def _leave_one_level_out(points: pd.DataFrame, column: str, protocol: str) -> Plan:
    levels = np.sort(points[column].unique())
    if len(levels) < 3:
        return Plan(protocol, reason=f"needs at least 3 levels of {column}, found {len(levels)}")
    values = points[column].to_numpy()
    splits = [
        Split(f"{column}={level}", np.flatnonzero(values != level), np.flatnonzero(values == level))
        for level in levels
    ]
    return Plan(protocol, splits)


def _extrapolation(points: pd.DataFrame, column: str, threshold: int | None, protocol: str) -> Plan:
    levels = np.sort(points[column].unique())
    if len(levels) < 2:
        return Plan(protocol, reason=f"needs at least 2 levels of {column}, found {len(levels)}")
    limit = threshold if threshold is not None else levels[-2]
    values = points[column].to_numpy()
    train, test = np.flatnonzero(values <= limit), np.flatnonzero(values > limit)
    if len(test) == 0:
        return Plan(protocol, reason=f"no point has {column} > {limit} to extrapolate to")
    if len(train) == 0:
        return Plan(protocol, reason=f"no point has {column} <= {limit} to train on")
    return Plan(protocol, [Split(f"{column}<={limit}", train, test)])


def plan(points: pd.DataFrame, protocol: str, settings: dict | None = None, seed: int = 0) -> Plan:
    settings = settings or {}
    points = points.reset_index(drop=True)
    if protocol == "kfold":
        k = int(settings.get("k", 5))
        if len(points) < 3:
            return Plan(protocol, reason=f"needs at least 3 points, found {len(points)}")
        splits = kfold_indices(len(points), k, seed)
        return Plan(protocol, [Split(f"fold{i}", tr, te) for i, (tr, te) in enumerate(splits)])
    if protocol == "loo_procs":
        return _leave_one_level_out(points, "procs", protocol)
    if protocol == "loo_batch":
        return _leave_one_level_out(points, "batch_size", protocol)
    if protocol == "extrapolation_procs":
        return _extrapolation(points, "procs", settings.get("train_max_procs"), protocol)
    if protocol == "extrapolation_batch":
        return _extrapolation(points, "batch_size", settings.get("train_max_batch"), protocol)
    raise ValueError(f"unknown validation protocol {protocol!r}; choose from {', '.join(PROTOCOLS)}")
