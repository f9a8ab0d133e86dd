"""The interface every performance model shares: fit on points, predict epoch time."""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd

from dlperf.errors import ConfigError, DlperfError
from dlperf.quoting import listing

# What a model sees of a measured configuration, and what it predicts.
FEATURES = ["nodes", "procs", "batch_size", "data_size"]
TARGET = "epoch_time_s"


class InsufficientData(DlperfError):
    """The data cannot support this model (too few points or levels)."""


class ModelUnavailable(DlperfError):
    """The model's software cannot run here (an optional package is not installed): not a
    matter of data, so it is never reported as "not enough data"; the message names the fix."""


def iterations(frame: pd.DataFrame) -> np.ndarray:
    """I(p, b, d) = ceil(d / (p b)): iterations per worker per epoch."""
    data = frame["data_size"].to_numpy(float)
    global_batch = frame["procs"].to_numpy(float) * frame["batch_size"].to_numpy(float)
    return np.ceil(data / global_batch)


def accumulation_steps(frame: pd.DataFrame) -> np.ndarray:
    """Micro-batches per optimizer step of each row (``grad_accum_steps``; 1 where absent): the
    gradient is exchanged once per step, so per iteration (micro-batch) a model's communication
    cost is divided by it."""
    if "grad_accum_steps" not in frame.columns:
        return np.ones(len(frame))
    values = pd.to_numeric(frame["grad_accum_steps"], errors="coerce").to_numpy(float)
    return np.where(np.isfinite(values) & (values >= 1), values, 1.0)


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


# Every configuration feature a model can have a trend in.
ALL_FEATURES = frozenset(FEATURES)
#: The trends of a model with no term in the node count (a per-iteration time in p and b).
NO_NODE_TREND = ALL_FEATURES - {"nodes"}


@dataclass(frozen=True)
class Capabilities:
    """What a model can do, declared on its class and read through :func:`capabilities_of`.

    Validation, the report, ``predict`` and ``plan`` ask these questions and never probe a model
    for attributes (scikit-learn's estimator tags are the pattern)."""

    # Its prediction depends on per-network features (param_count, flops_per_sample), so it can
    # predict a network it was not trained on.
    uses_network_features: bool = False
    # Fitted once over all networks of a framework (the artifact's ``all_networks``).
    across_networks: bool = False
    # Configuration features the model has a trend in, so it can extrapolate along them.
    extrapolates_in: frozenset[str] = ALL_FEATURES
    # Distinct levels of a feature the fit needs (e.g. {"procs": 2}).
    min_levels: dict[str, int] = field(default_factory=dict)
    # It says where the time goes: ``term_seconds(rows)`` gives each term's seconds.
    has_breakdown: bool = False
    # Its artifact entry (and each bootstrap refit's) lists the generic model's terms, each with
    # its state and scale, and its exponent: which constants the data identify can be told
    # (dlperf.models.identifiability).
    has_term_list: bool = False
    # Its communication terms are the cost model of the all-reduce that data-parallel training
    # runs (ring: bandwidth 2 (p-1)/p, latency 2 (p-1); tree: log2 p), not a shape picked to fit
    # the points (USL's contention, Ernest's regressors, selected features, a PMNF search).
    # Where the backtest cannot score a model, its form is all that speaks for it, and the
    # answer then trusts these forms only (docs/model.md, "The answer").
    collective_model: bool = False
    # Its epoch time is I(p, b, d) iterations times a per-iteration time (plus a fixed part), so
    # it predicts an epoch of more iterations than measured by construction; a model of epoch
    # time in d directly learns nothing of d where the data size never varied on its own.
    per_iteration: bool = False
    # It predicts a GPU type it was not fitted on, from the rows' ``gpu`` and ``precision`` and
    # the hardware catalogue (docs/hardware.md); its ``min_gpu_types`` says how many GPU types
    # it needs to fit.
    across_hardware: bool = False
    # How its time follows the GPU's figures: "roofline" (times over the peak rates that add
    # or overlap, so gains beyond the measured rates saturate) or "power_law" (log time linear
    # in the log figures, so they go on). Beyond what its backtest reached, the answer across
    # hardware weighs each form alike (docs/hardware.md).
    hardware_form: str = ""


#: The forms ``Capabilities.hardware_form`` names.
HARDWARE_FORMS = ("roofline", "power_law")


class PerformanceModel(ABC):
    """A performance model, in scikit-learn's estimator conventions.

    ``__init__`` stores its keyword parameters (hyper-parameters and ``seed``) under their own
    names and does nothing else, so :meth:`get_params` and :func:`clone` can rebuild an unfitted
    copy; ``fit`` returns ``self``. What the model can do is :attr:`capabilities`."""

    name: ClassVar[str]
    description: ClassVar[str]
    min_points: ClassVar[int] = 2
    capabilities: ClassVar[Capabilities] = Capabilities()

    def __init__(self, seed: int = 0) -> None:
        """A model whose only parameter is its seed (most baselines) inherits this."""
        self.seed = seed

    @classmethod
    def _param_names(cls) -> list[str]:
        signature = inspect.signature(cls.__init__)
        return [p.name for p in signature.parameters.values() if p.name != "self"]

    def check_params(self) -> None:
        """Raise ValueError naming a parameter this model cannot use (``make_model`` asks before
        any fit, ``fit`` again); by default every value is accepted."""
        return None

    def get_params(self) -> dict:
        """The constructor's parameters as this model holds them (read by name, as scikit-learn)."""
        return {name: getattr(self, name) for name in self._param_names()}

    def refit_params(self) -> dict:
        """Parameters for refitting this fitted model's structure on resampled data (bootstrap):
        a model whose fit chooses hyper-parameters (a penalty weight, a feature set) fixes them
        here so refits vary only the constants. By default, its own parameters."""
        return self.get_params()

    def check_enough(self, frame: pd.DataFrame) -> None:
        if len(frame) < self.min_points:
            raise InsufficientData(
                f"{self.name} needs at least {self.min_points} measured configurations, "
                f"got {len(frame)}"
            )

    @abstractmethod
    def fit(self, frame: pd.DataFrame) -> PerformanceModel:
        """Fit on rows with FEATURES and TARGET (seeded by the ``seed`` parameter); return self."""

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

    def _entry(self, **fitted) -> dict:
        """The artifact entry's frame: name, formula, the fitted ``fitted`` and the settings."""
        return {
            "model": self.name,
            "formula": self.formula(),
            **fitted,
            "settings": self.get_params(),
        }

    @classmethod
    def _unfitted(cls, data: dict) -> PerformanceModel:
        """The model an artifact entry was fitted as, before its fitted attributes are set."""
        return cls(**data.get("settings", {}))


class SelectingModel(PerformanceModel):
    """A model that chooses up to ``max_features`` of its ``candidates`` by forward selection. A
    fixed ``features`` list skips the selection, and refits keep the features a fit chose."""

    candidates: ClassVar[tuple[str, ...]]

    def chosen_features(self) -> list[str] | None:
        """The fixed feature list as the candidates name them (None: the fit selects)."""
        return None if self.features is None else list(self.features)

    def check_params(self) -> None:
        if int(self.max_features) < 1:
            raise ConfigError(
                f"{self.name}: max_features must be at least 1, got {self.max_features}; "
                f"set models: {self.name}: max_features: to 1 or more"
            )
        chosen = self.chosen_features()
        if chosen is not None and (not chosen or set(chosen) - set(self.candidates)):
            raise ConfigError(
                f"{self.name}: features must be a non-empty list of "
                f"{', '.join(self.candidates)}; got {listing(chosen)}"
            )

    def refit_params(self) -> dict:
        """Refits keep the features this fit selected, in their order."""
        return {**self.get_params(), "features": list(self.selected_)}


def capabilities_of(model: PerformanceModel | type[PerformanceModel]) -> Capabilities:
    """The one way to ask what a model (or model class) can do."""
    cls = model if isinstance(model, type) else type(model)
    return cls.capabilities


def clone(model: PerformanceModel, **overrides) -> PerformanceModel:
    """An unfitted copy with the same parameters (some replaced by ``overrides``)."""
    params = {**model.get_params(), **overrides}
    return type(model)(**params)
