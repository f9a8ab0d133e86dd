"""Run inside one framework's environment: the same training step through the harness and in
a bare loop, in interleaved blocks. Prints one JSON object. Started by harness_overhead.py.

    <env>/bin/python benchmarks/harness_worker.py FRAMEWORK NETWORK BATCH [BATCH ...]
        [--image-size 32|224] [--seq-len N]
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from pathlib import Path

from dlperf.bench.backends import load_backend
from dlperf.bench.harness import batch_source, timed_steps
from dlperf.bench.ranks import DistInfo
from dlperf.bench.spec import RunConfig


def bare_block(backend, source, iters: int) -> None:
    """What a user's own loop does: step after step, one synchronisation at the end."""
    for _ in range(iters):
        backend.step(next(source))
    backend.sync()


def synced_block(backend, source, iters: int) -> None:
    """The bare loop with a device synchronisation after every step, but no clock: what
    per-iteration timing would cost if it waited for the device after every step (an
    asynchronous engine loses its overlap). The harness waits for step i only once step
    i+1 is queued (dlperf.bench.harness)."""
    for _ in range(iters):
        backend.step(next(source))
        backend.sync()


def harness_block(backend, source, iters: int) -> None:
    """The harness's timed epoch loop (run_training): every iteration fetched, stepped,
    clocked at its completion, and its times kept."""
    timed_steps(backend, source, iters)


def clocked(block, *args) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one block."""
    cpu, wall = time.process_time(), time.perf_counter()
    block(*args)
    return time.process_time() - cpu, time.perf_counter() - wall


class _NoWork:
    """A backend whose step and sync do nothing: what is left is the harness's own work."""

    def step(self, batch) -> None:
        return None

    def sync(self) -> None:
        pass


def per_call_s(fn, calls: int = 20_000) -> float:
    """CPU seconds per call of ``fn()``: tiny costs need many calls to be seen."""
    cpu = time.process_time()
    for _ in range(calls):
        fn()
    return (time.process_time() - cpu) / calls


def measure(
    framework: str, network: str, batch: int, pairs: int, block_s: float, inputs: dict
) -> dict:
    config = RunConfig(framework, network, "cpu", 1, 1, batch, 1 << 20, 0, **inputs)
    dist = DistInfo()
    backend = load_backend(framework)(config, dist, 1)
    backend.setup()
    source = batch_source(backend, config, dist, Path("."))
    backend.build_graph(next(source))
    timed_steps(backend, source, 10)  # warm-up: allocators, caches, lazy compilation
    # Iterations per block: about block_s seconds of work.
    cpu, _ = clocked(bare_block, backend, source, 20)
    iters = max(20, int(block_s / max(cpu / 20, 1e-6)))
    kinds = [("bare", bare_block), ("synced", synced_block), ("harness", harness_block)]
    blocks = {name: [] for name, _ in kinds}
    for i in range(pairs):
        # Rotate which kind goes first, so drift in machine load hits all alike.
        for name, block in kinds[i % 3 :] + kinds[: i % 3]:
            cpu_s, wall_s = clocked(block, backend, source, iters)
            blocks[name].append({"cpu_s": cpu_s / iters, "wall_s": wall_s / iters})
    # The same overhead taken apart, free of load noise: the harness's bookkeeping per iteration
    # (clock reads, fetch, list append) and the framework's synchronisation, called alone.
    null, null_source = _NoWork(), itertools.cycle([None])
    parts = {
        "bookkeeping_s": per_call_s(lambda: timed_steps(null, null_source, 1)),
        "sync_s": per_call_s(backend.sync),
    }
    backend.close()
    return {"batch_size": batch, "iters_per_block": iters, **parts, **blocks}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("framework")
    parser.add_argument("network")
    parser.add_argument("batch_sizes", type=int, nargs="+")
    parser.add_argument("--pairs", type=int, default=12)
    parser.add_argument("--block-s", type=float, default=0.5)
    parser.add_argument("--image-size", type=int, default=32)
    parser.add_argument("--seq-len", type=int, default=128)
    args = parser.parse_args()
    inputs = {"image_size": args.image_size, "seq_len": args.seq_len}
    results = [
        measure(args.framework, args.network, b, args.pairs, args.block_s, inputs)
        for b in args.batch_sizes
    ]
    print(json.dumps({"framework": args.framework, "network": args.network, "blocks": results}))


if __name__ == "__main__":
    main()
