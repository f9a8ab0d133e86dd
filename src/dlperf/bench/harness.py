"""One timing discipline for every framework.

A backend (one per framework) builds the network, prepares batches, runs one
training step, synchronises the device and meets the other workers at a
barrier; this module owns the clock. Every clock read follows the completion of
the work it times, the warm-up is timed but kept apart, all workers meet at a
barrier before timing starts, and every timed iteration is kept, together with
the part of it spent waiting for the input pipeline.

How a step's end is observed depends on the backend. A synchronous step (PyTorch
on CPU, TensorFlow) has finished once ``step`` and ``sync`` return. An asynchronous
engine (MXNet, PyTorch on CUDA) returns a completion marker from ``step``: the
harness queues step i+1 and then waits for step i's marker, so the engine is never
left idle while Python dispatches the next step, as in an ordinary training loop.
Iteration i's time is then the interval between the completions of steps i-1 and
i, and the iteration times add up to the epoch exactly. (Waiting for the device
after every step instead cost MXNet 4-6 % of a lenet iteration on CPU: the
overlap an unsynchronised loop has.)
"""

from __future__ import annotations

import contextlib
import itertools
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

import numpy as np

from .cpuload import CpuWindow, service_pids
from .datasets import load_digits_export, shard, synthetic_batches
from .ranks import DistInfo
from .resources import (
    NvmlSampler,
    cpu_utilisation,
    device_memory,
    peak_host_memory_bytes,
)
from .spec import RunConfig


class Backend(Protocol):
    """What a framework module provides. ``step`` may be asynchronous; ``sync`` must not be."""

    def __init__(self, config: RunConfig, dist: DistInfo, threads: int) -> None: ...

    def environment(self) -> dict:
        """Framework name and version, device names, CUDA/cuDNN versions, thread settings."""

    def settings(self) -> dict:
        """The settings the step runs with, as the framework reads them back: memory layout,
        float32 math (strict or TF32), compilation, optimizer, attention, input placement
        (the run record's ``settings``; :mod:`.options` declares them per framework)."""

    def setup(self) -> int:
        """Build network, optimiser and data-parallel wrapper; return the trainable parameters."""

    def prepare_batch(self, *arrays: np.ndarray) -> object:
        """Turn one batch (NCHW float32 images and int64 labels; or int64 tokens, int64
        labels and float32 weights, see :mod:`.datasets`) into device-resident inputs."""

    def input_pipeline(self, images: np.ndarray, labels: np.ndarray) -> Iterator[object]:
        """The framework's own loader over this worker's shard: endless, shuffled,
        device-resident batches."""

    def build_graph(self, batch: object) -> float | None:
        """Trace/compile the training step ahead of the first step where the framework
        separates the two (TensorFlow's tf.function); seconds spent, or None."""

    def step(self, batch: object) -> object | None:
        """One micro-batch: forward and backward; on every ``grad_accum_steps``-th call also
        the gradient exchange and the update (an optimizer step). An asynchronous backend
        returns a completion marker for ``wait``; a synchronous one returns None."""

    def wait(self, marker: object) -> None:
        """Block until the step that returned ``marker`` has finished (and not the steps
        queued after it). Only called with markers ``step`` returned."""

    def sync(self) -> None:
        """Block until all queued device work has finished."""

    def barrier(self) -> None:
        """Block until every worker has arrived."""

    def close(self) -> None: ...


def batch_source(
    backend: Backend, config: RunConfig, dist: DistInfo, data_dir: Path
) -> Iterator[object]:
    if config.dataset == "synthetic":
        pool = synthetic_batches(config, dist.rank)
        if config.input_place == "host":
            # Kept in host memory: every step's batch is copied to the device (data wait).
            return (backend.prepare_batch(*arrays) for arrays in itertools.cycle(pool))
        # Placed on the device once: no step copies anything.
        return itertools.cycle([backend.prepare_batch(*arrays) for arrays in pool])
    images, labels = load_digits_export(data_dir)
    images, labels = shard(images, labels, dist.rank, dist.world_size, config.batch_size)
    return backend.input_pipeline(images, labels)


def timed_steps(
    backend: Backend, source: Iterator[object], steps: int
) -> list[tuple[float, float]]:
    """Run ``steps`` training steps; for each, (iteration seconds, of which fetching its
    batch). The device is idle when this starts and when it returns; the iteration times
    add up to the time this took, less the final bookkeeping."""
    timed: list[tuple[float, float]] = []
    in_flight: tuple[object, float] | None = None  # (marker, fetch seconds) of a queued step
    last = time.perf_counter()
    for _ in range(steps):
        start = time.perf_counter()
        batch = next(source)
        if in_flight is None:
            backend.sync()  # a synchronous backend: the batch is on the device now
        fetch_s = time.perf_counter() - start
        marker = backend.step(batch)
        if marker is None:
            backend.sync()
            now = time.perf_counter()
            timed.append((now - last, fetch_s))
            last = now
            continue
        if in_flight is not None:
            backend.wait(in_flight[0])  # the previous step is done; this one is queued
            now = time.perf_counter()
            timed.append((now - last, in_flight[1]))
            last = now
        in_flight = (marker, fetch_s)
    if in_flight is not None:
        backend.sync()
        timed.append((time.perf_counter() - last, in_flight[1]))
    return timed


def run_training(
    backend: Backend, config: RunConfig, dist: DistInfo, data_dir: Path, threads: int = 1
) -> dict:
    """Set up, build the graph, warm up, meet at a barrier, then time one epoch
    (``iters_per_epoch`` steps), noting what the hardware did meanwhile (``resources``)."""
    setup_start = time.perf_counter()
    param_count = backend.setup()
    backend.sync()
    setup_s = time.perf_counter() - setup_start

    source = batch_source(backend, config, dist, data_dir)
    backend.sync()
    graph_build_s = backend.build_graph(next(source))

    # Whole optimizer steps: the timed epoch starts with a fresh accumulation.
    accum = config.grad_accum_steps
    warmup = timed_steps(backend, source, -(-config.warmup_iters // accum) * accum)

    backend.barrier()
    backend.sync()
    # NVML is sampled from a thread of its own, so the clock reads stay where they were.
    gpu_monitor = NvmlSampler(dist.local_rank) if config.device == "cuda" else None
    with CpuWindow(service_pids()) as cpu, gpu_monitor or contextlib.nullcontext():
        epoch_start = time.perf_counter()
        timed = timed_steps(backend, source, config.iters_per_epoch)
        epoch_time = time.perf_counter() - epoch_start
    backend.barrier()

    iter_times = [t for t, _ in timed]
    data_waits = [d for _, d in timed]
    first_iter_s = warmup[0][0] if warmup else iter_times[0]
    steady = float(np.median(iter_times))
    resources = {
        "peak_host_memory_bytes": peak_host_memory_bytes(),
        "epoch_cpu_s": cpu.process_cpu_s,
        "threads": threads,
        "cpu_utilisation": cpu_utilisation(cpu.process_cpu_s, epoch_time, threads),
    }
    if gpu_monitor is not None:
        resources.update(gpu_monitor.summary(config.iters_per_epoch))
        resources.update(device_memory(config.framework, dist.local_rank))
    return {
        "param_count": int(param_count),
        "setup_s": setup_s,
        # tf.function tracing, measured apart where the framework allows it.
        "graph_build_s": graph_build_s,
        # Otherwise graph building / compilation / autotuning lands in the first step.
        "first_iter_s": first_iter_s,
        "compile_s": max(0.0, first_iter_s - steady),
        "warmup_iters": len(warmup),
        "grad_accum_steps": accum,
        "precision": config.precision,
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
            "service_cpu_s": cpu.service_cpu_s,
            "machine_cores": os.cpu_count(),
        },
        "resources": resources,
    }
