"""Is this machine quiet enough to measure on? Before a sweep: other programs' CPU load now
(warn, or wait a bounded time for it to fall); after the runs: stop when most of them were
disturbed, rather than fit and report on the neighbours' noise.

The load is the machine's busy CPU time over a short window (:mod:`dlperf.bench.cpuload`, as
each run measures its timed epoch); nothing of dlperf runs then, so all of it is foreign. The
threshold is the one that flags a run as disturbed (:data:`NOISY_FOREIGN_CPU`).
"""

from __future__ import annotations

import os
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass

from dlperf.bench.cpuload import machine_busy_s
from dlperf.errors import DlperfError
from dlperf.measurements.tables import NOISY_FOREIGN_CPU

#: Seconds of one load sample: long enough to see a neighbour's steady work.
SAMPLE_S = 2.0


class BusyMachine(DlperfError):
    """Most runs of a sweep came out disturbed: their times measure the neighbours."""


def foreign_load(sample_s: float = SAMPLE_S, sleep=time.sleep) -> float | None:
    """The share of all cores' time that was busy over ``sample_s`` seconds, or None off Linux."""
    before = machine_busy_s()
    sleep(sample_s)
    after = machine_busy_s()
    if before is None or after is None:
        return None
    # Clock ticks round: a saturated machine may read a hair above all of its cores.
    return min(1.0, max(0.0, after - before) / ((os.cpu_count() or 1) * sample_s))


@dataclass(frozen=True)
class Quiet:
    """The outcome of :func:`wait_quiet`: the last load seen, and the seconds waited."""

    load: float | None
    waited_s: float

    @property
    def quiet(self) -> bool:
        return self.load is None or self.load <= NOISY_FOREIGN_CPU

    def message(self, limit_s: float) -> str:
        if self.load is None:
            return "pre-flight: the CPU load cannot be read on this system; not checked"
        share = f"other programs use {self.load:.0%} of the CPUs"
        if self.quiet:
            return f"pre-flight: quiet ({share}; runs above {NOISY_FOREIGN_CPU:.0%} are disturbed)"
        waited = f" after waiting {self.waited_s:.0f} s" if limit_s > 0 else ""
        return (
            f"warning: the machine is busy{waited}: {share}, above the {NOISY_FOREIGN_CPU:.0%} "
            "that marks a run disturbed; its timings will be flagged. Stop the other work, or "
            "wait for it with --wait-quiet SECONDS"
        )


def wait_quiet(
    limit_s: float,
    sample: Callable[[], float | None] = foreign_load,
    clock: Callable[[], float] = time.monotonic,
) -> Quiet:
    """Sample the load until it is at most the threshold or ``limit_s`` seconds have passed
    (0: one sample)."""
    start = clock()
    while True:
        load = sample()
        waited = clock() - start
        outcome = Quiet(load, waited)
        if outcome.quiet or waited >= limit_s:
            return outcome


def disturbed_share(timings) -> float:
    """The share of a timings table's runs that were disturbed (0 for an empty table)."""
    from dlperf.measurements.tables import disturbed

    return float(disturbed(timings).mean()) if len(timings) else 0.0


def ran_on_slurm(timings) -> bool:
    """Whether any run of a timings table ran in a Slurm job (its ``slurm_job_id``)."""
    return "slurm_job_id" in timings and bool(timings["slurm_job_id"].notna().any())


def check_disturbed(timings, max_fraction: float, study: str = ".") -> None:
    """Raise :class:`BusyMachine` when more than ``max_fraction`` of the runs were disturbed;
    its commands name the ``study`` directory. On a cluster, where other jobs on a shared node
    count as load, it leads with keeping the timings: measuring again costs GPU-hours."""
    share = disturbed_share(timings)
    if share <= max_fraction:
        return
    where = shlex.quote(study)
    disturbed = (
        f"{share:.0%} of the runs were disturbed by other programs (more than "
        f"preflight.max_disturbed_fraction, {max_fraction:.0%})"
    )
    remeasure = f"snakemake --directory {where} remeasure_disturbed, then make run STUDY={where}"
    if ran_on_slurm(timings):
        raise BusyMachine(
            f"{disturbed}: other jobs shared the Slurm nodes. The timings are kept: raise "
            "preflight.max_disturbed_fraction (1.0 fits every run, noise and all) to fit them "
            "now, or measure them again on whole nodes (cluster.exclusive: true; "
            f'{remeasure}; docs/cluster.md, "Shared nodes")'
        )
    raise BusyMachine(
        f"{disturbed}: the machine was busy. Measure them again on a quiet machine "
        f"({remeasure}), or raise preflight.max_disturbed_fraction to keep them"
    )
