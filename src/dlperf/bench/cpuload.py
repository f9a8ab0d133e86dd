"""How much CPU other programs used while we were timing (Linux; standard library only).

On a shared machine a neighbour's work stretches our iterations. Each worker
notes the machine's busy CPU time and its own CPU time around the timed epoch;
the driver subtracts the workers' share, and what remains is foreign load,
recorded with the run so noisy runs can be flagged instead of trusted.
"""

from __future__ import annotations

import os
import resource

# /proc/stat "cpu" columns: user nice system idle iowait irq softirq steal ...
BUSY_COLUMNS = (0, 1, 2, 5, 6, 7)


def machine_busy_s() -> float | None:
    """CPU seconds all cores of this machine have spent busy since boot, or None off Linux."""
    try:
        with open("/proc/stat") as fh:
            fields = fh.readline().split()[1:]
    except OSError:
        return None
    ticks = sum(int(fields[i]) for i in BUSY_COLUMNS if i < len(fields))
    return ticks / os.sysconf("SC_CLK_TCK")


def process_cpu_s() -> float:
    """CPU seconds this process (all its threads) has used."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class CpuWindow:
    """Machine and own CPU time over a stretch of code (the timed epoch)."""

    def __enter__(self) -> CpuWindow:
        self._machine, self._own = machine_busy_s(), process_cpu_s()
        return self

    def __exit__(self, *exc) -> None:
        machine = machine_busy_s()
        self.machine_busy_s = None if machine is None else machine - self._machine
        self.process_cpu_s = process_cpu_s() - self._own


def foreign_cpu(rank_results: list[dict], host: str, epoch_s: float) -> dict:
    """CPU time used on ``host`` during rank 0's epoch by anything but this run's workers there."""
    first = rank_results[0].get("cpu_window") or {}
    machine, cores = first.get("machine_busy_s"), first.get("machine_cores") or 1
    if machine is None:
        return {"foreign_cpu_s": None, "foreign_cpu_fraction": None}
    ours = sum(
        (r.get("cpu_window") or {}).get("process_cpu_s", 0.0)
        for r in rank_results
        if r.get("hostname") == host
    )
    foreign = max(0.0, machine - ours)
    return {"foreign_cpu_s": foreign, "foreign_cpu_fraction": foreign / (cores * epoch_s)}
