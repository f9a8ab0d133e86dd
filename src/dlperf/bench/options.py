"""What each framework's reference setup does, declared per framework: the switches behind
each precision, what ``compile: true`` turns on, whether CUDA graphs exist, and which memory
layout its convolutions run in on a GPU.

Standard library only: the configuration check (no framework installed) and the backends
(each reads its own entry) share these declarations, so a setting is refused before any run
exactly where the backend could not honour it, and the run record says which switch was set.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

#: Where a run's synthetic batches live: made once and kept on the worker's device (no copy
#: per step, as the published benchmarks' synthetic data), or kept in host memory and copied
#: to the device every step (a host-fed loader's copy, timed as data wait).
INPUTS = ("device", "host")

#: cuBLAS and cuDNN (CUDA 11 and later) read this at load time: "0" forbids TF32 in every
#: library of the process, whatever the framework's own switch says.
TF32_OVERRIDE = "NVIDIA_TF32_OVERRIDE"


def tf32_allowed(precision: str, device: str) -> bool:
    """Whether float32 matrix products and convolutions may run in TF32: never in ``fp32``
    (strict FP32 in every framework), and only on a GPU otherwise (``tf32``, and the float32
    parts of a mixed-precision step, as NVIDIA's reference containers run them)."""
    return precision != "fp32" and device == "cuda"


@dataclass(frozen=True)
class FrameworkOptions:
    """One framework's reference settings and optional features (docs/measurement.md)."""

    strict_fp32: str  # the framework's own switch that ``fp32`` sets
    compile: str  # what ``compile: true`` turns on
    compiled_always: bool = False  # the graph is compiled anyway (compile: true adds nothing)
    cuda_graphs: str | None = None  # what ``cuda_graphs: true`` turns on; None: not offered
    cnn_layout_cuda: str = "NCHW"  # the convolutional networks' layout on a GPU
    # Variables set in the worker's environment before the framework loads, per precision.
    precision_environment: Mapping[str, Mapping[str, str]] = field(
        default_factory=lambda: MappingProxyType({})
    )


def _override(precision_names: tuple[str, ...]) -> Mapping[str, Mapping[str, str]]:
    return MappingProxyType({p: MappingProxyType({TF32_OVERRIDE: "0"}) for p in precision_names})


OPTIONS: dict[str, FrameworkOptions] = {
    "pytorch": FrameworkOptions(
        strict_fp32="torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32, "
        "torch.set_float32_matmul_precision",
        compile="torch.compile",
        cuda_graphs='torch.compile(mode="reduce-overhead")',
        cnn_layout_cuda="NHWC (torch.channels_last)",
        precision_environment=_override(("fp32",)),
    ),
    "tensorflow": FrameworkOptions(
        strict_fp32="tf.config.experimental.enable_tensor_float_32_execution",
        compile="XLA (tf.function(jit_compile=True))",
        cnn_layout_cuda="NHWC (Keras channels_last, its default)",
        precision_environment=_override(("fp32",)),
    ),
    "mxnet": FrameworkOptions(
        strict_fp32=f"{TF32_OVERRIDE}=0 (MXNet 1.x has no switch of its own)",
        compile="hybridize(static_alloc=True, static_shape=True)",
        compiled_always=True,
        cnn_layout_cuda="NHWC (Gluon layout='NHWC', cuDNN kernels)",
        precision_environment=_override(("fp32",)),
    ),
}


def option_problems(
    framework: str, device: str, compile_graph: bool, cuda_graphs: bool, input_place: str
) -> list[str]:
    """Why a run cannot have these options (empty when it can)."""
    problems = []
    if input_place not in INPUTS:
        problems.append(f"input {input_place!r} is not one of {', '.join(INPUTS)}")
    options = OPTIONS.get(framework)
    if options is None or not cuda_graphs:
        return problems
    if options.cuda_graphs is None:
        offered = [name for name, o in OPTIONS.items() if o.cuda_graphs]
        problems.append(
            f"{framework} offers no CUDA graphs dlperf can use (only {', '.join(offered)} "
            "does); set cuda_graphs: false, or leave the framework out"
        )
    elif device != "cuda":
        problems.append("cuda_graphs needs device: cuda; set cuda_graphs: false on a CPU")
    elif not compile_graph:
        problems.append(
            f"cuda_graphs runs through {options.cuda_graphs}: set compile: true with it"
        )
    return problems


def precision_environment(framework: str, precision: str) -> dict[str, str]:
    """Variables a worker of ``framework`` gets for ``precision`` (before the library loads)."""
    return dict(OPTIONS[framework].precision_environment.get(precision, {}))
