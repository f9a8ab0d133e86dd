"""A GPU type predicted with slopes learned on a published table of many GPU types: anchored_hw's
power law and anchor, its hardware and batch slopes not learned from the few GPU types of the
timings but carried over from Lambda's PyTorch table (12 GPU types, 10 networks, FP32 and mixed
precision), where the figures span a range no single study measures.

    log(t / (I b)) = a[c] + k[p] w_hw[p] . (log R_matrix, log R_vector, log B_memory)
                     + w_b[p] log b + r[c, h]        (p: the precision)

w[p] = (w_hw[p], w_b[p]) is read from ``prior_hw.yaml`` (package data, written by
``benchmarks/hardware_prior.py`` from the published table; its source is in the file), one set
per precision: ``tf32`` takes FP32's (Lambda's FP32 runs used TF32 where the GPU has it, and the
catalogue reads both at the TF32 matrix rate) and ``bf16`` the mixed-precision one (the same
half-precision matrix path). The intercepts a[c] per configuration and the anchors r[c, h] come
from the timings, as in anchored_hw. The slopes are learned pooled over every network and
configuration of the table (:func:`learn_slopes`): how much time a doubling of each figure saves
in a typical training job, the prior a study of two or three GPU types cannot learn itself.

How strongly a network follows the hardware is its own, though: a network whose iterations wait
on the host (Tacotron 2's recurrent steps) gains less from a faster GPU than the typical job. One
number per precision, the strength k, is learned from the timings (:func:`hardware_strength`):
the prior's direction in the figures, the study's own magnitude, which one contrast between two
GPU types already identifies where four slopes are not. k lies in [0, 1]: below 0 a faster GPU
would be slower, above 1 the time would fall faster than every figure together rises (the
prior's hardware slopes sum to about -1). Measured in docs/hardware.md.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from functools import lru_cache
from importlib import resources

import numpy as np
import pandas as pd

from dlperf.errors import ConfigError
from dlperf.hardware import precision_name

from .anchored_hw import (
    SLOPES,
    AnchoredHardwareModel,
    log_time_per_sample,
    slope_features,
    within_slopes,
)
from .base import PerformanceModel

# The precision whose learned slopes each precision takes (module docstring).
LEARNED_AS = {"fp32": "fp32", "tf32": "fp32", "amp_fp16": "amp_fp16", "bf16": "amp_fp16"}
HARDWARE_SLOPES = SLOPES[:-1]  # the figures' slopes the strength scales; the batch's stays
STRENGTH_BOUNDS = (0.0, 1.0)  # physics (module docstring)


@lru_cache(maxsize=1)
def shipped_prior() -> dict:
    """The package's ``prior_hw.yaml``: its source and the slopes per precision."""
    import yaml  # only when a fit asks: the GPU check imports the models without PyYAML

    text = resources.files("dlperf.models").joinpath("prior_hw.yaml").read_text()
    return yaml.safe_load(text)


def learn_slopes(frame: pd.DataFrame, hardware: str | None = None) -> dict[str, dict[str, float]]:
    """Per precision of ``frame`` (points with network, gpu, precision, procs, nodes, batch):
    the slopes of log time per sample on the log figures and batch, least squares within each
    network, precision and configuration (each keeps its own intercept)."""
    learned = {}
    for precision, rows in frame.groupby(frame["precision"].map(precision_name), sort=True):
        keys = rows[["network", "procs", "nodes"]].astype(str).agg(" | ".join, axis=1)
        x = slope_features(rows, hardware)
        slopes = within_slopes(x, log_time_per_sample(rows, "prior_hw"), keys.to_numpy())
        learned[str(precision)] = dict(zip(SLOPES, slopes.tolist(), strict=True))
    return learned


def hardware_strength(
    x: np.ndarray, log_t: np.ndarray, keys: np.ndarray, slopes: dict[str, float]
) -> float:
    """The strength k (module docstring) of points with features ``x`` (:func:`slope_features`)
    and log time per sample ``log_t``: least squares of the time on the prior's hardware term
    within each group of ``keys`` (configurations), the batch's term taken as the prior's, k
    bounded to STRENGTH_BOUNDS. Where the hardware term never varies within a configuration
    (one GPU type, or GPU types of the same figures) the timings say nothing of it: 1."""
    w = np.array([slopes[s] for s in SLOPES])
    hardware = len(HARDWARE_SLOPES)
    term = x[:, :hardware] @ w[:hardware]
    rest = log_t - x[:, hardware] * w[-1]
    k = within_slopes(term[:, None], rest, keys, unidentified=1.0)[0]
    return float(np.clip(k, *STRENGTH_BOUNDS))


def one_gpu_type_interval(level: float) -> tuple[float, float] | None:
    """The shipped prior's interval for a GPU type asked from one other measured alone, from
    ``one_gpu_type`` in ``prior_hw.yaml``: (radius, reach), the split-conformal quantile at
    ``level`` of prior_hw's absolute log errors on the published table, each GPU type asked
    from each other one (at the lowest level shipped at or above ``level``), and the largest
    reach those questions went; None above the highest level shipped."""
    return _shipped_interval("one_gpu_type", level)


def two_gpu_types_interval(level: float) -> tuple[float, float] | None:
    """The same for a GPU type asked from two others measured, by the answer's models alike
    (``two_gpu_types`` in ``prior_hw.yaml``, which names them): each GPU type of the published
    table asked from pairs of its others."""
    return _shipped_interval("two_gpu_types", level)


def _shipped_interval(entry: str, level: float) -> tuple[float, float] | None:
    published = shipped_prior()[entry]
    radii = {float(at): float(radius) for at, radius in published["radius"].items()}
    above = [at for at in sorted(radii) if at >= level - 1e-9]
    return (radii[above[0]], float(published["reach"])) if above else None


class PriorHardwareModel(AnchoredHardwareModel):
    name = "prior_hw"
    description = (
        "power law in the peak rates, memory bandwidth and batch, slopes learned on a published "
        "table of 12 GPU types, anchored on the measured GPU type nearest in its figures"
    )
    # Its capabilities are anchored_hw's: the same power law, per iteration, across hardware.
    # Its slopes come from the published table, so one GPU type measured anchors them (the
    # strength, unidentified there, is 1), at one configuration or more.
    min_gpu_types = 1
    min_points = 1

    def __init__(
        self,
        hardware: str | None = None,
        slopes: dict[str, dict[str, float]] | None = None,
        seed: int = 0,
    ) -> None:
        # A user's catalogue file (docs/hardware.md); None: the shipped catalogue.
        self.hardware = hardware
        # Slopes per precision (LEARNED_AS's keys) in place of the shipped ones; None: shipped.
        self.slopes = slopes
        self.seed = seed

    def check_params(self) -> None:
        if self.slopes is None:
            return
        for precision, entry in self.slopes.items():
            if precision not in LEARNED_AS.values() or set(entry) != set(SLOPES):
                raise ConfigError(
                    f"prior_hw: slopes must give, per precision (fp32, amp_fp16), the slopes "
                    f"{', '.join(SLOPES)}; got {precision!r}: {', '.join(sorted(entry))}"
                )

    def _prior(self) -> dict[str, dict[str, float]]:
        return self.slopes if self.slopes is not None else shipped_prior()["slopes"]

    def _learn_slopes(
        self, frame: pd.DataFrame, x: np.ndarray, log_t: np.ndarray, keys: np.ndarray
    ) -> dict:
        """The prior's slopes for each precision of the points, the hardware's scaled by the
        strength the points teach (:func:`hardware_strength`)."""
        self.check_params()
        prior = self._prior()
        learned_as = {p: LEARNED_AS[precision_name(p)] for p in frame["precision"].unique()}
        missing = sorted({as_ for as_ in learned_as.values() if as_ not in prior})
        if missing:
            raise ConfigError(
                f"prior_hw was given no slopes for {', '.join(missing)}; give them too, or "
                "none to use the shipped ones"
            )
        precisions = frame["precision"].to_numpy()
        self.strengths_, slopes = {}, {}
        for p, as_ in learned_as.items():
            at = precisions == p
            k = hardware_strength(x[at], log_t[at], keys[at], prior[as_])
            self.strengths_[str(p)] = k
            slopes[str(p)] = {
                s: v * k if s in HARDWARE_SLOPES else v for s, v in prior[as_].items()
            }
        return slopes

    def _slope_term(self, frame: pd.DataFrame, x: np.ndarray) -> np.ndarray:
        per_row = [self._slopes_for(p) for p in frame["precision"].astype(str)]
        return (x * np.array(per_row, float).reshape(x.shape)).sum(axis=1)

    def _slopes_for(self, precision: str) -> list[float]:
        """The slopes of ``precision``: those the fit stored, else the prior's (a precision
        asked that the timings never measured)."""
        if precision in self.slopes_:
            entry = self.slopes_[precision]
        else:
            entry = self._prior()[LEARNED_AS[precision_name(precision)]]
        return [entry[s] for s in SLOPES]

    @staticmethod
    def _read_slopes(entry: dict) -> dict:
        return {p: {s: float(v[s]) for s in SLOPES} for p, v in entry.items()}

    def formula(self) -> str:
        strengths = ", ".join(f"{p} {k:.2f}" for p, k in sorted(self.strengths_.items()))
        return (
            "T = I * b * exp(a[c] + k[precision] sum_j w_j[precision] f_j + w_b log b "
            "+ r[c, nearest measured GPU]), w learned on a published table, f_j in "
            + ", ".join(HARDWARE_SLOPES)
            + f"; strength k: {strengths}"
        )

    def to_dict(self) -> dict:
        # The stored slopes are the scaled ones; the strengths say by how much.
        return super().to_dict() | {"strengths": dict(self.strengths_)}

    @classmethod
    def from_dict(cls, data: dict) -> PriorHardwareModel:
        model = super().from_dict(data)
        # Artifacts written before the strength took the prior at full strength.
        model.strengths_ = {
            p: float(k)
            for p, k in data.get("strengths", dict.fromkeys(data["slopes"], 1.0)).items()
        }
        return model


def shipped_interval(
    names: Collection[str], gpu_count: int, level: float
) -> tuple[float, float] | None:
    """(radius, reach) of the interval the published table gave an answer of the models
    ``names`` alike, from ``gpu_count`` GPU types measured, too few for a backtest, with the
    slopes it scored (prior_hw's learned without the GPU type asked): prior_hw alone from one
    (:func:`one_gpu_type_interval`), or the models ``two_gpu_types`` in ``prior_hw.yaml``
    names from two (:func:`two_gpu_types_interval`); None for another combination (prior_hw
    alone on two GPU types learns its strength from them)."""
    if gpu_count == 1 and set(names) == {PriorHardwareModel.name}:
        return one_gpu_type_interval(level)
    if gpu_count == 2 and set(names) == set(shipped_prior()["two_gpu_types"]["models"]):
        return two_gpu_types_interval(level)
    return None


def answer_interval(
    fitted: Mapping[str, PerformanceModel], gpu_count: int, level: float
) -> tuple[float, float] | None:
    """:func:`shipped_interval` of the models ``fitted`` (by name), where prior_hw is among them
    with the shipped slopes; None with slopes of the user's (that table never scored them) or
    without prior_hw."""
    prior = fitted.get(PriorHardwareModel.name)
    if prior is None or prior.slopes is not None:
        return None
    return shipped_interval(fitted, gpu_count, level)
