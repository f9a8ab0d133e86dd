"""Rank discovery (dlperf.bench.ranks), the driver's process plans and supervision
(dlperf.bench.processes) and MXNet's parameter-server layout (dlperf.bench.mx_service)."""

from __future__ import annotations

import sys
import time

import pytest

from dlperf.bench import ranks
from dlperf.bench.backends import CLUSTER_VARIABLES, service_layout
from dlperf.bench.mx_service import dmlc_env
from dlperf.bench.processes import Command, Programs, local_plan, run_processes, srun_plan
from dlperf.bench.ranks import DistInfo, expand_nodelist, from_environment, slurm_port


def plan_local(framework, procs, worker_argv, service_argv, env):
    layout = service_layout(framework)
    programs = Programs(worker_argv, service_argv, env, layout, CLUSTER_VARIABLES)
    return local_plan(procs, programs)


def plan_srun(framework, procs, nodes, threads, worker_argv, service_argv, env):
    layout = service_layout(framework)
    programs = Programs(worker_argv, service_argv, env, layout, CLUSTER_VARIABLES)
    return srun_plan(procs, nodes, threads, programs)


@pytest.mark.parametrize(
    ("nodelist", "hosts"),
    [
        ("node1", ["node1"]),
        ("gpu[01-03,07]", ["gpu01", "gpu02", "gpu03", "gpu07"]),
        ("gpu[8-10],login1", ["gpu8", "gpu9", "gpu10", "login1"]),
        ("a[1-2],b[3]", ["a1", "a2", "b3"]),
        ("", []),
    ],
)
def test_expand_nodelist(nodelist, hosts):
    assert expand_nodelist(nodelist) == hosts


def test_no_launcher_variables_means_a_single_process():
    dist = from_environment({"PATH": "/bin"})
    assert (dist.rank, dist.world_size, dist.source) == (0, 1, "single")
    assert not dist.is_distributed


def test_local_launcher_variables():
    env = {
        "DLPERF_RANK": "1",
        "DLPERF_WORLD_SIZE": "2",
        "DLPERF_MASTER_PORT": "31000",
        "DLPERF_WORKER_PORTS": "31001,31002",
        # Slurm variables of the surrounding job must not win over our own launcher's.
        "SLURM_PROCID": "0",
        "SLURM_NTASKS": "4",
    }
    dist = from_environment(env)
    assert (dist.rank, dist.world_size, dist.local_rank, dist.source) == (1, 2, 1, "local")
    assert dist.master_port == 31000
    assert dist.worker_ports == (31001, 31002)


def slurm_env(procid: int, localid: int, nodeid: int) -> dict:
    return {
        "SLURM_JOB_ID": "4242",
        "SLURM_PROCID": str(procid),
        "SLURM_NTASKS": "4",
        "SLURM_NNODES": "2",
        "SLURM_NTASKS_PER_NODE": "2(x2)",
        "SLURM_LOCALID": str(localid),
        "SLURM_NODEID": str(nodeid),
        "SLURM_JOB_NODELIST": "gpu[01-02]",
    }


def test_slurm_variables():
    dist = from_environment(slurm_env(3, 1, 1))
    assert (dist.rank, dist.world_size, dist.local_rank, dist.local_world_size) == (3, 4, 1, 2)
    assert (dist.node_rank, dist.nnodes, dist.source) == (1, 2, "slurm")
    assert dist.hosts == ("gpu01", "gpu02")
    assert dist.master_addr == "gpu01"
    assert dist.master_port == slurm_port(slurm_env(0, 0, 0))  # every task agrees without talking
    assert dist.host_of_rank(0) == "gpu01" and dist.host_of_rank(3) == "gpu02"


def test_worker_addresses_from_slurm_name_each_rank_by_its_host():
    dist = from_environment(slurm_env(2, 0, 1))
    base = dist.master_port
    assert dist.worker_addresses() == [
        f"gpu01:{base + 1}",
        f"gpu01:{base + 2}",
        f"gpu02:{base + 1}",
        f"gpu02:{base + 2}",
    ]


def test_worker_addresses_without_ports_explain_the_fix():
    with pytest.raises(ValueError, match="one listening port per worker"):
        DistInfo(rank=0, world_size=2).worker_addresses()


def test_each_job_step_gets_its_own_port():
    """Several runs inside one Slurm job (a job group) must not meet at the same port."""
    first = slurm_port({**slurm_env(0, 0, 0), "SLURM_STEP_ID": "0"})
    second = slurm_port({**slurm_env(0, 0, 0), "SLURM_STEP_ID": "1"})
    assert first != second and first % 8 == second % 8 == 0


def test_dmlc_roles():
    env = dmlc_env("server", "10.0.0.1", 9092, 4, node_host="10.0.0.1")
    assert env == {
        "DMLC_ROLE": "server",
        "DMLC_PS_ROOT_URI": "10.0.0.1",
        "DMLC_PS_ROOT_PORT": "9092",
        "DMLC_NUM_SERVER": "1",
        "DMLC_NUM_WORKER": "4",
        "DMLC_NODE_HOST": "10.0.0.1",
    }
    with pytest.raises(ValueError, match="scheduler, server, worker"):
        dmlc_env("master", "x", 1, 1)


def test_local_plan_for_mxnet_adds_scheduler_and_server():
    commands = plan_local("mxnet", 2, ["w"], ["s"], {"PORT": "9093", "PATH": "/bin"})
    assert [c.name for c in commands] == ["scheduler", "server", "worker0", "worker1"]
    assert [c.service for c in commands] == [True, True, False, False]
    roles = [c.env["DMLC_ROLE"] for c in commands]
    assert roles == ["scheduler", "server", "worker", "worker"]
    assert len({c.env["DMLC_PS_ROOT_PORT"] for c in commands}) == 1
    assert all("PORT" not in c.env for c in commands)  # ps-lite would bind every node to it
    assert commands[0].env["OMP_NUM_THREADS"] == "1"


def test_local_plan_gives_every_worker_its_rank_and_distinct_ports():
    commands = plan_local("tensorflow", 3, ["w"], ["s"], {"TF_CONFIG": "stale"})
    assert [c.env["DLPERF_RANK"] for c in commands] == ["0", "1", "2"]
    ports = commands[0].env["DLPERF_WORKER_PORTS"].split(",")
    assert len(set(ports)) == 3 and commands[0].env["DLPERF_MASTER_PORT"] not in ports
    assert all("TF_CONFIG" not in c.env and "DMLC_ROLE" not in c.env for c in commands)
    single = plan_local("mxnet", 1, ["w"], ["s"], {})
    assert [c.name for c in single] == ["worker0"] and "DMLC_ROLE" not in single[0].env


def test_srun_plan_starts_one_task_per_worker_and_mxnet_services_here():
    commands = plan_srun(
        "mxnet", 4, 2, 3, ["python", "-m", "w"], ["s"], {"DLPERF_MASTER_ADDR": "10.1.1.1"}
    )
    assert [c.name for c in commands] == ["scheduler", "server", "srun"]
    srun = commands[-1]
    assert srun.argv[0] == "srun" and srun.argv[-3:] == ["python", "-m", "w"]
    assert {"--ntasks=4", "--nodes=2", "--ntasks-per-node=2", "--cpus-per-task=3"} <= set(srun.argv)
    assert srun.env["DMLC_ROLE"] == "worker" and srun.env["DMLC_PS_ROOT_URI"] == "10.1.1.1"
    assert "DMLC_NODE_HOST" not in srun.env  # each worker finds its own address
    assert [c.name for c in plan_srun("pytorch", 4, 2, 3, ["w"], ["s"], {})] == ["srun"]


def py(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_run_processes_ends_services_once_the_workers_are_done(tmp_path):
    commands = [
        Command("server", py("import time; time.sleep(60)"), {}, service=True),
        Command("worker0", py("print('hello')"), {}),
    ]
    start = time.monotonic()
    result = run_processes(commands, tmp_path, timeout_s=30, service_grace_s=0.5)
    assert time.monotonic() - start < 10
    assert not result.timed_out
    assert [o.returncode for o in result.workers] == [0]
    assert result.outcomes[0].returncode != 0 and result.outcomes[0].ended_by_launcher
    assert not result.workers[0].ended_by_launcher
    assert "hello" in result.workers[0].tail()


def test_workers_are_told_the_service_process_ids_wherever_the_services_are_listed(tmp_path):
    # The worker reads the command line of every process id it is given: the services' own.
    read_services = (
        "import os; pids = os.environ['DLPERF_SERVICE_PIDS'].split(','); "
        "print([open(f'/proc/{p}/cmdline').read().split(chr(0))[2] for p in pids])"
    )
    commands = [
        Command("worker0", py(read_services), {}),
        Command("scheduler", py("import time; time.sleep(60)  # scheduler"), {}, service=True),
        Command("server", py("import time; time.sleep(60)  # server"), {}, service=True),
        Command("worker1", py("import os; print(repr(os.environ['DLPERF_SERVICE_PIDS']))"), {}),
    ]
    result = run_processes(commands, tmp_path, timeout_s=30, service_grace_s=0.5)
    assert [o.returncode for o in result.workers] == [0, 0]
    assert "# scheduler" in result.workers[0].tail() and "# server" in result.workers[0].tail()
    alone = run_processes([commands[3]], tmp_path / "alone", timeout_s=30)
    assert alone.workers[0].tail().strip() == "''"  # no services: an empty list, never a stale one


def test_run_processes_ends_stragglers_after_a_crash(tmp_path):
    commands = [
        Command("worker0", py("raise SystemExit(3)"), {}),
        Command("worker1", py("import time; time.sleep(60)"), {}),  # a peer stuck in a collective
    ]
    result = run_processes(commands, tmp_path, timeout_s=30, straggler_grace_s=0.5)
    assert not result.timed_out
    assert result.outcomes[0].returncode == 3 and result.outcomes[1].returncode != 0


def test_run_processes_times_out_and_kills_everything(tmp_path):
    commands = [Command("worker0", py("import time; time.sleep(60)"), {})]
    result = run_processes(commands, tmp_path, timeout_s=0.5)
    assert result.timed_out
    assert result.outcomes[0].returncode is not None


def test_a_host_is_reached_at_the_address_its_name_resolves_to(monkeypatch):
    """A host of the multi-host cluster (a namespace without a default route) has its name
    in /etc/hosts: that address, not loopback, is what ps-lite must bind and announce."""
    monkeypatch.setattr(ranks.socket, "gethostname", lambda: "dlnode2")
    monkeypatch.setattr(
        ranks.socket, "gethostbyname", lambda name: {"dlnode2": "10.213.57.12"}[name]
    )
    assert ranks.host_address() == "10.213.57.12"
