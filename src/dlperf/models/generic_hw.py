"""The generic model across hardware: its compute and memory terms scaled by the GPU's peak
rates for the precision, its communication by the GPU's link (a roofline-style split).

    t_iter = c_fixed
           + b * (s_matrix / R_matrix + s_vector / R_vector + s_memory / B_memory)
           + c_ring * 2 (p - 1) / p / B_link
           + c_latency * ceil(log2 p)
    T      = I(p, b, d) * t_iter

R_matrix and R_vector are the precision's matrix (tensor-core) and vector peak TFLOP/s,
B_memory the memory bandwidth (TB/s), B_link the intra-node link (GB/s), all from the catalogue
(:mod:`dlperf.hardware`). The shares s (work per sample at each rate) and the communication
constants are learned from the GPU types measured, by non-negative least squares on the relative
error, so a term the data do not support goes to zero. A GPU not measured is predicted from its
datasheet figures alone; how far they lie outside the measured ones says how far the answer
reaches (docs/hardware.md).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.optimize import nnls

from .base import Capabilities, PerformanceModel, iterations, positive_target
from .hardware_features import check_hardware_columns, hardware_frame

TERMS = ("fixed", "matrix", "vector", "memory", "ring", "latency")


def term_columns(frame: pd.DataFrame, hardware: str | None) -> np.ndarray:
    """One column per term of t_iter, before its constant."""
    hw = hardware_frame(frame, hardware)
    b = frame["batch_size"].to_numpy(float)
    p = frame["procs"].to_numpy(float)
    return np.column_stack(
        [
            np.ones(len(frame)),
            b / hw["matrix_tflops"].to_numpy(),
            b / hw["vector_tflops"].to_numpy(),
            b / hw["memory_tbs"].to_numpy(),
            2.0 * (p - 1.0) / p / hw["link_gbs"].to_numpy(),
            np.ceil(np.log2(p)),
        ]
    )


class GenericHardwareModel(PerformanceModel):
    name = "generic_hw"
    description = (
        "the generic model's compute and memory terms over the GPU's peak rates for the "
        "precision, communication over its link bandwidth (shares learned by NNLS)"
    )
    min_points = 4
    capabilities = Capabilities(has_breakdown=True, per_iteration=True, across_hardware=True)

    def __init__(self, hardware: str | None = None, seed: int = 0) -> None:
        # A user's catalogue file (docs/hardware.md); None: the shipped catalogue.
        self.hardware = hardware
        self.seed = seed

    def fit(self, frame: pd.DataFrame) -> GenericHardwareModel:
        self.check_enough(frame)
        check_hardware_columns(frame, self.name, min_gpus=2)
        t_iter = positive_target(frame, self.name) / iterations(frame)
        columns = term_columns(frame, self.hardware)
        scale = np.maximum(np.abs(columns).max(axis=0), 1e-300)
        # Rows divided by the measured time: least squares on the relative error.
        solution, _ = nnls(columns / scale / t_iter[:, None], np.ones(len(t_iter)))
        self.constants_ = dict(zip(TERMS, (solution / scale).tolist(), strict=True))
        return self

    def term_seconds(self, frame: pd.DataFrame) -> pd.DataFrame:
        """Each term's seconds of the epoch."""
        constants = np.array([self.constants_[t] for t in TERMS])
        seconds = term_columns(frame, self.hardware) * constants * iterations(frame)[:, None]
        return pd.DataFrame(seconds, columns=list(TERMS), index=frame.index)

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        return self.term_seconds(frame).sum(axis=1).to_numpy()

    def formula(self) -> str:
        return (
            "T = I * (c_fixed + b (s_matrix/R_matrix + s_vector/R_vector + s_memory/B_memory) "
            "+ c_ring 2(p-1)/p/B_link + c_latency ceil(log2 p))"
        )

    def to_dict(self) -> dict:
        return self._entry(constants=dict(self.constants_))

    @classmethod
    def from_dict(cls, data: dict) -> GenericHardwareModel:
        model = cls._unfitted(data)
        model.constants_ = {t: float(data["constants"][t]) for t in TERMS}
        return model
