"""Who am I in a distributed run: rank discovery inside a worker.

A worker learns its rank and peers either from the local launcher
(``DLPERF_RANK``/``DLPERF_WORLD_SIZE``/..., set by :mod:`dlperf.bench.processes`) or,
when started by ``srun``, from Slurm (``SLURM_PROCID``, ``SLURM_NTASKS``,
``SLURM_LOCALID``, ``SLURM_NODEID``, ``SLURM_STEP_NODELIST``); the local launcher's
variables win when both are present. Peers are named by their hosts as Slurm lists them,
so ranks on different hosts reach each other by host address, never by ``localhost``.
What each framework builds from a :class:`DistInfo` lives with the framework
(``tf_backend``, ``mx_backend``, ``mx_service``).
"""

from __future__ import annotations

import ipaddress
import os
import re
import socket
from dataclasses import asdict, dataclass, field

DEFAULT_PORT_BASE = 29500

#: What the local launcher tells each worker (the driver sets them, :func:`from_environment`
#: reads them).
LOCAL_RANK_VARIABLES = (
    "DLPERF_RANK",
    "DLPERF_WORLD_SIZE",
    "DLPERF_LOCAL_RANK",
    "DLPERF_LOCAL_WORLD_SIZE",
    "DLPERF_NODE_RANK",
    "DLPERF_NNODES",
    "DLPERF_MASTER_ADDR",
    "DLPERF_MASTER_PORT",
    "DLPERF_HOSTS",
    "DLPERF_WORKER_PORTS",
)


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
    # One listening port per rank (TensorFlow's gRPC servers), indexed by rank.
    worker_ports: tuple[int, ...] = ()
    source: str = "single"  # single | local | slurm
    extra: dict = field(default_factory=dict)

    @property
    def is_distributed(self) -> bool:
        return self.world_size > 1

    def host_of_rank(self, rank: int) -> str:
        """Host of a rank, with ranks laid out in blocks of ``local_world_size`` per node
        (Slurm's default block distribution)."""
        return self.hosts[min(rank // self.local_world_size, len(self.hosts) - 1)]

    def worker_address(self, rank: int) -> str:
        return f"{self.host_of_rank(rank)}:{self.worker_ports[rank]}"

    def worker_addresses(self) -> list[str]:
        """``host:port`` of every rank's own listening port, in rank order."""
        if len(self.worker_ports) != self.world_size:
            raise ValueError(
                f"one listening port per worker is needed, got {len(self.worker_ports)} "
                f"for {self.world_size} workers; "
                "start the workers with `dlperf bench` (local launcher or srun), which assigns them"
            )
        return [self.worker_address(rank) for rank in range(self.world_size)]

    def to_dict(self) -> dict:
        data = asdict(self)
        data["hosts"] = list(self.hosts)
        data["worker_ports"] = list(self.worker_ports)
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


def _ports(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split(",") if p.strip())


def slurm_port(env: dict) -> int:
    """A port every task of a Slurm job step agrees on without talking: derived from the job
    and step ids (several runs of one job, as in a job group, each get their own step)."""
    if env.get("DLPERF_MASTER_PORT"):
        return int(env["DLPERF_MASTER_PORT"])
    job_id = _int_env(env, "SLURM_JOB_ID", 0)
    step_id = _int_env(env, "SLURM_STEP_ID", 0)
    # Multiples of 8 leave room above the port for one port per task of a node
    # (TensorFlow workers).
    return 20000 + ((job_id * 7 + step_id) * 8) % 20000


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
            worker_ports=_ports(env.get("DLPERF_WORKER_PORTS", "")),
            source="local",
        )
    if "SLURM_PROCID" in env and _int_env(env, "SLURM_NTASKS", 1) > 1:
        world = _int_env(env, "SLURM_NTASKS", 1)
        nnodes = _int_env(env, "SLURM_STEP_NUM_NODES", _int_env(env, "SLURM_NNODES", 1))
        # The step's nodes (srun inside a bigger allocation may use fewer than the job's).
        nodelist = env.get("SLURM_STEP_NODELIST") or env.get("SLURM_JOB_NODELIST", "")
        hosts = tuple(expand_nodelist(nodelist) or ["127.0.0.1"])
        per_node = _int_env(env, "SLURM_NTASKS_PER_NODE", max(1, world // max(nnodes, 1)))
        master = env.get("DLPERF_MASTER_ADDR") or hosts[0]
        port = slurm_port(env)
        return DistInfo(
            rank=_int_env(env, "SLURM_PROCID", 0),
            world_size=world,
            local_rank=_int_env(env, "SLURM_LOCALID", 0),
            local_world_size=per_node,
            node_rank=_int_env(env, "SLURM_NODEID", 0),
            nnodes=nnodes,
            master_addr=master,
            master_port=port,
            hosts=hosts,
            # Tasks on one node need distinct ports; tasks on different nodes may share one.
            worker_ports=tuple(port + 1 + rank % per_node for rank in range(world)),
            source="slurm",
        )
    return DistInfo()


def host_address() -> str:
    """This host's address as other hosts reach it (zmq binds need an IP, not a name).

    The address the host's own name resolves to, when that is not a loopback address (a
    cluster node, a network namespace of the local multi-host cluster); otherwise the
    address of the interface the kernel would route outside traffic through (connecting a
    UDP socket sends nothing).
    """
    try:
        named = socket.gethostbyname(socket.gethostname())
    except OSError:
        named = "127.0.0.1"
    if not ipaddress.ip_address(named).is_loopback:
        return named
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            sock.connect(("10.255.255.255", 1))
            return sock.getsockname()[0]
    except OSError:
        return named
