"""Validation protocols (docs/report.md, "Protocols"): which points train a model and which test it.

A protocol turns the points of one network (or, for ``cross_network``, of one framework) into
splits. When the points cannot support a protocol, or a split could not inform (extrapolating
from a single level), the plan carries the reason instead, so the summary can say why rather
than leaving the protocol out or reporting an error that means nothing.

Each plan also names its *unit*, the held-out group its confidence intervals resample
(docs/report.md): the fold for k-fold, the level for leave-one-level-out, and the
configuration (network, nodes, procs, batch_size) for the protocols with a single split
(extrapolation, cross_network), whose one fold cannot be resampled.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from dlperf.errors import UnknownName
from dlperf.folds import grouped_kfold, n_configurations
from dlperf.hardware import gpu_names

# Protocols that split the points of one network (cross_hardware by GPU type; docs/hardware.md).
WITHIN_NETWORK = (
    "kfold",
    "loo_procs",
    "loo_batch",
    "extrapolation_procs",
    "extrapolation_batch",
    "cross_hardware",
)
# Protocols that split one framework's points by network.
ACROSS_NETWORKS = ("cross_network",)
PROTOCOLS = WITHIN_NETWORK + ACROSS_NETWORKS
# Short names the command line accepts for a pair of protocols.
ALIASES = {
    "loo": ("loo_procs", "loo_batch"),
    "extrapolation": ("extrapolation_procs", "extrapolation_batch"),
}
COLUMN_LABEL = {"procs": "procs", "batch_size": "batch"}
# What the confidence intervals of each protocol resample.
UNIT = {
    "kfold": "fold",
    "loo_procs": "level",
    "loo_batch": "level",
    "extrapolation_procs": "configuration",
    "extrapolation_batch": "configuration",
    "cross_network": "configuration",
    "cross_hardware": "level",
}


@dataclass
class Split:
    fold: str
    train: np.ndarray  # row positions of the training points
    test: np.ndarray  # row positions of the test points


@dataclass
class Plan:
    protocol: str
    splits: list[Split] = field(default_factory=list)
    reason: str | None = None  # why the protocol cannot run on these points
    # The summary status when ``reason`` is set: not_run (the points cannot support the
    # protocol) or insufficient_data (a split exists but its training set cannot inform).
    status: str = "not_run"

    @property
    def unit(self) -> str:
        """The held-out group the confidence intervals resample: fold, level or configuration."""
        return UNIT[self.protocol]


def expand_aliases(names: list[str]) -> list[str]:
    """Protocol names with aliases ('loo', 'extrapolation') replaced by what they stand for."""
    out: list[str] = []
    for name in names:
        for protocol in ALIASES.get(name, (name,)):
            if protocol not in PROTOCOLS:
                raise UnknownName(
                    f"unknown validation protocol {protocol!r}; choose from "
                    f"{', '.join(PROTOCOLS + tuple(ALIASES))}"
                )
            if protocol not in out:
                out.append(protocol)
    return out


def _kfold(points: pd.DataFrame, k: int, seed: int) -> Plan:
    # Folds hold whole configurations: points differing only in data size are near-copies.
    n = n_configurations(points)
    if n < 3:
        return Plan(
            "kfold",
            reason=f"needs at least 3 measured configurations (nodes, procs, batch_size), "
            f"found {n}; measure more worker counts or batch sizes",
        )
    splits = grouped_kfold(points, k, seed)
    return Plan("kfold", [Split(f"fold{i}", tr, te) for i, (tr, te) in enumerate(splits)])


def _too_few_levels(levels: np.ndarray, needed: int, column: str, protocol: str) -> Plan | None:
    """The plan refusing ``protocol`` when ``column`` has fewer than ``needed`` levels."""
    if len(levels) >= needed:
        return None
    return Plan(
        protocol,
        reason=f"needs at least {needed} levels of {column}, found {len(levels)} "
        f"({', '.join(str(v) for v in levels)}); measure more {column} values",
    )


def _leave_one_level_out(points: pd.DataFrame, column: str, protocol: str) -> Plan:
    levels = np.sort(points[column].unique())
    # With two levels, leaving one out trains on a single level: no trend in `column` is
    # learnable, and that case is the extrapolation protocol anyway.
    refused = _too_few_levels(levels, 3, column, protocol)
    if refused:
        return refused
    values = points[column].to_numpy()
    label = COLUMN_LABEL[column]
    splits = [
        Split(f"{label}={level}", np.flatnonzero(values != level), np.flatnonzero(values == level))
        for level in levels
    ]
    return Plan(protocol, splits)


def _extrapolation(points: pd.DataFrame, column: str, threshold: int | None, protocol: str) -> Plan:
    levels = np.sort(points[column].unique())
    refused = _too_few_levels(levels, 2, column, protocol)
    if refused:
        return refused
    # Without a threshold: train on every level but the largest, test on the largest.
    limit = int(threshold) if threshold is not None else int(levels[-2])
    values = points[column].to_numpy()
    train, test = np.flatnonzero(values <= limit), np.flatnonzero(values > limit)
    setting = "train_max_procs" if column == "procs" else "train_max_batch"
    if len(test) == 0:
        return Plan(
            protocol,
            reason=f"no point has {column} > {limit} to extrapolate to; lower {setting}",
        )
    if len(train) == 0:
        return Plan(
            protocol, reason=f"no point has {column} <= {limit} to train on; raise {setting}"
        )
    trained = np.unique(values[train])
    if len(trained) < 2:
        # One level of the column: every feature varying along it is constant (with one worker
        # count every communication term is zero), so nothing the test checks was learnt.
        return Plan(
            protocol,
            reason=f"trains on a single level of {column} ({trained[0]}), so no trend in "
            f"{column} can be learnt and the test says nothing; raise {setting} to train on "
            f"2 or more levels, or measure more {column} values",
            status="insufficient_data",
        )
    return Plan(protocol, [Split(f"{COLUMN_LABEL[column]}<={limit}", train, test)])


def _leave_one_gpu_type_out(points: pd.DataFrame) -> Plan:
    """Each GPU type held out in turn (the models across hardware learn from two or more)."""
    gpus = gpu_names(points["gpu"]) if "gpu" in points.columns else None
    kinds = [] if gpus is None else sorted(set(gpus) - {""})
    if len(kinds) < 3:
        return Plan(
            "cross_hardware",
            reason=f"needs measurements of at least 3 GPU types (a gpu column), found "
            f"{len(kinds)}; measure on more GPU types (docs/hardware.md)",
        )
    values = gpus.to_numpy()
    splits = [
        Split(
            f"held_out_gpu={g}",
            np.flatnonzero((values != g) & (values != "")),
            np.flatnonzero(values == g),
        )
        for g in kinds
    ]
    return Plan("cross_hardware", splits)


def plan(points: pd.DataFrame, protocol: str, settings: dict | None = None, seed: int = 0) -> Plan:
    """Splits of one network's points (row positions after ``reset_index``)."""
    settings = settings or {}
    points = points.reset_index(drop=True)
    if protocol == "kfold":
        return _kfold(points, int(settings.get("k", 5)), seed)
    if protocol == "loo_procs":
        return _leave_one_level_out(points, "procs", protocol)
    if protocol == "loo_batch":
        return _leave_one_level_out(points, "batch_size", protocol)
    if protocol == "extrapolation_procs":
        return _extrapolation(points, "procs", settings.get("train_max_procs"), protocol)
    if protocol == "extrapolation_batch":
        return _extrapolation(points, "batch_size", settings.get("train_max_batch"), protocol)
    if protocol == "cross_hardware":
        return _leave_one_gpu_type_out(points)
    if protocol in ACROSS_NETWORKS:
        raise ValueError(f"{protocol} splits a framework by network; use plan_cross_network")
    raise UnknownName(
        f"unknown validation protocol {protocol!r}; choose from {', '.join(PROTOCOLS)}"
    )


def plan_cross_network(points: pd.DataFrame) -> dict[str, Plan]:
    """Per held-out network: train on every other network of the framework, test on it."""
    points = points.reset_index(drop=True)
    networks = sorted(points["network"].unique())
    values = points["network"].to_numpy()
    if len(networks) < 2:
        reason = (
            f"needs measurements of at least 2 networks, found {len(networks)} "
            f"({', '.join(networks) or 'none'}); add networks to the config"
        )
        return {network: Plan("cross_network", reason=reason) for network in networks}
    return {
        network: Plan(
            "cross_network",
            [
                Split(
                    f"held_out={network}",
                    np.flatnonzero(values != network),
                    np.flatnonzero(values == network),
                )
            ],
        )
        for network in networks
    }
