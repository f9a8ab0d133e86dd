"""The performance models: the generic model's fit and interpretation, the baselines' interface."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from dlperf.io import dumps_json
from dlperf.models import DEFAULT_MODELS, MODELS, InsufficientData, make_model, model_from_dict
from dlperf.models.artifact import fit_framework, fit_one
from dlperf.models.generic import GenericModel

TRUE = {
    "fixed": 0.5,
    "overhead": 0.002,
    "compute": 2e-4,
    "allreduce_bw": 0.01,
    "allreduce_lat": 0.003,
    "internode": 0.02,
}
EXPONENT = 0.9


def true_epoch(p, n, b, d, noise=None):
    iters = np.ceil(d / (p * b))
    t_iter = (
        TRUE["overhead"]
        + TRUE["compute"] * b**EXPONENT
        + TRUE["allreduce_bw"] * (p - 1) / p
        + TRUE["allreduce_lat"] * np.ceil(np.log2(p))
        + TRUE["internode"] * (n > 1) * (p - 1) / p
    )
    return TRUE["fixed"] + iters * t_iter


def points(
    seed=0,
    noise=0.01,
    procs=(1, 2, 4, 8, 16),
    batches=(8, 16, 32, 64),
    datas=(2048, 8192),
    network="lenet",
    framework="pytorch",
    **extra,
):
    rng = np.random.default_rng(seed)
    rows = []
    for p, b, d in itertools.product(procs, batches, datas):
        n = 1 if p <= 8 else 2
        rows.append(
            {
                "framework": framework,
                "network": network,
                "device": "cpu",
                "nodes": n,
                "procs": p,
                "batch_size": b,
                "data_size": d,
                "epoch_time_s": true_epoch(p, n, b, d) * rng.lognormal(0, noise),
                **extra,
            }
        )
    return pd.DataFrame(rows)


def mape(model, frame):
    measured = frame["epoch_time_s"].to_numpy()
    return float(np.mean(np.abs(model.predict(frame) - measured) / measured) * 100)


def test_generic_recovers_the_constants_of_noise_free_data():
    frame = points(noise=0.0)
    model = make_model("generic", {"lambdas": [0.0]}, seed=0).fit(frame)
    assert mape(model, frame) < 0.5
    assert model.exponent_ == pytest.approx(EXPONENT, abs=0.05)
    for term in ("fixed", "allreduce_bw", "allreduce_lat", "internode"):
        assert model.values_[term] == pytest.approx(TRUE[term], rel=0.15), term


def test_generic_switches_off_terms_the_data_do_not_support():
    # Single node: the inter-node term's feature is zero everywhere.
    frame = points(procs=(1, 2, 4), noise=0.0)
    model = GenericModel(seed=0).fit(frame)
    entry = model.to_dict()
    states = {t["name"]: t["state"] for t in entry["terms"]}
    assert states["internode"] == "inactive"
    assert "zero" in next(t["note"] for t in entry["terms"] if t["name"] == "internode")


def test_generic_leaves_out_a_term_that_is_collinear_with_another():
    # One batch size and I constant: compute, overhead and fixed cannot be told apart.
    frame = points(batches=(32,), datas=(32 * 16 * 10,), procs=(1, 2, 4, 8, 16))
    model = GenericModel(seed=0).fit(frame)
    assert (
        "overhead" in model.identification_.inactive and "fixed" in model.identification_.inactive
    )
    assert "compute" not in model.identification_.inactive
    assert not model.identification_.exponent_fitted and model.exponent_ == 1.0


def test_generic_keeps_a_residual_degree_of_freedom():
    frame = points(procs=(1, 2, 4), batches=(32,), datas=(32 * 4 * 10,))
    model = GenericModel(seed=0).fit(frame)
    assert len(model.identification_.active) < len(frame)


def test_l1_penalty_shrinks_constants():
    frame = points(seed=3, noise=0.03)
    free = GenericModel(lambdas=[0.0], seed=0).fit(frame)
    strong = GenericModel(lambdas=[1.0], seed=0).fit(frame)
    scaled = lambda m: sum(  # noqa: E731
        m.values_[t] / m.identification_.scales[t] for t in m.identification_.active
    )
    assert scaled(strong) < scaled(free)
    assert strong.switched_off()


def test_lambda_is_chosen_by_inner_cross_validation():
    model = GenericModel(lambdas=[0.0, 1e-3, 1.0], seed=0).fit(points(noise=0.02))
    assert set(model.inner_cv_mape_) == {"0.0", "0.001", "1.0"}
    assert model.lam_ in (0.0, 1e-3)  # a weight of 1 wrecks the fit and cannot win


def test_terms_come_from_configuration():
    frame = points(datas=(4096,))
    dropped = GenericModel(terms=["overhead", "compute", "allreduce_bw"], seed=0).fit(frame)
    assert list(dropped.values_) == ["overhead", "compute", "allreduce_bw"]
    added = GenericModel(terms=[*GenericModel().terms, "sync_linear"], seed=0).fit(frame)
    assert "sync_linear" in added.values_ and "c6*(p-1)" in added.formula()
    with pytest.raises(ValueError, match="unknown generic-model term"):
        GenericModel(terms=["bogus"])


def test_breakdown_shares_sum_to_one_at_every_point():
    frame = points(procs=(1, 2, 4, 8, 16), batches=(8, 32), datas=(4096,))
    entry = fit_one("generic", {"bootstrap": 12}, frame, seed=0)
    assert entry["status"] == "ok" and len(entry["breakdown"]) == len(frame)
    for row in entry["breakdown"]:
        assert sum(row["share"].values()) == pytest.approx(1.0)
        assert sum(row["seconds"].values()) == pytest.approx(row["predicted_s"])
    assert len(entry["bootstrap"]["samples"]) >= 8


def test_generic_across_networks_scales_with_flops_and_parameters():
    frames = []
    for network, flops, params in (("small", 1e6, 1e5), ("large", 1e8, 1e7)):
        frame = points(network=network, noise=0.0, procs=(1, 2, 4, 8))
        # Compute proportional to F, all-reduce to W: the same hardware constants for both.
        iters = np.ceil(frame["data_size"] / (frame["procs"] * frame["batch_size"]))
        p, b = frame["procs"], frame["batch_size"]
        frame["epoch_time_s"] = 0.1 + iters * (
            1e-3 + 2e-10 * flops * b + 1e-9 * params * (p - 1) / p
        )
        frame["flops_per_sample"], frame["param_count"] = flops, params
        frames.append(frame)
    both = pd.concat(frames, ignore_index=True)
    model = make_model("generic_xnet", seed=0).fit(both)
    assert mape(model, both) < 2.0
    assert model.values_["compute"] == pytest.approx(2e-10, rel=0.1)
    assert set(model.network_features_) == {"small", "large"}
    # Without F and W the across-network model cannot be fitted, and says why.
    with pytest.raises(InsufficientData, match="flops_per_sample"):
        make_model("generic_xnet", seed=0).fit(points())


def test_artifact_fits_across_network_models_once_per_framework():
    small = {"procs": (1, 2, 4), "batches": (8, 32), "datas": (4096,)}
    frame = pd.concat(
        [
            points(network="a", flops_per_sample=1e6, param_count=1e5, **small),
            points(network="b", flops_per_sample=4e6, param_count=3e5, **small),
        ]
    )
    cheap = {"bootstrap": 3, "lambdas": [0.0]}
    artifact = fit_framework(frame, "pytorch", {"generic": cheap, "generic_xnet": cheap}, seed=0)
    assert set(artifact["networks"]) == {"a", "b"}
    assert "generic_xnet" not in artifact["networks"]["a"]["models"]
    assert artifact["all_networks"]["models"]["generic_xnet"]["status"] == "ok"


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_model_round_trips_through_its_artifact_entry(name):
    frame = points(flops_per_sample=1e6, param_count=1e5)
    model = make_model(name, seed=0).fit(frame)
    again = model_from_dict(model.to_dict())
    np.testing.assert_allclose(again.predict(frame), model.predict(frame), rtol=1e-9)
    assert np.all(model.predict(frame) > 0)
    dumps_json(model.to_dict())  # JSON-safe: no NaN, no NumPy types


@pytest.mark.parametrize("name", DEFAULT_MODELS)
def test_every_default_model_fits_the_design_model_reasonably(name):
    frame = points(noise=0.01)
    assert mape(make_model(name, seed=0).fit(frame), frame) < 60


@pytest.mark.parametrize("name", sorted(MODELS))
def test_too_few_points_is_insufficient_data_not_a_crash(name):
    frame = points(procs=(1,), batches=(8,), datas=(2048,), flops_per_sample=1e6, param_count=1e5)
    entry = fit_one(name, {}, frame, seed=0)
    assert entry["status"] in ("insufficient_data", "unavailable")
    assert entry["reason"]


def test_usl_falls_back_to_amdahl_with_two_procs_levels():
    model = make_model("usl", seed=0).fit(points(procs=(1, 2)))
    assert model.variant_ == "amdahl" and model.constants_["kappa"] == 0.0


def test_linreg_sfs_selects_a_few_named_features():
    model = make_model("linreg_sfs", seed=0).fit(points())
    assert 1 <= len(model.selected_) <= 6
    assert model.to_dict()["formula"].startswith("T = ")


def test_castello_reports_hardware_constants_from_flops_and_params():
    frame = points(flops_per_sample=1e9, param_count=1e7)
    model = make_model("castello").fit(frame)
    entry = model.to_dict()
    assert entry["flops_per_sample"] == 1e9 and entry["param_count"] == 1e7
    assert entry["hardware"]["flop_rate"] > 0
    # Rows without the feature columns (a prediction grid) are the fitted network.
    grid = frame.drop(columns=["flops_per_sample", "param_count"])
    again = type(model).from_dict(entry)
    np.testing.assert_allclose(again.predict(grid), model.predict(frame))


def test_extrap_uses_the_extrap_package_or_says_it_is_missing():
    entry = fit_one("extrap", {}, points(), seed=0)
    if entry["status"] == "unavailable":
        assert "pip install --no-deps" in entry["reason"]
    else:
        assert entry["status"] == "ok"
        types = {f["function"]["$type"] for f in entry["functions"]}
        assert types <= {"MultiParameterFunction", "SingleParameterFunction"}
        assert "log2" in entry["formula"] or "^" in entry["formula"]


def test_same_data_and_seed_give_byte_identical_artifacts(tmp_path):
    frame = points(noise=0.02, procs=(1, 2, 4, 8), batches=(8, 16, 32), datas=(4096,))
    models = {name: {} for name in DEFAULT_MODELS} | {"generic": {"bootstrap": 5}}
    first = dumps_json(fit_framework(frame, "pytorch", models, seed=7))
    second = dumps_json(fit_framework(frame.copy(), "pytorch", models, seed=7))
    assert first.encode() == second.encode()


def test_extrap_reports_unavailable_when_the_package_is_missing(monkeypatch):
    import sys

    for module in [m for m in sys.modules if m == "extrap" or m.startswith("extrap.")]:
        monkeypatch.setitem(sys.modules, module, None)
    monkeypatch.setitem(sys.modules, "extrap", None)
    entry = fit_one("extrap", {}, points(), seed=0)
    assert entry["status"] == "unavailable"
    assert "pip install --no-deps 'extrap==4.2.5'" in entry["reason"]
