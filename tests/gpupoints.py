"""Points of one network measured on several GPU types, from a known law, for the tests of the
answer across hardware (validation, report, command line)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

# How much faster each GPU type computes than the V100.
SPEED = {"V100-SXM2-16GB": 1.0, "A100-SXM4-80GB": 2.5, "H100-SXM5-80GB": 7.0, "A10": 1.2}


def gpu_points(gpus=SPEED) -> pd.DataFrame:
    """mlp at amp_fp16 on ``gpus``: 1-4 workers x batch 16-64, 6400 samples an epoch."""
    rows = []
    for gpu, p, b in itertools.product(gpus, (1, 2, 4), (16, 32, 64)):
        t_iter = 0.002 + 1e-4 * b / SPEED[gpu] + 0.004 * (p - 1) / p
        rows.append(
            {"framework": "pytorch", "network": "mlp", "device": "cuda", "gpu": gpu,
             "precision": "amp_fp16", "nodes": 1, "procs": p, "batch_size": b,
             "data_size": 6400, "epoch_time_s": t_iter * np.ceil(6400 / (p * b))}
        )  # fmt: skip
    return pd.DataFrame(rows)


#: A user's GPU catalogue (docs/hardware.md, "Adding a GPU") holding one GPU the shipped one lacks.
USER_CATALOGUE = """\
sources:
  mine: {title: "our vendor's sheet", url: "https://example.org/sheet.pdf"}
gpus:
  - name: Z9000
    vendor: Example
    peak_tflops: {fp32: 50, tf32: 200, fp16: 400, bf16: 400}
    memory_gb: 64
    memory_bandwidth_gbs: 3000
    link: {name: "PCIe Gen5 x16", bandwidth_gbs: 128}
    sources: {peak_tflops: mine, memory: mine, link: mine}
"""
