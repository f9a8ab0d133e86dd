"""The generic model fitted at one penalty weight: the exponent search and its exact constants.

Differential evolution searches the exponent a alone, inside its bounds; for each candidate a the
constants are solved exactly (:class:`~dlperf.models.projection.ConstantsForExponent`). See
docs/model.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import differential_evolution

from .full_search import FullSearch, SearchBudget
from .identify import Identification, identify
from .projection import ConstantsForExponent
from .terms import OVERLAP, TERMS, TermColumns, overlap_seconds

Array = np.ndarray


@dataclass(frozen=True)
class Solution:
    """Constants (every term; 0 for the inactive ones) and the exponent at a penalty weight."""

    identification: Identification
    values: dict[str, float]
    exponent: float
    lam: float

    def term_seconds(self, frame: pd.DataFrame, columns: TermColumns) -> pd.DataFrame:
        """Seconds each term contributes to the predicted epoch time, per row."""
        cols = columns(frame, self.exponent)
        seconds = {t: self.values.get(t, 0.0) * cols[t] for t in columns.terms}
        if OVERLAP in seconds:
            seconds[OVERLAP] = overlap_seconds(seconds, self.values.get(OVERLAP, 0.0))
        return pd.DataFrame(seconds, index=frame.index)

    def predict(self, frame: pd.DataFrame, columns: TermColumns) -> Array:
        return self.term_seconds(frame, columns).sum(axis=1).to_numpy(float)


@dataclass(frozen=True)
class ExponentSearch(SearchBudget):
    """Differential evolution over the exponent, with its budget."""

    # Search every constant by differential evolution (full_search.py) instead of solving them.
    full: bool = False

    def solve(
        self,
        projection: ConstantsForExponent,
        exponent_fitted: bool,
        seed: int,
        cheap: bool = False,
        warm_exponent: float | None = None,
    ) -> tuple[Array, float]:
        """The constants of the active terms and the exponent minimising the cost.

        ``warm_exponent`` seeds the population around a known solution for quick refits."""
        if not exponent_fitted:
            return projection.constants(1.0), 1.0
        popsize = self.members(cheap)
        init: str | Array = "latinhypercube"
        if warm_exponent is not None:
            init = self._population(warm_exponent, popsize, seed)
        result = differential_evolution(
            projection.cost,
            [self.bounds],
            seed=seed,
            popsize=popsize,
            maxiter=self._generations(cheap, warm_exponent is not None),
            tol=self.tolerance(cheap),
            init=init,
            polish=not cheap,
            vectorized=True,
            updating="deferred",
        )
        exponent = float(np.clip(result.x[0], *self.bounds))
        return projection.constants(exponent), exponent

    def _generations(self, cheap: bool, warm: bool) -> int:
        if warm and not cheap:
            return max(40, self.maxiter // 4)
        return self.generations(cheap)

    def _population(self, exponent: float, members: int, seed: int) -> Array:
        """Members scattered (x e^N(0, 0.1)) around the warm exponent, inside its bounds."""
        lo, hi = self.bounds
        rng = np.random.default_rng(seed)
        spread = exponent * rng.lognormal(0.0, 0.1, size=(max(members, 5), 1))
        spread[0] = exponent
        return np.clip(spread, lo, hi)


def fit_at_lambda(
    frame: pd.DataFrame,
    columns: TermColumns,
    search: ExponentSearch,
    lam: float,
    seed: int,
    cheap: bool = False,
    warm_exponent: float | None = None,
    identification: Identification | None = None,
) -> Solution:
    """Identify the terms (unless given) and fit constants and exponent at penalty weight lam."""
    if identification is None:
        identification = identify(frame, columns, search.bounds)
    projection = ConstantsForExponent.of(frame, columns, identification, lam)
    active = identification.active
    if search.full or any(TERMS[t].coupled for t in active):
        full = FullSearch(search.bounds, search.popsize, search.maxiter, search.tol)
        constants, exponent = full.solve(
            projection, active, identification.exponent_fitted, seed, cheap, warm_exponent
        )
    else:
        constants, exponent = search.solve(
            projection, identification.exponent_fitted, seed, cheap, warm_exponent
        )
    values = dict.fromkeys(columns.terms, 0.0)
    values.update({t: float(v) for t, v in zip(identification.active, constants, strict=True)})
    return Solution(identification, values, exponent, float(lam))
