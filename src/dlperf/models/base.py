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


class ModelUnavailable(InsufficientData):
    """The model's software cannot run here (e.g. an optional package is not installed)."""


def iterations(frame: pd.DataFrame) -> np.ndarray:
    """I(p, b, d) = ceil(d / (p b)): iterations per worker per epoch."""
    data = frame["data_size"].to_numpy(float)
    global_batch = frame["procs"].to_numpy(float) * frame["batch_size"].to_numpy(float)
    return np.ceil(data / global_batch)


def iteration_seconds(frame: pd.DataFrame) -> np.ndarray:
    """Measured epoch time spread over the epoch's iterations (baselines model this)."""
    return frame[TARGET].to_numpy(float) / iterations(frame)


def positive_target(frame: pd.DataFrame, model: str) -> np.ndarray:
    target = frame[TARGET].to_numpy(float)
    if not np.all(np.isfinite(target)) or np.any(target <= 0):
        raise InsufficientData(f"{model} needs positive, finite epoch times")
    return target


def levels(frame: pd.DataFrame, column: str) -> int:
    return int(frame[column].nunique())


class PerformanceModel(ABC):
    name: ClassVar[str]
    description: ClassVar[str]
    min_points: ClassVar[int] = 2

    def check_enough(self, frame: pd.DataFrame) -> None:
        if len(frame) < self.min_points:
            raise InsufficientData(
                f"{self.name} needs at least {self.min_points} measured configurations, "
                f"got {len(frame)}"
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
