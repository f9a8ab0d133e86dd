"""Linear regression with sequential forward feature selection (after Lattuada et al. 2022).

Candidate features are expanded from the configuration (1/p, b, d/p, log p, p, b/p, I, I*b,
inverses and products); the communication features count S = I / g exchanges an epoch, one per
optimizer step of g micro-batches (``grad_accum_steps``; S = I without accumulation), since the
gradient is exchanged once per step. Forward selection adds one at a time while the cross-validated
percentage error improves, and stops at ``max_features``; then LinearRegression is fitted on the
chosen ones, in the order they were chosen. The selected features and coefficients are the model
(docs/model.md).

The selection is scikit-learn's SequentialFeatureSelector (forward, n_features_to_select="auto",
tol, MAPE scoring) written out in numpy: the same steps and the same choice, but without the
estimator cloning and input checks of each of its hundreds of small fits, which made it the
slowest model to cross-validate. Its folds are grouped by configuration
(:func:`dlperf.folds.grouped_kfold`), so rows that differ only in data size never sit on both
sides of a split.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import linalg
from sklearn.linear_model import LinearRegression

from dlperf.folds import grouped_kfold, n_configurations

from .base import (
    Capabilities,
    InsufficientData,
    SelectingModel,
    accumulation_steps,
    iterations,
    positive_target,
)


def expanded_features(frame: pd.DataFrame) -> pd.DataFrame:
    p = frame["procs"].to_numpy(float)
    n = frame["nodes"].to_numpy(float)
    b = frame["batch_size"].to_numpy(float)
    d = frame["data_size"].to_numpy(float)
    i = iterations(frame)
    steps = i / accumulation_steps(frame)  # optimizer steps: one gradient exchange each
    log_p = np.log2(p)
    return pd.DataFrame(
        {
            "1/p": 1.0 / p,
            "b": b,
            "1/b": 1.0 / b,
            "d": d,
            "d/p": d / p,
            "log2(p)": log_p,
            "p": p,
            "b/p": b / p,
            "n": n,
            "I": i,
            "I*b": i * b,
            "S*log2(p)": steps * log_p,
            "S*(p-1)/p": steps * (p - 1.0) / p,
            "S*p": steps * p,
            "S*[n>1]": steps * (n > 1),
            "d/(p*b)": d / (p * b),
            "d*log2(p)/p": d * log_p / p,
        },
        index=frame.index,
    )


# The candidate features, in the order expanded_features makes them.
CANDIDATES = (
    "1/p",
    "b",
    "1/b",
    "d",
    "d/p",
    "log2(p)",
    "p",
    "b/p",
    "n",
    "I",
    "I*b",
    "S*log2(p)",
    "S*(p-1)/p",
    "S*p",
    "S*[n>1]",
    "d/(p*b)",
    "d*log2(p)/p",
)
# Names these features had before accumulation was modelled (I = S when g = 1, the only case
# then): artifacts and configurations that use them still load.
FORMER_NAMES = {
    "I*log2(p)": "S*log2(p)",
    "I*(p-1)/p": "S*(p-1)/p",
    "I*p": "S*p",
    "I*[n>1]": "S*[n>1]",
}


def current_names(features) -> list[str]:
    return [FORMER_NAMES.get(str(f), str(f)) for f in features]


def _ols_fold_mape(x: np.ndarray, y: np.ndarray, splits: list) -> float:
    """Mean over folds of the held-out MAPE of least squares with an intercept
    (LinearRegression's fit: centre, then solve), as a fraction."""
    eps = np.finfo(np.float64).eps
    scores = []
    for train, test in splits:
        x_mean, y_mean = x[train].mean(axis=0), y[train].mean()
        # cond as LinearRegression passes it (its tol, 1e-6): collinear columns are common here.
        coef = linalg.lstsq(x[train] - x_mean, y[train] - y_mean, cond=1e-6)[0]
        predicted = (x[test] - x_mean) @ coef + y_mean
        scores.append(np.mean(np.abs(predicted - y[test]) / np.maximum(np.abs(y[test]), eps)))
    return float(np.mean(scores))


def forward_select(
    x: np.ndarray, y: np.ndarray, splits: list, tol: float, max_features: int
) -> list[int]:
    """Column indices in the order forward selection chose them: add the column whose
    cross-validated score (negative MAPE) is best, while it improves the score by at least
    ``tol``, up to ``max_features`` columns (and never all of them, as scikit-learn's "auto")."""
    mask = np.zeros(x.shape[1], bool)
    order: list[int] = []
    old_score = -np.inf
    for _ in range(min(x.shape[1] - 1, max_features)):
        scores = {}
        for candidate in np.flatnonzero(~mask):
            trial = mask.copy()
            trial[candidate] = True
            scores[candidate] = -_ols_fold_mape(x[:, trial], y, splits)
        best = max(scores, key=lambda idx: scores[idx])  # first of equals, as scikit-learn
        if scores[best] - old_score < tol:
            break
        old_score = scores[best]
        mask[best] = True
        order.append(int(best))
    return order


@dataclass(eq=False, repr=False)
class LinregSFSModel(SelectingModel):
    name = "linreg_sfs"
    description = "linear regression on forward-selected features (1/p, b, d/p, log p, I, I*b, ...)"
    min_points = 4
    # Its candidate features include n and I*[n>1]; it fits across several node counts.
    capabilities = Capabilities()
    candidates = CANDIDATES

    max_features: int = 6
    tol: float = 1e-3
    cv: int = 3
    # A fixed feature list skips the selection (bootstrap refits keep the chosen one).
    features: list[str] | None = None
    seed: int = 0

    def chosen_features(self) -> list[str] | None:
        """Configurations may name features by their former ``I*...`` names."""
        return None if self.features is None else current_names(self.features)

    def fit(self, frame: pd.DataFrame) -> LinregSFSModel:
        self.check_params()
        self.check_enough(frame)
        target = positive_target(frame, self.name)
        features = expanded_features(frame)
        chosen = (
            self._select(frame, target, features)
            if self.features is None
            else current_names(self.features)
        )
        regression = LinearRegression().fit(features[chosen].to_numpy(float), target)
        self.selected_ = list(chosen)
        self.coef_ = [float(c) for c in regression.coef_]
        self.intercept_ = float(regression.intercept_)
        return self

    def _select(self, frame: pd.DataFrame, target: np.ndarray, features: pd.DataFrame) -> list:
        """The features forward selection chooses, in the order it chose them."""
        # Drop constant and duplicate columns: they carry nothing the intercept does not.
        features = features.loc[:, features.nunique() > 1].T.drop_duplicates().T
        if features.shape[1] == 0:
            raise InsufficientData("linreg_sfs: no feature varies across these points")
        if features.shape[1] == 1:
            return list(features.columns)
        if n_configurations(frame) < 2:
            raise InsufficientData(
                "linreg_sfs selects features by cross-validation over configurations "
                "(nodes, procs, batch_size) and these points hold only one; measure another"
            )
        splits = grouped_kfold(frame, int(self.cv), self.seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            order = forward_select(
                features.to_numpy(float), target, splits, float(self.tol), int(self.max_features)
            )
        return [str(features.columns[i]) for i in order]

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        features = expanded_features(frame)[self.selected_].to_numpy(float)
        return self.intercept_ + features @ np.asarray(self.coef_, float)

    def to_dict(self) -> dict:
        formula = " + ".join(
            [f"{self.intercept_:.6g}"]
            + [f"{c:.6g}*{f}" for f, c in zip(self.selected_, self.coef_, strict=True)]
        )
        return {
            **self._entry(
                selected_features=self.selected_,
                coefficients=dict(zip(self.selected_, self.coef_, strict=True)),
                intercept=self.intercept_,
            ),
            "formula": "T = " + formula,
        }

    @classmethod
    def from_dict(cls, data: dict) -> LinregSFSModel:
        model = cls._unfitted(data)
        stored = list(data["selected_features"])
        model.selected_ = current_names(stored)
        model.coef_ = [float(data["coefficients"][f]) for f in stored]
        model.intercept_ = float(data["intercept"])
        return model
