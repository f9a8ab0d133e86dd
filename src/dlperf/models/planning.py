"""Plan a training run: the fewest workers, or the cheapest in worker-hours (GPU-hours on GPUs,
CPU-hours on CPUs), that meet a deadline."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from dlperf.durations import (
    parse_duration,  # noqa: F401 (the planner's API)
    readable,
)
from dlperf.errors import UsageError

from .intervals import DEFAULT_LEVEL
from .prediction import extrapolation_warnings, interval_missing, predict_rows

#: The most workers a plan considers unless told (`dlperf plan` and the report's target).
DEFAULT_MAX_PROCS = 64


def layouts(
    max_procs: int, gpus_per_node: int, powers_of_two: bool = False
) -> list[tuple[int, int]]:
    """(nodes, procs) with the fewest nodes that hold p workers, evenly spread; with
    ``powers_of_two`` only worker counts 1, 2, 4, 8, ..."""
    if max_procs < 1 or gpus_per_node < 1:
        raise ValueError("the most workers and the GPUs per node must be at least 1")
    out = []
    for p in range(1, max_procs + 1):
        if powers_of_two and p & (p - 1):
            continue
        nodes = math.ceil(p / gpus_per_node)
        if p % nodes == 0:
            out.append((nodes, p))
    return out


def cost_unit(artifact: dict, network: str) -> tuple[str, str]:
    """(column, label) of the cost: GPU-hours when every measurement behind the network's models
    ran on GPUs, CPU-hours when all ran on CPUs, worker-hours when unknown or mixed."""
    info = artifact.get("networks", {}).get(network) or artifact.get("all_networks") or {}
    devices = set(info.get("device") or [])
    if devices == {"cuda"}:
        return "gpu_hours", "GPU-hours"
    if devices == {"cpu"}:
        return "cpu_hours", "CPU-hours"
    return "worker_hours", "worker-hours"


def plan(
    artifact: dict,
    network: str,
    model_name: str,
    batch_size: int,
    data_size: int,
    epochs: float,
    deadline_s: float,
    gpus_per_node: int,
    max_procs: int,
    objective: str = "workers",
    safe: bool = False,
    level: float = DEFAULT_LEVEL,
    powers_of_two: bool = False,
) -> tuple[pd.DataFrame, dict | None]:
    """Every candidate layout with its predicted time and cost, and the chosen one (or None).
    The cost column is named by :func:`cost_unit` (``gpu_hours``, ``cpu_hours`` or
    ``worker_hours``: workers x hours). ``powers_of_two``: only worker counts 1, 2, 4, 8, ..."""
    if objective not in ("workers", "cost"):
        raise ValueError(f"the objective must be 'workers' or 'cost', got {objective!r}")
    if epochs <= 0:
        raise ValueError(f"the number of epochs must be positive, got {epochs}")
    candidates = pd.DataFrame(
        layouts(max_procs, gpus_per_node, powers_of_two), columns=["nodes", "procs"]
    )
    candidates["batch_size"] = int(batch_size)
    candidates["data_size"] = int(data_size)
    if safe and interval_missing(artifact, network, model_name):
        raise UsageError(
            f"model {model_name!r} has no prediction interval, so no plan can rest on its upper "
            f"end: {interval_missing(artifact, network, model_name)}; plan on the prediction "
            "itself or choose another model"
        )
    table = predict_rows(artifact, network, model_name, candidates, level=level)
    # The deadline is judged on the interval's upper end when safe, else on the prediction.
    basis = table["epoch_time_hi_s"] if safe else table["epoch_time_s"]
    table["total_time_s"] = basis * epochs
    cost, _ = cost_unit(artifact, network)
    table[cost] = table["procs"] * table["total_time_s"] / 3600.0
    table["meets_deadline"] = table["total_time_s"] <= deadline_s
    feasible = table[table["meets_deadline"]]
    if feasible.empty:
        return table, None
    key = ["procs"] if objective == "workers" else [cost, "procs"]
    choice = feasible.sort_values(key, kind="stable").iloc[0]
    return table, choice.to_dict()


@dataclass(frozen=True)
class Planned:
    """A plan and what is said of it: every layout (``table``), the chosen one (None when no
    layout meets the deadline), the fastest, and where the answer (the chosen layout, else the
    fastest) leaves the measurements."""

    table: pd.DataFrame
    choice: dict | None
    fastest: dict
    extrapolated: list[str]

    @property
    def answer(self) -> dict:
        return self.choice or self.fastest


def planned(artifact: dict, network: str, model_name: str, batch_size: int, **asked) -> Planned:
    """:func:`plan` with the fastest layout (of equally fast ones, the fewest workers) and the
    extrapolation warnings of the answer: the one orchestration `dlperf plan` and the report's
    planning answer share. ``asked`` holds :func:`plan`'s other arguments."""
    table, choice = plan(artifact, network, model_name, batch_size, **asked)
    fastest = table.sort_values(["total_time_s", "procs"], kind="stable").iloc[0].to_dict()
    row = choice or fastest
    layout = pd.DataFrame(
        [{"nodes": int(row["nodes"]), "procs": int(row["procs"]), "batch_size": int(batch_size)}]
    )
    warnings = extrapolation_warnings(artifact, network, layout)
    return Planned(table, choice, fastest, warnings + _at_upper_end(choice, **asked))


def _at_upper_end(choice: dict | None, **asked) -> list[str]:
    """A warning when the chosen layout meets the deadline at its predicted time only: at its
    interval's upper end it would not (a plan on that end is the safe one)."""
    if choice is None or asked.get("safe") or pd.isna(choice.get("epoch_time_hi_s")):
        return []
    upper = choice["epoch_time_hi_s"] * asked["epochs"]
    if upper <= asked["deadline_s"]:
        return []
    return [
        f"it meets the deadline at its predicted time, not at its interval's upper end "
        f"({readable(upper)}); plan on that end to be sure of the deadline"
    ]
