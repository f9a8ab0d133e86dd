"""How much CPU other programs used while we were timing (Linux; standard library only).

On a shared machine a neighbour's work stretches our iterations. Each worker
notes the machine's busy CPU time and its own CPU time around the timed epoch;
the driver subtracts the workers' share, and what remains is foreign load,
recorded with the run so noisy runs can be flagged instead of trusted. The run's
service processes (MXNet's scheduler and server, started by the driver on rank 0's
host) are ours too: the driver passes their process ids to the workers
(:data:`SERVICE_PIDS_VARIABLE`), and each worker's window reads their CPU time as well.
"""

from __future__ import annotations

import os
import resource

# /proc/stat "cpu" columns: user nice system idle iowait irq softirq steal ...
BUSY_COLUMNS = (0, 1, 2, 5, 6, 7)
# /proc/<pid>/stat fields after "pid (comm)": state is the first, utime and stime the 12th and 13th.
UTIME_STIME = (11, 12)
#: Comma-separated process ids of the run's services, set by the driver for every worker.
SERVICE_PIDS_VARIABLE = "DLPERF_SERVICE_PIDS"


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


def processes_cpu_s(pids: tuple[int, ...]) -> float | None:
    """CPU seconds (user + system, all threads) the processes ``pids`` have used, or None when
    one cannot be read (it has ended, lives in another PID namespace, or this is not Linux)."""
    ticks = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                # The command name may hold spaces and parentheses: split after the last ')'.
                fields = fh.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            return None
        ticks += sum(int(fields[i]) for i in UTIME_STIME)
    return ticks / os.sysconf("SC_CLK_TCK")


def service_pids(env: dict | None = None) -> tuple[int, ...]:
    """The run's service process ids the driver passed (none for frameworks without services)."""
    text = (os.environ if env is None else env).get(SERVICE_PIDS_VARIABLE, "")
    return tuple(int(pid) for pid in text.split(",") if pid)


class CpuWindow:
    """Machine, own and the run's services' CPU time over a stretch of code (the timed epoch)."""

    def __init__(self, service_pids: tuple[int, ...] = ()) -> None:
        self.service_pids = service_pids

    def __enter__(self) -> CpuWindow:
        self._machine, self._own = machine_busy_s(), process_cpu_s()
        self._services = processes_cpu_s(self.service_pids)
        return self

    def __exit__(self, *exc) -> None:
        machine = machine_busy_s()
        self.machine_busy_s = None if machine is None else machine - self._machine
        self.process_cpu_s = process_cpu_s() - self._own
        services = processes_cpu_s(self.service_pids)
        unread = services is None or self._services is None
        self.service_cpu_s = None if unread else services - self._services


def foreign_cpu(rank_results: list[dict], host: str, epoch_s: float) -> dict:
    """CPU time used on ``host`` (rank 0's) during rank 0's epoch by anything but this run's
    workers there and its services. Services whose CPU time rank 0 could not read
    (``service_cpu_s`` None) count as foreign: a run is flagged rather than trusted."""
    first = rank_results[0].get("cpu_window") or {}
    machine, cores = first.get("machine_busy_s"), first.get("machine_cores") or 1
    services = first.get("service_cpu_s")
    if machine is None:
        return {"foreign_cpu_s": None, "foreign_cpu_fraction": None, "service_cpu_s": services}
    workers = sum(
        (r.get("cpu_window") or {}).get("process_cpu_s", 0.0)
        for r in rank_results
        if r.get("hostname") == host
    )
    foreign = max(0.0, machine - workers - (services or 0.0))
    return {
        "foreign_cpu_s": foreign,
        "foreign_cpu_fraction": foreign / (cores * epoch_s),
        "service_cpu_s": services,
    }
