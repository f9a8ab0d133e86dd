"""One timing discipline for every framework.

A backend (one per framework) builds the network, prepares batches, runs one
training step, synchronises the device and meets the other workers at a
barrier; this module owns the clock. Every clock read follows a device
synchronisation, the warm-up is timed but kept apart, all workers meet at a
barrier before timing starts, and every timed iteration is kept, together with
the part of it spent waiting for the input pipeline.
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

import numpy as np

from .cpuload import CpuWindow
from .datasets import load_digits_export, shard, synthetic_batches
from .launch import DistInfo
from .spec import RunConfig


class Backend(Protocol):
    """What a framework module provides. ``step`` may be asynchronous; ``sync`` must not be."""

    def __init__(self, config: RunConfig, dist: DistInfo, threads: int) -> None: ...

    def environment(self) -> dict:
        """Framework name and version, device names, CUDA/cuDNN versions, thread settings."""

    def setup(self) -> int:
        """Build network, optimiser and data-parallel wrapper; return the trainable parameters."""

    def prepare_batch(self, images: np.ndarray, labels: np.ndarray) -> object:
        """Turn NCHW float32 images and int64 labels into device-resident inputs."""

    def input_pipeline(self, images: np.ndarray, labels: np.ndarray) -> Iterator[object]:
        """The framework's own loader over this worker's shard: endless, shuffled,
        device-resident batches."""

    def build_graph(self, batch: object) -> float | None:
        """Trace/compile the training step ahead of the first step where the framework
        separates the two (TensorFlow's tf.function); seconds spent, or None."""

    def step(self, batch: object) -> None:
        """One training step: forward, backward, gradient exchange, update."""

    def sync(self) -> None:
        """Block until all queued device work has finished."""

    def barrier(self) -> None:
        """Block until every worker has arrived."""

    def close(self) -> None: ...


def batch_source(
    backend: Backend, config: RunConfig, dist: DistInfo, data_dir: Path
) -> Iterator[object]:
    if config.dataset == "synthetic":
        return itertools.cycle(
            [backend.prepare_batch(x, y) for x, y in synthetic_batches(config, dist.rank)]
        )
    images, labels = load_digits_export(data_dir)
    images, labels = shard(images, labels, dist.rank, dist.world_size, config.batch_size)
    return backend.input_pipeline(images, labels)


def timed_iteration(backend: Backend, source: Iterator[object]) -> tuple[float, float]:
    """(iteration seconds, of which waiting for the batch): fetch, step, synchronise."""
    start = time.perf_counter()
    batch = next(source)
    backend.sync()
    fetched = time.perf_counter()
    backend.step(batch)
    backend.sync()
    return time.perf_counter() - start, fetched - start


def run_training(backend: Backend, config: RunConfig, dist: DistInfo, data_dir: Path) -> dict:
    """Set up, build the graph, warm up, meet at a barrier, then time one epoch
    (``iters_per_epoch`` steps)."""
    setup_start = time.perf_counter()
    param_count = backend.setup()
    backend.sync()
    setup_s = time.perf_counter() - setup_start

    source = batch_source(backend, config, dist, data_dir)
    backend.sync()
    graph_build_s = backend.build_graph(next(source))

    warmup = [timed_iteration(backend, source) for _ in range(config.warmup_iters)]

    backend.barrier()
    backend.sync()
    timed = []
    with CpuWindow() as cpu:
        epoch_start = time.perf_counter()
        for _ in range(config.iters_per_epoch):
            timed.append(timed_iteration(backend, source))
        epoch_time = time.perf_counter() - epoch_start
    backend.barrier()

    iter_times = [t for t, _ in timed]
    data_waits = [d for _, d in timed]
    first_iter_s = warmup[0][0] if warmup else iter_times[0]
    steady = float(np.median(iter_times))
    return {
        "param_count": int(param_count),
        "setup_s": setup_s,
        # tf.function tracing, measured apart where the framework allows it.
        "graph_build_s": graph_build_s,
        # Otherwise graph building / compilation / autotuning lands in the first step.
        "first_iter_s": first_iter_s,
        "compile_s": max(0.0, first_iter_s - steady),
        "warmup_iters": config.warmup_iters,
        "warmup_times_s": [t for t, _ in warmup],
        "iter_times_s": iter_times,
        "data_wait_s": data_waits,
        "data_wait_fraction": sum(data_waits) / sum(iter_times),
        "iters_per_epoch": config.iters_per_epoch,
        "epoch_time_s": epoch_time,
        "samples_per_s": config.iters_per_epoch * config.global_batch / epoch_time,
        "cpu_window": {
            "machine_busy_s": cpu.machine_busy_s,
            "process_cpu_s": cpu.process_cpu_s,
            "machine_cores": os.cpu_count(),
        },
    }
