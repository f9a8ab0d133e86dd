"""Frameworks side by side, Wang et al.'s question: for each network measured in two or more
frameworks, which one trains it faster at each scale, and where does each lose its time.

From our own runs (the timings table; disturbed runs left out as the models leave them out):

- the ratio of each framework's throughput to the fastest's at every measured scale (nodes,
  workers): the geometric mean over the configurations (batch size, data size) every framework
  measured there, its interval from the repetitions by the moderated t-test of `dlperf compare`
  (dlperf.compare.statistics: each repetition is one value, the log of its throughput; the variance
  of every configuration shrunk towards one prior fitted over all of the network's);
- the throughput at one configuration (the largest batch and data size all of them measured)
  against workers, median and range of the repetitions: what the figure draws;
- the time per iteration at that configuration split into compute, framework overhead,
  communication and data wait: the measured median iteration and its measured data wait; the
  rest shared out as the generic model's terms share the predicted iteration there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dlperf.compare.statistics import combine, compare_all
from dlperf.errors import InputFileError
from dlperf.measurements import tables
from dlperf.models.terms import COMMUNICATION_TERMS, COMPUTE_TERMS, OVERLAP, TERMS

CONFIDENCE = 0.95
SCALE = ["nodes", "procs"]
CONFIG = ["batch_size", "data_size"]
# What the split reads of a run, where the timings table has it.
OPTIONAL = ["iter_time_median_s", "data_wait_fraction"]
# The parts of an iteration, in the order tables and sentences give them.
PARTS = ("compute", "overhead", "communication", "data_wait")
PART_WORDS = {
    "compute": "computation",
    "overhead": "framework overhead",
    "communication": "communication",
    "data_wait": "waiting for data",
}


@dataclass(frozen=True)
class NetworkComparison:
    """One network's frameworks side by side (see the module's docstring)."""

    network: str
    frameworks: tuple[str, ...]
    # One row per scale and framework: ratio to the fastest there with its interval.
    ratios: pd.DataFrame
    batch_size: int  # the configuration of the throughput and the split
    data_size: int
    # One row per framework and worker count: median, lowest and highest throughput.
    throughput: pd.DataFrame
    # One row per framework and scale: seconds per iteration of each part.
    split: pd.DataFrame
    sentence: str


def own_runs(timings: pd.DataFrame) -> pd.DataFrame:
    """The runs compared: successful, undisturbed (as the models see them), with throughput.
    The per-iteration columns are optional (NaN where a table predates them)."""
    if "samples_per_s" not in timings:
        raise InputFileError(
            "the timings lack the column samples_per_s; pass results/timings.csv as "
            "`dlperf aggregate` writes it"
        )
    runs = timings.reindex(columns=list(dict.fromkeys([*timings.columns, *OPTIONAL])))
    runs = runs[~tables.left_out(runs)]
    return runs[pd.to_numeric(runs["samples_per_s"], errors="coerce") > 0].reset_index(drop=True)


def shared_networks(runs: pd.DataFrame) -> list[str]:
    """Networks measured in two or more frameworks, sorted."""
    if runs.empty:
        return []
    counts = runs.groupby("network")["framework"].nunique()
    return sorted(str(n) for n in counts[counts >= 2].index)


def _log_throughputs(runs: pd.DataFrame) -> dict[tuple, np.ndarray]:
    """(framework, nodes, procs, batch, data) -> the log throughput of each repetition."""
    keys = ["framework", *SCALE, *CONFIG]
    return {
        tuple(key): np.log(group["samples_per_s"].to_numpy(float))
        for key, group in runs.groupby(keys, sort=True)
    }


def _common_configs(logs: dict[tuple, np.ndarray], scale: tuple) -> tuple[list[str], list]:
    """The frameworks measured at ``scale`` and the configurations every one of them measured
    there."""
    at = [k for k in logs if k[1:3] == scale]
    frameworks = sorted({k[0] for k in at})
    configs = [
        c for c in sorted({k[3:] for k in at}) if all((f, *scale, *c) in logs for f in frameworks)
    ]
    return frameworks, configs


def ratio_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Per scale and framework of one network's runs: the geometric-mean throughput over the
    configurations all frameworks measured there, its ratio to the fastest and the ratio's
    interval (NaN where the repetitions give no spread to judge by)."""
    logs = _log_throughputs(runs)
    scales = sorted({k[1:3] for k in logs})
    pairs, owners, rows = [], [], []
    for scale in scales:
        frameworks, configs = _common_configs(logs, scale)
        if len(frameworks) < 2 or not configs:
            continue
        mean = {
            f: float(np.mean([logs[(f, *scale, *c)].mean() for c in configs])) for f in frameworks
        }
        fastest = max(frameworks, key=lambda f: (mean[f], f))
        for framework in frameworks:
            rows.append(
                {
                    "nodes": scale[0],
                    "procs": scale[1],
                    "framework": framework,
                    "samples_per_s": math.exp(mean[framework]),
                    "configurations": len(configs),
                    "fastest": framework == fastest,
                }
            )
            if framework == fastest:
                continue
            for config in configs:
                pairs.append((logs[(fastest, *scale, *config)], logs[(framework, *scale, *config)]))
                owners.append((scale, framework))
    table = pd.DataFrame(
        rows, columns=[*SCALE, "framework", "samples_per_s", "configurations", "fastest"]
    )
    return _with_intervals(table, pairs, owners)


def _with_intervals(table: pd.DataFrame, pairs: list, owners: list) -> pd.DataFrame:
    """``table`` with each framework's ratio to the fastest and its interval: the moderated
    tests of every configuration, combined per scale (geometric mean of the ratios)."""
    table = table.assign(ratio=1.0, ratio_lo=np.nan, ratio_hi=np.nan)
    if not pairs:
        return table
    # No per-iteration times in the timings table: one prior scale for every configuration.
    tests, _ = compare_all(pairs, np.ones(len(pairs)), CONFIDENCE)
    for owner in dict.fromkeys(owners):
        combined = combine(
            [t for t, o in zip(tests, owners, strict=True) if o == owner], CONFIDENCE
        )
        (nodes, procs), framework = owner
        row = (
            (table["nodes"] == nodes)
            & (table["procs"] == procs)
            & (table["framework"] == framework)
        )
        table.loc[row, ["ratio", "ratio_lo", "ratio_hi"]] = [
            math.exp(combined.log_ratio),
            combined.lo,
            combined.hi,
        ]
    return table


def figure_config(runs: pd.DataFrame) -> tuple[int, int]:
    """The configuration the figure and the split show: the largest batch size every framework
    measured, and at it the largest data size every framework measured."""
    by_framework = [
        set(zip(g["batch_size"], g["data_size"], strict=True)) for _, g in runs.groupby("framework")
    ]
    common = set.intersection(*by_framework)
    if not common:  # no configuration in common: each framework's largest
        common = set.union(*by_framework)
    batch = max(b for b, _ in common)
    return int(batch), int(max(d for b, d in common if b == batch))


def throughput_table(runs: pd.DataFrame, batch: int, data: int) -> pd.DataFrame:
    """Per framework and worker count (on the fewest nodes measured), the median, lowest and
    highest throughput of the repetitions at (``batch``, ``data``)."""
    sel = runs[(runs["batch_size"] == batch) & (runs["data_size"] == data)]
    fewest = sel.groupby(["framework", "procs"])["nodes"].transform("min")
    sel = sel[sel["nodes"] == fewest]
    grouped = sel.groupby(["framework", "nodes", "procs"], sort=True)["samples_per_s"]
    return grouped.agg(median="median", low="min", high="max", reps="size").reset_index()


def _term_groups(generic: dict, nodes: int, procs: int, batch: int, data: int) -> dict | None:
    """The generic model's seconds of compute, overhead and communication at one measured
    configuration (communication less what it hides behind compute, never below 0), per
    iteration of its prediction; None without a fitted model or that configuration."""
    if generic.get("status") != "ok":
        return None
    key = (nodes, procs, batch, data)
    rows = [
        r for r in generic.get("breakdown") or [] if tuple(r[k] for k in (*SCALE, *CONFIG)) == key
    ]
    if not rows:
        return None
    seconds = {t: s for t, s in rows[0]["seconds"].items() if t in TERMS and TERMS[t].per_iteration}
    compute = sum(s for t, s in seconds.items() if t in COMPUTE_TERMS)
    communication = sum(s for t, s in seconds.items() if t in (*COMMUNICATION_TERMS, OVERLAP))
    rest = {*COMPUTE_TERMS, *COMMUNICATION_TERMS, OVERLAP}
    overhead = sum(s for t, s in seconds.items() if t not in rest)
    return {
        "compute": max(compute, 0.0),
        "overhead": max(overhead, 0.0),
        "communication": max(communication, 0.0),
    }


def split_table(
    runs: pd.DataFrame, artifacts: dict[str, dict], network: str, batch: int, data: int
) -> pd.DataFrame:
    """Per framework and scale at (``batch``, ``data``): the measured median iteration, its
    measured data wait, and the rest as the generic model's terms share it out (NaN without a
    generic model, or without the measurement)."""
    sel = runs[(runs["batch_size"] == batch) & (runs["data_size"] == data)]
    rows = []
    for (framework, nodes, procs), group in sel.groupby(["framework", *SCALE], sort=True):
        iteration = float(pd.to_numeric(group["iter_time_median_s"], errors="coerce").median())
        wait_share = pd.to_numeric(group["data_wait_fraction"], errors="coerce").median()
        wait = iteration * float(wait_share) if pd.notna(wait_share) else math.nan
        model = artifacts.get(framework, {}).get("networks", {}).get(network, {})
        groups = _term_groups(
            model.get("models", {}).get("generic", {}), int(nodes), int(procs), batch, data
        )
        busy = iteration - (0.0 if math.isnan(wait) else wait)
        total = sum(groups.values()) if groups else 0.0
        row = {
            "framework": framework,
            "nodes": int(nodes),
            "procs": int(procs),
            "iteration_s": iteration,
        }
        for part in PARTS[:3]:
            row[f"{part}_s"] = busy * groups[part] / total if total > 0 else math.nan
        row["data_wait_s"] = wait
        rows.append(row)
    return pd.DataFrame(
        rows, columns=["framework", *SCALE, "iteration_s", *(f"{p}_s" for p in PARTS)]
    )


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3g} ms"


def where_time_is_lost(split: pd.DataFrame, batch: int, data: int) -> str:
    """One sentence: at the largest scale two or more frameworks were split at, the fastest
    framework per iteration and its largest part beside computation, and for each other how
    much longer it takes and in which part most."""
    measured = split.dropna(subset=["iteration_s"])
    if measured.empty:
        return "No median iteration time was measured, so the time per iteration is not split."
    sizes = measured.groupby(SCALE).size()
    if (sizes < 2).all():
        return "No scale was measured in two frameworks at the same configuration."
    scale = max(sizes[sizes >= 2].index)
    at = measured[(measured["nodes"] == scale[0]) & (measured["procs"] == scale[1])]
    best = at.loc[at["iteration_s"].idxmin()]
    where = f"At {scale[1]} worker{'s' if scale[1] > 1 else ''} (b={batch}, d={data}) "
    parts = [f"{best['framework']} is fastest at {_ms(best['iteration_s'])} per iteration"]
    beside = {p: best[f"{p}_s"] for p in PARTS if p != "compute"}
    if not any(math.isnan(v) for v in beside.values()):
        part = max(beside, key=lambda p: beside[p])
        parts[0] += f" ({_ms(beside[part])} of it {PART_WORDS[part]}, most beside computation)"
    for _, row in at.sort_values("iteration_s").iloc[1:].iterrows():
        lost = row["iteration_s"] - best["iteration_s"]
        text = f"{row['framework']} takes {_ms(lost)} longer"
        excess = {p: row[f"{p}_s"] - best[f"{p}_s"] for p in PARTS}
        known = {p: e for p, e in excess.items() if not math.isnan(e)}
        if len(known) == len(PARTS):
            part = max(known, key=lambda p: known[p])
            text += f", its largest loss in {PART_WORDS[part]} (+{_ms(known[part])})"
        else:
            text += " (no generic model or data wait to split it by)"
        parts.append(text)
    return where + "; ".join(parts) + "."


def compare_frameworks(
    timings: pd.DataFrame, artifacts: dict[str, dict]
) -> list[NetworkComparison]:
    """Every network measured in two or more frameworks, side by side."""
    runs = own_runs(timings)
    out = []
    for network in shared_networks(runs):
        mine = runs[runs["network"] == network]
        batch, data = figure_config(mine)
        split = split_table(mine, artifacts, network, batch, data)
        out.append(
            NetworkComparison(
                network,
                tuple(sorted(mine["framework"].unique())),
                ratio_table(mine),
                batch,
                data,
                throughput_table(mine, batch, data),
                split,
                where_time_is_lost(split, batch, data),
            )
        )
    return out
