"""The generic model's terms (docs/model.md): each term's feature, constant
and formula, the default term list and the order that decides which of two indistinguishable
terms keeps its column."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .base import InsufficientData, accumulation_steps, iterations

Array = np.ndarray


@dataclass(frozen=True)
class Extrinsic:
    """The configuration of each row as float arrays.

    ``core_slowdown`` is how much slower a worker computes than with all of its node's cores:
    cores / min(threads, cores / workers-per-node), from the ``threads_per_worker`` and
    ``cores_per_node`` columns of CPU rows; 1 where they are absent or the device is not the
    CPU (a worker with its own device). ``servers`` is the number of parameter servers
    (column ``ps_servers``; dlperf's MXNet runs start one)."""

    p: Array
    n: Array
    b: Array
    core_slowdown: Array | None = None
    servers: Array | None = None

    @classmethod
    def of(cls, frame: pd.DataFrame) -> Extrinsic:
        p = frame["procs"].to_numpy(float)
        n = frame["nodes"].to_numpy(float)
        return cls(
            p,
            n,
            frame["batch_size"].to_numpy(float),
            core_slowdown(frame, p / n),
            _column(frame, "ps_servers", 1.0),
        )

    def slowdown(self) -> Array:
        return np.ones_like(self.p) if self.core_slowdown is None else self.core_slowdown

    def workers_per_server(self) -> Array:
        servers = np.ones_like(self.p) if self.servers is None else self.servers
        return self.p / servers


def _column(frame: pd.DataFrame, name: str, default: float) -> Array:
    if name not in frame.columns:
        return np.full(len(frame), default)
    values = pd.to_numeric(frame[name], errors="coerce").to_numpy(float)
    return np.where(np.isfinite(values) & (values > 0), values, default)


def core_slowdown(frame: pd.DataFrame, per_node: Array) -> Array:
    """cores / min(threads, cores / workers per node) on CPU rows, else 1.

    Threads beyond a worker's share of the cores do not run at once, so its effective cores are
    min(threads, cores / workers per node); the reference is a worker with every core."""
    threads = _column(frame, "threads_per_worker", np.nan)
    cores = _column(frame, "cores_per_node", np.nan)
    on_cpu = (
        frame["device"].astype(str).eq("cpu").to_numpy()
        if "device" in frame.columns
        else np.zeros(len(frame), bool)
    )
    effective = np.minimum(threads, cores / per_node)
    slowdown = np.where(on_cpu & np.isfinite(effective), cores / effective, 1.0)
    return np.maximum(slowdown, 1.0)


def shared_threads(cores: float | Array, per_node: Array) -> Array:
    """Threads per worker when a node's cores are shared evenly (threads_per_proc 0), as
    ``dlperf.bench.runner.threads_per_worker`` gives them: max(1, cores // workers per node)."""
    return np.maximum(np.floor(cores / per_node), 1.0)


def measured_layout(points: pd.DataFrame) -> dict:
    """How the measured workers shared their nodes, for rows that do not say (predictions):
    the device, the cores per node and the threads per worker, "shared" when every worker had
    cores / (workers per node) of them (threads_per_proc 0). None where the points disagree."""
    layout: dict = {"device": None, "cores_per_node": None, "threads_per_worker": None}
    if "device" in points.columns and points["device"].nunique() == 1:
        layout["device"] = str(points["device"].iloc[0])
    cores = _column(points, "cores_per_node", np.nan)
    threads = _column(points, "threads_per_worker", np.nan)
    if np.isfinite(cores).all() and np.unique(cores).size == 1:
        layout["cores_per_node"] = int(cores[0])
        per_node = points["procs"].to_numpy(float) / points["nodes"].to_numpy(float)
        if np.isfinite(threads).all():
            if np.all(threads == shared_threads(cores, per_node)):
                layout["threads_per_worker"] = "shared"
            elif np.unique(threads).size == 1:
                layout["threads_per_worker"] = int(threads[0])
    return layout


def with_layout(rows: pd.DataFrame, layout: Mapping | None) -> pd.DataFrame:
    """``rows`` with the layout columns they lack filled in from :func:`measured_layout`'s
    record, so a prediction for p workers on a CPU node assumes they share its cores as the
    measured ones did (core_share)."""
    if not layout:
        return rows
    rows = rows.copy()
    if "device" not in rows.columns and layout.get("device"):
        rows["device"] = layout["device"]
    cores = layout.get("cores_per_node")
    if "cores_per_node" not in rows.columns and cores:
        rows["cores_per_node"] = cores
    threads = layout.get("threads_per_worker")
    if "threads_per_worker" not in rows.columns and cores and threads:
        per_node = rows["procs"].to_numpy(float) / rows["nodes"].to_numpy(float)
        rows["threads_per_worker"] = (
            shared_threads(cores, per_node) if threads == "shared" else float(threads)
        )
    return rows


@dataclass(frozen=True)
class Term:
    name: str
    constant: str
    formula: str
    per_iteration: bool  # multiplied by I(p, b, d), or paid once per epoch
    description: str
    # Value at unit constant (a = 1); with uses_exponent its b becomes b^a: feature * b^(a-1).
    feature: Callable[[Extrinsic], Array]
    uses_exponent: bool = False
    # Across networks: the per-network feature this term scales with (a timings column).
    intrinsic: str | None = None
    # Its seconds follow from other terms' (overlap): nonlinear in the constants, so the fit
    # searches every constant by differential evolution when it is on.
    coupled: bool = False


TERMS: dict[str, Term] = {
    term.name: term
    for term in (
        Term(
            "fixed",
            "c0",
            "c0",
            False,
            "fixed time per epoch (start-up, evaluation)",
            lambda x: np.ones_like(x.p),
        ),
        Term(
            "overhead",
            "c1",
            "c1",
            True,
            "framework overhead per iteration",
            lambda x: np.ones_like(x.p),
        ),
        Term(
            "compute",
            "c2",
            "c2*b^a",
            True,
            "computation of one worker's batch",
            lambda x: x.b,
            uses_exponent=True,
            intrinsic="flops_per_sample",
        ),
        Term(
            "allreduce_bw",
            "c3",
            "c3*(p-1)/p",
            True,
            "bandwidth part of a ring all-reduce of the gradient",
            lambda x: (x.p - 1.0) / x.p,
            intrinsic="param_count",
        ),
        Term(
            "allreduce_lat",
            "c4",
            "c4*ceil(log2 p)",
            True,
            "latency part of the all-reduce / synchronisation",
            lambda x: np.ceil(np.log2(x.p)),
        ),
        Term(
            "internode",
            "c5",
            "c5*[n>1]*(p-1)/p",
            True,
            "penalty of the slower network between nodes",
            lambda x: (x.n > 1) * (x.p - 1.0) / x.p,
            intrinsic="param_count",
        ),
        # Optional terms, not in the default list: add them in config to test a hypothesis.
        Term(
            "sync_linear",
            "c6",
            "c6*(p-1)",
            True,
            "synchronisation that grows linearly with workers (parameter server, all-gather)",
            lambda x: x.p - 1.0,
        ),
        Term(
            "per_sample",
            "c7",
            "c7*b",
            True,
            "per-sample host work (data loading, copies) apart from the compute curve",
            lambda x: x.b,
        ),
        # The physics of data-parallel training beyond the ring all-reduce (issue 15); each
        # has its own constant, so the fit (or the term list) can switch it off.
        Term(
            "core_share",
            "c8",
            "c8*b^a*(s-1)",
            True,
            "slower compute of a worker sharing the node's cores: s = cores/min(threads, "
            "cores/(p/n)) on the CPU, s = 1 with its own device",
            lambda x: x.b * (x.slowdown() - 1.0),
            uses_exponent=True,
            intrinsic="flops_per_sample",
        ),
        Term(
            "ps_sync",
            "c9",
            "c9*[p>1]*p/S",
            True,
            "parameter-server traffic (MXNet dist_sync): each of S servers receives and sends "
            "every worker's gradient",
            lambda x: (x.p > 1) * x.workers_per_server(),
            intrinsic="param_count",
        ),
        Term(
            "internode_scaling",
            "c10",
            "c10*ceil(log2 n)",
            True,
            "inter-node exchange that grows with the node count (tree stage between nodes)",
            lambda x: np.ceil(np.log2(x.n)),
        ),
        Term(
            "overlap",
            "c11",
            "-smin(comm, c11*compute)",
            True,
            "communication hidden behind the backward pass (negative seconds): a smooth min of "
            "the communication terms and the share c11 of compute they can overlap",
            # Not a column: its seconds come from the other terms' (overlap_seconds).
            lambda x: np.zeros_like(x.p),
            coupled=True,
        ),
    )
}
# What the overlap term couples: the compute it hides behind and the exchange it hides.
COMPUTE_TERMS = ("compute", "core_share")
COMMUNICATION_TERMS = (
    "allreduce_bw",
    "allreduce_lat",
    "internode",
    "internode_scaling",
    "ps_sync",
    "sync_linear",
)
OVERLAP = "overlap"
# Sharpness q of the smooth min (x^-q + y^-q)^(-1/q): at x = y it hides 2^(-1/q) = 84% of x.
OVERLAP_SHARPNESS = 4.0


def smooth_min(x: Array, y: Array) -> Array:
    """(x^-q + y^-q)^(-1/q) for x, y >= 0: below min(x, y), equal to it far from x = y; 0 when
    either is 0. Written as x y / (x^q + y^q)^(1/q) so that zeros need no special case."""
    q = OVERLAP_SHARPNESS
    x, y = np.maximum(x, 0.0), np.maximum(y, 0.0)
    norm = (x**q + y**q) ** (1.0 / q)
    return np.divide(x * y, norm, out=np.zeros_like(norm), where=norm > 0)


def overlap_seconds(seconds: Mapping[str, Array], share: float) -> Array:
    """The overlap term's (negative) seconds: communication hidden behind ``share`` of compute."""
    zero = np.zeros_like(next(iter(seconds.values())), dtype=float)
    compute = sum((seconds[t] for t in COMPUTE_TERMS if t in seconds), zero)
    exchange = sum((seconds[t] for t in COMMUNICATION_TERMS if t in seconds), zero)
    return -smooth_min(exchange, share * compute)


# Decided by the ablation (docs/model.md): core_share cut the k-fold error on a quiet default run
# by 2.5-5x for all three frameworks and is inactive off the CPU (s = 1), so it is a default;
# overlap, ps_sync and internode_scaling improved no table measured so far and stay optional.
DEFAULT_TERMS = (
    "fixed",
    "overhead",
    "compute",
    "core_share",
    "allreduce_bw",
    "allreduce_lat",
    "internode",
)
# Which term keeps its column when two cannot be told apart from the data: the one that
# explains the time physically (compute before overhead, communication before fixed). Between the
# communication shapes, log2 p goes first: with two worker counts (p-1)/p, log2 p and p-1 fit the
# points alike, and log2 p lies between the saturating ring bandwidth and the linearly growing
# ring latency, so whichever dominates it errs least in the worst case. Measured (docs/model.md,
# ablation): extrapolating from 1 and 4 GPUs to 8, 8.1 % against 15.1 % on NVIDIA's SSD300
# baselines and 2.6 % against 2.9 % on NVIDIA's grid.
IDENTIFY_ORDER = [
    "compute",
    "core_share",
    "allreduce_lat",
    "allreduce_bw",
    "internode",
    "internode_scaling",
    "ps_sync",
    "overlap",
    "sync_linear",
    "overhead",
    "per_sample",
    "fixed",
]
# Which term goes first when the points support fewer constants than the terms they can tell
# apart (one residual degree of freedom is kept): the growing shapes before the saturating ring
# bandwidth, which with three worker counts extrapolates best (Lambda's table, 1, 2, 4 GPUs to
# 8: 3.4 % against 3.7 % keeping log2 p); a growing term fitted on as many points as constants
# fits noise and extrapolates it.
DROP_ORDER = [
    "fixed",
    "per_sample",
    "overhead",
    "sync_linear",
    "overlap",
    "ps_sync",
    "internode_scaling",
    "internode",
    "allreduce_lat",
    "allreduce_bw",
    "core_share",
    "compute",
]


def formula_text(terms: list[str], across_networks: bool = False) -> str:
    def text(t: str) -> str:
        term = TERMS[t]
        if across_networks and term.intrinsic:
            return f"{term.formula}*{'F' if term.intrinsic == 'flops_per_sample' else 'W'}"
        return term.formula

    fixed = [text(t) for t in terms if not TERMS[t].per_iteration]
    per_iter = [text(t) for t in terms if TERMS[t].per_iteration]
    parts = fixed + ([f"ceil(d/(p*b)) * ({' + '.join(per_iter)})"] if per_iter else [])
    return "T = " + " + ".join(parts)


def intrinsic_values(
    frame: pd.DataFrame, column: str, known: Mapping[str, Mapping[str, float]]
) -> Array:
    """Per-row network feature (F or W); missing values are filled from ``known`` networks."""
    values = (
        pd.to_numeric(frame[column], errors="coerce").to_numpy(float)
        if column in frame.columns
        else np.full(len(frame), np.nan)
    )
    if np.isnan(values).any() and "network" in frame.columns and known:
        filled = (
            frame["network"].map(lambda net: known.get(net, {}).get(column, np.nan)).to_numpy(float)
        )
        values = np.where(np.isnan(values), filled, values)
    if np.isnan(values).any() or (values <= 0).any():
        raise InsufficientData(
            f"generic_xnet needs a positive {column} for every row (across-network fits scale "
            "terms by it); add the column to the timings table or fit per network with "
            "'generic'"
        )
    return values


@dataclass(frozen=True)
class TermColumns:
    """The seconds per unit constant of each term at each row: the model's design matrix.

    Across networks, terms with an intrinsic feature are scaled by it (F or W of the row's
    network; ``network_features`` fills rows that lack the column)."""

    terms: tuple[str, ...]
    across_networks: bool = False
    network_features: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    def __call__(self, frame: pd.DataFrame, exponent: float) -> dict[str, Array]:
        x = Extrinsic.of(frame)
        iters = iterations(frame)
        steps = accumulation_steps(frame)
        cols = {}
        for name in self.terms:
            term = TERMS[name]
            value = term.feature(x).astype(float)
            if term.uses_exponent:
                value = value * x.b ** (exponent - 1.0)
            if self.across_networks and term.intrinsic:
                value = value * intrinsic_values(frame, term.intrinsic, self.network_features)
            if name in COMMUNICATION_TERMS:
                # One exchange per optimizer step of `steps` micro-batch iterations.
                value = value / steps
            cols[name] = iters * value if term.per_iteration else value
        return cols
