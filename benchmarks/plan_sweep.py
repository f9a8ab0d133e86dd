"""(a) How long `snakemake -n` takes to plan sweeps of 500, 5,000 and 20,000 benchmark jobs,
and how that compares with Snakemake's own floor: a trivial workflow of as many jobs (one rule,
one output per job, nothing computed while it loads).

    .venv/bin/python benchmarks/plan_sweep.py            # all sizes
    .venv/bin/python benchmarks/plan_sweep.py 5000       # the 5,000-job sweep and its floor

Targets: 5,000 jobs planned in <= 10 s and within 1.5x of the floor; growth no worse than
linear. Each figure is the least CPU time of three plans.
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


def sweep(jobs: int, cluster: bool = False) -> dict:
    """One framework, ten batch sizes: 500 jobs a repeat. Locally two worker counts (what a
    2-core machine runs) and 25 data sizes; for a cluster five worker counts up to 16 and ten
    data sizes (a local run of that is refused: more workers than cores)."""
    per_repeat = 500
    assert jobs % per_repeat == 0
    procs = [1, 2, 4, 8, 16] if cluster else [1, 2]
    return {
        "frameworks": ["pytorch"],
        "networks": ["lenet"],
        "procs": procs,
        "batch_sizes": [2**i for i in range(1, 11)],
        "data_sizes": [1024 * i for i in range(1, per_repeat // 10 // len(procs) + 1)],
        "repeats": jobs // per_repeat,
    }


TRIVIAL = """
rule all:
    input: expand("out/{i}.txt", i=range(config["jobs"]))

rule make:
    output: "out/{i}.txt"
    shell: "touch {output}"
"""


def plan_seconds(jobs: int, trivial: bool = False, cluster: bool = False) -> Timing:
    """CPU seconds of `snakemake -n` on the dlperf sweep of ``jobs`` benchmarks, or on the
    trivial workflow of as many jobs; ``cluster``: planned as for a cluster (``--jobs``, as the
    Slurm profile gives it), every benchmark's resources sized per job."""
    with tempfile.TemporaryDirectory(prefix="dlperf-plan-") as tmp:
        config = Path(tmp) / "sweep.yaml"
        config.write_text(yaml.safe_dump({"jobs": jobs} if trivial else sweep(jobs, cluster)))
        snakefile = Path(tmp) / "Snakefile" if trivial else REPO / "Snakefile"
        if trivial:
            snakefile.write_text(TRIVIAL)
        argv = [
            str(SNAKEMAKE),
            "--snakefile",
            str(snakefile),
            "--directory",
            tmp,
            "--configfile",
            str(config),
            "--cores",
            "2",
            *(["--jobs", "2"] if cluster else []),
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


def main(argv: list[str]) -> int:
    sizes = [int(a) for a in argv] or [500, 5000, 20000]
    seconds, ok = {}, True
    for jobs in sizes:
        seconds[jobs] = plan_seconds(jobs)
        ok &= report(
            f"(a) snakemake -n, {jobs:,} jobs",
            seconds[jobs].cpu_s,
            "s",
            target=10 if jobs == 5000 else None,
            wall=seconds[jobs].wall_s,
        )
    if 5000 in seconds:
        floor = plan_seconds(5000, trivial=True)
        report("(a) trivial workflow, 5,000 jobs", floor.cpu_s, "s", wall=floor.wall_s)
        ratio = seconds[5000].cpu_s / floor.cpu_s
        ok &= report("(a) 5,000 jobs against the trivial floor", ratio, "x", target=1.5)
        cluster = plan_seconds(5000, cluster=True)
        report("(a) 5,000 jobs planned for a cluster (--jobs)", cluster.cpu_s, "s")
        report("(a) ... against the trivial floor", cluster.cpu_s / floor.cpu_s, "x")
    if not {5000, 20000} <= set(seconds):
        return 0 if ok else 1
    # No worse than linear: 4x the jobs may take at most 4x the time (plus start-up slack).
    growth = seconds[20000].cpu_s / seconds[5000].cpu_s
    ok &= report("(a) growth 5,000 -> 20,000 jobs (x4 jobs)", growth, "x", target=4.0)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
