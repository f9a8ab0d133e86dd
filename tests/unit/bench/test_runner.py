"""How the driver turns what its processes did into a run status."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from dlperf.bench.processes import LaunchResult, ProcessOutcome
from dlperf.bench.runner import LayoutUnavailable, check_hosts, run_benchmark, summarise_failure
from dlperf.bench.spec import RunConfig


def outcome(name, code, tmp_path, service=False, ended=False) -> ProcessOutcome:
    log = tmp_path / f"{name}.log"
    log.write_text(f"{name} output\n")
    return ProcessOutcome(name, code, Path(log), service, ended)


def test_a_crashed_worker_is_the_cause_not_the_services_we_ended(tmp_path):
    launch = LaunchResult(
        [
            outcome("scheduler", -9, tmp_path, service=True, ended=True),
            outcome("worker0", -11, tmp_path),
            outcome("worker1", -15, tmp_path, ended=True),
        ],
        timed_out=False,
        wall_s=3.0,
    )
    status, error = summarise_failure([], launch, 60)
    assert status == "failed"
    assert error.startswith("worker0 exited with code -11")


def test_a_worker_killed_by_the_system_is_out_of_memory(tmp_path):
    launch = LaunchResult([outcome("worker0", -9, tmp_path)], timed_out=False, wall_s=3.0)
    status, error = summarise_failure([], launch, 60)
    assert status == "oom" and "out-of-memory killer" in error


def test_a_rank_report_wins_over_exit_codes_and_timeout_over_both(tmp_path):
    results = [{"status": "oom", "rank": 1, "error": "MemoryError: Unable to allocate"}]
    launch = LaunchResult([outcome("worker1", 1, tmp_path)], timed_out=False, wall_s=3.0)
    assert summarise_failure(results, launch, 60) == (
        "oom",
        "rank 1: MemoryError: Unable to allocate",
    )
    launch.timed_out = True
    assert summarise_failure(results, launch, 60)[0] == "timeout"


def env_file(tmp_path) -> Path:
    path = tmp_path / "env.json"
    path.write_text(json.dumps({"python": sys.executable}))
    return path


def test_a_multi_node_configuration_is_refused_by_the_local_launcher(tmp_path):
    """Issue 19: outside Slurm every worker runs on this host; such a run must never be
    recorded as a 2-node run. It is recorded as failed, saying why, and nothing runs."""
    config = RunConfig("pytorch", "mlp", "cpu", nodes=2, procs=2, batch_size=8, data_size=64, rep=0)
    out = tmp_path / "runs" / "n2.json"
    record = run_benchmark(config, env_file(tmp_path), out, launcher="local")
    assert record["status"] == "failed" and record["launcher"] == "local"
    assert "asks for 2 nodes" in record["error"] and "--profile slurm" in record["error"]
    assert json.loads(out.read_text())["status"] == "failed"
    assert "iter_times_s" not in record


def test_workers_on_fewer_hosts_than_nodes_are_not_an_ok_run():
    config = RunConfig("pytorch", "mlp", "cpu", nodes=2, procs=4, batch_size=8, data_size=64, rep=0)
    check_hosts(config, ["dlnode1", "dlnode1", "dlnode2", "dlnode2"])
    with pytest.raises(LayoutUnavailable, match=r"ran on 1 host\(s\) \(dlnode1\)"):
        check_hosts(config, ["dlnode1"] * 4)
