"""The cross_hardware protocol: each GPU type held out in turn, the models across hardware
judged on it, the others reported not applicable, and too few GPU types said so."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from dlperf.validate.crossval import cross_validate

SPEED = {"V100-SXM2-16GB": 1.0, "A100-SXM4-80GB": 2.5, "H100-SXM5-80GB": 7.0, "A10": 1.2}


def points(gpus=SPEED) -> pd.DataFrame:
    rows = []
    for gpu, p, b in itertools.product(gpus, (1, 2, 4), (16, 32, 64)):
        t_iter = 0.002 + 1e-4 * b / SPEED[gpu] + 0.004 * (p - 1) / p
        rows.append(
            {"framework": "pytorch", "network": "mlp", "device": "cuda", "gpu": gpu,
             "precision": "amp_fp16", "nodes": 1, "procs": p, "batch_size": b,
             "data_size": 6400, "epoch_time_s": t_iter * np.ceil(6400 / (p * b))}
        )  # fmt: skip
    return pd.DataFrame(rows)


def test_each_gpu_type_is_held_out_and_the_models_across_hardware_are_judged():
    held_out, summary = cross_validate(
        points(), "pytorch", {"usl": {}}, {"cross_hardware": {}}, n_boot=20
    )
    rows = summary.set_index("model")
    assert rows.loc["generic_hw", "status"] == "ok"
    assert rows.loc["generic_hw", "mape"] < 15
    assert rows.loc["usl", "status"] == "not_applicable"
    assert set(held_out["fold"]) == {f"held_out_gpu={g}" for g in SPEED}


def test_too_few_gpu_types_say_why():
    two = {g: SPEED[g] for g in list(SPEED)[:2]}
    _, summary = cross_validate(points(two), "pytorch", {}, {"cross_hardware": {}}, n_boot=20)
    assert (summary["status"] == "not_run").all()
    assert summary["reason"].str.contains("at least 3 GPU types").all()
