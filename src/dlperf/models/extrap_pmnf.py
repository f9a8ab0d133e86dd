"""Extra-P (Calotoiu et al.): a PMNF model of per-iteration time, fitted by the `extrap` package.

The parameters that vary in the data (p, b) become an Extra-P Experiment; Extra-P's own
modeler searches the performance-model normal form
    t_iter = c0 + sum_k c_k prod_l x_l^i_kl log2(x_l)^j_kl
and the epoch time is I(p, b, d) * t_iter. The fitted function is stored with Extra-P's
own schema, so prediction re-creates it from the artifact and evaluates it.

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


class ExtraPModel(PerformanceModel):
    name = "extrap"
    description = "Extra-P PMNF of per-iteration time over the varying parameters (p, b), times I"
    min_points = 3
    capabilities = Capabilities(extrapolates_in=frozenset({"procs", "batch_size", "data_size"}))

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.parameters: list[str] = []
        self.function: dict = {}
        self.function_text = ""
        self._function = None

    def fit(self, frame: pd.DataFrame) -> ExtraPModel:
        self.check_enough(frame)
        xp = _extrap()
        self.parameters = [c for c in PARAMETERS if frame[c].nunique() >= 2]
        if not self.parameters:
            raise InsufficientData("extrap needs at least 2 levels of procs or batch_size")
        for column in self.parameters:
            if frame[column].nunique() < 3:
                raise InsufficientData(
                    f"extrap needs at least 3 levels of every varying parameter; {column} has "
                    f"{frame[column].nunique()}"
                )
        t = iteration_seconds(frame)
        experiment = xp["Experiment"]()
        for column in self.parameters:
            experiment.add_parameter(xp["Parameter"](column))
        callpath, metric = xp["Callpath"]("iteration"), xp["Metric"]("time")
        experiment.add_callpath(callpath)
        experiment.add_metric(metric)
        # Several points can share (p, b) (other d or n): Extra-P takes them as repetitions.
        keyed = frame[self.parameters].astype(float).assign(t=t)
        for key, group in keyed.groupby(self.parameters, sort=True):
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
        self._function = function
        self.function = xp["FunctionSchema"]().dump(function)
        self.function_text = function.to_string(*experiment.parameters)
        return self

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        if self._function is None:
            # Extra-P's schema deletes the type field from the dict it loads: give it a copy, so
            # the artifact entry can be loaded again (predict, then the band, of one artifact).
            self._function = _extrap()["FunctionSchema"]().load(copy.deepcopy(self.function))
        values = frame[self.parameters].to_numpy(float).T
        per_iter = self._function.evaluate(values[0] if len(self.parameters) == 1 else values)
        per_iter = np.broadcast_to(np.asarray(per_iter, float), (len(frame),))
        return iterations(frame) * per_iter

    def to_dict(self) -> dict:
        return {
            "model": self.name,
            "formula": f"T = ceil(d/(p*b)) * ({self.function_text})",
            "parameters": self.parameters,
            "function": self.function,
        }

    @classmethod
    def from_dict(cls, data: dict) -> ExtraPModel:
        model = cls()
        model.parameters = list(data["parameters"])
        model.function = data["function"]
        model.function_text = data["formula"]
        return model
