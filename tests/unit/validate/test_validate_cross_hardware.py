"""The cross_hardware protocol: each GPU type held out in turn, the models across hardware
judged on it, the others reported not applicable, and too few GPU types said so."""

from __future__ import annotations

from dlperf.validate.crossval import cross_validate
from gpupoints import SPEED, gpu_points


def test_each_gpu_type_is_held_out_and_the_models_across_hardware_are_judged():
    held_out, summary = cross_validate(
        gpu_points(), "pytorch", {"usl": {}}, {"cross_hardware": {}}, n_boot=20
    )
    rows = summary.set_index("model")
    assert rows.loc["generic_hw", "status"] == "ok"
    assert rows.loc["generic_hw", "mape"] < 15
    assert rows.loc["usl", "status"] == "not_applicable"
    assert set(held_out["fold"]) == {f"held_out_gpu={g}" for g in SPEED}


def test_too_few_gpu_types_say_why():
    two = list(SPEED)[:2]
    _, summary = cross_validate(gpu_points(two), "pytorch", {}, {"cross_hardware": {}}, n_boot=20)
    assert (summary["status"] == "not_run").all()
    assert summary["reason"].str.contains("at least 3 GPU types").all()
