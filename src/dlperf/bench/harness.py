"""One timing discipline for every framework.

A backend (one per framework) builds the network, prepares batches and runs one
training step; this module owns the clock. Every clock read follows a device
synchronisation, the warm-up is timed but kept apart, all workers meet at a
barrier before timing starts, and every timed iteration is kept.
"""

from __future__ import annotations

import time
from typing import Protocol

import numpy as np

from .launch import DistInfo
from .spec import INPUT_SHAPE, NUM_CLASSES, RunConfig

# Synthetic batches are made once and cycled, so no data pipeline is timed.
SYNTHETIC_POOL = 4


class Backend(Protocol):
    """What a framework module provides. ``step`` may be asynchronous; ``sync`` must not be."""

    def __init__(self, config: RunConfig, dist: DistInfo, threads: int) -> None: ...

    def environment(self) -> dict:
        """Framework name and version, device names, CUDA/cuDNN versions, thread settings."""

    def setup(self) -> int:
        """Build network, optimiser and data-parallel wrapper; return the parameter count."""

    def prepare_batch(self, images: np.ndarray, labels: np.ndarray) -> object:
        """Turn NCHW float32 images and int64 labels into device-resident inputs."""

    def step(self, batch: object) -> None:
        """One training step: forward, backward, gradient exchange, update."""

    def sync(self) -> None:
        """Block until all queued device work has finished."""

    def barrier(self) -> None:
        """Block until every worker has arrived."""

    def close(self) -> None: ...


def synthetic_batches(config: RunConfig, rank: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Random images and labels, different on every rank (as a sharded dataset would be)."""
    rng = np.random.default_rng([config.seed, rank])
    batches = []
    for _ in range(SYNTHETIC_POOL):
        images = rng.standard_normal((config.batch_size, *INPUT_SHAPE), dtype=np.float32)
        labels = rng.integers(0, NUM_CLASSES, size=config.batch_size, dtype=np.int64)
        batches.append((images, labels))
    return batches


def timed_step(backend: Backend, batch: object) -> float:
    start = time.perf_counter()
    backend.step(batch)
    backend.sync()
    return time.perf_counter() - start


def run_training(backend: Backend, config: RunConfig, dist: DistInfo) -> dict:
    """Warm up, meet at a barrier, then time one epoch of ``iters_per_epoch`` steps."""
    setup_start = time.perf_counter()
    param_count = backend.setup()
    backend.sync()
    setup_s = time.perf_counter() - setup_start

    batches = [backend.prepare_batch(x, y) for x, y in synthetic_batches(config, dist.rank)]
    backend.sync()

    warmup_times = [timed_step(backend, batches[i % len(batches)]) for i in range(config.warmup_iters)]

    backend.barrier()
    backend.sync()
    iter_times = []
    epoch_start = time.perf_counter()
    for i in range(config.iters_per_epoch):
        iter_times.append(timed_step(backend, batches[i % len(batches)]))
    epoch_time = time.perf_counter() - epoch_start
    backend.barrier()

    first_iter_s = warmup_times[0] if warmup_times else iter_times[0]
    steady = float(np.median(iter_times))
    return {
        "param_count": int(param_count),
        "setup_s": setup_s,
        # Graph building / compilation / autotuning lands in the first step.
        "first_iter_s": first_iter_s,
        "compile_s": max(0.0, first_iter_s - steady),
        "warmup_iters": config.warmup_iters,
        "warmup_times_s": warmup_times,
        "iter_times_s": iter_times,
        "iters_per_epoch": config.iters_per_epoch,
        "epoch_time_s": epoch_time,
        "samples_per_s": config.iters_per_epoch * config.global_batch / epoch_time,
    }
