"""Configuration values that cannot run, refused before the workflow plans a single job: each
problem one line naming the key, the value and the fix.

:func:`value_problems` holds for every configuration, wherever it runs (``config.validated``
calls it). :func:`local_machine_problems` compares the sweep with the machine it would run on,
for a local run only: a cluster's nodes are not this machine. Standard library only: the
Snakefile calls both while it loads.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from dlperf.durations import parse_duration
from dlperf.limits import MAX_BATCH, MAX_COUNT, MAX_PROCS_PER_NODE, MAX_SAMPLES

# Largest value the command line (dlperf.cli.arguments) accepts for each sweep key.
SWEEP_LIMITS = {
    "nodes": (MAX_COUNT, "node counts"),
    "procs": (MAX_COUNT, "worker counts"),
    "batch_sizes": (MAX_BATCH, "per-worker batch sizes"),
    "data_sizes": (MAX_SAMPLES, "samples per epoch"),
}
NVIDIA_DEVICE = re.compile(r"nvidia\d+")
# Fewest timed iterations (I = ceil(d / (p b)), all of one epoch) a configuration should have.
# One disturbed iteration (a straggler, a pause as long as a step) moves an epoch of I
# iterations by about 1/I: at 20, by 5 %, the slowdown `dlperf compare` calls a regression;
# the quartiles of 20 iterations each rest on 5 or more of them; and `dlperf gpu-check` times
# 20 by default.
MIN_TIMED_ITERS = 20


def _beyond_limits(config: Mapping) -> list[str]:
    problems = []
    for key, (limit, what) in SWEEP_LIMITS.items():
        for value in config.get(key) or []:
            if value > limit:
                problems.append(
                    f"{key}: {value} is beyond the command line's limit of {limit:,} {what}; "
                    f"give values up to {limit:,}"
                )
    if config.get("repeats", 1) > MAX_COUNT:
        problems.append(
            f"repeats: {config['repeats']} is beyond the limit of {MAX_COUNT:,}; give fewer repeats"
        )
    return problems


def most_per_node(config: Mapping) -> int:
    """Most workers one node of the sweep runs: ``max_procs_per_node``, and never more than
    any machine holds (``MAX_PROCS_PER_NODE``)."""
    most = config.get("max_procs_per_node")
    return MAX_PROCS_PER_NODE if most is None else min(most, MAX_PROCS_PER_NODE)


def _unplaceable_procs(config: Mapping) -> list[str]:
    """Worker counts that no node count of the sweep can hold: they would silently not run."""
    most = most_per_node(config)
    nodes = sorted(config.get("nodes") or [])
    problems = []
    for procs in sorted(config.get("procs") or []):
        if any(procs % n == 0 and procs // n <= most for n in nodes):
            continue
        if config.get("max_procs_per_node") is not None and most < MAX_PROCS_PER_NODE:
            limit, raise_it = f"max_procs_per_node={most}", " or raise max_procs_per_node"
        else:
            limit, raise_it = f"{MAX_PROCS_PER_NODE:,} (more than any machine holds)", ""
        problems.append(
            f"procs: {procs} workers fit no node count in nodes={nodes} with at most {limit} "
            "per node (procs must be a multiple of nodes: every node runs procs/nodes workers); "
            f"add a node count that holds them{raise_it}, or drop {procs} from procs"
        )
    return problems


def _deadline(config: Mapping) -> list[str]:
    target = (config.get("report") or {}).get("target") or {}
    if "deadline" not in target:
        return []
    try:
        parse_duration(str(target["deadline"]))
    except ValueError as exc:
        return [f"report.target.deadline: {exc}"]
    return []


def value_problems(config: Mapping) -> list[str]:
    """Every value of a schema-valid ``config`` that no run could use, one line each."""
    return _beyond_limits(config) + _unplaceable_procs(config) + _deadline(config)


def short_epochs(runs: Iterable, minimum: int = MIN_TIMED_ITERS) -> list[str]:
    """A warning (one line) when configurations among ``runs`` (RunConfigs) time fewer than
    ``minimum`` iterations per epoch, naming the fewest and the data size that gives every
    configuration enough; none otherwise."""
    short = {
        (r.procs, r.batch_size, r.data_size, r.grad_accum_steps): r.iters_per_epoch
        for r in runs
        if r.iters_per_epoch < minimum
    }
    if not short:
        return []
    total = len({(r.procs, r.batch_size, r.data_size, r.grad_accum_steps) for r in runs})
    (procs, batch, data, _), fewest = min(short.items(), key=lambda item: (item[1], item[0]))
    largest = max(p * b * a for p, b, _, a in short)
    return [
        f"data_sizes: {len(short)} of {total} configurations time fewer than {minimum} "
        f"iterations per epoch (fewest: {fewest}, at procs {procs}, batch {batch}, data "
        f"{data}): one disturbed iteration moves such an epoch's time by over "
        f"{100 // minimum} %; give data_sizes of at least {minimum * largest} "
        f"({minimum} x the largest global batch, {largest}), or drop the largest procs x batch"
    ]


def visible_gpus(devices: Path = Path("/dev"), environ: Mapping = os.environ) -> int:
    """NVIDIA GPUs this process can use: the driver's device files, narrowed by
    CUDA_VISIBLE_DEVICES (which the frameworks obey) when it is set."""
    try:
        present = sum(1 for p in devices.iterdir() if NVIDIA_DEVICE.fullmatch(p.name))
    except OSError:
        present = 0
    visible = environ.get("CUDA_VISIBLE_DEVICES")
    if visible is None:
        return present
    entries = [e.strip() for e in visible.split(",") if e.strip()]
    # CUDA stops at the first invalid entry; "-1" (or nothing) hides every GPU.
    usable = 0
    for entry in entries:
        if entry.startswith("-"):
            break
        usable += 1
    return min(usable, present)


def local_machine_problems(config: Mapping, cores: int, gpus: int) -> list[str]:
    """What a local run of ``config`` cannot do on a machine with ``cores`` usable cores and
    ``gpus`` visible GPUs: every worker of a local run is a process of this machine."""
    return _local_nodes(config) + _local_workers(config, cores, gpus)


def _local_nodes(config: Mapping) -> list[str]:
    """More than one node asked of a local run: every such run would fail."""
    beyond = sorted(n for n in config["nodes"] if n > 1)
    if not beyond:
        return []
    return [
        f"nodes: {beyond} on a local run, but a local run starts every worker on this machine: "
        "each of those runs would fail; give nodes: [1], or run on a cluster "
        "(snakemake --profile slurm)"
    ]


def _local_workers(config: Mapping, cores: int, gpus: int) -> list[str]:
    procs = max(config["procs"])
    if config["device"] == "cuda":
        if gpus == 0:
            return [
                "device: cuda, but this machine has no visible GPU (no /dev/nvidia* device, or "
                "CUDA_VISIBLE_DEVICES hides them); use device: cpu, or run the sweep on a GPU "
                "cluster (snakemake --profile slurm)"
            ]
        if procs > gpus:
            return [
                f"procs: {procs} workers need {procs} GPUs (one per worker), but this machine has "
                f"{gpus} visible; give procs up to {gpus}, or run on a cluster "
                "(snakemake --profile slurm)"
            ]
        return []
    if procs > cores:
        return [
            f"procs: {procs} workers on a local run, but this machine gives this process {cores} "
            f"cores: the workers would share cores and measure each other; give procs up to "
            f"{cores}, or run on a cluster (snakemake --profile slurm)"
        ]
    threads = config.get("threads_per_proc") or 0
    if threads > cores:
        return [
            f"threads_per_proc: {threads} threads per worker on a local run, but this machine "
            f"gives this process {cores} cores: the threads would share them; give "
            f"threads_per_proc up to {cores} (0 shares the cores among the workers)"
        ]
    return []
