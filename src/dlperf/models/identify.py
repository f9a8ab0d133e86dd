"""Which of the generic model's terms the measured points can support (docs/model.md).

Before any search, a term is left out when its feature is zero at every point, when its column
lies in the span of the terms kept before it (:data:`IDENTIFY_ORDER` decides which keeps the
time), when the worker counts support fewer communication shapes, or when the points support
fewer constants. The result also holds each
kept constant's search bound and scale.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .base import TARGET, InsufficientData
from .terms import (
    COMMUNICATION_TERMS,
    COMPUTE_TERMS,
    DROP_ORDER,
    IDENTIFY_ORDER,
    TERMS,
    TermColumns,
)

# The exponent a is fitted from this many batch-size levels on: with three, c1 + c2*b^a has no
# residual degree of freedom along b and 2% noise moves a over 0.79-1.08 and c1 6x; with four,
# 0.85-0.98 and 1.5x (docs/model.md, identifiability).
MIN_BATCH_LEVELS_FOR_EXPONENT = 4
# Communication shapes that are functions of the worker count alone. Along p, an intercept and k
# of them on L worker counts leave L - 1 - k residual degrees of freedom: a second shape needs 4
# counts, as the exponent needs 4 batch sizes (with 1, 2 and 4 GPUs, (p-1)/p and log2 p together
# pass through every point and extrapolate its noise). One is kept from 2 counts on: it is the
# whole cost of adding workers.
WORKER_SHAPES = ("allreduce_bw", "allreduce_lat", "sync_linear", "ps_sync")


@dataclass(frozen=True)
class Identification:
    """The terms a fit uses and why the others are out; bounds and scales of the kept ones."""

    terms: tuple[str, ...]
    inactive: dict[str, str]
    exponent_fitted: bool
    bounds: dict[str, tuple[float, float]]
    scales: dict[str, float]

    @property
    def active(self) -> list[str]:
        return [t for t in self.terms if t not in self.inactive]


def identify(
    frame: pd.DataFrame, columns: TermColumns, exponent_bounds: tuple[float, float]
) -> Identification:
    """Which terms the data identify, whether the exponent is fitted, bounds and scales."""
    target = frame[TARGET].to_numpy(float)
    terms = columns.terms
    at_one = columns(frame, 1.0)
    inactive = _unidentifiable(terms, at_one, target)
    _limit_worker_shapes(terms, inactive, frame["procs"].nunique())
    active = [t for t in terms if t not in inactive]
    exponent_fitted = any(TERMS[t].uses_exponent for t in active) and (
        frame["batch_size"].nunique() >= MIN_BATCH_LEVELS_FOR_EXPONENT
    )
    exponent_fitted = _keep_degrees_of_freedom(terms, inactive, exponent_fitted, len(frame))
    active = [t for t in terms if t not in inactive]
    if not active:
        raise InsufficientData("no term of the generic model is identifiable from these points")
    lo_a, hi_a = exponent_bounds
    exponents = (lo_a, hi_a, 1.0) if exponent_fitted else (1.0,)
    # Columns at each exponent computed once for all terms (they dominated refit time).
    at_exponent = [at_one if a == 1.0 else columns(frame, a) for a in exponents]
    bounds, scales = {}, {}
    for name in active:
        if TERMS[name].coupled:
            # The overlap's constant is a share of compute: between none and all of it.
            bounds[name], scales[name] = (0.0, 1.0), 1.0
            continue
        ratios = []
        for cols in at_exponent:
            c = cols[name]
            ratios.append(target[c > 0] / c[c > 0])
        bounds[name] = (0.0, float(max(r.max() for r in ratios)))
        scales[name] = float(np.median(ratios[-1]))
    return Identification(tuple(terms), inactive, exponent_fitted, bounds, scales)


def _unidentifiable(
    terms: tuple[str, ...], at_one: dict[str, np.ndarray], target: np.ndarray
) -> dict[str, str]:
    """Terms whose column is zero everywhere or cannot be told apart from those kept before."""
    inactive: dict[str, str] = {}
    kept: list[str] = []
    for name in sorted(terms, key=IDENTIFY_ORDER.index):
        if TERMS[name].coupled:
            continue
        col = at_one[name]
        if not np.any(col > 0):
            inactive[name] = "not identifiable: its feature is zero at every point"
            continue
        # A column inside the span of the kept ones cannot be told apart from them.
        basis = np.column_stack([at_one[k] for k in kept] + [col]) / target[:, None]
        basis = basis / np.linalg.norm(basis, axis=0)
        if np.linalg.matrix_rank(basis, tol=1e-8) <= len(kept):
            inactive[name] = (
                "not identifiable: at the measured points it varies like "
                f"{' + '.join(kept)}, which carries its time"
            )
            continue
        kept.append(name)
    for name in (t for t in terms if TERMS[t].coupled):
        if not (set(kept) & set(COMPUTE_TERMS) and set(kept) & set(COMMUNICATION_TERMS)):
            inactive[name] = "not identifiable: it needs an active compute and communication term"
    return inactive


def _limit_worker_shapes(terms: tuple[str, ...], inactive: dict[str, str], levels: int) -> None:
    """At most max(1, levels - 2) of :data:`WORKER_SHAPES`; the others go in DROP_ORDER."""
    allowed = max(1, levels - 2)
    shapes = [t for t in terms if t in WORKER_SHAPES and t not in inactive]
    for name in sorted(shapes, key=DROP_ORDER.index)[: max(0, len(shapes) - allowed)]:
        inactive[name] = (
            f"left out: {levels} worker counts support {allowed} communication shape(s) with a "
            "residual degree of freedom along p (two need 4 worker counts)"
        )


def _keep_degrees_of_freedom(
    terms: tuple[str, ...], inactive: dict[str, str], exponent_fitted: bool, n_points: int
) -> bool:
    """No more free constants than points: the exponent, then terms in :data:`DROP_ORDER`, are
    left out (added to ``inactive``) until the constants are no more than the points. (The noise
    that a fit through every point extrapolates comes from two communication shapes on too few
    worker counts, which :func:`_limit_worker_shapes` prevents; elsewhere, e.g. 3 configurations
    of a 2 x 2 grid, keeping the overhead with compute and communication was measured better:
    NVIDIA grid k-fold 5.7 % against 7.9 % with one residual degree of freedom kept.)
    Returns whether the exponent is still fitted."""

    def active() -> list[str]:
        return [t for t in terms if t not in inactive]

    while len(active()) > 1 and len(active()) + exponent_fitted > n_points:
        if exponent_fitted:
            exponent_fitted = False
            continue
        drop = min(active(), key=DROP_ORDER.index)
        inactive[drop] = (
            f"left out: {n_points} measured points support at most {n_points} constants"
        )
    return exponent_fitted
