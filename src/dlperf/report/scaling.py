"""Speed-up and parallel efficiency from comparable work: samples per second (data size over
epoch time), relative to the fewest workers measured with the same per-worker batch. At one
data size this is the ratio of epoch times; it also holds where every worker count was timed
on its own amount of work (brought-in timings without ``data_size`` get a fixed number of
iterations, so no two worker counts share a data size). And what makes a speed-up implausible.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from dlperf.measurements.tables import MOSTLY_DISTURBED, disturbed, node_capacity

# A headline speed-up whose runs are more than this share disturbed is marked as such.
MOSTLY = MOSTLY_DISTURBED

# Efficiency above this is not parallel speed-up but a sign of a disturbed base run or of
# workers measured on different hardware (a little above 1 is noise or cache effects).
SUPERLINEAR = 1.05


@dataclass(frozen=True)
class Scaling:
    procs: int  # the largest measured worker count
    base_procs: int  # the fewest workers measured with the same batch size
    batch_size: int
    data_size: int  # the data size at the largest worker count
    speedup: float
    efficiency: float


def measured_speedup(points: pd.DataFrame) -> pd.DataFrame:
    """``points`` with the speed-up and efficiency of each, relative to the fewest workers
    measured with the same batch size: their throughput at the same data size when they
    measured it, else at their largest data size (times that count: 1 when one worker was
    measured)."""
    out = []
    for _, sel in points.groupby("batch_size", sort=True):
        throughput = sel["data_size"] / sel["epoch_time_s"]
        base_procs = int(sel["procs"].min())
        base = sel["procs"] == base_procs
        at_data = dict(zip(sel.loc[base, "data_size"], throughput[base], strict=True))
        largest = throughput[base][sel.loc[base, "data_size"].idxmax()]
        base_throughput = sel["data_size"].map(at_data).fillna(largest)
        speedup = throughput / base_throughput * base_procs
        out.append(sel.assign(speedup=speedup, efficiency=speedup / sel["procs"]))
    if not out:
        return points.assign(speedup=[], efficiency=[])
    return pd.concat(out).sort_values(["batch_size", "data_size", "procs"]).reset_index(drop=True)


def at_largest_data(speedups: pd.DataFrame) -> pd.DataFrame:
    """Per batch size and worker count, the point with the largest data size (where the fixed
    part of an epoch weighs least)."""
    order = speedups.sort_values(["batch_size", "procs", "data_size"])
    return order.groupby(["batch_size", "procs"], sort=True).tail(1).reset_index(drop=True)


def largest_scale(points: pd.DataFrame) -> list[Scaling]:
    """Measured speed-up at the largest worker count, per batch size measured there and with
    fewer workers; best first."""
    if points.empty:
        return []
    top = int(points["procs"].max())
    found = []
    for batch, group in at_largest_data(measured_speedup(points)).groupby("batch_size"):
        if len(group) < 2 or group["procs"].iloc[-1] != top:
            continue
        last = group.iloc[-1]
        found.append(
            Scaling(
                top,
                int(group["procs"].iloc[0]),
                int(batch),
                int(last["data_size"]),
                float(last["speedup"]),
                float(last["efficiency"]),
            )
        )
    return sorted(found, key=lambda s: (-s.speedup, s.batch_size))


def implausible(scales: list[Scaling], timings: pd.DataFrame) -> list[str]:
    """Warnings for speed-ups the measurements cannot support: efficiency above 100 %, and
    runs with more workers on a node than it had cores (CPU) or GPUs (cuda)."""
    found = [
        f"The speed-up {s.speedup:.2f}× at {s.procs} workers (batch {s.batch_size}) is an "
        f"efficiency of {s.efficiency:.0%}, above 100 %: more than the workers can give; the "
        f"runs with {s.base_procs} worker(s) were probably slowed (disturbed, or on other "
        "hardware). Measure them again before quoting it."
        for s in scales
        if s.efficiency > SUPERLINEAR
    ]
    return found + _oversubscribed(timings)


def _oversubscribed(timings: pd.DataFrame) -> list[str]:
    """Our own runs (tables.TIMING_COLUMNS) with more workers per node than the node's cores
    (the run record's cores_available) or, on cuda, its GPUs."""
    if timings.empty:
        return []
    per_node = timings["procs"] / timings["nodes"]
    cuda = timings["device"] == "cuda"
    limit = node_capacity(timings)
    beyond = per_node > limit
    if not beyond.any():
        return []
    worst = (per_node / limit)[beyond].idxmax()
    what = "GPUs" if cuda[worst] else "cores"
    return [
        f"{int(beyond.sum())} of {len(timings)} runs put more workers on a node than it had "
        f"{what} (up to {int(per_node[worst])} workers on {int(limit[worst])} {what}): the "
        "workers shared them, so those runs measure contention, not scaling."
    ]


def headline_caveat(scale: Scaling, timings: pd.DataFrame) -> str:
    """What makes the headline speed-up untrustworthy, said first: most of its runs disturbed
    by other programs, an efficiency above 100 %; empty when neither."""
    share = disturbed_share(timings)
    said = [share] if share else []
    if scale.efficiency > SUPERLINEAR:
        said.append(f"an efficiency of {scale.efficiency:.0%} is more than the workers can give")
    return _not_to_be_quoted(said)


def disturbed_caveat(timings: pd.DataFrame) -> str:
    """The mark of a line (the Summary's answer) resting on runs mostly disturbed; empty when
    they are not."""
    share = disturbed_share(timings)
    return _not_to_be_quoted([share] if share else [])


def disturbed_share(timings: pd.DataFrame) -> str:
    """ "N of the M runs of this network were disturbed" when more than :data:`MOSTLY` were,
    else empty."""
    flagged = disturbed(timings)
    if not len(timings) or flagged.mean() <= MOSTLY:
        return ""
    return f"{int(flagged.sum())} of the {len(timings)} runs of this network were disturbed"


def _not_to_be_quoted(said: list[str]) -> str:
    return "NOT TO BE QUOTED (" + " and ".join(said) + "; see Warnings): " if said else ""
