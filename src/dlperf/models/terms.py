"""The generic model's terms (docs/model.md): each term's feature, constant
and formula, the default term list and the order that decides which of two indistinguishable
terms keeps its column."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .base import InsufficientData, iterations

Array = np.ndarray


@dataclass(frozen=True)
class Extrinsic:
    """The configuration of each row as float arrays."""

    p: Array
    n: Array
    b: Array

    @classmethod
    def of(cls, frame: pd.DataFrame) -> Extrinsic:
        return cls(
            frame["procs"].to_numpy(float),
            frame["nodes"].to_numpy(float),
            frame["batch_size"].to_numpy(float),
        )


@dataclass(frozen=True)
class Term:
    name: str
    constant: str
    formula: str
    per_iteration: bool  # multiplied by I(p, b, d), or paid once per epoch
    description: str
    feature: Callable[[Extrinsic], Array]  # value at unit constant; compute takes b^a apart
    uses_exponent: bool = False
    # Across networks: the per-network feature this term scales with (a timings column).
    intrinsic: str | None = None


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
    )
}
DEFAULT_TERMS = ["fixed", "overhead", "compute", "allreduce_bw", "allreduce_lat", "internode"]
# Which term keeps its column when two cannot be told apart from the data: the one that
# explains the time physically (compute before overhead, communication before fixed).
IDENTIFY_ORDER = [
    "compute",
    "allreduce_bw",
    "allreduce_lat",
    "internode",
    "sync_linear",
    "overhead",
    "per_sample",
    "fixed",
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
        cols = {}
        for name in self.terms:
            term = TERMS[name]
            value = term.feature(x).astype(float)
            if term.uses_exponent:
                value = value**exponent
            if self.across_networks and term.intrinsic:
                value = value * intrinsic_values(frame, term.intrinsic, self.network_features)
            cols[name] = iters * value if term.per_iteration else value
        return cols
