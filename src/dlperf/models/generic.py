"""The generic performance model (Kavarakuntla et al., IEEE Access 2024; DESIGN.md section 4).

    T(p, n, b, d) = c0 + I(p, b, d) * t_iter,   I = ceil(d / (p b))
    t_iter        = c1 + c2 b^a + c3 (p-1)/p + c4 ceil(log2 p) + c5 [n>1] (p-1)/p

The terms are data (:data:`TERMS`), so a configuration can drop one or add one
of the optional terms. The constants are found by differential evolution
inside bounds, minimising the mean squared relative error plus an L1 penalty
on the scaled constants; the penalty's weight is chosen by inner
cross-validation. Terms the data cannot identify are left out before the
search and terms the penalty drives to zero are reported as switched off.

``generic_xnet`` is the same model fitted across networks: the compute term
scales with FLOPs per sample F and the gradient-exchange terms with the
parameter count W, so one set of constants covers every network of a framework.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import differential_evolution, lsq_linear, nnls

from dlperf.folds import kfold_indices

from .base import TARGET, Capabilities, InsufficientData, PerformanceModel, iterations
from .terms import DEFAULT_TERMS, IDENTIFY_ORDER, TERMS, Extrinsic, formula_text

Array = np.ndarray


DEFAULT_LAMBDAS = [0.0, 1e-4, 1e-3, 1e-2]


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


class GenericModel(PerformanceModel):
    name = "generic"
    description = "generic model: c0 + I*(overhead + compute b^a + all-reduce + inter-node), DE fit"
    min_points = 3
    capabilities = Capabilities(has_breakdown=True)

    def __init__(
        self,
        terms: list[str] | None = None,
        lambdas: list[float] | None = None,
        inner_folds: int = 3,
        exponent_bounds: tuple[float, float] = (0.3, 1.5),
        popsize: int = 12,
        maxiter: int = 200,
        tol: float = 1e-7,
        bootstrap: int = 20,
        seed: int = 0,
    ) -> None:
        self.terms = list(terms) if terms is not None else list(DEFAULT_TERMS)
        unknown = [t for t in self.terms if t not in TERMS]
        if unknown:
            raise ValueError(
                f"unknown generic-model term(s) {unknown}; choose from {', '.join(TERMS)}"
            )
        if not self.terms:
            raise ValueError("the generic model needs at least one term; list some under terms:")
        self.lambdas = list(lambdas) if lambdas is not None else list(DEFAULT_LAMBDAS)
        self.inner_folds = int(inner_folds)
        self.exponent_bounds = (float(exponent_bounds[0]), float(exponent_bounds[1]))
        self.popsize = int(popsize)
        self.maxiter = int(maxiter)
        self.tol = float(tol)
        self.bootstrap = int(bootstrap)
        self.seed = int(seed)
        # fitted state
        self.values: dict[str, float] = {}
        self.bounds: dict[str, tuple[float, float]] = {}
        self.scales: dict[str, float] = {}
        self.inactive: dict[str, str] = {}
        self.exponent = 1.0
        self.exponent_fitted = True
        self.lam = 0.0
        self.inner_cv_mape: dict[str, float] = {}
        self.train_mape = math.nan
        self.network_features: dict[str, dict[str, float]] = {}

    def settings(self) -> dict:
        return {**self.get_params(), "exponent_bounds": list(self.exponent_bounds)}

    def refit_params(self) -> dict:
        """Refits keep the penalty weight this fit chose (no inner cross-validation)."""
        return {**self.get_params(), "lambdas": [self.lam]}

    # -- features ---------------------------------------------------------------------------

    def _intrinsic(self, frame: pd.DataFrame, column: str) -> Array:
        """Per-row network feature (F or W); missing values are filled from the fitted networks."""
        values = (
            pd.to_numeric(frame[column], errors="coerce").to_numpy(float)
            if column in frame.columns
            else np.full(len(frame), np.nan)
        )
        if np.isnan(values).any() and "network" in frame.columns and self.network_features:
            known = (
                frame["network"]
                .map(lambda net: self.network_features.get(net, {}).get(column, np.nan))
                .to_numpy(float)
            )
            values = np.where(np.isnan(values), known, values)
        if np.isnan(values).any() or (values <= 0).any():
            raise InsufficientData(
                f"{self.name} needs a positive {column} for every row (across-network fits scale "
                "terms by it); add the column to the timings table or fit per network with "
                "'generic'"
            )
        return values

    def _columns(self, frame: pd.DataFrame, exponent: float) -> dict[str, Array]:
        """Seconds per unit constant of every term at every row."""
        x = Extrinsic.of(frame)
        iters = iterations(frame)
        cols = {}
        for name in self.terms:
            term = TERMS[name]
            value = term.feature(x).astype(float)
            if term.uses_exponent:
                value = value * x.b ** (exponent - 1.0)
            if self.capabilities.across_networks and term.intrinsic:
                value = value * self._intrinsic(frame, term.intrinsic)
            cols[name] = iters * value if term.per_iteration else value
        return cols

    # -- fitting ------------------------------------------------------------------------------

    def _prepare(self, frame: pd.DataFrame) -> None:
        """Which terms the data identify, whether the exponent is fitted, bounds and scales."""
        target = frame[TARGET].to_numpy(float)
        self.inactive, self.bounds, self.scales = {}, {}, {}
        at_one = self._columns(frame, 1.0)
        kept: list[str] = []
        for name in sorted(self.terms, key=IDENTIFY_ORDER.index):
            col = at_one[name]
            if not np.any(col > 0):
                self.inactive[name] = "not identifiable: its feature is zero at every point"
                continue
            # A column inside the span of the kept ones cannot be told apart from them.
            basis = np.column_stack([at_one[k] for k in kept] + [col]) / target[:, None]
            basis = basis / np.linalg.norm(basis, axis=0)
            if np.linalg.matrix_rank(basis, tol=1e-8) <= len(kept):
                self.inactive[name] = (
                    "not identifiable: at the measured points it varies like "
                    f"{' + '.join(kept)}, which carries its time"
                )
                continue
            kept.append(name)
        self.exponent_fitted = self._exponent_identifiable(frame)
        self._keep_degrees_of_freedom(len(frame))
        lo_a, hi_a = self.exponent_bounds
        exponents = (lo_a, hi_a, 1.0) if self.exponent_fitted else (1.0,)
        # Columns at each exponent computed once for all terms (they dominated refit time).
        at_exponent = [at_one if a == 1.0 else self._columns(frame, a) for a in exponents]
        for name in self._active():
            ratios = []
            for cols in at_exponent:
                c = cols[name]
                ratios.append(target[c > 0] / c[c > 0])
            self.bounds[name] = (0.0, float(max(r.max() for r in ratios)))
            self.scales[name] = float(np.median(ratios[-1]))

    def _keep_degrees_of_freedom(self, n_points: int) -> None:
        """Never interpolate: as many free constants as points fits noise and extrapolates badly,
        so the least-priority terms are left out until one residual degree of freedom remains."""
        while len(self._active()) > 1 and len(self._active()) + self.exponent_fitted >= n_points:
            if self.exponent_fitted:
                self.exponent_fitted = False
                continue
            drop = max(self._active(), key=IDENTIFY_ORDER.index)
            self.inactive[drop] = (
                f"left out: {n_points} measured points support fewer constants "
                "(one residual degree of freedom is kept)"
            )

    def _exponent_identifiable(self, frame: pd.DataFrame) -> bool:
        uses = any(TERMS[t].uses_exponent for t in self._active())
        return uses and frame["batch_size"].nunique() >= 3

    def _active(self) -> list[str]:
        return [t for t in self.terms if t not in self.inactive]

    def _projection(self, frame: pd.DataFrame, lam: float) -> ConstantsForExponent:
        """The fit's cost with the constants solved exactly for each exponent."""
        target = frame[TARGET].to_numpy(float)
        active = self._active()
        at_one = self._columns(frame, 1.0)
        return ConstantsForExponent(
            static=np.column_stack([at_one[t] for t in active]) / target[:, None],
            batch=frame["batch_size"].to_numpy(float),
            bent=[i for i, t in enumerate(active) if TERMS[t].uses_exponent],
            scales=np.array([self.scales[t] for t in active]),
            upper=np.array([self.bounds[t][1] for t in active]),
            lam=lam,
        )

    def _search(
        self,
        frame: pd.DataFrame,
        lam: float,
        seed: int,
        cheap: bool = False,
        warm: tuple[dict[str, float], float] | None = None,
    ) -> Array:
        """The constants and (when fitted) the exponent a minimising the cost.

        Variable projection: for a fixed a the cost is a non-negative least-squares problem in
        the constants (the L1 term is linear on c >= 0), solved exactly; differential evolution
        searches a alone, inside its bounds. ``warm`` (constants by term, exponent) seeds the
        population around a known solution for quick refits."""
        projection = self._projection(frame, lam)
        if not self.exponent_fitted:
            return projection.constants(1.0)
        popsize = max(5, self.popsize // 2) if cheap else self.popsize
        init: str | Array = "latinhypercube"
        if warm is not None:
            init = self._population(warm[1], popsize, seed)
        result = differential_evolution(
            projection.cost,
            [self.exponent_bounds],
            seed=seed,
            # Inner-CV and bootstrap refits start near a solution and only rank lambdas or
            # spread the constants: fewer members and generations and no polish keep them cheap.
            popsize=popsize,
            maxiter=self._generations(cheap, warm is not None),
            tol=self.tol * 100 if cheap else self.tol,
            init=init,
            polish=not cheap,
            vectorized=True,
            updating="deferred",
        )
        exponent = float(np.clip(result.x[0], *self.exponent_bounds))
        return np.append(projection.constants(exponent), exponent)

    def _generations(self, cheap: bool, warm: bool) -> int:
        if cheap:
            return max(20, self.maxiter // 8)
        return max(40, self.maxiter // 4) if warm else self.maxiter

    def _population(self, exponent: float, members: int, seed: int) -> Array:
        """Members scattered (x e^N(0, 0.1)) around the warm exponent, inside its bounds."""
        lo, hi = self.exponent_bounds
        rng = np.random.default_rng(seed)
        spread = exponent * rng.lognormal(0.0, 0.1, size=(max(members, 5), 1))
        spread[0] = exponent
        return np.clip(spread, lo, hi)

    def _set_solution(self, x: Array, lam: float) -> None:
        active = self._active()
        self.values = {t: 0.0 for t in self.terms}
        self.values.update({t: float(v) for t, v in zip(active, x[: len(active)], strict=True)})
        self.exponent = float(x[len(active)]) if self.exponent_fitted else 1.0
        self.lam = float(lam)

    def _choose_lambda(self, frame: pd.DataFrame, seed: int, warm) -> float:
        """Inner k-fold over the training points; the largest weight within 2% of the best error."""
        if len(self.lambdas) == 1:
            self.inner_cv_mape = {}
            return float(self.lambdas[0])
        if len(frame) < 2 * self.inner_folds:
            self.inner_cv_mape = {}
            return float(min(self.lambdas))
        splits = kfold_indices(len(frame), self.inner_folds, seed)
        measured = frame[TARGET].to_numpy(float)
        scores = {}
        for lam in self.lambdas:
            errors = []
            for train, test in splits:
                inner = self._clone(lambdas=[lam])
                subset = frame.iloc[train].reset_index(drop=True)
                inner._fit_fixed_lambda(subset, seed, cheap=True, warm=warm)
                pred = inner.predict(frame.iloc[test])
                errors.append(np.abs(pred - measured[test]) / measured[test])
            scores[lam] = float(np.mean(np.concatenate(errors)) * 100)
        self.inner_cv_mape = {repr(k): v for k, v in scores.items()}
        best = min(scores.values())
        return float(max(lam for lam, s in scores.items() if s <= best * 1.02 + 1e-9))

    def _clone(self, **overrides) -> GenericModel:
        settings = {**self.settings(), **overrides}
        clone = type(self)(**settings)
        clone.network_features = self.network_features
        return clone

    def _check(self, frame: pd.DataFrame) -> pd.DataFrame:
        self.check_enough(frame)
        frame = frame.reset_index(drop=True)
        if (frame[TARGET] <= 0).any():
            raise InsufficientData("epoch times must be positive to fit relative errors")
        return frame

    def _fit_fixed_lambda(
        self, frame: pd.DataFrame, seed: int, cheap: bool = False, warm=None
    ) -> None:
        self._prepare(frame)
        if not self._active():
            raise InsufficientData("no term of the generic model is identifiable from these points")
        lam = self.lambdas[0]
        self._set_solution(self._search(frame, lam, seed, cheap, warm), lam)

    def fit(self, frame: pd.DataFrame) -> GenericModel:
        seed = self.seed
        frame = self._check(frame)
        if self.capabilities.across_networks:
            self._remember_networks(frame)
        self._prepare(frame)
        if not self._active():
            raise InsufficientData("no term of the generic model is identifiable from these points")
        # A full global search with the weakest penalty first; the inner-CV refits and the
        # search with the chosen penalty start from its solution.
        weakest = float(min(self.lambdas))
        self._set_solution(self._search(frame, weakest, seed), weakest)
        warm = (dict(self.values), self.exponent)
        lam = self._choose_lambda(frame, seed, warm)
        if lam != weakest:
            self._prepare(frame)
            self._set_solution(self._search(frame, lam, seed, warm=warm), lam)
        measured = frame[TARGET].to_numpy(float)
        self.train_mape = float(np.mean(np.abs(self.predict(frame) - measured) / measured) * 100)
        return self

    def _remember_networks(self, frame: pd.DataFrame) -> None:
        """F and W of every network seen, so predict needs only the network's name."""
        self.network_features = {}
        if "network" not in frame.columns:
            return
        for network, group in frame.groupby("network", sort=True):
            self.network_features[str(network)] = {
                column: float(self._intrinsic(group, column)[0])
                for column in ("flops_per_sample", "param_count")
            }

    # -- bootstrap: the spread of the constants, for prediction intervals ------------------------

    def bootstrap_refits(self, frame: pd.DataFrame, seed: int) -> dict:
        """Refit on resampled points (cheaper search, the chosen lambda); the constants of each."""
        frame = frame.reset_index(drop=True)
        measured = frame[TARGET].to_numpy(float)
        residuals = (measured - self.predict(frame)) / self.predict(frame)
        rng = np.random.default_rng(seed)
        warm = (dict(self.values), self.exponent)
        samples = []
        for _ in range(self.bootstrap):
            idx = np.sort(rng.integers(0, len(frame), len(frame)))
            resample = frame.iloc[idx].reset_index(drop=True)
            if resample[["procs", "batch_size", "nodes"]].drop_duplicates().shape[0] < 2:
                continue
            refit = self._clone(lambdas=[self.lam])
            try:
                refit._fit_fixed_lambda(resample, seed, cheap=True, warm=warm)
            except InsufficientData:
                continue
            samples.append({"values": refit.values, "exponent": refit.exponent})
        return {
            "method": "case resampling of the measured points, refitted with the chosen lambda",
            "samples": samples,
            "relative_residuals": [float(r) for r in residuals],
        }

    def with_constants(self, values: dict[str, float], exponent: float) -> GenericModel:
        clone = self._clone()
        clone.values, clone.exponent = dict(values), float(exponent)
        clone.inactive, clone.bounds, clone.scales = self.inactive, self.bounds, self.scales
        return clone

    # -- use ----------------------------------------------------------------------------------

    def term_seconds(self, frame: pd.DataFrame) -> pd.DataFrame:
        """Seconds each term contributes to the predicted epoch time, per row."""
        cols = self._columns(frame, self.exponent)
        return pd.DataFrame(
            {t: self.values.get(t, 0.0) * cols[t] for t in self.terms}, index=frame.index
        )

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
        return formula_text(self.terms, self.capabilities.across_networks)

    def _state(self, term: str, off: set[str]) -> str:
        if term in self.inactive:
            return "inactive"
        return "switched_off" if term in off else "on"

    def to_dict(self) -> dict:
        off = set(self.switched_off())
        return {
            "model": self.name,
            "formula": self.formula(),
            "across_networks": self.capabilities.across_networks,
            "terms": [
                {
                    "name": t,
                    "constant": TERMS[t].constant,
                    "formula": TERMS[t].formula,
                    "description": TERMS[t].description,
                    "scaled_by": TERMS[t].intrinsic if self.capabilities.across_networks else None,
                    "value": self.values.get(t, 0.0),
                    "bounds": list(self.bounds.get(t, (0.0, 0.0))),
                    "scale": self.scales.get(t),
                    "state": self._state(t, off),
                    "note": self.inactive.get(t),
                }
                for t in self.terms
            ],
            "switched_off": sorted(off),
            "exponent": {
                "name": "a",
                "value": self.exponent,
                "bounds": list(self.exponent_bounds),
                "fitted": self.exponent_fitted,
            },
            "lambda": self.lam,
            "inner_cv_mape": self.inner_cv_mape,
            "train_mape": self.train_mape,
            "network_features": self.network_features,
            "settings": self.settings(),
        }

    @classmethod
    def from_dict(cls, data: dict) -> GenericModel:
        model = cls(**data["settings"])
        model.values = {t["name"]: float(t["value"]) for t in data["terms"]}
        model.bounds = {t["name"]: tuple(t["bounds"]) for t in data["terms"]}
        model.scales = {t["name"]: t["scale"] for t in data["terms"] if t["scale"] is not None}
        model.inactive = {t["name"]: t["note"] for t in data["terms"] if t["state"] == "inactive"}
        model.exponent = float(data["exponent"]["value"])
        model.exponent_fitted = bool(data["exponent"].get("fitted", True))
        model.lam = float(data["lambda"])
        model.train_mape = float(data.get("train_mape", math.nan))
        model.network_features = data.get("network_features", {})
        return model


class GenericAcrossNetworks(GenericModel):
    """One fit for all networks of a framework: compute ~ F, gradient exchange ~ W."""

    name = "generic_xnet"
    description = (
        "generic model across networks: compute c2*F*b^a, all-reduce c3*W*(p-1)/p, "
        "from flops_per_sample F and param_count W"
    )
    capabilities = Capabilities(
        uses_network_features=True, across_networks=True, has_breakdown=True
    )
