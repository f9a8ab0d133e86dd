"""Multi-node runs on the live two-host cluster (see conftest.py).

* the cluster: two hosts with their own names and addresses, a task on each; traffic
  between them is held to the link limit while traffic inside a host is not;
* `config/multinode-local.yaml` through `snakemake --profile slurm`: 15 runs (three
  frameworks, 1 and 2 nodes, 1-4 workers) in fewer Slurm jobs than runs (job groups); every
  2-node run's ranks on both hosts; and the inter-node cost in the timings: 2 workers on two
  hosts are slower per iteration than 2 workers on one.
"""

from __future__ import annotations

import json
import re
import statistics
import subprocess
from pathlib import Path

import pytest

from dlperf import config as cfg

pytestmark = [pytest.mark.slurm, pytest.mark.slow]

SNAKEMAKE_TIMEOUT = 1200  # seconds (killed after that)
TEST_OPTIONS = [
    "--slurm-status-command",
    "squeue",
    "--slurm-init-seconds-before-status-checks",
    "2",
    "--latency-wait",
    "5",
    # One Slurm job at a time: runs measured side by side would disturb each other's timings.
    "--jobs",
    "1",
]
FRAMEWORKS = ("pytorch", "tensorflow", "mxnet")

# Each task sends or receives 12 MB to/from the other and reports how long it took.
TRANSFER = r"""
import os, socket, sys, time
rank, size = int(os.environ["SLURM_PROCID"]), 12_000_000
peer = sys.argv[1]
if rank == 0:
    server = socket.create_server(("0.0.0.0", int(sys.argv[2])))
    conn, _ = server.accept()
    start, got = time.perf_counter(), 0
    while got < size:
        got += len(conn.recv(1 << 20))
    print(f"{socket.gethostname()} {got / (time.perf_counter() - start) / 1e6:.1f}")
else:
    for _ in range(100):
        try:
            conn = socket.create_connection((peer, int(sys.argv[2])))
            break
        except OSError:
            time.sleep(0.1)
    conn.sendall(b"x" * size)
    conn.close()
"""


def transfer_mb_per_s(nodes: int, peer: str, tmp_path: Path) -> float:
    script = tmp_path / "transfer.py"
    script.write_text(TRANSFER)
    proc = subprocess.run(
        [
            "srun",
            f"--nodes={nodes}",
            "--ntasks=2",
            "--distribution=block",
            "--mem=200",
            "python3",
            str(script),
            peer,
            "23456",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    host, rate = proc.stdout.split()
    assert host == peer
    return float(rate)


def test_two_hosts_with_their_own_names_and_addresses(local_slurm):
    out = subprocess.run(
        [
            "srun",
            "--nodes=2",
            "--ntasks=2",
            "--mem=100",
            "bash",
            "-c",
            'echo "$SLURM_PROCID $(hostname) $(hostname -i)"',
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    rows = sorted(line.split() for line in out.stdout.splitlines())
    assert [row[1] for row in rows] == list(local_slurm["hosts"])
    addresses = [row[2] for row in rows]
    assert len(set(addresses)) == 2
    assert not any(a.startswith("127.") for a in addresses)


def test_the_link_between_hosts_is_limited_and_a_host_inside_is_not(local_slurm, tmp_path):
    first = local_slurm["hosts"][0]
    between = transfer_mb_per_s(2, first, tmp_path)
    inside = transfer_mb_per_s(1, first, tmp_path)
    limit = local_slurm["link_mbit"] / 8  # MB/s
    assert between < 1.2 * limit, (between, limit)
    assert inside > 3 * between, (inside, between)


@pytest.fixture(scope="module")
def framework_envs(workflow_bin, repo, tmp_path_factory):
    """Build (or find in the shared cache) the three environments before the sweep: the
    hosts' namespaces have no route to the package index, so the Slurm job that checks
    them must find them built."""
    out = tmp_path_factory.mktemp("envs")
    for framework in FRAMEWORKS:
        proc = subprocess.run(
            [
                str(workflow_bin / "dlperf"),
                "env",
                "--framework",
                framework,
                "--requirements",
                str(repo / "envs" / f"{framework}.txt"),
                "--out",
                str(out / f"{framework}.json"),
            ],
            capture_output=True,
            text=True,
            timeout=1800,
        )
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


@pytest.fixture(scope="module")
def sweep(local_slurm, framework_envs, workflow_bin, repo, tmp_path_factory):
    """config/multinode-local.yaml through the Slurm profile, from a directory of its own."""
    workdir = tmp_path_factory.mktemp("multinode")
    (workdir / "slurm").symlink_to(repo / "profiles" / "slurm", target_is_directory=True)
    argv = [
        str(workflow_bin / "snakemake"),
        "--snakefile",
        str(repo / "Snakefile"),
        "--profile",
        "slurm",
        "--configfile",
        str(repo / "config" / "multinode-local.yaml"),
        *TEST_OPTIONS,
    ]
    proc = subprocess.run(
        argv, cwd=workdir, capture_output=True, text=True, timeout=SNAKEMAKE_TIMEOUT
    )
    config = cfg.load(repo / "config" / "multinode-local.yaml")
    return {
        "dir": workdir,
        "rc": proc.returncode,
        "log": proc.stdout + proc.stderr,
        "runs": cfg.run_configs(config),
    }


def record(sweep, framework: str, nodes: int, procs: int) -> dict:
    path = sweep["dir"] / f"results/runs/{framework}/mlp/n{nodes}_p{procs}_b8_d128_r0.json"
    return json.loads(path.read_text())


def test_the_sweep_completes_through_the_profile(sweep):
    assert sweep["rc"] == 0, sweep["log"][-6000:]
    assert (sweep["dir"] / "results/report/index.html").exists()
    layouts = {(run.nodes, run.procs) for run in sweep["runs"]}
    assert layouts == {(1, 1), (1, 2), (1, 4), (2, 2), (2, 4)}
    assert {run.framework for run in sweep["runs"]} == set(FRAMEWORKS)
    for run in sweep["runs"]:
        rec = record(sweep, run.framework, run.nodes, run.procs)
        assert rec["status"] == "ok", (run, rec.get("error"))
        assert rec["launcher"] == "srun" and len(rec["rank_hosts"]) == run.procs


def test_two_node_runs_have_their_ranks_on_both_hosts(sweep, local_slurm):
    first, second = local_slurm["hosts"]
    for run in sweep["runs"]:
        rec = record(sweep, run.framework, run.nodes, run.procs)
        hosts = rec["rank_hosts"]
        if run.nodes == 1:
            assert len(set(hosts)) == 1, hosts
            continue
        per_node = run.procs // run.nodes
        # block distribution: ranks 0..p/n-1 on the first host, the rest on the second
        assert hosts == [first] * per_node + [second] * per_node, (run, hosts)
        assert rec["dist"]["hosts"] == [first, second]
        assert rec["dist"]["master_addr"] == first


def test_fewer_slurm_jobs_than_benchmark_runs(sweep):
    submissions = re.findall(r"submitted with SLURM jobid (\d+) \(log: (\S+)\)", sweep["log"])
    bench_jobs = [log for _, log in submissions if "/group_bench_" in log]
    assert len(submissions) < len(sweep["runs"]), submissions
    # one job per layout, each running the three frameworks' runs one after the other
    assert len(bench_jobs) == 5, bench_jobs


def test_two_hosts_are_slower_per_iteration_than_one_over_a_limited_link(sweep):
    for framework in FRAMEWORKS:
        one = statistics.median(record(sweep, framework, 1, 2)["iter_times_s"])
        two = statistics.median(record(sweep, framework, 2, 2)["iter_times_s"])
        assert two > 1.5 * one, (framework, one, two)
