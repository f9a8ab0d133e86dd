"""The generic model across hardware: its compute and memory terms scaled by the GPU's peak
rates for the precision, its communication by the GPU's link (a roofline with a smooth max).

    t_iter = c_fixed
           + b * || (s_matrix / R_matrix, s_vector / R_vector, s_memory / B_memory) ||_q
           + c_ring * 2 (p - 1) / p / B_link
           + c_latency * ceil(log2 p)
    T      = I(p, b, d) * t_iter

||x||_q = (sum x_k^q)^(1/q) is a smooth max of the three times: q = 1 adds them (each part of
the work waits for the others), a large q takes the slowest (a roofline: they overlap).

R_matrix and R_vector are the precision's matrix (tensor-core) and vector peak TFLOP/s,
B_memory the memory bandwidth (TB/s), B_link the intra-node link (GB/s), all from the catalogue
(:mod:`dlperf.hardware`). The shares s (work per sample at each rate) and the communication
constants are learned from the GPU types measured, by non-negative least squares on the relative
error at q = 1, so a term the data do not support goes to zero; then q (in [1, 16]) and the
constants together by bounded least squares on the relative error from there, so each network
learns how much its parts overlap from its own GPU types. A GPU not measured is predicted from its
datasheet figures alone; how far they lie outside the measured ones says how far the answer
reaches (docs/hardware.md).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.optimize import least_squares, nnls

from .base import Capabilities, iterations, positive_target
from .hardware_features import HardwareModel, hardware_frame

TERMS = ("fixed", "matrix", "vector", "memory", "ring", "latency")
ROOF = slice(1, 4)  # the terms the smooth max joins: matrix, vector, memory
POWER_BOUNDS = (1.0, 16.0)  # 1: their sum; 16: within 7 % of their max for three equal times


def roof_shares(times: np.ndarray, power: float) -> np.ndarray:
    """Each of the roof's times (rows x 3) as seconds of their smooth max: they sum to
    ||times||_power, in proportion to time^power."""
    top = np.maximum(times.max(axis=1, keepdims=True), 1e-300)
    scaled = (times / top) ** power
    total = scaled.sum(axis=1, keepdims=True)
    return np.where(total > 0, scaled / np.maximum(total, 1e-300), 0.0) * (
        top * total ** (1.0 / power)
    )


def iteration_terms(columns: np.ndarray, constants: np.ndarray, power: float) -> np.ndarray:
    """Seconds of each term per iteration (the roof's split by :func:`roof_shares`)."""
    seconds = columns * constants
    seconds[:, ROOF] = roof_shares(seconds[:, ROOF], power)
    return seconds


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


class GenericHardwareModel(HardwareModel):
    name = "generic_hw"
    description = (
        "the generic model's compute and memory terms over the GPU's peak rates for the "
        "precision, communication over its link bandwidth (shares learned by NNLS)"
    )
    capabilities = Capabilities(
        has_breakdown=True, per_iteration=True, across_hardware=True, hardware_form="roofline"
    )

    def fit(self, frame: pd.DataFrame) -> GenericHardwareModel:
        self.check_points(frame)
        t_iter = positive_target(frame, self.name) / iterations(frame)
        columns = term_columns(frame, self.hardware)
        # A term the timings never exercise (the ring and latency at one worker count) says
        # nothing of its constant, and the fit below may move it anywhere: it is held at 0, so
        # that beyond the workers measured the time follows what was measured (perfect scaling
        # from it), never a constant the data did not see.
        largest = np.abs(columns).max(axis=0)
        exercised = largest > 0
        scale = np.where(exercised, largest, 1.0)
        scaled = columns / scale
        # Rows divided by the measured time: least squares on the relative error.
        start, _ = nnls(scaled / t_iter[:, None], np.ones(len(t_iter)))

        def relative_error(x: np.ndarray) -> np.ndarray:
            return iteration_terms(scaled, x[:-1], x[-1]).sum(axis=1) / t_iter - 1.0

        low = np.r_[np.zeros(len(TERMS)), POWER_BOUNDS[0]]
        high = np.r_[np.full(len(TERMS), np.inf), POWER_BOUNDS[1]]
        # The sum's solution (q = 1) is the start: the smooth max only moves from it where the
        # GPU types measured say their parts overlap.
        summed = np.r_[start, POWER_BOUNDS[0]]
        joint = least_squares(relative_error, summed, bounds=(low, high))
        found = joint.x if joint.cost < 0.5 * np.sum(relative_error(summed) ** 2) else summed
        constants = np.where(exercised, found[:-1] / scale, 0.0)
        self.constants_ = dict(zip(TERMS, constants.tolist(), strict=True))
        self.power_ = float(found[-1])
        return self

    def term_seconds(self, frame: pd.DataFrame) -> pd.DataFrame:
        """Each term's seconds of the epoch."""
        constants = np.array([self.constants_[t] for t in TERMS])
        per_iteration = iteration_terms(term_columns(frame, self.hardware), constants, self.power_)
        seconds = per_iteration * iterations(frame)[:, None]
        return pd.DataFrame(seconds, columns=list(TERMS), index=frame.index)

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        return self.term_seconds(frame).sum(axis=1).to_numpy()

    def formula(self) -> str:
        return (
            "T = I * (c_fixed + b ||(s_matrix/R_matrix, s_vector/R_vector, s_memory/B_memory)||_q "
            f"+ c_ring 2(p-1)/p/B_link + c_latency ceil(log2 p)), q = {self.power_:.3g}"
        )

    def to_dict(self) -> dict:
        return self._entry(constants=dict(self.constants_), power=self.power_)

    @classmethod
    def from_dict(cls, data: dict) -> GenericHardwareModel:
        model = cls._unfitted(data)
        model.constants_ = {t: float(data["constants"][t]) for t in TERMS}
        # Artifacts written before the smooth max added their terms: q = 1.
        model.power_ = float(data.get("power", 1.0))
        return model
