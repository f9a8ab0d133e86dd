"""Who am I in a distributed run, and how the processes of one run are started.

One module owns rank discovery and process layout for all three frameworks. A
worker learns its rank and peers either from the local launcher
(``DLPERF_RANK``/``DLPERF_WORLD_SIZE``/... set by :func:`local_plan`) or, when
started by ``srun``, from Slurm (``SLURM_PROCID``, ``SLURM_NTASKS``,
``SLURM_LOCALID``, ``SLURM_NODEID``, ``SLURM_JOB_NODELIST``); the local
launcher's variables win when both are present.

What each framework builds from that:
- PyTorch: ``init_process_group`` over TCP at (master_addr, master_port); gloo
  on CPU, NCCL on GPU.
- TensorFlow: ``TF_CONFIG`` (:func:`tf_config`) listing every worker at its own
  port -- locally free ports chosen by the driver, under Slurm
  ``master_port + 1 + local index`` on each worker's node.
- MXNet: a ps-lite scheduler and server started by the driver on its own node
  (also under srun, so every Slurm task is a worker), and ``DMLC_*`` variables
  (:func:`dmlc_env`) for every process; ``PORT`` is never passed on.
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
    """A port every task of a Slurm job agrees on without talking: derived from the job id."""
    if env.get("DLPERF_MASTER_PORT"):
        return int(env["DLPERF_MASTER_PORT"])
    job_id = _int_env(env, "SLURM_JOB_ID", 0)
    # Leaves room above it for one port per task of a node (TensorFlow workers).
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


def tf_config(dist: DistInfo) -> dict:
    """TF_CONFIG for MultiWorkerMirroredStrategy: every worker's address, and which one we are."""
    if len(dist.worker_ports) != dist.world_size:
        raise ValueError(
            f"TF_CONFIG needs one port per worker, got {len(dist.worker_ports)} "
            f"for {dist.world_size} workers; "
            "start the workers with `dlperf bench` (local launcher or srun), which assigns them"
        )
    return {
        "cluster": {"worker": [dist.worker_address(rank) for rank in range(dist.world_size)]},
        "task": {"type": "worker", "index": dist.rank},
    }


# MXNet's parameter server (ps-lite): one scheduler and NUM_SERVERS servers
# besides the workers. The driver starts scheduler and servers itself, on its
# own node, also when the workers are started by srun: then every Slurm task is
# a worker, so the job's task count and resources stay those of the workers.
MXNET_SERVERS = 1
MXNET_ROLES = ("scheduler", "server", "worker")


def dmlc_env(
    role: str, root_uri: str, root_port: int, num_workers: int, node_host: str | None = None
) -> dict:
    """The DMLC_* variables ps-lite reads for one process of a ``dist_sync`` kvstore."""
    if role not in MXNET_ROLES:
        raise ValueError(f"DMLC role {role!r} is not one of {', '.join(MXNET_ROLES)}")
    env = {
        "DMLC_ROLE": role,
        "DMLC_PS_ROOT_URI": root_uri,
        "DMLC_PS_ROOT_PORT": str(root_port),
        "DMLC_NUM_SERVER": str(MXNET_SERVERS),
        "DMLC_NUM_WORKER": str(num_workers),
    }
    if node_host:
        env["DMLC_NODE_HOST"] = node_host
    return env


def routable_ip() -> str:
    """This host's address as other nodes reach it (zmq binds need an IP, not a name).

    Connecting a UDP socket sends nothing; it only asks the kernel which
    interface would be used. Falls back to name resolution.
    """
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            sock.connect(("10.255.255.255", 1))
            return sock.getsockname()[0]
    except OSError:
        return socket.gethostbyname(socket.gethostname())


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def free_ports(count: int) -> list[int]:
    """``count`` distinct free ports (held open together, so none is handed out twice)."""
    socks = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind(("127.0.0.1", 0))
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


def clean_env(base_env: dict) -> dict:
    env = dict(base_env)
    # ps-lite (MXNet) takes a bare PORT as every node's port: never pass it on.
    env.pop("PORT", None)
    env.pop("DMLC_PORT", None)
    # Rank and peer variables are set per process below; stale ones from the
    # caller's environment (a nested run, a shell) must not leak into a worker.
    for name in (*LOCAL_RANK_VARIABLES, *INHERITED_CLUSTER_VARIABLES):
        env.pop(name, None)
    return env


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


INHERITED_CLUSTER_VARIABLES = (
    "TF_CONFIG",
    "DMLC_ROLE",
    "DMLC_PS_ROOT_URI",
    "DMLC_PS_ROOT_PORT",
    "DMLC_NUM_SERVER",
    "DMLC_NUM_WORKER",
    "DMLC_NODE_HOST",
)


def local_worker_env(
    base_env: dict, rank: int, world: int, port: int, worker_ports: list[int] | None = None
) -> dict:
    env = clean_env(base_env)
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
        DLPERF_WORKER_PORTS=",".join(str(p) for p in worker_ports or []),
    )
    return env


def mxnet_services(
    service_argv: list[str], env: dict, host: str, port: int, workers: int
) -> list[Command]:
    """The ps-lite scheduler and server(s) of one MXNet run, with one OpenMP thread each."""
    commands = []
    for role, count in (("scheduler", 1), ("server", MXNET_SERVERS)):
        for index in range(count):
            service_env = clean_env(env)
            service_env.update(dmlc_env(role, host, port, workers, node_host=host))
            service_env.update(OMP_NUM_THREADS="1", MXNET_CPU_WORKER_NTHREADS="1")
            name = role if count == 1 else f"{role}{index}"
            commands.append(Command(name, service_argv, service_env, service=True))
    return commands


def local_plan(
    framework: str, procs: int, worker_argv: list[str], service_argv: list[str], env: dict
) -> list[Command]:
    """Every process of a run on this host: ``procs`` workers (+ MXNet's scheduler and server)."""
    ports = free_ports(procs + 2)
    master_port, root_port, worker_ports = ports[0], ports[1], ports[2:]
    commands = []
    if framework == "mxnet" and procs > 1:
        commands += mxnet_services(service_argv, env, "127.0.0.1", root_port, procs)
    for rank in range(procs):
        worker_env = local_worker_env(env, rank, procs, master_port, worker_ports)
        if framework == "mxnet" and procs > 1:
            worker_env.update(
                dmlc_env("worker", "127.0.0.1", root_port, procs, node_host="127.0.0.1")
            )
        commands.append(Command(f"worker{rank}", worker_argv, worker_env))
    return commands


def srun_plan(
    framework: str,
    procs: int,
    nodes: int,
    threads: int,
    worker_argv: list[str],
    service_argv: list[str],
    env: dict,
) -> list[Command]:
    """One ``srun`` starting one worker per Slurm task (each reads its rank from Slurm),
    plus, for MXNet, scheduler and server started here on the driver's node."""
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
    worker_env = clean_env(env)
    commands = []
    if framework == "mxnet" and procs > 1:
        host, root_port = env.get("DLPERF_MASTER_ADDR") or routable_ip(), free_port()
        commands += mxnet_services(service_argv, env, host, root_port, procs)
        # No DMLC_NODE_HOST: each worker finds its own address (see the MXNet backend).
        worker_env.update(dmlc_env("worker", host, root_port, procs))
    commands.append(Command("srun", prefix + worker_argv, worker_env))
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
    procs: list[subprocess.Popen] = []
    logs: list[Path] = []
    for command in commands:
        log_path = log_dir / f"{command.name}.log"
        logs.append(log_path)
        with open(log_path, "wb") as log_fh:
            procs.append(
                subprocess.Popen(
                    command.argv,
                    env=command.env,
                    stdout=log_fh,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
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
