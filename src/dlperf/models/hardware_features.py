"""What the models across hardware see of a GPU: each row's peak rates for its precision, memory
bandwidth and link bandwidth, read from the catalogue by the row's ``gpu`` and ``precision``;
and the settings and check those models share."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pandas as pd

from dlperf.hardware import load, rates

from .base import InsufficientData, PerformanceModel

HARDWARE_COLUMNS = ("gpu", "precision")


def check_hardware_columns(frame: pd.DataFrame, model: str, min_gpus: int) -> None:
    """InsufficientData unless the rows name their GPU and precision and hold ``min_gpus``
    GPU types."""
    missing = [c for c in HARDWARE_COLUMNS if c not in frame.columns]
    if missing:
        raise InsufficientData(
            f"{model} needs the columns {', '.join(missing)} (docs/hardware.md): "
            "timings that name each row's GPU and precision"
        )
    if frame["gpu"].nunique() < min_gpus:
        raise InsufficientData(
            f"{model} learns hardware from {min_gpus} or more GPU types, got "
            f"{frame['gpu'].nunique()}; measure on another GPU type"
        )


def hardware_frame(frame: pd.DataFrame, hardware: str | None = None) -> pd.DataFrame:
    """Per row: matrix and vector peak TFLOP/s for its precision, memory TB/s and link GB/s.
    ``hardware`` is a user's catalogue file (None: the shipped catalogue)."""
    catalogue = load(hardware)
    table = {}
    for gpu_name, precision in set(zip(frame["gpu"], frame["precision"], strict=True)):
        gpu = catalogue.match(gpu_name)
        matrix, vector = rates(gpu, precision)
        table[gpu_name, precision] = (
            matrix,
            vector,
            gpu.memory_bandwidth_gbs / 1000.0,
            gpu.link_bandwidth_gbs,
        )
    values = np.array([table[key] for key in zip(frame["gpu"], frame["precision"], strict=True)])
    return pd.DataFrame(
        values.reshape(len(frame), 4),
        columns=["matrix_tflops", "vector_tflops", "memory_tbs", "link_gbs"],
        index=frame.index,
    )


def gpu_types(frame: pd.DataFrame) -> list[str]:
    return sorted(frame["gpu"].unique())


def leave_one_gpu_out(frame: pd.DataFrame) -> list[tuple[np.ndarray, np.ndarray]]:
    """(train, test) row positions, each GPU type held out once."""
    gpus = frame["gpu"].to_numpy()
    return [(np.flatnonzero(gpus != g), np.flatnonzero(gpus == g)) for g in gpu_types(frame)]


class HardwareModel(PerformanceModel):
    """A model fitted across GPU types: the catalogue it reads their figures from, and points
    that name ``min_gpu_types`` GPU types or more."""

    min_points = 4
    # GPU types the points must name: two to learn how the time follows the figures.
    min_gpu_types: ClassVar[int] = 2

    def __init__(self, hardware: str | None = None, seed: int = 0) -> None:
        # A user's catalogue file (docs/hardware.md); None: the shipped catalogue.
        self.hardware = hardware
        self.seed = seed

    def check_points(self, frame: pd.DataFrame) -> None:
        """InsufficientData unless the points are enough and name ``min_gpu_types`` GPU
        types or more."""
        self.check_enough(frame)
        check_hardware_columns(frame, self.name, min_gpus=self.min_gpu_types)
