"""Performance models behind one interface, and the registry that names them."""

from __future__ import annotations

from .base import FEATURES, TARGET, InsufficientData, PerformanceModel
from .generic import GenericModel

MODELS: dict[str, type[PerformanceModel]] = {
    GenericModel.name: GenericModel,
}


def make_model(name: str, settings: dict | None = None) -> PerformanceModel:
    try:
        cls = MODELS[name]
    except KeyError:
        raise ValueError(
            f"unknown performance model {name!r}; choose from {', '.join(MODELS)}"
        ) from None
    return cls(**(settings or {}))


def model_from_dict(data: dict) -> PerformanceModel:
    return MODELS[data["model"]].from_dict(data)


__all__ = [
    "FEATURES",
    "MODELS",
    "TARGET",
    "InsufficientData",
    "PerformanceModel",
    "make_model",
    "model_from_dict",
]
