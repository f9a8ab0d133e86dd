"""How far a question to the answer across hardware lies beyond what was measured: the reach of
a GPU's datasheet figures outside those of the GPU types measured, the largest reach the
backtest asked, and the workers and nodes measured (docs/hardware.md, "Beyond what the backtest
asked" and "Beyond the workers measured")."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .hardware_features import hardware_frame, leave_one_gpu_out


def hardware_range(frame: pd.DataFrame, hardware: str | None) -> dict[str, list[float]]:
    """Least and most of each hardware figure over the GPU types measured."""
    seen = hardware_frame(frame, hardware)
    return {c: [float(seen[c].min()), float(seen[c].max())] for c in seen.columns}


def reach(measured: dict[str, list[float]], rows: pd.DataFrame, hardware: str | None) -> np.ndarray:
    """Per row: the largest factor by which its GPU's peak rates, memory or link bandwidth lie
    outside the range of the GPU types measured (1: within it)."""
    asked = hardware_frame(rows, hardware)
    low = np.array([measured[c][0] for c in asked.columns])
    high = np.array([measured[c][1] for c in asked.columns])
    factors = np.maximum(asked.to_numpy() / high, low / asked.to_numpy())
    return np.maximum(factors.max(axis=1), 1.0)


def backtested_reach(frame: pd.DataFrame, hardware: str | None) -> float:
    """The largest reach (:func:`reach`) of a GPU type held out by the backtest, beyond the
    GPU types it was predicted from."""
    return max(
        float(reach(hardware_range(frame.iloc[train], hardware), frame.iloc[test], hardware).max())
        for train, test in leave_one_gpu_out(frame)
    )


def workers_measured(frame: pd.DataFrame) -> dict[str, list[int]]:
    """The least and most workers and nodes measured: beyond them the interval from the
    backtest widens
    (:func:`dlperf.models.hardware_answer.answer_at`)."""
    return {c: [int(frame[c].min()), int(frame[c].max())] for c in ("procs", "nodes")}
