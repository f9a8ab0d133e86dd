"""Who am I in a distributed run, and how the workers of one run are started.

One module owns rank discovery for all three frameworks. A worker learns its
rank and peers either from the local launcher (``RANK``/``WORLD_SIZE``/... set
by :func:`spawn_local`) or, when started by ``srun``, from Slurm
(``SLURM_PROCID``, ``SLURM_NTASKS``, ``SLURM_JOB_NODELIST``, ...).
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

DEFAULT_PORT_BASE = 29500


@dataclass(frozen=True)
class DistInfo:
    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    local_world_size: int = 1
    node_rank: int = 0
    nnodes: int = 1
    master_addr: str = "127.0.0.1"
    master_port: int = DEFAULT_PORT_BASE
    hosts: tuple[str, ...] = ("127.0.0.1",)
    source: str = "single"  # single | local | slurm
    extra: dict = field(default_factory=dict)

    @property
    def is_distributed(self) -> bool:
        return self.world_size > 1

    def host_of_rank(self, rank: int) -> str:
        """Host of a rank, with ranks laid out in blocks of ``local_world_size`` per node."""
        return self.hosts[min(rank // self.local_world_size, len(self.hosts) - 1)]

    def to_dict(self) -> dict:
        data = asdict(self)
        data["hosts"] = list(self.hosts)
        return data


def expand_nodelist(nodelist: str) -> list[str]:
    """Expand a Slurm node list such as ``gpu[01-03,07],login1`` into host names.

    Implemented here so a worker does not need ``scontrol`` on its PATH.
    """
    hosts: list[str] = []
    for match in re.finditer(r"([^,\[]+)(?:\[([^\]]+)\])?(?:,|$)", nodelist.strip()):
        prefix, ranges = match.group(1), match.group(2)
        if not prefix and not ranges:
            continue
        if ranges is None:
            hosts.append(prefix)
            continue
        for part in ranges.split(","):
            if "-" in part:
                lo, hi = part.split("-", 1)
                width = len(lo)
                hosts.extend(f"{prefix}{i:0{width}d}" for i in range(int(lo), int(hi) + 1))
            else:
                hosts.append(f"{prefix}{part}")
    return hosts


def _int_env(env: dict, name: str, default: int) -> int:
    value = env.get(name, "")
    try:
        return int(value.split("(")[0]) if value else default
    except ValueError:
        return default


def slurm_port(env: dict) -> int:
    """A port every task of a Slurm job agrees on without talking: derived from the job id."""
    if env.get("DLPERF_MASTER_PORT"):
        return int(env["DLPERF_MASTER_PORT"])
    job_id = _int_env(env, "SLURM_JOB_ID", 0)
    return 20000 + (job_id * 7) % 20000


def from_environment(env: dict | None = None) -> DistInfo:
    """The distributed layout of this process, from the launcher's or Slurm's variables."""
    env = dict(os.environ if env is None else env)
    if "DLPERF_RANK" in env:  # our local launcher
        world = int(env["DLPERF_WORLD_SIZE"])
        hosts = tuple(env.get("DLPERF_HOSTS", "127.0.0.1").split(","))
        return DistInfo(
            rank=int(env["DLPERF_RANK"]),
            world_size=world,
            local_rank=int(env.get("DLPERF_LOCAL_RANK", env["DLPERF_RANK"])),
            local_world_size=int(env.get("DLPERF_LOCAL_WORLD_SIZE", world)),
            node_rank=int(env.get("DLPERF_NODE_RANK", "0")),
            nnodes=int(env.get("DLPERF_NNODES", "1")),
            master_addr=env.get("DLPERF_MASTER_ADDR", "127.0.0.1"),
            master_port=int(env.get("DLPERF_MASTER_PORT", DEFAULT_PORT_BASE)),
            hosts=hosts,
            source="local",
        )
    if "SLURM_PROCID" in env and _int_env(env, "SLURM_NTASKS", 1) > 1:
        world = _int_env(env, "SLURM_NTASKS", 1)
        nnodes = _int_env(env, "SLURM_NNODES", 1)
        hosts = tuple(expand_nodelist(env.get("SLURM_JOB_NODELIST", "")) or ["127.0.0.1"])
        per_node = _int_env(env, "SLURM_NTASKS_PER_NODE", max(1, world // max(nnodes, 1)))
        master = env.get("DLPERF_MASTER_ADDR") or hosts[0]
        return DistInfo(
            rank=_int_env(env, "SLURM_PROCID", 0),
            world_size=world,
            local_rank=_int_env(env, "SLURM_LOCALID", 0),
            local_world_size=per_node,
            node_rank=_int_env(env, "SLURM_NODEID", 0),
            nnodes=nnodes,
            master_addr=master,
            master_port=slurm_port(env),
            hosts=hosts,
            source="slurm",
        )
    return DistInfo()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class WorkerOutcome:
    rank: int
    returncode: int | None
    log_path: Path

    def tail(self, chars: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""


@dataclass
class LaunchResult:
    outcomes: list[WorkerOutcome]
    timed_out: bool
    wall_s: float


def _terminate(procs: list[subprocess.Popen], grace_s: float = 5.0) -> None:
    """End whole process groups: workers may have children (MXNet servers, TF threads)."""
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
    commands: list[tuple[list[str], dict]],
    log_dir: Path,
    timeout_s: float,
    straggler_grace_s: float = 20.0,
) -> LaunchResult:
    """Run one process per (argv, env) pair; stop them all on timeout or on a crash.

    If one worker fails, its peers usually block in a collective forever, so the
    rest get ``straggler_grace_s`` to finish before they are ended too.
    """
    log_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    procs: list[subprocess.Popen] = []
    logs: list[Path] = []
    for index, (argv, env) in enumerate(commands):
        log_path = log_dir / f"worker{index}.log"
        logs.append(log_path)
        with open(log_path, "wb") as log_fh:
            procs.append(
                subprocess.Popen(
                    argv, env=env, stdout=log_fh, stderr=subprocess.STDOUT, start_new_session=True
                )
            )
    timed_out = False
    first_failure: float | None = None
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
            time.sleep(0.05)
    finally:
        _terminate(procs)
    outcomes = [WorkerOutcome(i, p.returncode, logs[i]) for i, p in enumerate(procs)]
    return LaunchResult(outcomes, timed_out, time.monotonic() - started)


def local_worker_env(base_env: dict, rank: int, world: int, port: int) -> dict:
    env = dict(base_env)
    env.update(
        DLPERF_RANK=str(rank),
        DLPERF_WORLD_SIZE=str(world),
        DLPERF_LOCAL_RANK=str(rank),
        DLPERF_LOCAL_WORLD_SIZE=str(world),
        DLPERF_NODE_RANK="0",
        DLPERF_NNODES="1",
        DLPERF_MASTER_ADDR="127.0.0.1",
        DLPERF_MASTER_PORT=str(port),
        DLPERF_HOSTS="127.0.0.1",
    )
    # ps-lite (MXNet) takes a bare PORT as every node's port: never pass it on.
    env.pop("PORT", None)
    return env
