"""A GPU type predicted with slopes learned on a published table of many GPU types: anchored_hw's
power law and anchor, its hardware and batch slopes not learned from the few GPU types of the
timings but carried over from Lambda's PyTorch table (12 GPU types, 10 networks, FP32 and mixed
precision), where the figures span a range no single study measures.

    log(t / (I b)) = a[c] + w[precision] . (log R_matrix, log R_vector, log B_memory, log b)
                     + r[c, h]

w[precision] is read from ``prior_hw.yaml`` (package data, written by
``benchmarks/hardware_prior.py`` from the published table; its source is in the file), one set
per precision: ``tf32`` takes FP32's (Lambda's FP32 runs used TF32 where the GPU has it, and the
catalogue reads both at the TF32 matrix rate) and ``bf16`` the mixed-precision one (the same
half-precision matrix path). The intercepts a[c] per configuration and the anchors r[c, h] come
from the timings, as in anchored_hw. The slopes are learned pooled over every network and
configuration of the table (:func:`learn_slopes`): how much time a doubling of each figure saves
in a typical training job, the prior a study of two or three GPU types cannot learn itself.
Measured in docs/hardware.md.
"""

from __future__ import annotations

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

# The precision whose learned slopes each precision takes (module docstring).
LEARNED_AS = {"fp32": "fp32", "tf32": "fp32", "amp_fp16": "amp_fp16", "bf16": "amp_fp16"}


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


class PriorHardwareModel(AnchoredHardwareModel):
    name = "prior_hw"
    description = (
        "power law in the peak rates, memory bandwidth and batch, slopes learned on a published "
        "table of 12 GPU types, anchored on the measured GPU type nearest in its figures"
    )
    # Its capabilities are anchored_hw's: the same power law, per iteration, across hardware.

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
        """The prior's slopes for each precision of the points (nothing learned from them)."""
        self.check_params()
        prior = self._prior()
        learned_as = {p: LEARNED_AS[precision_name(p)] for p in frame["precision"].unique()}
        missing = sorted({as_ for as_ in learned_as.values() if as_ not in prior})
        if missing:
            raise ConfigError(
                f"prior_hw was given no slopes for {', '.join(missing)}; give them too, or "
                "none to use the shipped ones"
            )
        return {str(p): dict(prior[as_]) for p, as_ in learned_as.items()}

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
        return (
            "T = I * b * exp(a[c] + sum_k w_k[precision] f_k + r[c, nearest measured GPU]), "
            "w learned on a published table, f_k in " + ", ".join(SLOPES)
        )
