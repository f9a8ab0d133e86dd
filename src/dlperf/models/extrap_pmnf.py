"""Extra-P (Calotoiu et al.): a PMNF model of per-iteration time, fitted by the `extrap` package.

The parameters that vary in the data (p, b) become an Extra-P Experiment; Extra-P's own
modeler searches the performance-model normal form
    t_iter = c0 + sum_k c_k prod_l x_l^i_kl log2(x_l)^j_kl
and the epoch time is I(p, b, d) * t_iter. The fitted function is stored with Extra-P's
own schema, so prediction re-creates it from the artifact and evaluates it.

Each node count gets its own function, fitted on that node count's points only: taking points
that differ only in nodes as repetitions of one coordinate would average the inter-node cost
away, and the node counts of a sweep (1, 2, 4) are too few levels for a PMNF term in n. A node
count the fit did not see is predicted by the nearest fitted one's function: like the models
without a node term, extrap has no trend in n (docs/model.md, "extrap").

`extrap` pins numpy<2 in its metadata but runs on NumPy 2; it is installed with
`pip install --no-deps extrap` (see docs/model.md). Without it this model reports
`unavailable` with that instruction instead of failing.
"""

from __future__ import annotations

import contextlib
import copy
import io
import warnings

import numpy as np
import pandas as pd

from .base import (
    NO_NODE_TREND,
    Capabilities,
    InsufficientData,
    ModelUnavailable,
    PerformanceModel,
    iteration_seconds,
    iterations,
)

PARAMETERS = ("procs", "batch_size")
INSTALL_HINT = "install it with: pip install --no-deps 'extrap==4.2.5' (it runs on NumPy 2)"


def _extrap():
    try:
        with warnings.catch_warnings():
            # Extra-P 4.2 uses marshmallow features that warn about marshmallow 4; not ours.
            warnings.simplefilter("ignore")
            from extrap.entities.callpath import Callpath
            from extrap.entities.coordinate import Coordinate
            from extrap.entities.experiment import Experiment
            from extrap.entities.functions import FunctionSchema
            from extrap.entities.measurement import Measurement
            from extrap.entities.metric import Metric
            from extrap.entities.parameter import Parameter
            from extrap.fileio.io_helper import create_call_tree
            from extrap.modelers.model_generator import ModelGenerator
    except ImportError as exc:
        raise ModelUnavailable(
            f"Extra-P (package `extrap`) cannot be imported: {exc}; {INSTALL_HINT}"
        ) from None
    return {
        "Callpath": Callpath,
        "Coordinate": Coordinate,
        "Experiment": Experiment,
        "FunctionSchema": FunctionSchema,
        "Measurement": Measurement,
        "Metric": Metric,
        "Parameter": Parameter,
        "create_call_tree": create_call_tree,
        "ModelGenerator": ModelGenerator,
    }


def _fit_function(xp: dict, frame: pd.DataFrame, nodes: int) -> tuple[list[str], object, str]:
    """Extra-P's PMNF over the varying parameters of one node count's points:
    (parameters, function, its text)."""
    parameters = [c for c in PARAMETERS if frame[c].nunique() >= 2]
    if not parameters:
        raise InsufficientData(
            f"extrap fits each node count apart and needs at least 2 levels of procs or "
            f"batch_size on each; nodes={nodes} has one configuration"
        )
    for column in parameters:
        if frame[column].nunique() < 3:
            raise InsufficientData(
                f"extrap needs at least 3 levels of every varying parameter on each node count "
                f"(it fits each apart); on nodes={nodes} {column} has {frame[column].nunique()}"
            )
    t = iteration_seconds(frame)
    experiment = xp["Experiment"]()
    for column in parameters:
        experiment.add_parameter(xp["Parameter"](column))
    callpath, metric = xp["Callpath"]("iteration"), xp["Metric"]("time")
    experiment.add_callpath(callpath)
    experiment.add_metric(metric)
    # Points that share (p, b) on this node count (other d, repetitions) are repetitions.
    keyed = frame[parameters].astype(float).assign(t=t)
    for key, group in keyed.groupby(parameters, sort=True):
        coordinate = xp["Coordinate"](*np.atleast_1d(key))
        experiment.add_coordinate(coordinate)
        experiment.add_measurement(
            xp["Measurement"](coordinate, callpath, metric, group["t"].tolist())
        )
    experiment.call_tree = xp["create_call_tree"](experiment.callpaths)
    with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        generator = xp["ModelGenerator"](experiment)
        generator.model_all()
    function = generator.models[(callpath, metric)].hypothesis.function
    return parameters, function, function.to_string(*experiment.parameters)


class ExtraPModel(PerformanceModel):
    """Fitted attribute ``functions_``: per node count, its parameters, Extra-P function (in
    Extra-P's schema) and formula."""

    name = "extrap"
    description = (
        "Extra-P PMNF of per-iteration time over the varying parameters (p, b), times I, "
        "one function per node count"
    )
    min_points = 3
    # No trend in the node count: each node count has its own function.
    capabilities = Capabilities(extrapolates_in=NO_NODE_TREND, per_iteration=True)

    def fit(self, frame: pd.DataFrame) -> ExtraPModel:
        self.check_enough(frame)
        xp = _extrap()
        self.functions_: dict[int, dict] = {}
        self._loaded = {}
        for nodes, group in frame.groupby("nodes", sort=True):
            parameters, function, text = _fit_function(xp, group, int(nodes))
            self._loaded[int(nodes)] = function
            self.functions_[int(nodes)] = {
                "parameters": parameters,
                "function": xp["FunctionSchema"]().dump(function),
                "formula": text,
            }
        return self

    def _function(self, nodes: int):
        if nodes not in self._loaded:
            # Extra-P's schema deletes the type field from the dict it loads: give it a copy, so
            # the artifact entry can be loaded again (predict, then the band, of one artifact).
            self._loaded[nodes] = _extrap()["FunctionSchema"]().load(
                copy.deepcopy(self.functions_[nodes]["function"])
            )
        return self._loaded[nodes]

    def _fitted_nodes(self, nodes: np.ndarray) -> np.ndarray:
        """The fitted node count whose function predicts each row: its own where it was fitted,
        else the nearest (the smaller on a tie). Extra-P has no trend in n here, so, like the
        models without a node term, it carries the nearest measured node count over."""
        fitted = np.array(sorted(self.functions_))
        nearest = fitted[np.argmin(np.abs(nodes[:, None] - fitted[None, :]), axis=1)]
        return nearest

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        nodes = self._fitted_nodes(frame["nodes"].to_numpy(int))
        per_iter = np.empty(len(frame))
        for count in np.unique(nodes):
            rows = nodes == count
            parameters = self.functions_[int(count)]["parameters"]
            values = frame.loc[rows, parameters].to_numpy(float).T
            value = self._function(int(count)).evaluate(
                values[0] if len(parameters) == 1 else values
            )
            per_iter[rows] = np.broadcast_to(np.asarray(value, float), (int(rows.sum()),))
        return iterations(frame) * per_iter

    def formula(self) -> str:
        texts = {n: f["formula"] for n, f in self.functions_.items()}
        if len(texts) == 1:
            return f"T = ceil(d/(p*b)) * ({next(iter(texts.values()))})"
        per_node = "; ".join(f"n={n}: {text}" for n, text in texts.items())
        return (
            f"T = ceil(d/(p*b)) * t_n(p, b), one function per node count (other n: the "
            f"nearest): {per_node}"
        )

    def to_dict(self) -> dict:
        return self._entry(functions=[{"nodes": n, **f} for n, f in self.functions_.items()])

    @classmethod
    def from_dict(cls, data: dict) -> ExtraPModel:
        model = cls._unfitted(data)
        model.functions_ = {
            int(f["nodes"]): {
                "parameters": list(f["parameters"]),
                "function": f["function"],
                "formula": f["formula"],
            }
            for f in data["functions"]
        }
        model._loaded = {}
        return model
