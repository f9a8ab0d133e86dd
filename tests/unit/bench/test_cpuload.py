"""Foreign CPU load during the timed epoch."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from dlperf.bench.cpuload import CpuWindow, foreign_cpu, processes_cpu_s, service_pids


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/stat")
def test_cpu_window_sees_our_own_work():
    with CpuWindow() as window:
        total = 0
        for i in range(3_000_000):
            total += i
    assert window.process_cpu_s > 0
    # The machine was busy at least while we were (jiffy resolution: allow slack).
    assert window.machine_busy_s >= window.process_cpu_s - 0.05


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/<pid>/stat")
def test_cpu_window_sees_the_services_work_and_says_when_it_cannot():
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.3)  # past the interpreter's start-up
        with CpuWindow(service_pids({"DLPERF_SERVICE_PIDS": str(busy.pid)})) as window:
            time.sleep(0.5)
        # The busy service had a core to itself for most of the half second (2 cores here).
        assert 0.15 < window.service_cpu_s < 0.6
        assert window.process_cpu_s < 0.1  # we slept
    finally:
        busy.kill()
        busy.wait()
    assert processes_cpu_s((busy.pid,)) is None  # ended and reaped: unreadable
    with CpuWindow((busy.pid,)) as window:
        pass
    assert window.service_cpu_s is None
    with CpuWindow(service_pids({})) as window:
        pass
    assert window.service_cpu_s == 0.0  # no services: nothing of ours beside the workers


def test_foreign_cpu_subtracts_every_worker_on_the_host():
    results = [
        {
            "hostname": "a",
            "cpu_window": {"machine_busy_s": 5.0, "process_cpu_s": 2.0, "machine_cores": 2},
        },
        {
            "hostname": "a",
            "cpu_window": {"machine_busy_s": 5.0, "process_cpu_s": 1.5, "machine_cores": 2},
        },
        {
            "hostname": "b",
            "cpu_window": {"machine_busy_s": 9.0, "process_cpu_s": 4.0, "machine_cores": 2},
        },
    ]
    noise = foreign_cpu(results, "a", epoch_s=2.5)
    assert noise["foreign_cpu_s"] == pytest.approx(1.5)
    assert noise["foreign_cpu_fraction"] == pytest.approx(1.5 / 5.0)
    # The services rank 0 saw (MXNet's scheduler and server) are the run's own...
    results[0]["cpu_window"]["service_cpu_s"] = 1.0
    assert foreign_cpu(results, "a", epoch_s=2.5)["foreign_cpu_s"] == pytest.approx(0.5)
    # ... and when rank 0 could not read them, their time stays foreign: flagged, not trusted.
    results[0]["cpu_window"]["service_cpu_s"] = None
    noise = foreign_cpu(results, "a", epoch_s=2.5)
    assert noise["foreign_cpu_s"] == pytest.approx(1.5) and noise["service_cpu_s"] is None


def test_foreign_cpu_is_unknown_without_proc_stat():
    results = [{"hostname": "a", "cpu_window": {"machine_busy_s": None, "process_cpu_s": 1.0}}]
    assert foreign_cpu(results, "a", 1.0) == {
        "foreign_cpu_s": None,
        "foreign_cpu_fraction": None,
        "service_cpu_s": None,
    }
