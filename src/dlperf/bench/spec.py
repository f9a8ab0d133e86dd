"""What one benchmark run is: its configuration and the networks it can train.

Standard library only: the analysis side reads the networks' parameter counts
and FLOPs from here (see :mod:`dlperf.bench.archs`) without importing a framework.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

FRAMEWORKS = ("pytorch", "tensorflow", "mxnet")
DEVICES = ("cpu", "cuda")
DATASETS = ("synthetic", "digits")

# Every network sees CIFAR-sized input (3x32x32) and predicts 10 classes, so the
# same synthetic data feeds all of them in every framework.
INPUT_SHAPE = (3, 32, 32)
NUM_CLASSES = 10


@dataclass(frozen=True)
class NetworkSpec:
    name: str
    description: str


NETWORKS: dict[str, NetworkSpec] = {
    "mlp": NetworkSpec("mlp", "MLP 3072-512-256-10, ReLU"),
    "lenet": NetworkSpec(
        "lenet",
        "LeNet-style CNN: conv3x3(3->32)+ReLU+maxpool, conv3x3(32->64)+ReLU+maxpool, "
        "FC(4096->256)+ReLU, FC(256->10)",
    ),
    "resnet18": NetworkSpec(
        "resnet18",
        "CIFAR ResNet-18: conv3x3(3->64)+BN+ReLU stem, 4 stages of 2 BasicBlocks "
        "(64-128-256-512, stride 1-2-2-2, 1x1 conv+BN projection shortcuts), "
        "global average pool, FC(512->10)",
    ),
    "resnet50": NetworkSpec(
        "resnet50",
        "CIFAR ResNet-50: conv3x3(3->64)+BN+ReLU stem, Bottleneck blocks 3-4-6-3 "
        "(widths 64-128-256-512, expansion 4, stride on the 3x3 conv), "
        "global average pool, FC(2048->10)",
    ),
}


@dataclass(frozen=True)
class RunConfig:
    """One benchmark job: one point of the sweep, one repetition."""

    framework: str
    network: str
    device: str
    nodes: int
    procs: int
    batch_size: int
    data_size: int
    rep: int
    warmup_iters: int = 5
    threads_per_proc: int = 0  # 0: share the cores this job was given evenly between workers
    dataset: str = "synthetic"
    seed: int = 0
    timeout_s: float = 600.0

    def __post_init__(self) -> None:
        problems = []
        if self.framework not in FRAMEWORKS:
            problems.append(f"framework {self.framework!r} is not one of {', '.join(FRAMEWORKS)}")
        if self.network not in NETWORKS:
            problems.append(f"network {self.network!r} is not one of {', '.join(NETWORKS)}")
        if self.device not in DEVICES:
            problems.append(f"device {self.device!r} is not one of {', '.join(DEVICES)}")
        if self.dataset not in DATASETS:
            problems.append(f"dataset {self.dataset!r} is not one of {', '.join(DATASETS)}")
        for name in ("nodes", "procs", "batch_size", "data_size"):
            if getattr(self, name) < 1:
                problems.append(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.warmup_iters < 0:
            problems.append(f"warmup_iters must be >= 0, got {self.warmup_iters}")
        if self.nodes >= 1 and self.procs >= 1 and self.procs % self.nodes:
            problems.append(
                f"procs ({self.procs}) must be a multiple of nodes ({self.nodes}): "
                "every node runs the same number of workers"
            )
        if problems:
            raise ValueError("invalid benchmark configuration: " + "; ".join(problems))

    @property
    def global_batch(self) -> int:
        return self.procs * self.batch_size

    @property
    def iters_per_epoch(self) -> int:
        """I(p, b, d) = ceil(d / (p * b)): iterations each worker runs for one epoch."""
        return math.ceil(self.data_size / self.global_batch)

    @property
    def procs_per_node(self) -> int:
        return self.procs // self.nodes

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> RunConfig:
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


# --- Architecture, layer by layer ------------------------------------------------
#
# Each network is described once more here, in plain Python, so its parameter
# count and forward FLOPs per sample are known without a framework (the models
# use them as intrinsic features; a test checks every framework's network
# against these numbers). Conventions: a multiply-add is 2 FLOPs; bias, ReLU,
# residual add and pooling cost 1 FLOP per element they touch; BatchNorm costs
# 2 per element (scale and shift, statistics folded in). Parameters are the
# trainable ones: BatchNorm's gamma and beta count, its running statistics do not.

RESNET18_BLOCKS = (2, 2, 2, 2)
RESNET50_BLOCKS = (3, 4, 6, 3)
RESNET_WIDTHS = (64, 128, 256, 512)
BOTTLENECK_EXPANSION = 4


@dataclass(frozen=True)
class Layer:
    kind: str  # conv | bn | relu | maxpool | avgpool | flatten | dense | add
    out_shape: tuple[int, ...]
    params: int
    flops: int


def _size(shape: tuple[int, ...]) -> int:
    return math.prod(shape)


class _Tracer:
    """Follows tensor shapes through a network and records each layer's cost."""

    def __init__(self) -> None:
        self.layers: list[Layer] = []

    def _add(self, kind: str, shape: tuple[int, ...], params: int, flops: int) -> tuple[int, ...]:
        self.layers.append(Layer(kind, shape, params, flops))
        return shape

    def conv(self, x, out: int, kernel: int, stride: int = 1, bias: bool = False):
        channels, height, width = x
        pad = kernel // 2  # "same" padding for odd kernels
        shape = (
            out,
            (height + 2 * pad - kernel) // stride + 1,
            (width + 2 * pad - kernel) // stride + 1,
        )
        macs = kernel * kernel * channels * _size(shape)
        params = kernel * kernel * channels * out + (out if bias else 0)
        return self._add("conv", shape, params, 2 * macs + (_size(shape) if bias else 0))

    def bn(self, x):
        return self._add("bn", x, 2 * x[0], 2 * _size(x))

    def relu(self, x):
        return self._add("relu", x, 0, _size(x))

    def maxpool(self, x, size: int = 2):
        shape = (x[0], x[1] // size, x[2] // size)
        return self._add("maxpool", shape, 0, size * size * _size(shape))

    def avgpool(self, x):
        return self._add("avgpool", (x[0],), 0, _size(x))

    def flatten(self, x):
        return self._add("flatten", (_size(x),), 0, 0)

    def dense(self, x, out: int):
        (inputs,) = x
        return self._add("dense", (out,), inputs * out + out, 2 * inputs * out + out)

    def add(self, x, shortcut):
        assert x == shortcut, (x, shortcut)
        return self._add("add", x, 0, _size(x))


def _basic_block(t: _Tracer, x, out: int, stride: int):
    y = t.relu(t.bn(t.conv(x, out, 3, stride)))
    y = t.bn(t.conv(y, out, 3))
    shortcut = t.bn(t.conv(x, out, 1, stride)) if stride != 1 or x[0] != out else x
    return t.relu(t.add(y, shortcut))


def _bottleneck(t: _Tracer, x, width: int, stride: int):
    out = width * BOTTLENECK_EXPANSION
    y = t.relu(t.bn(t.conv(x, width, 1)))
    y = t.relu(t.bn(t.conv(y, width, 3, stride)))
    y = t.bn(t.conv(y, out, 1))
    shortcut = t.bn(t.conv(x, out, 1, stride)) if stride != 1 or x[0] != out else x
    return t.relu(t.add(y, shortcut))


def stage_strides(index: int) -> int:
    """ResNet stages: the first keeps the resolution, each later one halves it."""
    return 1 if index == 0 else 2


def layers(network: str) -> list[Layer]:
    """The layer list of ``network`` with output shapes, parameters and forward FLOPs per sample."""
    t = _Tracer()
    x = INPUT_SHAPE
    if network == "mlp":
        x = t.flatten(x)
        x = t.relu(t.dense(x, 512))
        x = t.relu(t.dense(x, 256))
        t.dense(x, NUM_CLASSES)
    elif network == "lenet":
        x = t.maxpool(t.relu(t.conv(x, 32, 3, bias=True)))
        x = t.maxpool(t.relu(t.conv(x, 64, 3, bias=True)))
        x = t.relu(t.dense(t.flatten(x), 256))
        t.dense(x, NUM_CLASSES)
    elif network in ("resnet18", "resnet50"):
        x = t.relu(t.bn(t.conv(x, RESNET_WIDTHS[0], 3)))
        blocks = RESNET18_BLOCKS if network == "resnet18" else RESNET50_BLOCKS
        block = _basic_block if network == "resnet18" else _bottleneck
        for index, (count, width) in enumerate(zip(blocks, RESNET_WIDTHS, strict=True)):
            for i in range(count):
                x = block(t, x, width, stage_strides(index) if i == 0 else 1)
        t.dense(t.avgpool(x), NUM_CLASSES)
    else:
        raise ValueError(f"network {network!r} is not one of {', '.join(NETWORKS)}")
    return t.layers


def param_count(network: str) -> int:
    """Trainable parameters of ``network`` (the same in every framework)."""
    return sum(layer.params for layer in layers(network))


def flops_per_sample(network: str) -> int:
    """Forward FLOPs for one 3x32x32 sample (multiply-add = 2)."""
    return sum(layer.flops for layer in layers(network))


def network_features() -> dict[str, dict[str, int]]:
    """Per network: ``param_count`` and ``flops_per_sample`` (intrinsic features of the models)."""
    return {
        name: {"param_count": param_count(name), "flops_per_sample": flops_per_sample(name)}
        for name in NETWORKS
    }
