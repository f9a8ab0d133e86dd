#!/usr/bin/env python3
"""A stand-in for Slurm's ``srun`` on one host, for tests without a cluster.

Starts ``--ntasks`` copies of the command with the variables srun gives each
task (SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS, SLURM_JOB_NODELIST, ...), so
the workers' Slurm path (rank discovery, TF_CONFIG, DMLC roles) runs for real.
"""

from __future__ import annotations

import os
import subprocess
import sys


def main() -> int:
    args = sys.argv[1:]
    options = {}
    while args and args[0].startswith("--"):
        key, _, value = args.pop(0)[2:].partition("=")
        options[key] = value
    ntasks = int(options["ntasks"])
    procs = []
    for rank in range(ntasks):
        env = dict(
            os.environ,
            SLURM_PROCID=str(rank),
            SLURM_LOCALID=str(rank),
            SLURM_NODEID="0",
            SLURM_NTASKS=str(ntasks),
            SLURM_NNODES="1",
            SLURM_NTASKS_PER_NODE=str(ntasks),
            SLURM_JOB_NODELIST="127.0.0.1",
        )
        procs.append(subprocess.Popen(args, env=env))
    codes = [proc.wait() for proc in procs]
    return next((code for code in codes if code), 0)


if __name__ == "__main__":
    sys.exit(main())
