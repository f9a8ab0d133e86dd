"""The generic model's constants at a fixed exponent and penalty, solved exactly (docs/model.md).

Variable projection: for a fixed exponent a the cost is a non-negative least-squares problem in
the constants, so only a is searched (:mod:`dlperf.models.fit`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import lsq_linear, nnls

from .base import TARGET
from .identify import Identification
from .terms import TERMS, TermColumns

Array = np.ndarray


@dataclass(frozen=True)
class ConstantsForExponent:
    """The fit's cost at a fixed exponent a, minimised exactly over the constants.

    cost(c, a) = mean((sum_i c_i col_i(a) / T - 1)^2) + lam * sum(c_i / s_i), 0 <= c_i <= upper_i.
    In scaled constants u = c / s the columns are M = col * s / T and the cost is
    (1/n) |M u - 1|^2 + lam * sum(u). On u >= 0 the penalty is linear, so the cost equals
    (1/n) |M u - z|^2 plus a constant, with M^T z = M^T 1 - (n lam / 2) 1: one non-negative
    least-squares problem (bounded least squares when a constant would pass its upper bound).
    """

    static: Array  # (rows, terms): every column at a = 1 over the measured time
    batch: Array  # b per row; the exponent's columns are multiplied by b^(a-1)
    bent: list[int]  # which columns carry b^a
    scales: Array
    upper: Array
    lam: float

    def _matrix(self, exponent: float) -> Array:
        matrix = self.static * self.scales
        if self.bent:
            matrix[:, self.bent] *= (self.batch ** (exponent - 1.0))[:, None]
        return matrix

    def _scaled(self, exponent: float) -> tuple[Array, Array]:
        """(u, cost) at the exponent: the exact minimiser in scaled constants and its cost."""
        matrix = self._matrix(exponent)
        rows = matrix.shape[0]
        goal = np.ones(rows)
        if self.lam > 0:
            # z = 1 - M y with (M^T M) y = (n lam / 2) 1; lstsq keeps it defined if M^T M is
            # singular.
            shift = np.full(matrix.shape[1], rows * self.lam / 2.0)
            goal = goal - matrix @ np.linalg.lstsq(matrix.T @ matrix, shift, rcond=None)[0]
        u = nnls(matrix, goal)[0]
        upper = self.upper / self.scales
        if np.any(u > upper):
            u = lsq_linear(matrix, goal, bounds=(0.0, upper), method="bvls").x
        cost = np.mean((matrix @ u - 1.0) ** 2) + self.lam * np.sum(u)
        return u, float(cost)

    def cost(self, exponents: Array) -> Array:
        """Vectorised over candidate exponents: shape (1,) or (1, S)."""
        single = exponents.ndim == 1
        values = np.array([self._scaled(a)[1] for a in np.atleast_2d(exponents)[0]])
        return values[0] if single else values

    def constants(self, exponent: float) -> Array:
        return self._scaled(exponent)[0] * self.scales

    @classmethod
    def of(
        cls,
        frame: pd.DataFrame,
        columns: TermColumns,
        identification: Identification,
        lam: float,
    ) -> ConstantsForExponent:
        """The cost of fitting the identified terms to these points with penalty weight lam."""
        target = frame[TARGET].to_numpy(float)
        active = identification.active
        at_one = columns(frame, 1.0)
        return cls(
            static=np.column_stack([at_one[t] for t in active]) / target[:, None],
            batch=frame["batch_size"].to_numpy(float),
            bent=[i for i, t in enumerate(active) if TERMS[t].uses_exponent],
            scales=np.array([identification.scales[t] for t in active]),
            upper=np.array([identification.bounds[t][1] for t in active]),
            lam=lam,
        )
