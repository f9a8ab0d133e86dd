"""The generic model's terms (DESIGN.md section 4; docs/model.md): each term's feature, constant
and formula, the default term list and the order that decides which of two indistinguishable
terms keeps its column."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

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
