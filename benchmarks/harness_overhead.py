"""(e) Harness overhead: time per iteration through the harness vs the same step in a bare loop.

    .venv/bin/python benchmarks/harness_overhead.py [--frameworks pytorch tensorflow mxnet]
    .venv/bin/python benchmarks/harness_overhead.py --networks bert_tiny --batch-sizes 8 16 \
        --seq-len 64 --pairs 6
    .venv/bin/python benchmarks/harness_overhead.py --networks resnet18 --image-size 224 \
        --batch-sizes 1 2 --pairs 4

For each framework the worker (harness_worker.py) runs inside that framework's environment
(built or reused from the cache by dlperf.environments.requirements.build) on one thread,
for the default networks
and batch sizes of config/config.yaml (or those given). Bare and harness blocks of the same
length alternate (with a third kind, below); the figure is the median over rounds of (harness /
bare - 1) in wall-clock time per iteration, the quantity the harness records. Beside it: the
same in CPU time of the whole process (robust to load, but it also counts work done in parallel
with the device: MXNet's waiting thread, while its engine computes); a bare loop that
synchronises after every step (what waiting for the device after every step would cost: an
asynchronous engine loses its overlap of dispatch and compute); and the harness's own work
called alone, (bookkeeping + 2 synchronisations) / bare iteration time.

Target: < 1 % of the iteration time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import yaml
from common import report

from dlperf.environments import requirements as envs

REPO = Path(__file__).resolve().parents[1]
WORKER = Path(__file__).with_name("harness_worker.py")
FRAMEWORKS = ("pytorch", "tensorflow", "mxnet")


def defaults() -> tuple[list[str], list[int]]:
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    return list(config["networks"]), [int(b) for b in config["batch_sizes"]]


def run_worker(
    framework: str, network: str, batches: list[int], pairs: int, inputs: list[str]
) -> dict:
    env = envs.build(framework, REPO / "envs" / f"{framework}.txt", envs.default_root())
    environ = {
        **os.environ,
        "PYTHONPATH": str(REPO / "src"),
        "DLPERF_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "TF_CPP_MIN_LOG_LEVEL": "2",
    }
    argv = [
        str(env / "bin" / "python"),
        str(WORKER),
        framework,
        network,
        *map(str, batches),
        "--pairs",
        str(pairs),
        *inputs,
    ]
    proc = subprocess.run(argv, capture_output=True, text=True, env=environ, timeout=1800)
    if proc.returncode != 0:
        raise SystemExit(f"{framework} worker failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def overhead_pct(
    blocks: list[dict], clock: str, slow: str = "harness", fast: str = "bare"
) -> float:
    """Median over all interleaved rounds of slow / fast - 1, in %."""
    ratios = [
        s[clock] / f[clock] - 1.0
        for block in blocks
        for f, s in zip(block[fast], block[slow], strict=True)
    ]
    return 100.0 * statistics.median(ratios)


def parts_pct(blocks: list[dict]) -> float:
    """(bookkeeping + 2 syncs) over the median bare iteration, worst batch size, in %."""
    return max(
        100.0
        * (block["bookkeeping_s"] + 2 * block["sync_s"])
        / statistics.median(b["cpu_s"] for b in block["bare"])
        for block in blocks
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--frameworks", nargs="+", default=list(FRAMEWORKS))
    parser.add_argument(
        "--pairs", type=int, default=20, help="rounds (bare, synced, harness blocks) per batch size"
    )
    parser.add_argument("--networks", nargs="+", help="default: config/config.yaml's")
    parser.add_argument("--batch-sizes", type=int, nargs="+", help="default: config/config.yaml's")
    parser.add_argument("--image-size", type=int, default=32)
    parser.add_argument("--seq-len", type=int, default=128)
    args = parser.parse_args()
    networks, batches = defaults()
    networks, batches = args.networks or networks, args.batch_sizes or batches
    inputs = ["--image-size", str(args.image_size), "--seq-len", str(args.seq_len)]
    ok = True
    for framework in args.frameworks:
        for network in networks:
            result = run_worker(framework, network, batches, args.pairs, inputs)
            blocks = result["blocks"]
            iteration_ms = 1e3 * statistics.median(
                b["wall_s"] for block in blocks for b in block["bare"]
            )
            label = f"(e) {framework}/{network} b={','.join(map(str, batches))}"
            report(f"{label}: bare iteration", iteration_ms, "ms")
            report(f"{label}: overhead, CPU time", overhead_pct(blocks, "cpu_s"), "%")
            report(f"{label}: sync after every step", overhead_pct(blocks, "wall_s", "synced"), "%")
            report(f"{label}: bookkeeping + syncs alone", parts_pct(blocks), "%")
            ok &= report(f"{label}: overhead", overhead_pct(blocks, "wall_s"), "%", target=1.0)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
