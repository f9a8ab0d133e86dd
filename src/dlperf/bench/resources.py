"""What the hardware did during a run: host memory, CPU use, and on GPUs device memory,
utilisation, power and energy.

Standard library only (like the rest of dlperf.bench); the framework and NVML (``pynvml``, from
the ``nvidia-ml-py`` package in envs/cuda/) are imported only on a GPU run, where they are
already there. NVML is sampled in a background thread during the timed epoch; energy comes from
the GPU's own energy counter where it has one (Volta and newer), else from integrating the
sampled power over the epoch.
"""

from __future__ import annotations

import os
import resource
import sys
import threading
import time
from types import ModuleType


def peak_host_memory_bytes() -> int:
    """Peak resident memory of this process so far (ru_maxrss: KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)


def cpu_utilisation(process_cpu_s: float, wall_s: float, threads: int) -> float | None:
    """Share of the worker's threads kept busy: CPU seconds / (wall seconds * threads)."""
    if wall_s <= 0 or threads < 1:
        return None
    return process_cpu_s / (wall_s * threads)


def device_memory(framework: str, local_rank: int) -> dict:
    """Device memory as the framework reports it, on the GPU this worker uses."""
    if framework == "pytorch":
        import torch

        index = local_rank % torch.cuda.device_count()
        return {
            "device_memory_bytes": int(torch.cuda.max_memory_allocated(index)),
            "device_memory_kind": "peak allocated (torch.cuda.max_memory_allocated)",
        }
    if framework == "tensorflow":
        import tensorflow as tf

        index = local_rank % len(tf.config.list_physical_devices("GPU"))
        info = tf.config.experimental.get_memory_info(f"GPU:{index}")
        return {
            "device_memory_bytes": int(info["peak"]),
            "device_memory_kind": "peak allocated (tf get_memory_info)",
        }
    if framework == "mxnet":
        import mxnet as mx

        free, total = mx.context.gpu_memory_info(local_rank % mx.context.num_gpus())
        # MXNet keeps no peak: what the device holds at the end of the epoch (its pool keeps
        # what training needed, so this is close to the peak).
        return {
            "device_memory_bytes": int(total - free),
            "device_memory_kind": "in use after the epoch (mx gpu_memory_info)",
        }
    raise ValueError(f"no device memory query for framework {framework!r}")


def summarise_power(
    times_s: list[float],
    power_w: list[float],
    utilisation_pct: list[float],
    wall_s: float,
    iterations: int,
    counter_energy_j: float | None,
) -> dict:
    """Mean utilisation and power, and energy (the counter's when it has one, else the power
    samples integrated over the epoch by the trapezoid rule, held flat to its ends)."""
    if not times_s:
        return {"gpu_samples": 0}
    if counter_energy_j is not None:
        energy, source = counter_energy_j, "energy counter"
    else:
        t = [0.0] + list(times_s) + [wall_s]
        p = [power_w[0]] + list(power_w) + [power_w[-1]]
        energy = sum((t[i + 1] - t[i]) * (p[i + 1] + p[i]) / 2 for i in range(len(t) - 1))
        source = "power samples"
    return {
        "gpu_samples": len(times_s),
        "gpu_utilisation_pct": sum(utilisation_pct) / len(utilisation_pct),
        "gpu_power_mean_w": sum(power_w) / len(power_w),
        "gpu_power_max_w": max(power_w),
        "gpu_energy_j": energy,
        "gpu_energy_per_iter_j": energy / iterations if iterations else None,
        "gpu_energy_source": source,
    }


def nvml_index(local_rank: int, visible: str | None, count: int) -> int | str:
    """The NVML device of this worker: NVML numbers every GPU of the host and ignores
    CUDA_VISIBLE_DEVICES, which the frameworks obey; a UUID entry is returned as such."""
    entries = [e.strip() for e in (visible or "").split(",") if e.strip()]
    if not entries:
        return local_rank % count
    entry = entries[local_rank % len(entries)]
    return int(entry) if entry.isdigit() else entry


class NvmlSampler:
    """Samples one GPU's utilisation and power every ``interval_s`` in a background thread
    while the ``with`` block runs."""

    def __init__(self, local_rank: int, interval_s: float = 0.05, nvml: ModuleType | None = None):
        self.local_rank = local_rank
        self.interval_s = interval_s
        self._nvml = nvml
        self.times_s: list[float] = []
        self.power_w: list[float] = []
        self.utilisation_pct: list[float] = []
        self.counter_energy_j: float | None = None
        self.wall_s = 0.0

    def _energy_mj(self) -> float | None:
        try:
            return float(self._nvml.nvmlDeviceGetTotalEnergyConsumption(self._handle))
        except self._nvml.NVMLError:  # GPUs before Volta have no energy counter
            return None

    def _sample(self) -> None:
        while not self._stop.is_set():
            now = time.perf_counter() - self._start
            power = self._nvml.nvmlDeviceGetPowerUsage(self._handle) / 1000.0  # mW -> W
            rates = self._nvml.nvmlDeviceGetUtilizationRates(self._handle)
            self.times_s.append(now)
            self.power_w.append(power)
            self.utilisation_pct.append(float(rates.gpu))
            self._stop.wait(self.interval_s)

    def __enter__(self) -> NvmlSampler:
        if self._nvml is None:
            import pynvml

            self._nvml = pynvml
        nvml = self._nvml
        nvml.nvmlInit()
        index = nvml_index(
            self.local_rank, os.environ.get("CUDA_VISIBLE_DEVICES"), nvml.nvmlDeviceGetCount()
        )
        self._handle = (
            nvml.nvmlDeviceGetHandleByIndex(index)
            if isinstance(index, int)
            else nvml.nvmlDeviceGetHandleByUUID(index)
        )
        self._energy_start = self._energy_mj()
        self._stop = threading.Event()
        self._start = time.perf_counter()
        self._thread = threading.Thread(target=self._sample, name="nvml-sampler", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.wall_s = time.perf_counter() - self._start
        self._stop.set()
        self._thread.join()
        end = self._energy_mj()
        if self._energy_start is not None and end is not None:
            self.counter_energy_j = (end - self._energy_start) / 1000.0  # mJ -> J
        self._nvml.nvmlShutdown()

    def summary(self, iterations: int) -> dict:
        return summarise_power(
            self.times_s,
            self.power_w,
            self.utilisation_pct,
            self.wall_s,
            iterations,
            self.counter_energy_j,
        )


def combine_ranks(rank_results: list[dict]) -> dict:
    """The run's resources from every rank's: the largest peak memory, the mean utilisation,
    the summed power and energy (every rank drives its own GPU), and each rank's own."""
    per_rank = [dict(r.get("resources") or {}, rank=r.get("rank")) for r in rank_results]

    def values(key: str) -> list[float]:
        return [r[key] for r in per_rank if r.get(key) is not None]

    combined: dict = {"per_rank": per_rank}
    for key, how in (
        ("peak_host_memory_bytes", max),
        ("device_memory_bytes", max),
        ("cpu_utilisation", lambda v: sum(v) / len(v)),
        ("gpu_utilisation_pct", lambda v: sum(v) / len(v)),
        ("gpu_power_mean_w", sum),
        ("gpu_energy_j", sum),
        ("gpu_energy_per_iter_j", sum),
    ):
        found = values(key)
        combined[key] = how(found) if found else None
    return combined
