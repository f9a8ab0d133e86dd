"""What one benchmark run is: its configuration and the networks it can train.

Standard library only: the analysis side reads the networks' parameter counts
and FLOPs from here (layer by layer in :mod:`dlperf.bench.archs`) without importing a
framework.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from dlperf.errors import ConfigError

from .archs import (  # noqa: F401 -- re-exported: the networks' one description
    IMAGE_SIZES,
    RESNETS,
    TRANSFORMERS,
    Layer,
    input_shape,
    layers,
    num_classes,
)
from .options import option_problems

FRAMEWORKS = ("pytorch", "tensorflow", "mxnet")
DEVICES = ("cpu", "cuda")
DATASETS = ("synthetic", "digits")

# The default input: CIFAR-sized images (3x32x32, 10 classes); image_size 224 is ImageNet's.
INPUT_SHAPE = input_shape(32)
NUM_CLASSES = num_classes(32)
DEFAULT_SEQ_LEN = 128

# fp32 is strict FP32 in every framework; tf32 lets float32 matrix products and convolutions
# run in TF32 (a GPU's tensor cores), as NVIDIA's reference containers do by default.
PRECISIONS = ("fp32", "tf32", "amp_fp16", "bf16")
# What each framework's build can run, per device, with its own mechanism (docs/measurement.md):
# fp16 mixed precision needs a GPU's half-precision units (CPU builds have no fp16 kernels
# worth timing), as does TF32; MXNet 1.x runs bf16 only on the CPU (oneDNN), not with CUDA.
SUPPORTED_PRECISIONS: dict[tuple[str, str], tuple[str, ...]] = {
    ("pytorch", "cpu"): ("fp32", "bf16"),
    ("pytorch", "cuda"): ("fp32", "tf32", "amp_fp16", "bf16"),
    ("tensorflow", "cpu"): ("fp32", "bf16"),
    ("tensorflow", "cuda"): ("fp32", "tf32", "amp_fp16", "bf16"),
    ("mxnet", "cpu"): ("fp32", "bf16"),
    ("mxnet", "cuda"): ("fp32", "tf32", "amp_fp16"),
}


def precision_problem(framework: str, device: str, precision: str) -> str | None:
    """Why ``framework`` cannot train in ``precision`` on ``device``, or None when it can."""
    if precision not in PRECISIONS:
        return f"precision {precision!r} is not one of {', '.join(PRECISIONS)}"
    supported = SUPPORTED_PRECISIONS.get((framework, device), ())
    if precision in supported:
        return None
    return (
        f"{framework} cannot train in {precision} on {device} (it supports "
        f"{', '.join(supported)} there); choose one of those, or leave {framework} out"
    )


@dataclass(frozen=True)
class NetworkSpec:
    name: str
    description: str
    inputs: str = "image"  # image: 3 x image_size x image_size; tokens: seq_len token ids
    convolutional: bool = False  # runs in the framework's GPU layout for convolutions (NHWC)


NETWORKS: dict[str, NetworkSpec] = {
    "mlp": NetworkSpec("mlp", "MLP (3*s*s)-512-256-classes, ReLU"),
    "lenet": NetworkSpec(
        "lenet",
        "LeNet-style CNN: conv3x3(3->32)+ReLU+maxpool, conv3x3(32->64)+ReLU+maxpool, "
        "FC(64*(s/4)^2->256)+ReLU, FC(256->classes)",
        convolutional=True,
    ),
    "resnet18": NetworkSpec(
        "resnet18",
        "ResNet-18: stem (32 px: conv3x3(3->64)+BN+ReLU; 224 px: ImageNet's conv7x7/2+BN+ReLU+"
        "maxpool3x3/2), 4 stages of 2 BasicBlocks (64-128-256-512, stride 1-2-2-2, 1x1 conv+BN "
        "projection shortcuts), global average pool, FC(512->classes)",
        convolutional=True,
    ),
    "resnet50": NetworkSpec(
        "resnet50",
        "ResNet-50: the ResNet-18 stem, Bottleneck blocks 3-4-6-3 (widths 64-128-256-512, "
        "expansion 4, stride on the 3x3 conv), global average pool, FC(2048->classes)",
        convolutional=True,
    ),
    "bert_base": NetworkSpec(
        "bert_base",
        "BERT-Base encoder (12 layers, hidden 768, 12 heads, FFN 3072, GELU, post-LayerNorm) "
        "with the masked-LM head (decoder tied to the 30522-token embedding)",
        inputs="tokens",
    ),
    "bert_tiny": NetworkSpec(
        "bert_tiny",
        "BERT-Tiny encoder (2 layers, hidden 128, 2 heads, FFN 512) with the masked-LM head",
        inputs="tokens",
    ),
}
MAX_SEQ_LEN = 512  # BERT's position embeddings


@dataclass(frozen=True)
class RunConfig:
    """One benchmark job: one point of the sweep, one repetition."""

    framework: str
    network: str
    device: str
    nodes: int
    procs: int
    batch_size: int  # per worker and micro-batch: one timed iteration trains one
    data_size: int
    rep: int
    warmup_iters: int = 5
    threads_per_proc: int = 0  # 0: share the cores this job was given evenly between workers
    dataset: str = "synthetic"
    seed: int = 0
    timeout_s: float = 600.0
    image_size: int = 32  # image networks: 3 x image_size x image_size
    seq_len: int = DEFAULT_SEQ_LEN  # token networks: tokens per sample
    precision: str = "fp32"
    # Micro-batches per optimizer step: gradients are exchanged once per optimizer step.
    grad_accum_steps: int = 1
    # Optional, off by default: they change the program (bench.options says what each does).
    compile: bool = False
    cuda_graphs: bool = False
    input: str = "device"  # synthetic batches kept on the device, or copied from the host

    def __post_init__(self) -> None:
        choices = {
            "framework": FRAMEWORKS,
            "network": NETWORKS,
            "device": DEVICES,
            "dataset": DATASETS,
        }
        problems = [
            f"{name} {getattr(self, name)!r} is not one of {', '.join(allowed)}"
            for name, allowed in choices.items()
            if getattr(self, name) not in allowed
        ]
        for name in ("nodes", "procs", "batch_size", "data_size", "grad_accum_steps"):
            if getattr(self, name) < 1:
                problems.append(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.warmup_iters < 0:
            problems.append(f"warmup_iters must be >= 0, got {self.warmup_iters}")
        if self.nodes >= 1 and self.procs >= 1 and self.procs % self.nodes:
            problems.append(
                f"procs ({self.procs}) must be a multiple of nodes ({self.nodes}): "
                "every node runs the same number of workers"
            )
        problems += self._input_problems()
        problems += option_problems(
            self.framework, self.device, self.compile, self.cuda_graphs, self.input
        )
        if self.framework in FRAMEWORKS and self.device in DEVICES:
            problem = precision_problem(self.framework, self.device, self.precision)
            if problem:
                problems.append(problem)
        if problems:
            raise ConfigError("invalid benchmark configuration: " + "; ".join(problems))

    def _input_problems(self) -> list[str]:
        problems = []
        if self.image_size not in IMAGE_SIZES:
            problems.append(f"image_size {self.image_size} is not one of {IMAGE_SIZES}")
        if not 1 <= self.seq_len <= MAX_SEQ_LEN:
            problems.append(f"seq_len must be between 1 and {MAX_SEQ_LEN}, got {self.seq_len}")
        if self.dataset == "digits" and (self.inputs != "image" or self.image_size != 32):
            problems.append(
                "dataset 'digits' holds 32-pixel images: use it with image networks at "
                "image_size 32, or dataset 'synthetic'"
            )
        return problems

    @property
    def inputs(self) -> str:
        spec = NETWORKS.get(self.network)
        return spec.inputs if spec else "image"

    @property
    def convolutional(self) -> bool:
        spec = NETWORKS.get(self.network)
        return spec.convolutional if spec else False

    @property
    def input_place(self) -> str:
        """Where the batches come from: ``input``, except that a dataset's loader always
        reads host memory (``dataset: digits``)."""
        return self.input if self.dataset == "synthetic" else "host"

    @property
    def global_batch(self) -> int:
        return self.procs * self.batch_size

    @property
    def iters_per_epoch(self) -> int:
        """I(p, b, d) = ceil(d / (p * b)) micro-batches each worker runs for one epoch, rounded
        up to whole optimizer steps (``grad_accum_steps`` micro-batches each)."""
        steps = math.ceil(self.data_size / (self.global_batch * self.grad_accum_steps))
        return steps * self.grad_accum_steps

    @property
    def procs_per_node(self) -> int:
        return self.procs // self.nodes

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> RunConfig:
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


def param_count(network: str, image_size: int = 32, seq_len: int = DEFAULT_SEQ_LEN) -> int:
    """Trainable parameters of ``network`` (the same in every framework)."""
    return sum(layer.params for layer in layers(network, image_size, seq_len))


def flops_per_sample(network: str, image_size: int = 32, seq_len: int = DEFAULT_SEQ_LEN) -> int:
    """Forward FLOPs for one sample (an image of ``image_size``, or ``seq_len`` tokens)."""
    return sum(layer.flops for layer in layers(network, image_size, seq_len))


def network_features(
    image_size: int = 32, seq_len: int = DEFAULT_SEQ_LEN
) -> dict[str, dict[str, int]]:
    """Per network: ``param_count`` and ``flops_per_sample`` (intrinsic features of the models)."""
    return {
        name: {
            "param_count": param_count(name, image_size, seq_len),
            "flops_per_sample": flops_per_sample(name, image_size, seq_len),
        }
        for name in NETWORKS
    }


def run_features(config: RunConfig) -> dict[str, int]:
    """``param_count`` and ``flops_per_sample`` of the network at the run's input size."""
    return {
        "param_count": param_count(config.network, config.image_size, config.seq_len),
        "flops_per_sample": flops_per_sample(config.network, config.image_size, config.seq_len),
    }
