"""MXNet's parameter server (ps-lite): how the driver lays it out, and one scheduler or
server process (``python -m dlperf.bench.mx_service``).

A distributed MXNet run has one scheduler and ``MXNET_SERVERS`` servers besides the
workers. The driver starts scheduler and servers itself, on its own host (the first host of
the run), also when the workers are started by srun: then every Slurm task is a worker, so
the job's task count and resources stay those of the workers. Every process gets the
``DMLC_*`` variables (:func:`dmlc_env`); the root URI is the driver host's address, and
under srun each worker tells ps-lite its own address (see the MXNet backend), so the run
works across hosts. ``PORT`` is never passed on: ps-lite would bind every node to it.

With DMLC_ROLE set to ``scheduler`` or ``server``, importing mxnet runs that role's loop
(mxnet/kvstore_server.py) and exits the process when the workers are done. This module
imports mxnet only in that process: the driver, which has no MXNet, imports the rest.
"""

from __future__ import annotations

import argparse
import os
import sys

from .processes import Command

MXNET_SERVERS = 1
MXNET_ROLES = ("scheduler", "server", "worker")
ROLES = ("scheduler", "server")
#: ps-lite's variables: set per process by the launcher, never inherited from the caller.
DMLC_VARIABLES = (
    "PORT",
    "DMLC_PORT",
    "DMLC_ROLE",
    "DMLC_PS_ROOT_URI",
    "DMLC_PS_ROOT_PORT",
    "DMLC_NUM_SERVER",
    "DMLC_NUM_WORKER",
    "DMLC_NODE_HOST",
)


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


class ParameterServer:
    """The :class:`dlperf.bench.processes.ServiceLayout` of MXNet: scheduler and server(s),
    one OpenMP thread each."""

    def services(
        self, service_argv: list[str], env: dict, host: str, port: int, workers: int
    ) -> list[Command]:
        commands = []
        for role, count in (("scheduler", 1), ("server", MXNET_SERVERS)):
            for index in range(count):
                service_env = dict(env)
                service_env.update(dmlc_env(role, host, port, workers, node_host=host))
                service_env.update(OMP_NUM_THREADS="1", MXNET_CPU_WORKER_NTHREADS="1")
                name = role if count == 1 else f"{role}{index}"
                commands.append(Command(name, service_argv, service_env, service=True))
        return commands

    def worker_env(self, host: str, port: int, workers: int, node_host: str | None) -> dict:
        return dmlc_env("worker", host, port, workers, node_host=node_host)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    # Not read: it names the run on the command line, so `ps` shows which run a process serves.
    parser.add_argument("--work-dir", help="the run's work directory")
    parser.parse_args(argv)
    role = os.environ.get("DMLC_ROLE")
    if role not in ROLES:
        print(
            f"dlperf.bench.mx_service: DMLC_ROLE is {role!r}, expected one of {', '.join(ROLES)}; "
            "this module is started by the benchmark launcher for distributed MXNet runs",
            file=sys.stderr,
        )
        return 2
    import mxnet  # noqa: F401 -- runs the scheduler/server loop, then calls sys.exit

    print(
        f"dlperf.bench.mx_service: mxnet returned without running the {role} loop", file=sys.stderr
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
