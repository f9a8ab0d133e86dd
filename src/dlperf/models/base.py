"""The interface every performance model shares: fit on points, predict epoch time."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

import numpy as np
import pandas as pd

# What a model sees of a measured configuration, and what it predicts.
FEATURES = ["nodes", "procs", "batch_size", "data_size"]
TARGET = "epoch_time_s"


class InsufficientData(ValueError):
    """The data cannot support this model (too few points or levels)."""


def iterations(frame: pd.DataFrame) -> np.ndarray:
    """I(p, b, d) = ceil(d / (p b)): iterations per worker per epoch."""
    return np.ceil(frame["data_size"].to_numpy(float) / (frame["procs"].to_numpy(float) * frame["batch_size"].to_numpy(float)))


class PerformanceModel(ABC):
    name: ClassVar[str]
    description: ClassVar[str]
    min_points: ClassVar[int] = 2

    def check_enough(self, frame: pd.DataFrame) -> None:
        if len(frame) < self.min_points:
            raise InsufficientData(
                f"{self.name} needs at least {self.min_points} measured configurations, got {len(frame)}"
            )

    @abstractmethod
    def fit(self, frame: pd.DataFrame, seed: int = 0) -> PerformanceModel:
        """Fit on rows with FEATURES and TARGET; return self."""

    @abstractmethod
    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        """Predicted epoch time in seconds for rows with FEATURES."""

    @abstractmethod
    def to_dict(self) -> dict:
        """Everything needed to predict again: the artifact's entry for this model."""

    @classmethod
    @abstractmethod
    def from_dict(cls, data: dict) -> PerformanceModel: ...

    def formula(self) -> str:
        return self.description
