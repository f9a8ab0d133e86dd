"""The generic performance model (Kavarakuntla et al., IEEE Access 2024; docs/model.md).

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

The model is split by job (docs/model.md): the terms and their columns (:mod:`.terms`), which
terms the data identify (:mod:`.identify`), the fit at one penalty weight (:mod:`.fit`, exactly
solved constants in :mod:`.projection`) and the penalty's choice (:mod:`.penalty`). This module
holds the estimator: its parameters, the order of those steps, and the fitted result with its
breakdown (``term_seconds``) and artifact entry.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dlperf.errors import ConfigError

from .base import TARGET, Capabilities, InsufficientData, PerformanceModel
from .fit import ExponentSearch, Solution, fit_at_lambda
from .identify import Identification, identify
from .penalty import choose_lambda
from .terms import DEFAULT_TERMS, TERMS, TermColumns, formula_text, intrinsic_values

Array = np.ndarray

DEFAULT_LAMBDAS = (0.0, 1e-4, 1e-3, 1e-2)
# The exponent searched with exact constants, or every constant by differential evolution.
SEARCHES = ("projection", "full_de")


@dataclass(eq=False, repr=False)
class GenericModel(PerformanceModel):
    """Fitted attributes (scikit-learn style, set by ``fit`` or ``from_dict``): ``values_``
    (constant per term), ``exponent_``, ``lam_``, ``identification_``, ``inner_cv_mape_``,
    ``train_mape_`` and ``network_features_``."""

    name = "generic"
    description = "generic model: c0 + I*(overhead + compute b^a + all-reduce + inter-node), DE fit"
    min_points = 3
    # Its default communication terms are a ring's and a tree's all-reduce (allreduce_bw,
    # allreduce_lat, internode); ps_sync and sync_linear are there only when configured.
    capabilities = Capabilities(
        has_breakdown=True, has_term_list=True, per_iteration=True, collective_model=True
    )

    terms: Sequence[str] = DEFAULT_TERMS
    lambdas: Sequence[float] = DEFAULT_LAMBDAS
    inner_folds: int = 3
    exponent_bounds: Sequence[float] = (0.3, 1.5)
    popsize: int = 12
    maxiter: int = 200
    tol: float = 1e-7
    search: str = "projection"
    seed: int = 0

    def check_params(self) -> None:
        unknown = [t for t in self.terms if t not in TERMS]
        if unknown:
            raise ConfigError(
                f"unknown generic-model term(s) {unknown}; choose from {', '.join(TERMS)}"
            )
        if not list(self.terms):
            raise ConfigError("the generic model needs at least one term; list some under terms:")
        if self.search not in SEARCHES:
            raise ConfigError(
                f"unknown generic-model search {self.search!r}; choose from {', '.join(SEARCHES)}"
            )

    @property
    def _bounds(self) -> tuple[float, float]:
        """The exponent's bounds as numbers (the parameter is kept as given)."""
        return (float(self.exponent_bounds[0]), float(self.exponent_bounds[1]))

    def refit_params(self) -> dict:
        """Refits keep the penalty weight this fit chose (no inner cross-validation)."""
        return {**self.get_params(), "lambdas": [self.lam_]}

    def _search(self) -> ExponentSearch:
        return ExponentSearch(
            self._bounds,
            int(self.popsize),
            int(self.maxiter),
            float(self.tol),
            self.search == "full_de",
        )

    def _columns(self, network_features: dict | None = None) -> TermColumns:
        known = self.network_features_ if network_features is None else network_features
        return TermColumns(tuple(self.terms), self.capabilities.across_networks, known)

    # -- fitting ------------------------------------------------------------------------------

    def fit(self, frame: pd.DataFrame) -> GenericModel:
        self.check_params()
        self.check_enough(frame)
        frame = frame.reset_index(drop=True)
        if (frame[TARGET] <= 0).any():
            raise InsufficientData("epoch times must be positive to fit relative errors")
        seed = int(self.seed)
        columns = self._columns(self._networks(frame))
        search = self._search()
        identification = identify(frame, columns, search.bounds)
        # A full global search with the weakest penalty first; the inner-CV refits and the
        # search with the chosen penalty start from its solution.
        weakest = float(min(self.lambdas))
        solution = fit_at_lambda(
            frame, columns, search, weakest, seed, identification=identification
        )
        warm = solution.exponent

        def fit_inner(train: pd.DataFrame, lam: float):
            inner = fit_at_lambda(train, columns, search, lam, seed, cheap=True, warm_exponent=warm)
            return lambda rows: inner.predict(rows, columns)

        lam, inner_cv_mape = choose_lambda(
            frame, list(self.lambdas), int(self.inner_folds), seed, fit_inner
        )
        if lam != weakest:
            solution = fit_at_lambda(
                frame, columns, search, lam, seed, warm_exponent=warm, identification=identification
            )
        self._set_fitted(solution, columns.network_features, inner_cv_mape)
        measured = frame[TARGET].to_numpy(float)
        self.train_mape_ = float(np.mean(np.abs(self.predict(frame) - measured) / measured) * 100)
        return self

    def _set_fitted(
        self, solution: Solution, network_features: dict, inner_cv_mape: dict[str, float]
    ) -> None:
        self.identification_ = solution.identification
        self.values_ = dict(solution.values)
        self.exponent_ = solution.exponent
        self.lam_ = solution.lam
        self.network_features_ = dict(network_features)
        self.inner_cv_mape_ = inner_cv_mape
        self.train_mape_ = math.nan

    def _networks(self, frame: pd.DataFrame) -> dict[str, dict[str, float]]:
        """Across networks, F and W of every network seen, so predict needs only its name."""
        if not self.capabilities.across_networks or "network" not in frame.columns:
            return {}
        return {
            str(network): {
                column: float(intrinsic_values(group, column, {})[0])
                for column in ("flops_per_sample", "param_count")
            }
            for network, group in frame.groupby("network", sort=True)
        }

    # -- use ----------------------------------------------------------------------------------

    def term_seconds(self, frame: pd.DataFrame) -> pd.DataFrame:
        """Seconds each term contributes to the predicted epoch time, per row."""
        solution = Solution(self.identification_, self.values_, self.exponent_, self.lam_)
        return solution.term_seconds(frame, self._columns())

    def predict(self, frame: pd.DataFrame) -> Array:
        return self.term_seconds(frame).sum(axis=1).to_numpy(float)

    def switched_off(self) -> list[str]:
        """Terms the penalty drove to (practically) zero."""
        scales = self.identification_.scales
        return [
            t
            for t in self.identification_.active
            if self.values_.get(t, 0.0) <= 1e-6 * max(scales.get(t, 0.0), 1e-300)
        ]

    def formula(self) -> str:
        return formula_text(self.terms, self.capabilities.across_networks)

    def _state(self, term: str, off: set[str]) -> str:
        if term in self.identification_.inactive:
            return "inactive"
        return "switched_off" if term in off else "on"

    def to_dict(self) -> dict:
        off = set(self.switched_off())
        found = self.identification_
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
                    "value": self.values_.get(t, 0.0),
                    "bounds": list(found.bounds.get(t, (0.0, 0.0))),
                    "scale": found.scales.get(t),
                    "state": self._state(t, off),
                    "note": found.inactive.get(t),
                }
                for t in self.terms
            ],
            "switched_off": sorted(off),
            "exponent": {
                "name": "a",
                "value": self.exponent_,
                "bounds": list(self._bounds),
                "fitted": found.exponent_fitted,
            },
            "lambda": self.lam_,
            "inner_cv_mape": self.inner_cv_mape_,
            "train_mape": self.train_mape_,
            "network_features": self.network_features_,
            "settings": self._settings(),
        }

    def _settings(self) -> dict:
        """The parameters as the artifact has always stored them: lists and numbers."""
        params = self.get_params()
        return {
            **params,
            "terms": list(self.terms),
            "lambdas": list(self.lambdas),
            "inner_folds": int(self.inner_folds),
            "exponent_bounds": list(self._bounds),
            "popsize": int(self.popsize),
            "maxiter": int(self.maxiter),
            "tol": float(self.tol),
            "seed": int(self.seed),
        }

    @classmethod
    def from_dict(cls, data: dict) -> GenericModel:
        model = cls._unfitted(data)
        terms = data["terms"]
        model.identification_ = Identification(
            terms=tuple(model.terms),
            inactive={t["name"]: t["note"] for t in terms if t["state"] == "inactive"},
            exponent_fitted=bool(data["exponent"].get("fitted", True)),
            bounds={t["name"]: tuple(t["bounds"]) for t in terms},
            scales={t["name"]: t["scale"] for t in terms if t["scale"] is not None},
        )
        model.values_ = {t["name"]: float(t["value"]) for t in terms}
        model.exponent_ = float(data["exponent"]["value"])
        model.lam_ = float(data["lambda"])
        model.inner_cv_mape_ = dict(data.get("inner_cv_mape", {}))
        model.train_mape_ = float(data.get("train_mape", math.nan))
        model.network_features_ = data.get("network_features", {})
        return model


class GenericAcrossNetworks(GenericModel):
    """One fit for all networks of a framework: compute ~ F, gradient exchange ~ W."""

    name = "generic_xnet"
    description = (
        "generic model across networks: compute c2*F*b^a, all-reduce c3*W*(p-1)/p, "
        "from flops_per_sample F and param_count W"
    )
    capabilities = Capabilities(
        uses_network_features=True,
        across_networks=True,
        has_breakdown=True,
        has_term_list=True,
        per_iteration=True,
        collective_model=True,
    )
