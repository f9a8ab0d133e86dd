"""Cross-validation with the real models (the fakes in test_validate_crossval.py are for speed):
grouped folds, intervals over held-out units, vs_best and the noise floor on what a user runs."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from dlperf.cli import main
from dlperf.measurements.points import to_points
from dlperf.validate.crossval import SUMMARY_COLUMNS, cross_validate

CHEAP_GENERIC = {"popsize": 6, "maxiter": 30, "lambdas": [0.0]}
MODELS = {"generic": CHEAP_GENERIC, "usl": {}, "ernest": {}}
PROTOCOLS = {"kfold": {"k": 4}, "loo_batch": {}, "extrapolation_procs": {}}


def timings(seed: int = 0, networks=("lenet",)) -> pd.DataFrame:
    """Repeated runs shaped like the generic model, 3 % noise per repetition."""
    rng = np.random.default_rng(seed)
    rows = []
    for network, p, b, d, rep in itertools.product(
        networks, (1, 2, 4), (16, 32, 64), (1024, 2048), range(3)
    ):
        t_iter = 0.004 + 2e-4 * b**0.9 + 0.01 * (p - 1) / p + 0.002 * np.ceil(np.log2(p))
        epoch = (0.05 + np.ceil(d / (p * b)) * t_iter) * rng.lognormal(0, 0.03)
        rows.append(
            {
                "framework": "pytorch",
                "network": network,
                "device": "cpu",
                "nodes": 1,
                "procs": p,
                "batch_size": b,
                "data_size": d,
                "rep": rep,
                "epoch_time_s": epoch,
                "samples_per_s": d / epoch,
            }
        )
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def validated():
    points = to_points(timings())
    return points, *cross_validate(points, "pytorch", MODELS, PROTOCOLS, seed=0, n_boot=200)


def test_real_models_are_validated_on_grouped_folds(validated):
    points, predictions, summary = validated
    assert list(summary.columns) == SUMMARY_COLUMNS
    assert set(summary["status"]) == {"ok"}, summary[["model", "protocol", "reason"]]
    kfold = predictions[predictions["protocol"] == "kfold"]
    folds = kfold.groupby(["model", "network", "nodes", "procs", "batch_size"])["fold"].nunique()
    assert len(folds) == 3 * 9 and (folds == 1).all()
    # every point held out exactly once per model
    assert (kfold.groupby("model").size() == len(points)).all()


def test_vs_best_is_consistent_for_the_real_models(validated):
    _, _, summary = validated
    for _, group in summary.groupby(["framework", "network", "protocol"]):
        assert (group["vs_best"] == "best").sum() == 1
        best = group[group["vs_best"] == "best"].iloc[0]
        assert best["mape"] == group["mape"].min()
        others = group[group["vs_best"] != "best"]
        assert set(others["vs_best"]) <= {"not_shown_worse", "worse"}
        worse = others["vs_best"] == "worse"
        assert (others.loc[worse, "vs_best_diff_lo"] > 0).all()
        assert not (others.loc[~worse, "vs_best_diff_lo"] > 0).any()
        # every model predicted every point, so the difference is that of the MAPEs
        assert np.allclose(others["vs_best_diff"], others["mape"] - best["mape"])
        bounded = others["vs_best_diff_lo"].notna()
        assert (others.loc[bounded, "vs_best_diff_lo"] <= others.loc[bounded, "vs_best_diff"]).all()
        assert (others.loc[bounded, "vs_best_diff"] <= others.loc[bounded, "vs_best_diff_hi"]).all()


def test_real_models_get_intervals_and_the_noise_floor(validated):
    points, _, summary = validated
    assert (summary["mape_lo"] <= summary["mape"]).all()
    assert (summary["mape"] <= summary["mape_hi"]).all()
    # held-out points are all repeated 3 times; the floor is their mean deviation
    expected = points["rep_ape"].mean()
    kfold = summary[summary["protocol"] == "kfold"]
    assert np.allclose(kfold["noise_ape"], expected)
    assert 0.5 < expected < 5  # 3 % lognormal noise per repetition
    # extrapolation holds out procs 4: 3 configurations, the units of its intervals
    extrapolation = summary[summary["protocol"] == "extrapolation_procs"]
    assert (extrapolation["ci_unit"] == "configuration").all()
    assert (extrapolation["n_units"] == 3).all()


def external_csv(path, networks=("lenet", "mlp", "resnet18", "alexnet")):
    """Bring-your-own timings of four networks with their parameter counts and FLOPs."""
    rng = np.random.default_rng(1)
    features = {
        "lenet": (6.2e4, 4.2e5),
        "mlp": (2.4e5, 4.8e5),
        "resnet18": (1.17e7, 1.8e9),
        "alexnet": (6.1e7, 7.1e8),
    }
    rows = []
    for network, p, b in itertools.product(networks, (1, 2, 4), (16, 32, 64)):
        params, flops = features[network]
        t_iter = 0.002 + 1e-12 * flops * b + 4e-10 * params * (p - 1) / p
        rows.append(
            {
                "framework": "pytorch",
                "network": network,
                "procs": p,
                "batch_size": b,
                "data_size": 4096,
                "epoch_time_s": np.ceil(4096 / (p * b)) * t_iter * rng.lognormal(0, 0.02),
                "param_count": params,
                "flops_per_sample": flops,
            }
        )
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_cross_network_validates_generic_xnet_on_an_external_csv(tmp_path):
    csv = external_csv(tmp_path / "four.csv")
    config = tmp_path / "config.yaml"
    config.write_text(
        "batch_sizes: [1]\ndata_sizes: [1]\nmodels:\n"
        "  generic_xnet: {popsize: 6, maxiter: 30, lambdas: [0.0]}\n"
        "  generic: {popsize: 6, maxiter: 30, lambdas: [0.0]}\n"
    )
    out = tmp_path / "validation"
    argv = ["validate", "--timings", str(csv), "--config", str(config)]
    assert main(argv + ["--protocol", "cross_network", "--out", str(out)]) == 0
    summary = pd.read_csv(out / "summary.csv")
    xnet = summary[summary["model"] == "generic_xnet"].set_index("network")
    assert sorted(xnet.index) == ["alexnet", "lenet", "mlp", "resnet18"]
    assert (xnet["status"] == "ok").all(), xnet["reason"]
    assert (xnet["ci_unit"] == "configuration").all() and (xnet["n_units"] == 9).all()
    assert (xnet["vs_best"] == "best").all()  # the only model that can predict a new network
    generic = summary[summary["model"] == "generic"]
    assert (generic["status"] == "not_applicable").all() and generic["vs_best"].isna().all()


@pytest.mark.parametrize("path", ["config/config.yaml", "tests/workflow/tiny.yaml"])
def test_every_configured_protocol_informs_on_its_own_sweep(path):
    from dataclasses import asdict
    from pathlib import Path

    from dlperf import config as cfg

    config = cfg.load(Path(__file__).parents[3] / path)
    runs = pd.DataFrame([asdict(run) for run in cfg.run_configs(config)])
    network = runs["network"].iloc[0]
    runs = runs[(runs["framework"] == runs["framework"].iloc[0]) & (runs["network"] == network)]
    rng = np.random.default_rng(0)
    # Times shaped like the generic model, 3 % noise per repetition.
    iters = np.ceil(runs["data_size"] / (runs["procs"] * runs["batch_size"]))
    t_iter = 0.004 + 2e-4 * runs["batch_size"] + 0.01 * (runs["procs"] - 1) / runs["procs"]
    runs = runs.assign(
        epoch_time_s=iters * t_iter * rng.lognormal(0, 0.03, len(runs)), samples_per_s=1.0
    )
    protocols = config["validation"]["protocols"]
    _, summary = cross_validate(
        to_points(runs), runs["framework"].iloc[0], MODELS, protocols, n_boot=50
    )
    assert set(summary["protocol"]) == set(protocols)
    assert (summary["status"] == "ok").all(), summary[["model", "protocol", "status", "reason"]]
    # each protocol tests on more than one unit, so every interval exists
    assert (summary["n_units"] >= 2).all() and summary["mape_lo"].notna().all()
