"""A GPU type predicted from the nearest one measured: a power law in the hardware's figures
whose slopes are learned across the GPU types measured, anchored at each configuration on the
measured GPU type whose figures lie nearest.

    log(t / (I b)) = a[c] + w . (log R_matrix, log R_vector, log B_memory, log b) + r[c, h]

c is the configuration (precision, workers, nodes), a[c] its intercept, w the slopes fitted by
least squares within configurations (so the scaling with workers is each configuration's own,
not a law), and r[c, h] the mean residual at c of the GPU type h measured there whose
(log R_matrix, log R_vector, log B_memory) lie nearest to the asked GPU's: what the datasheet
figures miss of a GPU (a consumer card reaching a smaller share of its peak) is borrowed from
the GPU most like it. Where h measured several batches at c, the anchor follows them: its
residual at the asked batch, interpolated in log b between two batches it measured, and beyond
them the residual of the nearest edge. How the time per sample bends with the batch
(launch-bound at small batches, flat at large ones) is the network's, which one power law in b
cannot follow over a sweep of batch sizes, and the sweep measured on h has it; beyond the sweep
its edge is nearer the batch asked than its mean is. A configuration not measured takes
the nearest measured one (same precision first, then log workers, then nodes): beyond the
workers measured, perfect scaling from the edge. Measured on Lambda's, CSC's and MXNet's tables
in docs/hardware.md.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .base import Capabilities, iterations, positive_target
from .hardware_features import HardwareModel, hardware_frame

SLOPES = ("log matrix", "log vector", "log memory_bw", "log b")
NEAREST_BY = 3  # the first three slopes' features place a GPU type


def slope_features(frame: pd.DataFrame, hardware: str | None) -> np.ndarray:
    hw = hardware_frame(frame, hardware)
    return np.log(
        np.column_stack(
            [
                hw["matrix_tflops"].to_numpy(),
                hw["vector_tflops"].to_numpy(),
                hw["memory_tbs"].to_numpy(),
                frame["batch_size"].to_numpy(float),
            ]
        )
    )


def log_time_per_sample(frame: pd.DataFrame, model: str) -> np.ndarray:
    """log(t / (I b)): the epoch time per iteration and per sample of the worker's batch."""
    per_sample = iterations(frame) * frame["batch_size"].to_numpy(float)
    return np.log(positive_target(frame, model) / per_sample)


def within_slopes(
    x: np.ndarray, log_t: np.ndarray, keys: np.ndarray, unidentified: float = 0.0
) -> np.ndarray:
    """Least-squares slopes of ``log_t`` on the columns of ``x`` within each group of ``keys``
    (each group centred on its mean, so each keeps its own intercept). A column that never
    varies within a group says nothing of its slope: ``unidentified``."""
    within = pd.DataFrame(np.column_stack([x, log_t]))
    centred = (within - within.groupby(keys).transform("mean")).to_numpy()
    usable = np.abs(centred[:, :-1]).max(axis=0) > 1e-12
    slopes = np.full(x.shape[1], unidentified)
    if usable.any():
        slopes[usable] = np.linalg.lstsq(centred[:, :-1][:, usable], centred[:, -1])[0]
    return slopes


def configurations(frame: pd.DataFrame) -> list[tuple[str, int, int]]:
    return list(
        zip(
            frame["precision"].astype(str),
            frame["procs"].astype(int),
            frame["nodes"].astype(int),
            strict=True,
        )
    )


class AnchoredHardwareModel(HardwareModel):
    name = "anchored_hw"
    description = (
        "power law in the peak rates, memory bandwidth and batch, slopes learned within each "
        "configuration, anchored on the measured GPU type nearest in its figures"
    )
    capabilities = Capabilities(per_iteration=True, across_hardware=True, hardware_form="power_law")

    def fit(self, frame: pd.DataFrame) -> AnchoredHardwareModel:
        self.check_points(frame)
        log_t = log_time_per_sample(frame, self.name)
        x = slope_features(frame, self.hardware)
        keys = np.array([f"{c[0]} | {c[1]} | {c[2]}" for c in configurations(frame)])
        self.slopes_ = self._learn_slopes(frame, x, log_t, keys)
        residual = log_t - self._slope_term(frame, x)
        gpus = frame["gpu"].astype(str).to_numpy()
        batches = frame["batch_size"].to_numpy(int)
        self.configurations_ = []
        for key, (precision, procs, nodes) in sorted(
            dict(zip(keys, configurations(frame), strict=True)).items()
        ):
            at = keys == key
            intercept = float(residual[at].mean())
            anchors, batch_anchors = {}, {}
            for g in sorted(set(gpus[at])):
                mine = at & (gpus == g)
                anchors[g] = float(residual[mine].mean() - intercept)
                batch_anchors[g] = {
                    str(b): float(residual[mine & (batches == b)].mean() - intercept)
                    for b in sorted(set(batches[mine]))
                }
            self.configurations_.append(
                {"precision": precision, "procs": procs, "nodes": nodes}
                | {"intercept": intercept, "anchors": anchors, "batch_anchors": batch_anchors}
            )
        precisions = frame["precision"].astype(str).to_numpy()
        self.positions_ = {
            f"{g} | {prec}": x[i, :NEAREST_BY].tolist()
            for i, (g, prec) in enumerate(zip(gpus, precisions, strict=True))
        }
        return self

    def _learn_slopes(
        self, frame: pd.DataFrame, x: np.ndarray, log_t: np.ndarray, keys: np.ndarray
    ) -> dict:
        """The slopes, learned within the configurations of the points."""
        return dict(zip(SLOPES, within_slopes(x, log_t, keys).tolist(), strict=True))

    def _slope_term(self, frame: pd.DataFrame, x: np.ndarray) -> np.ndarray:
        """Per row, the slopes times its features."""
        return x @ np.array([self.slopes_[s] for s in SLOPES])

    def _nearest_configuration(self, precision: str, procs: int, nodes: int) -> dict:
        return min(
            self.configurations_,
            key=lambda c: (
                c["precision"] != precision,
                abs(np.log(c["procs"]) - np.log(procs)),
                abs(c["nodes"] - nodes),
            ),
        )

    def _anchor(self, entry: dict, precision: str, position: np.ndarray, batch: int) -> float:
        """The residual of the measured GPU type nearest to ``position`` at this configuration,
        at ``batch`` along the batches it measured there (module docstring)."""
        distance = {
            g: np.linalg.norm(position - np.asarray(self.positions_[f"{g} | {precision}"]))
            for g in entry["anchors"]
            if f"{g} | {precision}" in self.positions_
        }
        if not distance:
            return 0.0
        nearest = min(sorted(distance), key=distance.get)
        at_batch = entry["batch_anchors"][nearest]
        if not at_batch:  # an artifact written before the anchor per batch
            return entry["anchors"][nearest]
        measured = sorted(int(b) for b in at_batch)
        residuals = [at_batch[str(b)] for b in measured]
        # Between two batches measured, interpolated in log b; beyond them, the edge's.
        return float(np.interp(np.log(batch), np.log(measured), residuals))

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        x = slope_features(frame, self.hardware)
        log_t = self._slope_term(frame, x)
        batches = frame["batch_size"].to_numpy(int)
        for i, (precision, procs, nodes) in enumerate(configurations(frame)):
            entry = self._nearest_configuration(precision, procs, nodes)
            anchor = self._anchor(entry, precision, x[i, :NEAREST_BY], int(batches[i]))
            log_t[i] += entry["intercept"] + anchor
        return iterations(frame) * frame["batch_size"].to_numpy(float) * np.exp(log_t)

    @staticmethod
    def _read_slopes(entry: dict) -> dict:
        return {s: float(entry[s]) for s in SLOPES}

    def formula(self) -> str:
        return (
            "T = I * b * exp(a[c] + sum_k w_k f_k + r[c, nearest measured GPU]), f_k in "
            + ", ".join(SLOPES)
        )

    def to_dict(self) -> dict:
        return self._entry(
            slopes=dict(self.slopes_),
            configurations=[dict(c) for c in self.configurations_],
            positions={k: list(v) for k, v in self.positions_.items()},
        )

    @classmethod
    def from_dict(cls, data: dict) -> AnchoredHardwareModel:
        model = cls._unfitted(data)
        model.slopes_ = cls._read_slopes(data["slopes"])
        # Artifacts written before the anchor per batch anchored over the batches.
        model.configurations_ = [
            {"batch_anchors": {g: {} for g in c["anchors"]}} | dict(c)
            for c in data["configurations"]
        ]
        model.positions_ = {k: list(v) for k, v in data["positions"].items()}
        return model
