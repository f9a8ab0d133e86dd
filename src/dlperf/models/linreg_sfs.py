"""Linear regression with sequential forward feature selection (after Lattuada et al. 2022).

Candidate features are expanded from the configuration (1/p, b, d/p, log p, p, b/p, I, I*b,
inverses and products); forward selection adds one at a time while the cross-validated
percentage error improves, then LinearRegression is fitted on the chosen ones. The selected
features and coefficients are the model.

The selection is scikit-learn's SequentialFeatureSelector (forward, n_features_to_select="auto",
tol, MAPE scoring, the same KFold) written out in numpy: the same steps and the same choice, but
without the estimator cloning and input checks of each of its hundreds of small fits, which made
it the slowest model to cross-validate.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy import linalg
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import KFold

from .base import InsufficientData, PerformanceModel, iterations, positive_target


def expanded_features(frame: pd.DataFrame) -> pd.DataFrame:
    p = frame["procs"].to_numpy(float)
    n = frame["nodes"].to_numpy(float)
    b = frame["batch_size"].to_numpy(float)
    d = frame["data_size"].to_numpy(float)
    i = iterations(frame)
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
            "I*log2(p)": i * log_p,
            "I*(p-1)/p": i * (p - 1.0) / p,
            "I*p": i * p,
            "I*[n>1]": i * (n > 1),
            "d/(p*b)": d / (p * b),
            "d*log2(p)/p": d * log_p / p,
        },
        index=frame.index,
    )


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


def forward_select(x: np.ndarray, y: np.ndarray, splits: list, tol: float) -> np.ndarray:
    """Column mask chosen by forward selection: add the column whose cross-validated score
    (negative MAPE) is best, while it improves the score by at least ``tol``."""
    mask = np.zeros(x.shape[1], bool)
    old_score = -np.inf
    for _ in range(x.shape[1] - 1):
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
    return mask


class LinregSFSModel(PerformanceModel):
    name = "linreg_sfs"
    description = "linear regression on forward-selected features (1/p, b, d/p, log p, I, I*b, ...)"
    min_points = 4

    def __init__(
        self, max_features: int = 6, tol: float = 1e-3, cv: int = 3, seed: int = 0
    ) -> None:
        self.seed = seed
        self.max_features = int(max_features)
        self.tol = float(tol)
        self.cv = int(cv)
        self.selected: list[str] = []
        self.coef: list[float] = []
        self.intercept = 0.0

    def fit(self, frame: pd.DataFrame) -> LinregSFSModel:
        self.check_enough(frame)
        target = positive_target(frame, self.name)
        features = expanded_features(frame)
        # Drop constant and duplicate columns: they carry nothing the intercept does not.
        features = features.loc[:, features.nunique() > 1].T.drop_duplicates().T
        if features.shape[1] == 0:
            raise InsufficientData("linreg_sfs: no feature varies across these points")
        folds = KFold(n_splits=min(self.cv, len(frame)), shuffle=True, random_state=self.seed)
        if features.shape[1] == 1:
            chosen = list(features.columns)
        else:
            splits = list(folds.split(features))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                mask = forward_select(features.to_numpy(float), target, splits, self.tol)
            chosen = list(features.columns[mask])
        chosen = chosen[: self.max_features]
        regression = LinearRegression().fit(features[chosen].to_numpy(float), target)
        self.selected = chosen
        self.coef = [float(c) for c in regression.coef_]
        self.intercept = float(regression.intercept_)
        return self

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        features = expanded_features(frame)[self.selected].to_numpy(float)
        return self.intercept + features @ np.asarray(self.coef, float)

    def to_dict(self) -> dict:
        formula = " + ".join(
            [f"{self.intercept:.6g}"]
            + [f"{c:.6g}*{f}" for f, c in zip(self.selected, self.coef, strict=True)]
        )
        return {
            "model": self.name,
            "formula": "T = " + formula,
            "selected_features": self.selected,
            "coefficients": dict(zip(self.selected, self.coef, strict=True)),
            "intercept": self.intercept,
            "settings": self.get_params(),
        }

    @classmethod
    def from_dict(cls, data: dict) -> LinregSFSModel:
        model = cls(**data["settings"])
        model.selected = list(data["selected_features"])
        model.coef = [float(data["coefficients"][f]) for f in model.selected]
        model.intercept = float(data["intercept"])
        return model
