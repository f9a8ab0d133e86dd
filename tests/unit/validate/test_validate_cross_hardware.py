"""The cross_hardware protocol: each GPU type held out in turn, the models across hardware
judged on it, the others reported not applicable, and too few GPU types said so."""

from __future__ import annotations

import pandas as pd

from dlperf.validate.crossval import cross_validate
from gpupoints import SPEED, USER_CATALOGUE, gpu_points


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


def test_a_gpu_of_the_users_catalogue_is_held_out_like_the_shipped_ones(tmp_path):
    catalogue = tmp_path / "gpus.yaml"
    catalogue.write_text(USER_CATALOGUE)
    points = gpu_points()
    points["gpu"] = points["gpu"].replace({"A10": "Z9000"})  # a GPU the shipped one lacks
    _, summary = cross_validate(
        points, "pytorch", {}, {"cross_hardware": {}}, n_boot=20, hardware=str(catalogue)
    )
    rows = summary.set_index("model")
    assert rows.loc["generic_hw", "status"] == "ok", rows.loc["generic_hw", "reason"]


def test_validate_takes_the_users_catalogue_on_the_command_line(tmp_path):
    from dlperf.cli import main

    catalogue = tmp_path / "gpus.yaml"
    catalogue.write_text(USER_CATALOGUE)
    points = gpu_points()
    points["gpu"] = points["gpu"].replace({"A10": "Z9000"})
    timings = tmp_path / "gpus.csv"
    points.to_csv(timings, index=False)
    out = tmp_path / "validation"
    argv = ["validate", "--timings", str(timings), "--protocol", "cross_hardware"]
    assert main([*argv, "--hardware", str(catalogue), "--out", str(out)]) == 0
    summary = pd.read_csv(out / "summary.csv").set_index("model")
    assert summary.loc["generic_hw", "status"] == "ok"
