"""Resource capture: host memory and CPU for real; NVML's arithmetic with a fake NVML module."""

from __future__ import annotations

import sys
import time
from types import SimpleNamespace

import numpy as np
import pytest

from dlperf.bench import resources
from dlperf.bench.harness import run_training
from dlperf.bench.ranks import DistInfo
from dlperf.bench.spec import RunConfig
from dlperf.io import atomic_write_json
from dlperf.measurements import tables


class BusyBackend:
    """A synchronous backend whose step keeps one core busy for ``step_s``."""

    def __init__(self, step_s: float = 0.01) -> None:
        self.step_s = step_s

    def setup(self) -> int:
        return 10

    def prepare_batch(self, images, labels):
        return images

    def build_graph(self, batch):
        return None

    def step(self, batch):
        end = time.process_time() + self.step_s
        while time.process_time() < end:
            pass

    def sync(self) -> None:
        pass

    def barrier(self) -> None:
        pass


def test_a_run_records_its_peak_host_memory_and_cpu_use(tmp_path):
    held = np.ones(64 * 2**20 // 8)  # 64 MiB resident while the run goes on
    config = RunConfig("pytorch", "mlp", "cpu", 1, 1, 8, 64, 0, warmup_iters=1)
    result = run_training(BusyBackend(), config, DistInfo(), tmp_path, threads=1)
    used = result["resources"]
    assert used["peak_host_memory_bytes"] >= held.nbytes
    # every step burns 10 ms of this process's CPU time, however loaded the machine is
    assert used["threads"] == 1 and used["epoch_cpu_s"] >= 0.01 * config.iters_per_epoch
    expected = used["epoch_cpu_s"] / result["epoch_time_s"]
    assert used["cpu_utilisation"] == pytest.approx(expected)
    assert 0 < used["cpu_utilisation"] <= 1.2  # one busy thread (a little slack for the clocks)
    assert "gpu_energy_j" not in used  # no NVML on a CPU run


def test_cpu_utilisation_divides_by_threads_and_wall():
    assert resources.cpu_utilisation(3.0, 2.0, 2) == pytest.approx(0.75)
    assert resources.cpu_utilisation(1.0, 0.0, 2) is None


def test_power_samples_are_integrated_when_there_is_no_energy_counter():
    # 100 W for the first second, 200 W after: held flat to the ends of a 2 s epoch.
    summary = resources.summarise_power([0.5, 1.5], [100.0, 200.0], [50.0, 90.0], 2.0, 4, None)
    # 0.5 s * 100 + (1 s trapezoid from 100 to 200) + 0.5 s * 200 = 50 + 150 + 100
    assert summary["gpu_energy_j"] == pytest.approx(300.0)
    assert summary["gpu_energy_per_iter_j"] == pytest.approx(75.0)
    assert summary["gpu_utilisation_pct"] == pytest.approx(70.0)
    assert summary["gpu_power_mean_w"] == pytest.approx(150.0)
    assert summary["gpu_power_max_w"] == 200.0
    assert summary["gpu_energy_source"] == "power samples"
    counted = resources.summarise_power([0.5], [100.0], [50.0], 2.0, 4, 123.0)
    assert counted["gpu_energy_j"] == 123.0 and counted["gpu_energy_source"] == "energy counter"
    assert resources.summarise_power([], [], [], 1.0, 4, None) == {"gpu_samples": 0}


class FakeNvml:
    """The parts of pynvml the sampler uses; power rises 1 W per reading, the energy counter
    (when there is one) 250 mJ per reading."""

    class NVMLError(Exception):
        pass

    def __init__(self, counter: bool) -> None:
        self.counter = counter
        self.readings = 0
        self.energy_mj = 10_000.0
        self.calls: list[str] = []

    def nvmlInit(self):
        self.calls.append("init")

    def nvmlShutdown(self):
        self.calls.append("shutdown")

    def nvmlDeviceGetCount(self):
        return 4

    def nvmlDeviceGetHandleByIndex(self, index):
        self.calls.append(f"index {index}")
        return index

    def nvmlDeviceGetHandleByUUID(self, uuid):
        self.calls.append(f"uuid {uuid}")
        return uuid

    def nvmlDeviceGetPowerUsage(self, handle):
        self.readings += 1
        return 100_000 + 1000 * self.readings  # mW

    def nvmlDeviceGetUtilizationRates(self, handle):
        return SimpleNamespace(gpu=80, memory=30)

    def nvmlDeviceGetTotalEnergyConsumption(self, handle):
        if not self.counter:
            raise self.NVMLError("not supported")
        self.energy_mj += 250.0
        return self.energy_mj


@pytest.mark.parametrize("counter", [True, False])
def test_the_sampler_reads_nvml_in_the_background(counter, monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    nvml = FakeNvml(counter)
    with resources.NvmlSampler(local_rank=5, interval_s=0.01, nvml=nvml) as sampler:
        time.sleep(0.2)
    assert nvml.calls[:2] == ["init", "index 1"] and nvml.calls[-1] == "shutdown"
    n = len(sampler.times_s)
    assert n >= 3 and sampler.power_w == [100.0 + i for i in range(1, n + 1)]
    assert sampler.times_s == sorted(sampler.times_s) and sampler.times_s[-1] <= sampler.wall_s
    summary = sampler.summary(iterations=10)
    assert summary["gpu_utilisation_pct"] == 80.0
    if counter:
        assert summary["gpu_energy_j"] == pytest.approx(0.25)  # two counter reads, 250 mJ apart
    else:
        assert 100.0 * sampler.wall_s < summary["gpu_energy_j"] < (101.0 + n) * sampler.wall_s
    assert summary["gpu_energy_per_iter_j"] == pytest.approx(summary["gpu_energy_j"] / 10)


def test_nvml_follows_cuda_visible_devices():
    assert resources.nvml_index(1, None, 4) == 1
    assert resources.nvml_index(1, "2,3", 4) == 3
    assert resources.nvml_index(2, "GPU-aa, GPU-bb", 4) == "GPU-aa"


def test_ranks_are_combined_and_tabled(tmp_path, record_factory):
    ranks = [
        {"rank": 1, "resources": {"peak_host_memory_bytes": 3 * 2**20, "cpu_utilisation": 0.5}},
        {"rank": 0, "resources": {"peak_host_memory_bytes": 2**20, "cpu_utilisation": 0.9}},
    ]
    combined = resources.combine_ranks(ranks)
    assert combined["peak_host_memory_bytes"] == 3 * 2**20
    assert combined["cpu_utilisation"] == pytest.approx(0.7)
    assert combined["gpu_energy_j"] is None
    assert [r["rank"] for r in combined["per_rank"]] == [1, 0]
    record = record_factory(procs=2, batch=8, data=64)
    record["resources"] = {**combined, "gpu_energy_j": 64.0, "gpu_power_mean_w": 300.0}
    record["noise"] = {"foreign_cpu_fraction": 0.25}
    old = record_factory(procs=1)  # a record from before resource capture
    atomic_write_json(tmp_path / "new.json", record)
    atomic_write_json(tmp_path / "old.json", old)
    timings, _ = tables.build_tables([tmp_path / "new.json", tmp_path / "old.json"])
    new_row = timings[timings["procs"] == 2].iloc[0]
    assert new_row["peak_host_memory_mb"] == 3.0
    assert new_row["energy_per_sample_j"] == pytest.approx(64.0 / 64)  # 4 iters * 2 * 8 samples
    assert new_row["gpu_power_w"] == 300.0 and new_row["foreign_cpu_fraction"] == 0.25
    assert (
        timings[timings["procs"] == 1][["peak_host_memory_mb", "gpu_power_w"]]
        .isna()
        .to_numpy()
        .all()
    )


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ru_maxrss in KiB")
def test_peak_memory_is_in_bytes():
    assert resources.peak_host_memory_bytes() > 10 * 2**20  # a Python with NumPy and pandas
