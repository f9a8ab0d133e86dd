"""What one benchmark run is: its configuration and the networks it can train."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

FRAMEWORKS = ("pytorch", "tensorflow", "mxnet")
DEVICES = ("cpu", "cuda")
DATASETS = ("synthetic",)

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
