"""The report's "Which hardware" section: there when a network was measured on two or more GPU
types, absent otherwise, and it shows what the fit stored."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import numpy as np
import pandas as pd

from dlperf.models.artifact import fit_framework
from dlperf.report.hardware_section import which_hardware

SPEED = {"V100-SXM2-16GB": 1.0, "A100-SXM4-80GB": 2.5, "A10": 1.2}


def artifact(gpus) -> dict:
    rows = []
    for gpu, p, b in itertools.product(gpus, (1, 2, 4), (16, 32, 64)):
        t_iter = 0.002 + 1e-4 * b / SPEED[gpu] + 0.004 * (p - 1) / p
        rows.append(
            {"framework": "pytorch", "network": "mlp", "device": "cuda", "gpu": gpu,
             "precision": "amp_fp16", "nodes": 1, "procs": p, "batch_size": b,
             "data_size": 6400, "epoch_time_s": t_iter * np.ceil(6400 / (p * b))}
        )  # fmt: skip
    return fit_framework(pd.DataFrame(rows), "pytorch", {"usl": {}}, seed=0, refits=2)


def test_the_section_shows_the_answer_across_hardware():
    (section,) = which_hardware(SimpleNamespace(artifacts={"pytorch": artifact(SPEED)}))
    html = "".join(str(block) for block in section.blocks)
    assert section.title == "Which hardware" and "A10, A100-SXM4-80GB, V100-SXM2-16GB" in html
    assert "powerlaw_hw" in html and "leave-one-GPU-type-out" in html


def test_no_section_without_two_gpu_types():
    one = artifact(["A10"])
    assert which_hardware(SimpleNamespace(artifacts={"pytorch": one})) == []
