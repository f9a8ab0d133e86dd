"""(b) How long aggregating 20,000 run records into the timings table takes.

    .venv/bin/python benchmarks/aggregate_records.py

Target: <= 10 s on 2 cores.
"""

from __future__ import annotations

import itertools
import json
import math
import sys
import tempfile
from pathlib import Path

import numpy as np
from common import best_of, report

from dlperf import stages
from dlperf.bench.spec import RunConfig

RECORDS = 20_000


def write_records(root: Path) -> list[Path]:
    """20,000 realistic run records (every timed iteration kept, ~10-100 per epoch)."""
    rng = np.random.default_rng(0)
    paths = []
    grid = itertools.product(
        ["pytorch", "tensorflow", "mxnet"],
        [1, 2, 4, 8],
        [16, 32, 64, 128],
        [2048, 4096, 8192],
        range(200),
    )
    for framework, procs, batch, data, rep in itertools.islice(grid, RECORDS):
        config = RunConfig(framework, "lenet", "cpu", 1, procs, batch, data, rep)
        iters = math.ceil(data / (procs * batch))
        times = (0.01 + 0.001 * batch) * (1 + 0.05 * rng.standard_normal(iters))
        record = {
            "schema_version": 1,
            "config": config.to_dict(),
            "status": "ok",
            "error": None,
            "environment": {
                "hostname": "node1",
                "framework_version": "1.0",
                "threads_per_worker": 1,
            },
            "warmup_iters": 5,
            "iter_times_s": times.tolist(),
            "iters_per_epoch": iters,
            "epoch_time_s": float(times.sum()),
            "samples_per_s": data / float(times.sum()),
        }
        path = root / "runs" / framework / f"n1_p{procs}_b{batch}_d{data}_r{rep}.json"
        # Plain writes: the fixture is not what is measured, and fsync per file takes minutes.
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record))
        paths.append(path)
    return paths


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="dlperf-agg-") as tmp:
        root = Path(tmp)
        paths = write_records(root)
        timing = best_of(
            lambda: stages.aggregate(paths, root / "t.csv", root / "t.parquet", root / "f.csv"),
            repeats=3,
        )
    ok = report(
        f"(b) aggregate {len(paths):,} run records",
        timing.cpu_s,
        "s",
        target=10,
        wall=timing.wall_s,
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
