"""Foreign CPU load during the timed epoch."""

from __future__ import annotations

import sys

import pytest

from dlperf.bench.cpuload import CpuWindow, foreign_cpu


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/stat")
def test_cpu_window_sees_our_own_work():
    with CpuWindow() as window:
        total = 0
        for i in range(3_000_000):
            total += i
    assert window.process_cpu_s > 0
    # The machine was busy at least while we were (jiffy resolution: allow slack).
    assert window.machine_busy_s >= window.process_cpu_s - 0.05


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


def test_foreign_cpu_is_unknown_without_proc_stat():
    results = [{"hostname": "a", "cpu_window": {"machine_busy_s": None, "process_cpu_s": 1.0}}]
    assert foreign_cpu(results, "a", 1.0) == {"foreign_cpu_s": None, "foreign_cpu_fraction": None}
