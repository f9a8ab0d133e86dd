"""The generic performance model (Kavarakuntla et al., IEEE Access 2024; DESIGN.md section 4).

    T(p, n, b, d) = c0 + I(p, b, d) * t_iter,   I = ceil(d / (p b))
    t_iter        = c1 + c2 b^a + c3 (p-1)/p + c4 ceil(log2 p) + c5 [n>1] (p-1)/p

The terms are data (:data:`TERMS`), so a configuration can drop or add one. The
constants are found by differential evolution inside bounds, minimising the
mean squared relative error plus an L1 penalty on the scaled constants; the
penalty's weight is chosen by inner cross-validation. Terms the data do not
support go to zero and are reported as switched off.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import differential_evolution

from dlperf.folds import kfold_indices

from .base import TARGET, InsufficientData, PerformanceModel, iterations

Array = np.ndarray


@dataclass(frozen=True)
class Term:
    name: str
    constant: str
    formula: str
    per_iteration: bool  # multiplied by I(p, b, d), or paid once per epoch
    description: str
    feature: Callable[[Array, Array, Array], Array]  # (p, n, b) -> value; compute takes b^a apart
    uses_exponent: bool = False


def _ones(p: Array, n: Array, b: Array) -> Array:
    return np.ones_like(p, dtype=float)


TERMS: dict[str, Term] = {
    term.name: term
    for term in (
        Term("fixed", "c0", "c0", False, "fixed time per epoch (start-up, evaluation)", _ones),
        Term("overhead", "c1", "c1", True, "framework overhead per iteration", _ones),
        Term(
            "compute",
            "c2",
            "c2*b^a",
            True,
            "computation of one worker's batch",
            lambda p, n, b: b.astype(float),
            uses_exponent=True,
        ),
        Term(
            "allreduce_bw",
            "c3",
            "c3*(p-1)/p",
            True,
            "bandwidth part of a ring all-reduce of the gradient",
            lambda p, n, b: (p - 1.0) / p,
        ),
        Term(
            "allreduce_lat",
            "c4",
            "c4*ceil(log2 p)",
            True,
            "latency part of the all-reduce / synchronisation",
            lambda p, n, b: np.ceil(np.log2(p)),
        ),
        Term(
            "internode",
            "c5",
            "c5*[n>1]*(p-1)/p",
            True,
            "penalty of the slower network between nodes",
            lambda p, n, b: (n > 1) * (p - 1.0) / p,
        ),
    )
}
DEFAULT_TERMS = list(TERMS)
DEFAULT_LAMBDAS = [0.0, 1e-5, 1e-4, 1e-3]


def formula_text(terms: list[str]) -> str:
    fixed = [TERMS[t].formula for t in terms if not TERMS[t].per_iteration]
    per_iter = [TERMS[t].formula for t in terms if TERMS[t].per_iteration]
    parts = fixed + ([f"ceil(d/(p*b)) * ({' + '.join(per_iter)})"] if per_iter else [])
    return "T = " + " + ".join(parts)


class GenericModel(PerformanceModel):
    name = "generic"
    description = "generic model: c0 + I*(overhead + compute b^a + all-reduce + inter-node), DE fit"
    min_points = 3

    def __init__(
        self,
        terms: list[str] | None = None,
        lambdas: list[float] | None = None,
        inner_folds: int = 3,
        exponent_bounds: tuple[float, float] = (0.3, 1.5),
        popsize: int = 20,
        maxiter: int = 300,
        tol: float = 1e-8,
    ) -> None:
        self.terms = list(terms) if terms is not None else list(DEFAULT_TERMS)
        unknown = [t for t in self.terms if t not in TERMS]
        if unknown or not self.terms:
            raise ValueError(
                f"unknown generic-model term(s) {unknown}; choose from {', '.join(TERMS)}"
                if unknown
                else "the generic model needs at least one term"
            )
        self.lambdas = list(lambdas) if lambdas is not None else list(DEFAULT_LAMBDAS)
        self.inner_folds = inner_folds
        self.exponent_bounds = tuple(exponent_bounds)
        self.popsize = popsize
        self.maxiter = maxiter
        self.tol = tol
        # fitted state
        self.values: dict[str, float] = {}
        self.bounds: dict[str, tuple[float, float]] = {}
        self.scales: dict[str, float] = {}
        self.inactive: dict[str, str] = {}
        self.exponent = 1.0
        self.lam = 0.0
        self.inner_cv_mape: dict[str, float] = {}
        self.train_mape = math.nan

    # -- features ---------------------------------------------------------------------------

    @staticmethod
    def _arrays(frame: pd.DataFrame) -> tuple[Array, Array, Array, Array]:
        p = frame["procs"].to_numpy(float)
        n = frame["nodes"].to_numpy(float)
        b = frame["batch_size"].to_numpy(float)
        return p, n, b, iterations(frame)

    def _columns(self, frame: pd.DataFrame, exponent: float | Array) -> dict[str, Array]:
        """Seconds-per-unit-constant of every term at every row: (rows,) or (rows, S) arrays."""
        p, n, b, iters = self._arrays(frame)
        cols = {}
        for name in self.terms:
            term = TERMS[name]
            if term.uses_exponent:
                base = term.feature(p, n, b)
                value = base[:, None] ** np.atleast_1d(exponent)[None, :]
                value = value[:, 0] if np.ndim(exponent) == 0 else value
            else:
                value = term.feature(p, n, b)
            if term.per_iteration:
                value = (iters[:, None] * value) if value.ndim == 2 else iters * value
            cols[name] = value
        return cols

    # -- fitting ------------------------------------------------------------------------------

    def _prepare(self, frame: pd.DataFrame) -> None:
        """Which terms the data can identify, and each constant's bounds and scale."""
        target = frame[TARGET].to_numpy(float)
        self.inactive = {}
        self.bounds, self.scales = {}, {}
        lo_a, hi_a = self.exponent_bounds
        at_one = self._columns(frame, 1.0)
        for name in self.terms:
            col = at_one[name]
            if not np.any(col > 0):
                self.inactive[name] = "not identifiable: its feature is zero at every measured point"
                continue
            ratios = [target[col > 0] / col[col > 0]]
            if TERMS[name].uses_exponent:
                for a in (lo_a, hi_a):
                    c = self._columns(frame, a)[name]
                    ratios.append(target[c > 0] / c[c > 0])
            upper = float(max(r.max() for r in ratios))
            self.bounds[name] = (0.0, upper)
            self.scales[name] = float(np.median(ratios[0]))

    def _active(self) -> list[str]:
        return [t for t in self.terms if t not in self.inactive]

    def _has_exponent(self) -> bool:
        return any(TERMS[t].uses_exponent for t in self._active())

    def _cost_function(self, frame: pd.DataFrame, lam: float) -> Callable[[Array], Array]:
        target = frame[TARGET].to_numpy(float)
        active = self._active()
        static = np.column_stack(
            [self._columns(frame, 1.0)[t] if not TERMS[t].uses_exponent else np.zeros(len(frame)) for t in active]
        )
        compute_idx = next((i for i, t in enumerate(active) if TERMS[t].uses_exponent), None)
        p, n, b, iters = self._arrays(frame)
        scales = np.array([self.scales[t] for t in active])

        def cost(x: Array) -> Array:
            single = x.ndim == 1
            x = x[:, None] if single else x
            consts = x[: len(active)]
            pred = static @ consts
            if compute_idx is not None:
                a = x[len(active)]
                pred = pred + consts[compute_idx][None, :] * iters[:, None] * b[:, None] ** a[None, :]
            rel = (pred - target[:, None]) / target[:, None]
            value = np.mean(rel**2, axis=0) + lam * np.sum(consts / scales[:, None], axis=0)
            return value[0] if single else value

        return cost

    def _search(self, frame: pd.DataFrame, lam: float, seed: int) -> Array:
        active = self._active()
        bounds = [self.bounds[t] for t in active]
        if self._has_exponent():
            bounds.append(self.exponent_bounds)
        result = differential_evolution(
            self._cost_function(frame, lam),
            bounds,
            seed=seed,
            popsize=self.popsize,
            maxiter=self.maxiter,
            tol=self.tol,
            init="latinhypercube",
            polish=True,
            vectorized=True,
            updating="deferred",
        )
        return result.x

    def _set_solution(self, x: Array, lam: float) -> None:
        active = self._active()
        self.values = {t: 0.0 for t in self.terms}
        self.values.update({t: float(v) for t, v in zip(active, x[: len(active)])})
        self.exponent = float(x[len(active)]) if self._has_exponent() else 1.0
        self.lam = float(lam)

    def _choose_lambda(self, frame: pd.DataFrame, seed: int) -> float:
        """Inner k-fold over the training points; the largest weight within 2% of the best error."""
        if len(self.lambdas) == 1 or len(frame) < 2 * self.inner_folds:
            self.inner_cv_mape = {}
            return float(self.lambdas[0] if len(self.lambdas) == 1 else min(self.lambdas))
        splits = kfold_indices(len(frame), self.inner_folds, seed)
        scores = {}
        for lam in self.lambdas:
            errors = []
            for train, test in splits:
                inner = GenericModel(
                    self.terms, [lam], 2, self.exponent_bounds, self.popsize, self.maxiter, self.tol
                )
                inner.fit(frame.iloc[train], seed)
                pred = inner.predict(frame.iloc[test])
                meas = frame[TARGET].to_numpy(float)[test]
                errors.append(np.abs(pred - meas) / meas)
            scores[lam] = float(np.mean(np.concatenate(errors)) * 100)
        self.inner_cv_mape = {repr(k): v for k, v in scores.items()}
        best = min(scores.values())
        return float(max(lam for lam, s in scores.items() if s <= best * 1.02 + 1e-9))

    def fit(self, frame: pd.DataFrame, seed: int = 0) -> GenericModel:
        self.check_enough(frame)
        frame = frame.reset_index(drop=True)
        if (frame[TARGET] <= 0).any():
            raise InsufficientData("epoch times must be positive to fit relative errors")
        self._prepare(frame)
        if not self._active():
            raise InsufficientData("no term of the generic model can be identified from these points")
        lam = self._choose_lambda(frame, seed)
        self._set_solution(self._search(frame, lam, seed), lam)
        measured = frame[TARGET].to_numpy(float)
        self.train_mape = float(np.mean(np.abs(self.predict(frame) - measured) / measured) * 100)
        return self

    # -- use ----------------------------------------------------------------------------------

    def term_seconds(self, frame: pd.DataFrame) -> pd.DataFrame:
        """Seconds each term contributes to the predicted epoch time, per row."""
        cols = self._columns(frame, self.exponent)
        return pd.DataFrame({t: self.values.get(t, 0.0) * cols[t] for t in self.terms}, index=frame.index)

    def predict(self, frame: pd.DataFrame) -> Array:
        return self.term_seconds(frame).sum(axis=1).to_numpy(float)

    def switched_off(self) -> list[str]:
        """Terms the penalty drove to (practically) zero."""
        return [
            t
            for t in self._active()
            if self.values.get(t, 0.0) <= 1e-6 * max(self.scales.get(t, 0.0), 1e-300)
        ]

    def formula(self) -> str:
        return formula_text(self.terms)

    def to_dict(self) -> dict:
        off = set(self.switched_off())
        return {
            "model": self.name,
            "formula": self.formula(),
            "terms": [
                {
                    "name": t,
                    "constant": TERMS[t].constant,
                    "formula": TERMS[t].formula,
                    "description": TERMS[t].description,
                    "value": self.values.get(t, 0.0),
                    "bounds": list(self.bounds.get(t, (0.0, 0.0))),
                    "scale": self.scales.get(t),
                    "state": "inactive" if t in self.inactive else ("switched_off" if t in off else "on"),
                    "note": self.inactive.get(t),
                }
                for t in self.terms
            ],
            "exponent": {"name": "a", "value": self.exponent, "bounds": list(self.exponent_bounds)},
            "lambda": self.lam,
            "lambda_grid": self.lambdas,
            "inner_cv_mape": self.inner_cv_mape,
            "train_mape": self.train_mape,
            "settings": {
                "inner_folds": self.inner_folds,
                "popsize": self.popsize,
                "maxiter": self.maxiter,
                "tol": self.tol,
            },
        }

    @classmethod
    def from_dict(cls, data: dict) -> GenericModel:
        model = cls(
            terms=[t["name"] for t in data["terms"]],
            lambdas=data.get("lambda_grid"),
            exponent_bounds=tuple(data["exponent"]["bounds"]),
            **data.get("settings", {}),
        )
        model.values = {t["name"]: float(t["value"]) for t in data["terms"]}
        model.bounds = {t["name"]: tuple(t["bounds"]) for t in data["terms"]}
        model.scales = {t["name"]: t["scale"] for t in data["terms"] if t["scale"] is not None}
        model.inactive = {t["name"]: t["note"] for t in data["terms"] if t["state"] == "inactive"}
        model.exponent = float(data["exponent"]["value"])
        model.lam = float(data["lambda"])
        model.train_mape = float(data.get("train_mape", math.nan))
        return model
