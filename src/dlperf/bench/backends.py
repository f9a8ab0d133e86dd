"""Which module drives which framework. Imported lazily: a worker loads only its own.
The driver (no framework installed) reads the framework's launch needs from here too."""

from __future__ import annotations

import importlib

from .mx_service import DMLC_VARIABLES, ParameterServer
from .processes import ServiceLayout

BACKENDS = {
    "pytorch": "dlperf.bench.torch_backend:TorchBackend",
    "tensorflow": "dlperf.bench.tf_backend:TensorFlowBackend",
    "mxnet": "dlperf.bench.mx_backend:MXNetBackend",
}


def load_backend(framework: str) -> type:
    try:
        target = BACKENDS[framework]
    except KeyError:
        raise ValueError(
            f"no benchmark backend for framework {framework!r}; available: {', '.join(BACKENDS)}"
        ) from None
    module_name, class_name = target.split(":")
    return getattr(importlib.import_module(module_name), class_name)


#: Helper processes a framework runs beside its workers (started by the driver).
SERVICE_LAYOUTS: dict[str, ServiceLayout] = {"mxnet": ParameterServer()}

#: Every framework's cluster-description variables: set per process by the launcher or the
#: worker itself, never inherited from the caller's environment.
CLUSTER_VARIABLES = ("TF_CONFIG", *DMLC_VARIABLES)


def service_layout(framework: str) -> ServiceLayout | None:
    """The helper processes of a distributed run of ``framework``, or None."""
    return SERVICE_LAYOUTS.get(framework)
