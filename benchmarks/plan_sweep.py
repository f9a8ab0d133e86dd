"""(a) How long `snakemake -n` takes to plan sweeps of 500, 5,000 and 20,000 benchmark jobs.

    .venv/bin/python benchmarks/plan_sweep.py

Target: 5,000 jobs planned in <= 10 s, and growth no worse than linear. Each figure is the
least CPU time of three plans.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import yaml
from common import Timing, best_of, report

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = Path(sys.executable).with_name("snakemake")


def sweep(jobs: int) -> dict:
    """One framework, five worker counts, ten batch sizes, ten data sizes: 500 jobs a repeat."""
    per_repeat = 500
    assert jobs % per_repeat == 0
    return {
        "frameworks": ["pytorch"],
        "networks": ["lenet"],
        "procs": [1, 2, 4, 8, 16],
        "batch_sizes": [2**i for i in range(1, 11)],
        "data_sizes": [1024 * i for i in range(1, 11)],
        "repeats": jobs // per_repeat,
    }


def plan_seconds(jobs: int) -> Timing:
    with tempfile.TemporaryDirectory(prefix="dlperf-plan-") as tmp:
        config = Path(tmp) / "sweep.yaml"
        config.write_text(yaml.safe_dump(sweep(jobs)))
        argv = [
            str(SNAKEMAKE),
            "--snakefile",
            str(REPO / "Snakefile"),
            "--directory",
            tmp,
            "--configfile",
            str(config),
            "--cores",
            "2",
            "-n",
            "--quiet",
            "all",
        ]

        def plan():
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=1800)
            if proc.returncode != 0:
                raise SystemExit(proc.stdout[-2000:] + proc.stderr[-2000:])

        # CPU time of the snakemake child, counted when it is waited for; the least of three
        # runs, as for (b): on a shared machine one plan varies by +-20 % from run to run.
        return best_of(plan)


def main() -> int:
    seconds, ok = {}, True
    for jobs, target in ((500, None), (5000, 10), (20000, None)):
        seconds[jobs] = plan_seconds(jobs)
        ok &= report(
            f"(a) snakemake -n, {jobs:,} jobs",
            seconds[jobs].cpu_s,
            "s",
            target=target,
            wall=seconds[jobs].wall_s,
        )
    # No worse than linear: 4x the jobs may take at most 4x the time (plus start-up slack).
    growth = seconds[20000].cpu_s / seconds[5000].cpu_s
    ok &= report("(a) growth 5,000 -> 20,000 jobs (x4 jobs)", growth, "x", target=4.0)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
