"""Published per-GPU training throughput of the networks dlperf runs, and the GPUs' datasheet
peaks, shipped as package data (``data/gpu_references.csv``, ``data/gpu_peaks.csv``), each
figure with its source: what a measured number is put beside (``scripts/gpu-check.sh``).

Standard library only. Precisions are dlperf's: a reference's "FP32" on an Ampere or later GPU
is ``tf32`` (NVIDIA's containers run float32 in TF32), on a V100 ``fp32``; "mixed precision"
is ``amp_fp16``. Model FLOPs utilisation counts a training step as three forward passes
(forward, and a backward of twice its cost), the usual convention.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

from .spec import NETWORKS, flops_per_sample

#: The GPU families the table knows, as NVML and published tables spell them.
GPU_FAMILY = re.compile(r"\b(V100|A100|H100|H200)\b", re.IGNORECASE)
#: Training FLOPs per sample as a multiple of the forward pass's.
TRAINING_FLOPS_FACTOR = 3


@dataclass(frozen=True)
class Reference:
    network: str
    input: int  # image side (image networks) or tokens per sample (token networks)
    gpu: str
    precision: str
    framework: str
    batch_per_gpu: int | None
    samples_per_s: float  # per GPU
    source: str
    how: str


@dataclass(frozen=True)
class Peak:
    gpu: str
    precision: str
    tflops: float  # dense
    source: str


def _rows(name: str) -> list[dict[str, str]]:
    text = resources.files("dlperf.bench").joinpath("data", name).read_text(encoding="utf-8")
    return list(csv.DictReader(text.splitlines()))


@cache
def references() -> tuple[Reference, ...]:
    return tuple(
        Reference(
            network=row["network"],
            input=int(row["input"]),
            gpu=row["gpu"],
            precision=row["precision"],
            framework=row["framework"],
            batch_per_gpu=int(row["batch_per_gpu"]) if row["batch_per_gpu"] else None,
            samples_per_s=float(row["samples_per_s"]),
            source=row["source"],
            how=row["how"],
        )
        for row in _rows("gpu_references.csv")
    )


@cache
def peaks() -> tuple[Peak, ...]:
    return tuple(
        Peak(row["gpu"], row["precision"], float(row["peak_tflops"]), row["source"])
        for row in _rows("gpu_peaks.csv")
    )


def gpu_family(device_name: str) -> str | None:
    """``V100``/``A100``/``H100``/``H200`` from a device name (``NVIDIA H200``,
    ``Tesla V100-SXM2-16GB``), or None for any other device."""
    found = GPU_FAMILY.search(device_name or "")
    return found.group(1).upper() if found else None


def references_for(network: str, input_size: int, gpu: str, precision: str) -> list[Reference]:
    """Every published figure for this network, input size, GPU family and precision."""
    return [
        r
        for r in references()
        if (r.network, r.input, r.gpu, r.precision) == (network, input_size, gpu, precision)
    ]


def peak_for(gpu: str, precision: str) -> Peak | None:
    """The GPU's datasheet peak for the precision's math (``bf16`` as ``amp_fp16`` where
    the table has no figure of its own), or None."""
    for wanted in (precision, "amp_fp16" if precision == "bf16" else None):
        for peak in peaks():
            if (peak.gpu, peak.precision) == (gpu, wanted):
                return peak
    return None


def training_flops(network: str, image_size: int, seq_len: int) -> int:
    """FLOPs of one training sample: :data:`TRAINING_FLOPS_FACTOR` forward passes."""
    return TRAINING_FLOPS_FACTOR * flops_per_sample(network, image_size, seq_len)


def model_flops_utilisation(samples_per_s_per_gpu: float, flops: int, peak: Peak) -> float:
    """The share of the GPU's peak the measured rate's model FLOPs are."""
    return samples_per_s_per_gpu * flops / (peak.tflops * 1e12)


def beside_references(
    network: str, image_size: int, seq_len: int, gpu_names: str, precision: str, per_gpu: float
) -> list[str]:
    """A measured per-GPU rate beside every published figure for its GPU and precision: the
    ratio, and the model FLOPs utilisation against the datasheet peak (one line each; one
    line saying why when there is nothing to compare with)."""
    gpu = gpu_family(gpu_names)
    if gpu is None:
        return [f"{network} {precision}: no reference for this device ({gpu_names or 'CPU'})"]
    size = seq_len if NETWORKS[network].inputs == "tokens" else image_size
    peak = peak_for(gpu, precision)
    flops = training_flops(network, image_size, seq_len)
    mfu = (
        f"MFU {100 * model_flops_utilisation(per_gpu, flops, peak):.1f} % of {peak.tflops:g} "
        f"TFLOPS ({peak.source})"
        if peak
        else f"no datasheet peak for {gpu} {precision}"
    )
    lines = [f"{network}@{size} {precision} on {gpu}: {per_gpu:,.0f} samples/s per GPU; {mfu}"]
    published = references_for(network, size, gpu, precision)
    if not published:
        lines.append(f"  no published {gpu} {precision} figure for {network} at {size}")
    for ref in published:
        batch = f"b{ref.batch_per_gpu}" if ref.batch_per_gpu else "batch not stated"
        lines.append(
            f"  {per_gpu / ref.samples_per_s:.2f}x {ref.framework} {ref.samples_per_s:,.0f} "
            f"({batch}; {ref.how}) -- {ref.source}"
        )
    return lines
