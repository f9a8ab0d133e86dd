"""The processes of one benchmark run, started and supervised by the driver.

Locally the driver starts one process per worker and tells each its rank
(:func:`local_plan`, variables read by :mod:`dlperf.bench.ranks`); under Slurm it starts
one ``srun`` whose tasks are the workers (:func:`srun_plan`: ``p/n`` tasks on each of
``n`` hosts) and which read their ranks from Slurm. A framework that needs helper
processes beside its workers (MXNet's parameter server) says so through a
:class:`ServiceLayout` (:func:`dlperf.bench.backends.service_layout`); the driver starts
those on its own host. :func:`run_processes` then watches all of them until the workers
are done, one crashed, or the time is up.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from .cpuload import SERVICE_PIDS_VARIABLE
from .ranks import LOCAL_RANK_VARIABLES, host_address

LOCALHOST = "127.0.0.1"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOCALHOST, 0))
        return sock.getsockname()[1]


def free_ports(count: int) -> list[int]:
    """``count`` distinct free ports (held open together, so none is handed out twice)."""
    socks = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind((LOCALHOST, 0))
            socks.append(sock)
        return [sock.getsockname()[1] for sock in socks]
    finally:
        for sock in socks:
            sock.close()


@dataclass
class Command:
    """One process to start. ``service`` processes (MXNet scheduler and server)
    serve the workers: the run is over when the workers are, and they are then ended."""

    name: str
    argv: list[str]
    env: dict
    service: bool = False


class ServiceLayout(Protocol):
    """Helper processes a framework runs beside its workers, started by the driver on its
    own host (the first host of the run), and what the workers need to reach them."""

    def services(
        self, service_argv: list[str], env: dict, host: str, port: int, workers: int
    ) -> list[Command]:
        """The helper processes, listening at ``host:port``."""

    def worker_env(self, host: str, port: int, workers: int, node_host: str | None) -> dict:
        """Variables of a worker; ``node_host`` None: the worker finds its own address."""


def clean_env(base_env: dict, stale: tuple[str, ...] = ()) -> dict:
    """The caller's environment less rank variables and the ``stale`` variables, which are
    set per process (a stale one from a nested run or a shell must not leak into a worker)."""
    env = dict(base_env)
    for name in (*LOCAL_RANK_VARIABLES, *stale):
        env.pop(name, None)
    return env


def local_worker_env(
    base_env: dict, rank: int, world: int, port: int, worker_ports: list[int] | None = None
) -> dict:
    env = dict(base_env)
    env.update(
        DLPERF_RANK=str(rank),
        DLPERF_WORLD_SIZE=str(world),
        DLPERF_LOCAL_RANK=str(rank),
        DLPERF_LOCAL_WORLD_SIZE=str(world),
        DLPERF_NODE_RANK="0",
        DLPERF_NNODES="1",
        DLPERF_MASTER_ADDR=LOCALHOST,
        DLPERF_MASTER_PORT=str(port),
        DLPERF_HOSTS=LOCALHOST,
        DLPERF_WORKER_PORTS=",".join(str(p) for p in worker_ports or []),
    )
    return env


@dataclass(frozen=True)
class Programs:
    """What the processes of a run start: the worker's and the services' command lines, the
    caller's environment less the ``stale`` variables, and the framework's services (if any)."""

    worker_argv: list[str]
    service_argv: list[str]
    env: dict
    layout: ServiceLayout | None = None
    stale: tuple[str, ...] = ()

    def base_env(self) -> dict:
        return clean_env(self.env, self.stale)

    def services_for(self, procs: int) -> ServiceLayout | None:
        """The service layout a run of ``procs`` workers starts (a single worker needs none)."""
        return self.layout if procs > 1 else None


def local_plan(procs: int, programs: Programs) -> list[Command]:
    """Every process of a run on this host: ``procs`` workers (+ the framework's services)."""
    ports = free_ports(procs + 2)
    master_port, service_port, worker_ports = ports[0], ports[1], ports[2:]
    base = programs.base_env()
    layout = programs.services_for(procs)
    commands = []
    if layout is not None:
        commands += layout.services(programs.service_argv, base, LOCALHOST, service_port, procs)
    for rank in range(procs):
        worker_env = local_worker_env(base, rank, procs, master_port, worker_ports)
        if layout is not None:
            worker_env.update(layout.worker_env(LOCALHOST, service_port, procs, LOCALHOST))
        commands.append(Command(f"worker{rank}", programs.worker_argv, worker_env))
    return commands


def srun_plan(procs: int, nodes: int, threads: int, programs: Programs) -> list[Command]:
    """One ``srun`` starting ``procs // nodes`` workers on each of ``nodes`` hosts, one per
    Slurm task (each reads its rank from Slurm), plus the framework's services, started here
    on the driver's host (the first host of the allocation, also rank 0's) at its address."""
    prefix = [
        "srun",
        "--overlap",
        f"--ntasks={procs}",
        f"--nodes={nodes}",
        f"--ntasks-per-node={procs // nodes}",
        f"--cpus-per-task={threads}",
        "--distribution=block",
        "--kill-on-bad-exit=1",
        "--export=ALL",
    ]
    base = programs.base_env()
    worker_env = dict(base)
    commands = []
    layout = programs.services_for(procs)
    if layout is not None:
        host, port = programs.env.get("DLPERF_MASTER_ADDR") or host_address(), free_port()
        commands += layout.services(programs.service_argv, base, host, port, procs)
        # No node host: each worker finds its own address, on whichever host it runs.
        worker_env.update(layout.worker_env(host, port, procs, None))
    commands.append(Command("srun", prefix + programs.worker_argv, worker_env))
    return commands


@dataclass
class ProcessOutcome:
    name: str
    returncode: int | None
    log_path: Path
    service: bool = False
    # Still running when the launcher ended the run (timeout, crashed peer, services
    # after the workers): its signal exit code is ours, not the system's.
    ended_by_launcher: bool = False

    def tail(self, chars: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""


@dataclass
class LaunchResult:
    outcomes: list[ProcessOutcome]
    timed_out: bool
    wall_s: float

    @property
    def workers(self) -> list[ProcessOutcome]:
        return [o for o in self.outcomes if not o.service]


def _terminate(procs: list[subprocess.Popen], grace_s: float = 5.0) -> None:
    """End whole process groups: workers may have children (srun steps, TF threads)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for proc in procs:
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, sig)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline and any(p.poll() is None for p in procs):
            time.sleep(0.05)


def run_processes(
    commands: list[Command],
    log_dir: Path,
    timeout_s: float,
    straggler_grace_s: float = 20.0,
    service_grace_s: float = 10.0,
) -> LaunchResult:
    """Run the commands; stop them all on timeout, on a crash, or once the workers are done.

    If one worker fails, its peers usually block in a collective forever, so the
    rest get ``straggler_grace_s`` to finish before they are ended too. Services
    (MXNet scheduler/server) get ``service_grace_s`` after the last worker to
    shut down on their own, then they are ended: a crashed worker leaves them waiting.
    """
    log_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    logs = [log_dir / f"{command.name}.log" for command in commands]
    by_index: dict[int, subprocess.Popen] = {}
    # Services first: the workers are told their process ids, so that the CPU the services
    # use during the timed epoch counts as the run's own and not as a neighbour's.
    pids: list[str] = []
    for index in sorted(range(len(commands)), key=lambda i: not commands[i].service):
        command = commands[index]
        env = (
            command.env
            if command.service
            else command.env | {SERVICE_PIDS_VARIABLE: ",".join(pids)}
        )
        with open(logs[index], "wb") as log_fh:
            by_index[index] = subprocess.Popen(
                command.argv,
                env=env,
                stdout=log_fh,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        if command.service:
            pids.append(str(by_index[index].pid))
    procs = [by_index[index] for index in range(len(commands))]
    workers = [p for p, c in zip(procs, commands, strict=True) if not c.service]
    timed_out = False
    first_failure: float | None = None
    workers_done: float | None = None
    try:
        while any(p.poll() is None for p in procs):
            now = time.monotonic()
            if now - started > timeout_s:
                timed_out = True
                break
            if first_failure is None and any(p.poll() not in (None, 0) for p in procs):
                first_failure = now
            if first_failure is not None and now - first_failure > straggler_grace_s:
                break
            if workers_done is None and all(p.poll() is not None for p in workers):
                workers_done = now
                if any(p.returncode != 0 for p in workers):
                    break  # services of failed workers would wait for them forever
            if workers_done is not None and now - workers_done > service_grace_s:
                break
            time.sleep(0.05)
    finally:
        running = [p.poll() is None for p in procs]
        _terminate(procs)
    outcomes = [
        ProcessOutcome(c.name, p.returncode, log, c.service, ended)
        for c, p, log, ended in zip(commands, procs, logs, running, strict=True)
    ]
    return LaunchResult(outcomes, timed_out, time.monotonic() - started)
