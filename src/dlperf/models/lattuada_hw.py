"""Lattuada et al. (2022) across hardware: linear regression on network, hyper-parameter and
hardware features, the features chosen by sequential forward selection.

The regression is on the logarithm of the time per sample, log(t_iter / b) = c + sum_k w_k f_k,
so each selected feature acts as a power law (t ~ R_matrix^w ...) and a prediction is never
negative; without any feature it is the mean time per sample of the GPU types measured.
Candidates: log b, log p, [p > 1], log2 p, the precision's matrix and vector peak rates, the
memory bandwidth, and the link bandwidth where the gradient is exchanged ([p > 1] log link);
the catalogue (:mod:`dlperf.hardware`) gives the hardware's. Forward selection adds the candidate
that most lowers the leave-one-GPU-type-out MAPE of the epoch time, while it lowers it by ``tol``
or more, up to ``max_features``: the features are chosen for predicting a GPU not measured.
Network features (parameters, FLOPs) are constant within one network's rows, so they enter
through the intercept when fitted per network, as the benchmark does (docs/hardware.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .base import Capabilities, SelectingModel, iterations, positive_target
from .hardware_features import check_hardware_columns, hardware_frame, leave_one_gpu_out

CANDIDATES = (
    "log b",
    "log p",
    "[p>1]",
    "log2 p",
    "log matrix",
    "log vector",
    "log memory_bw",
    "[p>1] log link",
)


def candidate_features(frame: pd.DataFrame, hardware: str | None) -> pd.DataFrame:
    hw = hardware_frame(frame, hardware)
    b = frame["batch_size"].to_numpy(float)
    p = frame["procs"].to_numpy(float)
    multi = (p > 1).astype(float)
    return pd.DataFrame(
        {
            "log b": np.log(b),
            "log p": np.log(p),
            "[p>1]": multi,
            "log2 p": np.log2(p),
            "log matrix": np.log(hw["matrix_tflops"].to_numpy()),
            "log vector": np.log(hw["vector_tflops"].to_numpy()),
            "log memory_bw": np.log(hw["memory_tbs"].to_numpy()),
            "[p>1] log link": multi * np.log(hw["link_gbs"].to_numpy()),
        },
        index=frame.index,
    )


def _least_squares(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Coefficients of y ~ [1, x] (intercept first)."""
    design = np.column_stack([np.ones(len(y)), x])
    return np.linalg.lstsq(design, y, rcond=None)[0]


def _held_out_mape(x: np.ndarray, log_t: np.ndarray, splits: list) -> float:
    errors = []
    for train, test in splits:
        coef = _least_squares(x[train], log_t[train])
        predicted = coef[0] + x[test] @ coef[1:]
        errors.append(np.abs(np.expm1(predicted - log_t[test])))
    return float(np.mean(np.concatenate(errors)))


def forward_select(
    x: np.ndarray, log_t: np.ndarray, splits: list, tol: float, max_features: int
) -> list[int]:
    """Columns in the order chosen: each time the one whose addition gives the lowest held-out
    MAPE, while that lowers it by ``tol`` or more (scikit-learn's forward selection, scored on
    the epoch time rather than its logarithm)."""
    chosen: list[int] = []
    best = _held_out_mape(x[:, []], log_t, splits)
    while len(chosen) < min(max_features, x.shape[1]):
        scores = {
            j: _held_out_mape(x[:, [*chosen, j]], log_t, splits)
            for j in range(x.shape[1])
            if j not in chosen
        }
        candidate = min(scores, key=lambda j: scores[j])
        if best - scores[candidate] < tol:
            break
        best = scores[candidate]
        chosen.append(candidate)
    return chosen


@dataclass(eq=False, repr=False)
class LattuadaHardwareModel(SelectingModel):
    name = "lattuada_hw"
    description = (
        "log-linear regression on forward-selected network, hyper-parameter and hardware "
        "features (peak rates, memory and link bandwidth), after Lattuada et al. 2022"
    )
    min_points = 4
    capabilities = Capabilities(per_iteration=True, across_hardware=True, hardware_form="power_law")
    candidates = CANDIDATES

    max_features: int = 4
    tol: float = 1e-3
    # A fixed feature list skips the selection (bootstrap refits keep the chosen one).
    features: list[str] | None = None
    # A user's catalogue file (docs/hardware.md); None: the shipped catalogue.
    hardware: str | None = None
    seed: int = 0

    def fit(self, frame: pd.DataFrame) -> LattuadaHardwareModel:
        self.check_params()
        self.check_enough(frame)
        check_hardware_columns(frame, self.name, min_gpus=2)
        per_sample = iterations(frame) * frame["batch_size"].to_numpy(float)
        log_t = np.log(positive_target(frame, self.name) / per_sample)
        features = candidate_features(frame, self.hardware)
        chosen = self._chosen(frame, features, log_t)
        coef = _least_squares(features[chosen].to_numpy(), log_t)
        self.selected_ = chosen
        self.intercept_ = float(coef[0])
        self.coef_ = [float(c) for c in coef[1:]]
        return self

    def _chosen(self, frame: pd.DataFrame, features: pd.DataFrame, log_t: np.ndarray) -> list:
        """The features to regress on: forward-selected, or the fixed list given."""
        if self.features is not None:
            return list(self.features)
        usable = features.loc[:, features.nunique() > 1]
        order = forward_select(
            usable.to_numpy(),
            log_t,
            leave_one_gpu_out(frame),
            float(self.tol),
            int(self.max_features),
        )
        return [str(usable.columns[j]) for j in order]

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        x = candidate_features(frame, self.hardware)[self.selected_].to_numpy()
        per_sample = iterations(frame) * frame["batch_size"].to_numpy(float)
        return per_sample * np.exp(self.intercept_ + x @ np.asarray(self.coef_))

    def formula(self) -> str:
        return "T = I * b * exp(c + sum_k w_k f_k), f_k forward-selected (lattuada_hw)"

    def to_dict(self) -> dict:
        return self._entry(
            selected_features=self.selected_,
            coefficients=dict(zip(self.selected_, self.coef_, strict=True)),
            intercept=self.intercept_,
        )

    @classmethod
    def from_dict(cls, data: dict) -> LattuadaHardwareModel:
        model = cls._unfitted(data)
        model.selected_ = list(data["selected_features"])
        model.coef_ = [float(data["coefficients"][f]) for f in model.selected_]
        model.intercept_ = float(data["intercept"])
        return model


# The power law's features: the roofline's quantities, no selection.
POWER_LAW = ("log matrix", "log vector", "log memory_bw", "log b")


class PowerLawHardwareModel(LattuadaHardwareModel):
    """The same regression on a fixed set: the time per sample as a power law in the matrix and
    vector peak rates, the memory bandwidth and the batch. No selection, so nothing is chosen on
    the few GPU types measured (docs/hardware.md gives the measured difference)."""

    name = "powerlaw_hw"
    description = (
        "time per sample as a power law in the peak rates, memory bandwidth and batch "
        "(log-linear regression, fixed features)"
    )

    def __init__(self, hardware: str | None = None, seed: int = 0) -> None:
        self.hardware = hardware
        self.seed = seed

    def check_params(self) -> None:
        return None

    def refit_params(self) -> dict:
        return self.get_params()

    def _chosen(self, frame: pd.DataFrame, features: pd.DataFrame, log_t: np.ndarray) -> list:
        # A batch that never varied says nothing of its exponent: left to the intercept.
        constant_batch = features["log b"].nunique() < 2
        return [f for f in POWER_LAW if not (f == "log b" and constant_batch)]

    def formula(self) -> str:
        return "T = I * b * exp(c + sum_k w_k f_k), f_k in " + ", ".join(POWER_LAW)
