"""The model contract as one check every registered model passes, as scikit-learn's
``check_estimator``: code that knows nothing about a model (validation, the bootstrap, the
report) can rely on what is checked here.

:func:`check_model` fits the model on points it makes from a known epoch-time law and asserts,
naming the first broken promise:

- its declaration: a name, a description, ``min_points`` and :class:`Capabilities` that name
  only configuration features;
- ``__init__`` stores every parameter under its own name, unchanged (the very object given) and
  nothing else, so :meth:`get_params` and :func:`clone` rebuild an unfitted, equal copy;
- ``fit`` returns ``self``, leaves the parameters as they were and refuses fewer than
  ``min_points`` points with :class:`InsufficientData`;
- ``predict`` gives one finite, positive epoch time per row, again after the artifact round
  trip (``to_dict``, canonical JSON, ``from_dict``);
- refits from ``refit_params`` fit, and the bootstrap interval has one (lo, hi) per row with
  lo <= prediction <= hi;
- what the capabilities declare holds (a breakdown that sums to the prediction, no change of
  the prediction along a feature it has no trend in, network features used where declared),
  read through :func:`capabilities_of` only.
"""

from __future__ import annotations

import inspect
import itertools
import json

import numpy as np
import pandas as pd

from dlperf.io import dumps_json

from . import model_from_dict
from .base import (
    ALL_FEATURES,
    FEATURES,
    HARDWARE_FORMS,
    TARGET,
    Capabilities,
    InsufficientData,
    PerformanceModel,
    capabilities_of,
    clone,
)
from .intervals import DEFAULT_LEVEL, bootstrap_interval, interval

# The law the check's points follow: a fixed part plus iterations x (overhead, compute in b^0.9,
# a ring all-reduce in p), with each network's FLOPs and parameters scaling its terms.
NETWORKS = {"net_a": (1.0e6, 5.0e4), "net_b": (4.0e6, 2.0e5)}  # flops_per_sample, param_count
PROCS, BATCHES, DATA_SIZES = (1, 2, 4, 8), (8, 16, 32, 64), (2048, 8192)
# For a model across hardware: GPU types (catalogue names) and how much faster each computes and
# exchanges than the first, at mixed precision.
GPUS = {"V100-SXM2-16GB": (1.0, 1.0), "A100-SXM4-80GB": (2.5, 2.0), "H100-SXM5-80GB": (7.9, 3.0)}


def conformance_points(model_class: type[PerformanceModel], seed: int = 0) -> pd.DataFrame:
    """Measured points for ``model_class``: one network, or two where it fits across networks,
    on one GPU type, or three where it fits across hardware (its capabilities say which), with
    1 % log-normal noise."""
    capabilities = capabilities_of(model_class)
    networks = list(NETWORKS) if capabilities.across_networks else ["net_a"]
    gpus = list(GPUS) if capabilities.across_hardware else list(GPUS)[:1]
    rng = np.random.default_rng(seed)
    rows = []
    for gpu, network, p, b, d in itertools.product(gpus, networks, PROCS, BATCHES, DATA_SIZES):
        flops, params = NETWORKS[network]
        compute, link = GPUS[gpu]
        t_iter = 2e-3 + 1e-10 * flops * b**0.9 / compute + 2e-7 * params * (p - 1) / p / link
        epoch = 0.2 + np.ceil(d / (p * b)) * t_iter
        rows.append(
            {
                "network": network,
                "gpu": gpu,
                "precision": "amp_fp16",
                "nodes": 1,
                "procs": p,
                "batch_size": b,
                "data_size": d,
                "flops_per_sample": flops,
                "param_count": params,
                TARGET: epoch * rng.lognormal(0.0, 0.01),
            }
        )
    return pd.DataFrame(rows)


def check_model(model_class: type[PerformanceModel], refits: int = 8) -> None:
    """Assert that ``model_class`` keeps the model contract (module docstring); an
    AssertionError names the first promise it breaks. A model whose package is missing raises
    :class:`~dlperf.models.ModelUnavailable` from its fit."""
    check_declaration(model_class)
    check_parameters_stored(model_class)
    points = conformance_points(model_class)
    model = check_fit(model_class, points)
    check_clone(model)
    check_predict(model, points)
    check_artifact_round_trip(model, points)
    check_refits_and_interval(model, points, refits)
    check_capabilities(model, points)


def check_declaration(model_class: type[PerformanceModel]) -> None:
    name = model_class.__name__
    assert isinstance(model_class.name, str) and model_class.name, f"{name}: no name"
    assert isinstance(model_class.description, str) and model_class.description, (
        f"{name}: no description"
    )
    assert isinstance(model_class.min_points, int) and model_class.min_points >= 1, (
        f"{name}: min_points must be a positive int"
    )
    capabilities = capabilities_of(model_class)
    assert type(capabilities) is Capabilities, f"{name}: capabilities is not a Capabilities"
    assert capabilities.extrapolates_in <= ALL_FEATURES, (
        f"{name}: extrapolates_in names {set(capabilities.extrapolates_in) - ALL_FEATURES}, "
        f"not configuration features ({', '.join(FEATURES)})"
    )
    assert set(capabilities.min_levels) <= ALL_FEATURES, f"{name}: min_levels of non-features"
    assert not capabilities.across_networks or capabilities.uses_network_features, (
        f"{name}: fitted across networks without network features"
    )
    assert (capabilities.hardware_form in HARDWARE_FORMS) == capabilities.across_hardware, (
        f"{name}: a model across hardware declares its hardware_form, one of "
        f"{', '.join(HARDWARE_FORMS)}; a model of one GPU type declares none"
    )


def _fresh(value):
    """An equal value that is a new object where Python allows it (containers)."""
    if isinstance(value, list | tuple | dict):
        return type(value)(list(value) if not isinstance(value, dict) else value)
    return value


def check_parameters_stored(model_class: type[PerformanceModel]) -> None:
    """``__init__`` stores each parameter as given, under its name, and sets nothing else."""
    signature = inspect.signature(model_class.__init__)
    defaults = {p.name: p.default for p in signature.parameters.values() if p.name != "self"}
    assert all(v is not inspect.Parameter.empty for v in defaults.values()), (
        f"{model_class.__name__}: every parameter needs a default (an unfitted model is built "
        "from its settings alone)"
    )
    given = {k: 7 if k == "seed" else _fresh(v) for k, v in defaults.items()}
    model = model_class(**given)
    assert set(vars(model)) == set(given), (
        f"{model_class.__name__}.__init__ sets {sorted(set(vars(model)) - set(given))} beside "
        "its parameters (set fitted attributes in fit)"
    )
    held = model.get_params()
    for key, value in given.items():
        assert held[key] is value, (
            f"{model_class.__name__}.__init__ changed parameter {key!r} ({value!r} stored as "
            f"{held[key]!r}): store it unchanged and convert where it is used"
        )


def _fitted_attributes(model: PerformanceModel) -> list[str]:
    return sorted(k for k in vars(model) if k.endswith("_") and not k.startswith("_"))


def check_fit(model_class: type[PerformanceModel], points: pd.DataFrame) -> PerformanceModel:
    name = model_class.__name__
    model = model_class(seed=0)
    model.check_params()
    too_few = points.iloc[: model_class.min_points - 1]
    try:
        model_class(seed=0).fit(too_few)
    except InsufficientData:
        pass
    else:
        raise AssertionError(f"{name}: fitted {len(too_few)} points, below its min_points")
    before = model.get_params()
    fitted = model.fit(points)
    assert fitted is model, f"{name}.fit does not return self"
    after = model.get_params()
    assert all(after[k] is before[k] for k in before), f"{name}.fit changed its parameters"
    assert _fitted_attributes(model), f"{name}.fit sets no fitted attribute (name_)"
    return model


def check_clone(model: PerformanceModel) -> None:
    name = type(model).__name__
    copy = clone(model)
    assert type(copy) is type(model) and copy is not model, f"{name}: clone is not a new model"
    params, copied = model.get_params(), copy.get_params()
    assert all(copied[k] is params[k] for k in params), f"{name}: clone changed a parameter"
    assert not _fitted_attributes(copy), f"{name}: clone is fitted ({_fitted_attributes(copy)})"
    assert clone(model, seed=3).get_params()["seed"] == 3, f"{name}: clone ignores overrides"


def _prediction(model: PerformanceModel, rows: pd.DataFrame, what: str) -> np.ndarray:
    predicted = np.asarray(model.predict(rows), dtype=float)
    name = type(model).__name__
    assert predicted.shape == (len(rows),), f"{name}: {what} has shape {predicted.shape}"
    assert np.all(np.isfinite(predicted) & (predicted > 0)), f"{name}: {what} not positive"
    return predicted


def check_predict(model: PerformanceModel, points: pd.DataFrame) -> None:
    _prediction(model, points, "prediction at the training points")
    # Rows to predict carry no measurement; a single row is a frame too.
    rows = points.drop(columns=[TARGET])
    _prediction(model, rows.iloc[:1], "prediction of one row")
    shuffled = rows.sample(frac=1.0, random_state=0)
    assert np.allclose(
        _prediction(model, shuffled, "prediction"), model.predict(rows)[shuffled.index]
    ), f"{type(model).__name__}: a row's prediction depends on the other rows"


def check_artifact_round_trip(model: PerformanceModel, points: pd.DataFrame) -> None:
    name = type(model).__name__
    entry = json.loads(dumps_json(model.to_dict()))
    assert entry["model"] == model.name, f"{name}: to_dict names {entry['model']!r}"
    assert isinstance(entry.get("formula"), str), f"{name}: to_dict has no formula"
    loaded = model_from_dict(entry)
    assert type(loaded) is type(model), f"{name}: from_dict builds {type(loaded).__name__}"
    assert np.allclose(loaded.predict(points), model.predict(points), rtol=1e-9), (
        f"{name}: the artifact entry predicts otherwise than the fitted model"
    )


def check_refits_and_interval(model: PerformanceModel, points: pd.DataFrame, refits: int) -> None:
    name = type(model).__name__
    refit = type(model)(**model.refit_params()).fit(points)
    _prediction(refit, points, "a refit's prediction")
    stored = bootstrap_interval(model, points, seed=0, refits=refits)
    bounds = interval(stored, points, DEFAULT_LEVEL, seed=0)
    assert bounds is not None, f"{name}: no bootstrap refit could be fitted"
    lo, hi = bounds
    predicted = model.predict(points)
    assert lo.shape == hi.shape == (len(points),), f"{name}: interval shapes {lo.shape}"
    assert np.all(lo <= predicted) and np.all(predicted <= hi), (
        f"{name}: the {DEFAULT_LEVEL:.0%} interval does not hold the prediction at "
        f"{int(np.sum((lo > predicted) | (predicted > hi)))} of {len(points)} rows"
    )


def check_capabilities(model: PerformanceModel, points: pd.DataFrame) -> None:
    name = type(model).__name__
    capabilities = capabilities_of(model)
    if capabilities.has_breakdown:
        seconds = model.term_seconds(points)
        assert isinstance(seconds, pd.DataFrame) and len(seconds) == len(points), (
            f"{name}: term_seconds is not one row per point"
        )
        assert np.allclose(seconds.sum(axis=1), model.predict(points)), (
            f"{name}: its breakdown does not add up to the prediction"
        )
    for feature in sorted(ALL_FEATURES - capabilities.extrapolates_in):
        # No trend declared in it: the prediction must not move with it.
        other = points.assign(**{feature: points[feature] * 2})
        assert np.allclose(model.predict(other), model.predict(points)), (
            f"{name}: declares no trend in {feature} but its prediction changes with it"
        )
    if capabilities.uses_network_features:
        # The law scales with the network's features: a model that uses them tells apart two
        # networks that share every configuration.
        other = points.assign(flops_per_sample=points["flops_per_sample"] * 4)
        assert not np.allclose(model.predict(other), model.predict(points)), (
            f"{name}: declares network features but ignores flops_per_sample"
        )
