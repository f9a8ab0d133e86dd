"""How the driver turns what its processes did into a run status."""

from __future__ import annotations

from pathlib import Path

from dlperf.bench.launch import LaunchResult, ProcessOutcome
from dlperf.bench.runner import summarise_failure


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
