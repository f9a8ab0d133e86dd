"""Which module drives which framework. Imported lazily: a worker loads only its own."""

from __future__ import annotations

import importlib

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
