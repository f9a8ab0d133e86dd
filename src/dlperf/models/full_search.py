"""Differential evolution over every constant and the exponent at once (docs/model.md).

This is Kavarakuntla et al.'s search: one global search over all of the expression's constants.
The generic model's default search (:class:`~dlperf.models.fit.ExponentSearch`) searches the
exponent alone and solves the constants exactly, which the cost allows while it is linear in
them. The overlap term makes it nonlinear (a smooth min of constants' products), so a fit with
it on searches here; ``GenericModel(search="full_de")`` asks for it with any term set, which is
how benchmarks/ablation.py compares the two.

Constants are searched in scaled units u = c / s inside [0, upper / s]; the cost is the same as
the exact search's: mean((T_hat / T - 1)^2) + lam * sum(u).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import differential_evolution

from .projection import ConstantsForExponent
from .terms import COMMUNICATION_TERMS, COMPUTE_TERMS, TERMS, smooth_min

Array = np.ndarray


@dataclass(frozen=True)
class RelativeCost:
    """The fit's cost for a population of (scaled constants, exponent) candidates."""

    matrix: Array  # (rows, terms): columns at a = 1, times scale, over the measured time
    batch: Array
    bent: Array  # bool per term: carries b^a
    compute: Array  # bool per term
    exchange: Array  # bool per term
    overlap: int | None  # index of the overlap's share among the terms
    lam: float

    @classmethod
    def of(cls, projection: ConstantsForExponent, names: list[str]) -> RelativeCost:
        def mask(members) -> Array:
            return np.array([t in members for t in names])

        bent = np.zeros(len(names), bool)
        bent[projection.bent] = True
        coupled = [i for i, t in enumerate(names) if TERMS[t].coupled]
        return cls(
            matrix=projection.static * projection.scales,
            batch=projection.batch,
            bent=bent,
            compute=mask(COMPUTE_TERMS),
            exchange=mask(COMMUNICATION_TERMS),
            overlap=coupled[0] if coupled else None,
            lam=projection.lam,
        )

    def predictions(self, u: Array, exponent: Array) -> Array:
        """Predicted over measured time, (rows, S) for u (terms, S) and exponent (S,)."""
        bend = self.batch[:, None] ** (exponent[None, :] - 1.0)

        def part(members: Array) -> Array:
            straight = self.matrix[:, members & ~self.bent] @ u[members & ~self.bent]
            return straight + bend * (self.matrix[:, members & self.bent] @ u[members & self.bent])

        everything = np.ones(len(self.bent), bool)
        total = part(everything)
        if self.overlap is not None:
            total = total - smooth_min(part(self.exchange), u[self.overlap] * part(self.compute))
        return total

    def __call__(self, u: Array, exponent: Array) -> Array:
        error = self.predictions(u, exponent) - 1.0
        return np.mean(error**2, axis=0) + self.lam * np.sum(u, axis=0)


@dataclass(frozen=True)
class SearchBudget:
    """The exponent's bounds and differential evolution's budget. Inner-CV and bootstrap refits
    (``cheap``) start near a solution and only rank lambdas or spread the constants: half the
    members, an eighth of the generations, a looser tolerance and no polish keep them cheap."""

    bounds: tuple[float, float]
    popsize: int
    maxiter: int
    tol: float

    def members(self, cheap: bool) -> int:
        return max(5, self.popsize // 2) if cheap else self.popsize

    def generations(self, cheap: bool) -> int:
        return max(20, self.maxiter // 8) if cheap else self.maxiter

    def tolerance(self, cheap: bool) -> float:
        return self.tol * 100 if cheap else self.tol


@dataclass(frozen=True)
class FullSearch(SearchBudget):
    """Differential evolution over all scaled constants (and the exponent when it is fitted)."""

    def solve(
        self,
        projection: ConstantsForExponent,
        names: list[str],
        exponent_fitted: bool,
        seed: int,
        cheap: bool = False,
        warm_exponent: float | None = None,
    ) -> tuple[Array, float]:
        """The constants of the active terms ``names`` and the exponent minimising the cost.

        With a coupled term (overlap), one starting member is the exact solution without it
        (share 0), so switching the overlap on never fits worse than leaving it off."""
        cost = RelativeCost.of(projection, names)
        upper = projection.upper / projection.scales
        limits = [(0.0, float(u)) for u in upper]
        if exponent_fitted:
            limits.append(self.bounds)

        def objective(x: Array) -> Array:
            x2 = x if x.ndim == 2 else x[:, None]
            exponent = x2[-1] if exponent_fitted else np.ones(x2.shape[1])
            values = cost(x2[: len(names)], exponent)
            return values if x.ndim == 2 else float(values[0])

        popsize = self.members(cheap)
        members = popsize * len(limits)
        rng = np.random.default_rng(seed)
        start = warm_exponent if warm_exponent is not None else 1.0
        init = self._latin_hypercube(limits, members, rng)
        if warm_exponent is not None or cost.overlap is not None:
            exact = projection.constants(start) / projection.scales
            init[0, : len(names)] = np.clip(exact, 0.0, upper)
            if exponent_fitted:
                init[0, -1] = np.clip(start, *self.bounds)
        result = differential_evolution(
            objective,
            limits,
            seed=seed,
            popsize=popsize,
            maxiter=self.generations(cheap),
            tol=self.tolerance(cheap),
            init=init,
            polish=not cheap,
            vectorized=True,
            updating="deferred",
        )
        x = np.clip(result.x, [lo for lo, _ in limits], [hi for _, hi in limits])
        exponent = float(x[-1]) if exponent_fitted else 1.0
        return x[: len(names)] * projection.scales, exponent

    @staticmethod
    def _latin_hypercube(limits: list[tuple[float, float]], members: int, rng) -> Array:
        lo = np.array([a for a, _ in limits])
        hi = np.array([b for _, b in limits])
        strata = rng.permuted(np.tile(np.arange(members), (len(limits), 1)), axis=1).T + 0.5
        return lo + (hi - lo) * strata / members
