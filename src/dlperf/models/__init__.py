"""Performance models behind one interface, and the registry that names them.

``MODELS`` is the one list of models: the config schema's ``models`` section names the same
(a test holds them equal; the schema stays plain YAML, read by the Snakefile without importing
the models). The models fitted by default are the schema's default ``models`` section."""

from __future__ import annotations

from dlperf.errors import ConfigError, UnknownName

from .anchored_hw import AnchoredHardwareModel
from .base import (
    FEATURES,
    TARGET,
    Capabilities,
    InsufficientData,
    ModelUnavailable,
    PerformanceModel,
    capabilities_of,
    clone,
)
from .castello import CastelloModel
from .ernest import ErnestModel
from .extrap_pmnf import ExtraPModel
from .generic import GenericAcrossNetworks, GenericModel
from .generic_hw import GenericHardwareModel
from .lattuada_hw import LattuadaHardwareModel, PowerLawHardwareModel
from .linreg_sfs import LinregSFSModel
from .loglin import LogLinearModel
from .prior_hw import PriorHardwareModel
from .usl import USLModel

MODELS: dict[str, type[PerformanceModel]] = {
    cls.name: cls
    for cls in (
        GenericModel,
        USLModel,
        ErnestModel,
        ExtraPModel,
        LinregSFSModel,
        CastelloModel,
        LogLinearModel,
        GenericAcrossNetworks,
        LattuadaHardwareModel,
        PowerLawHardwareModel,
        GenericHardwareModel,
        AnchoredHardwareModel,
        PriorHardwareModel,
    )
}


def make_model(
    name: str, settings: dict | None = None, seed: int | None = None
) -> PerformanceModel:
    """An unfitted model by registry name, with its settings (and the seed, when given)."""
    try:
        cls = MODELS[name]
    except KeyError:
        raise UnknownName(
            f"unknown performance model {name!r}; choose from {', '.join(MODELS)}"
        ) from None
    params = dict(settings or {})
    if seed is not None:
        params["seed"] = seed
    try:
        model = cls(**params)
    except TypeError as exc:
        raise ConfigError(f"bad settings for performance model {name!r}: {exc}") from None
    # A value the model cannot use is refused here, before any fit (as the constructor did).
    model.check_params()
    return model


def model_from_dict(data: dict) -> PerformanceModel:
    return MODELS[data["model"]].from_dict(data)


__all__ = [
    "Capabilities",
    "FEATURES",
    "MODELS",
    "TARGET",
    "capabilities_of",
    "clone",
    "InsufficientData",
    "ModelUnavailable",
    "PerformanceModel",
    "make_model",
    "model_from_dict",
]
