"""The performance models: the generic model's fit and interpretation, the baselines' interface."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dlperf.config import default_models
from dlperf.folds import kfold_indices
from dlperf.io import dumps_json
from dlperf.models import (
    MODELS,
    InsufficientData,
    capabilities_of,
    clone,
    make_model,
    model_from_dict,
)
from dlperf.models.artifact import fit_framework, fit_one
from dlperf.models.generic import GenericModel
from dlperf.models.linreg_sfs import CANDIDATES, LinregSFSModel, forward_select
from dlperf.models.penalty import choose_lambda

# The models fitted by default: the config schema's default models section.
DEFAULT_MODELS = default_models()
# Models fitted per series on one GPU type; those across hardware need gpu and precision columns
# and two GPU types, and are checked in test_hardware_models.py and by the conformance check.
SERIES_MODELS = sorted(n for n in MODELS if not capabilities_of(MODELS[n]).across_hardware)

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
    # One batch size: compute (I * b) and overhead (I) cannot be told apart; compute keeps it.
    frame = points(batches=(32,), datas=(32 * 16 * 10,), procs=(1, 2, 4, 8, 16))
    model = GenericModel(seed=0).fit(frame)
    assert "varies like compute" in model.identification_.inactive["overhead"]
    assert "compute" not in model.identification_.inactive
    assert not model.identification_.exponent_fitted and model.exponent_ == 1.0


def test_generic_fits_no_more_constants_than_points():
    frame = points(procs=(1, 2, 4), batches=(32,), datas=(32 * 4 * 10,))
    model = GenericModel(seed=0).fit(frame)
    assert len(model.identification_.active) <= len(frame)


def test_two_communication_shapes_need_four_worker_counts():
    """(p-1)/p and log2 p with an intercept pass through three worker counts: the growing one
    goes, as the exponent needs four batch sizes."""
    three = GenericModel(seed=0).fit(points(procs=(1, 2, 4))).identification_
    assert "two need 4 worker counts" in three.inactive["allreduce_lat"]
    assert "allreduce_bw" in three.active
    four = GenericModel(seed=0).fit(points(procs=(1, 2, 4, 8))).identification_
    assert {"allreduce_bw", "allreduce_lat"} <= set(four.active)


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
        # Refused before any fit (make_model), and by fit itself: __init__ only stores.
        make_model("generic", {"terms": ["bogus"]})
    with pytest.raises(ValueError, match="unknown generic-model term"):
        GenericModel(terms=["bogus"]).fit(points())


def test_breakdown_shares_sum_to_one_at_every_point():
    frame = points(procs=(1, 2, 4, 8, 16), batches=(8, 32), datas=(4096,))
    entry = fit_one("generic", {}, frame, seed=0)
    assert entry["status"] == "ok" and len(entry["breakdown"]) == len(frame)
    for row in entry["breakdown"]:
        assert sum(row["share"].values()) == pytest.approx(1.0)
        assert sum(row["seconds"].values()) == pytest.approx(row["predicted_s"])
    assert len(entry["interval"]["refits"]) >= 8


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
    cheap = {"lambdas": [0.0]}
    artifact = fit_framework(frame, "pytorch", {"generic": cheap, "generic_xnet": cheap}, seed=0)
    assert set(artifact["networks"]) == {"a", "b"}
    assert "generic_xnet" not in artifact["networks"]["a"]["models"]
    assert artifact["all_networks"]["models"]["generic_xnet"]["status"] == "ok"


@pytest.mark.parametrize("name", SERIES_MODELS)
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
    models = {name: {} for name in DEFAULT_MODELS}
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


# -- inner cross-validation grouped by configuration ------------------------------------------


def _configurations(frame: pd.DataFrame) -> set[tuple]:
    return set(map(tuple, frame[["nodes", "procs", "batch_size"]].to_numpy().tolist()))


def test_lambda_inner_folds_never_split_a_configuration():
    frame = points(noise=0.02)  # two data sizes per configuration: near-copies
    folds = []

    def fit(train, lam):
        def predict(test):
            folds.append((lam, _configurations(train), _configurations(test)))
            return np.ones(len(test))

        return predict

    choose_lambda(frame, [0.0, 1e-3], inner_folds=3, seed=0, fit=fit)
    assert len(folds) == 2 * 3
    for lam in (0.0, 1e-3):
        splits = [(train, test) for fold_lam, train, test in folds if fold_lam == lam]
        for train, test in splits:
            assert not train & test
        # Every configuration is tested exactly once.
        tests = [test for _, test in splits]
        assert set().union(*tests) == _configurations(frame)
        assert sum(len(t) for t in tests) == len(_configurations(frame))


def test_generic_model_chooses_lambda_on_grouped_folds(monkeypatch):
    import dlperf.models.penalty as penalty

    seen = []
    real = penalty.grouped_kfold

    def spy(frame, k, seed):
        splits = real(frame, k, seed)
        seen.extend((frame.iloc[train], frame.iloc[test]) for train, test in splits)
        return splits

    monkeypatch.setattr(penalty, "grouped_kfold", spy)
    GenericModel(lambdas=[0.0, 1e-3], seed=0).fit(points(noise=0.02))
    assert seen
    for train, test in seen:
        assert not _configurations(train) & _configurations(test)


def test_linreg_sfs_selection_folds_never_split_a_configuration(monkeypatch):
    import dlperf.models.linreg_sfs as linreg

    frame = points(noise=0.02)
    seen = []
    real = linreg.forward_select

    def spy(x, y, splits, tol, max_features):
        seen.extend(splits)
        return real(x, y, splits, tol, max_features)

    monkeypatch.setattr(linreg, "forward_select", spy)
    make_model("linreg_sfs", seed=0).fit(frame)
    assert seen
    for train, test in seen:
        assert not _configurations(frame.iloc[train]) & _configurations(frame.iloc[test])


# -- linreg_sfs: the selection order is kept ----------------------------------------------------


def test_linreg_sfs_caps_its_selection_in_the_order_it_chose():
    frame = points(seed=0, noise=0.01)
    uncapped = LinregSFSModel(max_features=len(CANDIDATES), seed=0).fit(frame)
    first = uncapped.selected_[0]
    # The case the old code got wrong: cutting the chosen set in column order drops the first pick.
    column_order_cut = sorted(uncapped.selected_, key=CANDIDATES.index)[:2]
    assert first not in column_order_cut
    capped = LinregSFSModel(max_features=2, seed=0).fit(frame)
    assert capped.selected_ == uncapped.selected_[:2]
    old = LinregSFSModel(features=column_order_cut, seed=0).fit(frame)
    assert mape(capped, frame) < mape(old, frame)


def test_linreg_sfs_refits_keep_the_selected_features():
    frame = points(noise=0.02)
    model = make_model("linreg_sfs", seed=0).fit(frame)
    refit = clone(model, **model.refit_params()).fit(frame.sample(frac=0.7, random_state=1))
    assert refit.selected_ == model.selected_
    with pytest.raises(ValueError, match="features must be"):
        LinregSFSModel(features=["bogus"]).fit(points())


def test_linreg_sfs_reads_the_names_its_features_had_before_accumulation():
    # Artifacts written before S = I / g was modelled name the communication features I*...;
    # without accumulation the two are the same numbers, so such an entry predicts as before.
    frame = points(noise=0.02)
    current = LinregSFSModel(features=["S*log2(p)", "d/p"], seed=0).fit(frame)
    entry = current.to_dict()
    fitted = entry["coefficients"]
    entry["selected_features"] = ["I*log2(p)", "d/p"]
    entry["coefficients"] = {"I*log2(p)": fitted["S*log2(p)"], "d/p": fitted["d/p"]}
    former = LinregSFSModel.from_dict(entry)
    assert np.allclose(former.predict(frame), current.predict(frame))
    configured = LinregSFSModel(features=["I*log2(p)", "d/p"], seed=0).fit(frame)
    assert configured.selected_ == ["S*log2(p)", "d/p"]


# -- castello and extrap ------------------------------------------------------------------------


def test_castello_counts_the_backward_pass_in_its_flop_rate():
    frame = points(procs=(1,), noise=0.0, flops_per_sample=2e6, param_count=1e5)
    rate = 1e10  # training FLOP/s
    iters = np.ceil(frame["data_size"] / (frame["procs"] * frame["batch_size"]))
    frame["epoch_time_s"] = iters * frame["batch_size"] * 3 * 2e6 / rate
    entry = make_model("castello", seed=0).fit(frame).to_dict()
    assert entry["hardware"]["flop_rate"] == pytest.approx(rate, rel=1e-6)
    assert "roofline" not in entry["formula"]


def test_extrap_keeps_node_counts_apart():
    frame = pd.concat(
        [points(procs=(2, 4, 8), noise=0.0).assign(nodes=n) for n in (1, 2)], ignore_index=True
    )
    p, b = frame["procs"], frame["batch_size"]
    iters = np.ceil(frame["data_size"] / (p * b))
    # Two nodes add a fixed inter-node cost per iteration: merged, it would be averaged away.
    t_iter = 0.01 + 1e-3 * b + 0.02 * np.log2(p) + 0.05 * (frame["nodes"] == 2)
    frame["epoch_time_s"] = iters * t_iter
    entry = fit_one("extrap", {}, frame, seed=0)
    if entry["status"] == "unavailable":
        pytest.skip(entry["reason"])
    model = model_from_dict(entry)
    assert [f["nodes"] for f in entry["functions"]] == [1, 2]
    for n in (1, 2):
        rows = frame[frame["nodes"] == n]
        assert mape(model, rows) < 3.0, n
    # A node count it did not see: the nearest fitted one's function (no trend in n).
    np.testing.assert_allclose(
        model.predict(frame.assign(nodes=4)), model.predict(frame.assign(nodes=2))
    )


# -- the contract, on every registered model ----------------------------------------------------

# Rich enough for every model: 5 worker counts on 1 and 2 nodes, 4 batch sizes, 2 data sizes.
CONTRACT_POINTS = points(noise=0.02, flops_per_sample=1e6, param_count=1e5)


def _fitted(name: str, frame: pd.DataFrame = CONTRACT_POINTS, seed: int = 0):
    entry = fit_one(name, {}, frame, seed=seed)
    if entry["status"] == "unavailable":
        pytest.skip(entry["reason"])
    assert entry["status"] == "ok", entry.get("reason")
    return make_model(name, seed=seed).fit(frame)


def _json(value):
    return json.loads(dumps_json(value))


@pytest.mark.parametrize("name", SERIES_MODELS)
def test_features_a_model_has_no_trend_in_extrapolate_flat(name):
    model = _fitted(name)
    rows = CONTRACT_POINTS.head(8)
    unseen = {"nodes": 4, "procs": 32, "batch_size": 128, "data_size": 16384}
    for feature in sorted(set(unseen) - capabilities_of(model).extrapolates_in):
        # Beyond the measured levels, the prediction is the one at the largest measured level.
        largest = CONTRACT_POINTS[feature].max()
        np.testing.assert_allclose(
            model.predict(rows.assign(**{feature: unseen[feature]})),
            model.predict(rows.assign(**{feature: largest})),
            rtol=1e-12,
            err_msg=feature,
        )


@pytest.mark.parametrize("name", SERIES_MODELS)
def test_network_features_change_a_prediction_only_when_declared(name):
    model = _fitted(name)
    rows = CONTRACT_POINTS.head(8)
    bigger = rows.assign(flops_per_sample=1e8, param_count=1e7)
    changed = not np.allclose(model.predict(bigger), model.predict(rows), rtol=1e-9)
    assert changed == capabilities_of(model).uses_network_features


@pytest.mark.parametrize("name", SERIES_MODELS)
def test_min_levels_are_what_the_fit_needs(name):
    caps = capabilities_of(MODELS[name])
    # One node: extrap also needs 3 levels of a varying parameter on every node count.
    single_level = (("procs", {"procs": (1,)}), ("batch_size", {"batches": (32,)}))
    for feature, single in single_level:
        grid = {"procs": (1, 2, 4, 8), **single}
        frame = points(noise=0.02, flops_per_sample=1e6, param_count=1e5, **grid)
        entry = fit_one(name, {}, frame, seed=0)
        if entry["status"] == "unavailable":
            pytest.skip(entry["reason"])
        needs_more = caps.min_levels.get(feature, 1) > 1
        assert (entry["status"] == "insufficient_data") == needs_more, (feature, entry)


@pytest.mark.parametrize("name", SERIES_MODELS)
def test_breakdown_is_declared_and_adds_up(name):
    model = _fitted(name)
    if capabilities_of(model).has_breakdown:
        seconds = model.term_seconds(CONTRACT_POINTS)
        np.testing.assert_allclose(seconds.sum(axis=1), model.predict(CONTRACT_POINTS))
    else:
        assert not hasattr(model, "term_seconds")


@pytest.mark.parametrize("name", SERIES_MODELS)
def test_across_network_models_tell_networks_apart(name):
    if not capabilities_of(MODELS[name]).across_networks:
        assert make_model(name).capabilities.across_networks is False
        return
    assert capabilities_of(MODELS[name]).uses_network_features
    both = pd.concat(
        [
            points(network="a", noise=0.02, flops_per_sample=1e6, param_count=1e5),
            points(network="b", noise=0.02, flops_per_sample=8e6, param_count=4e5),
        ],
        ignore_index=True,
    )
    model = make_model(name, seed=0).fit(both)
    grid = both[both["network"] == "a"].drop(columns=["flops_per_sample", "param_count"])
    assert not np.allclose(model.predict(grid), model.predict(grid.assign(network="b")))


@pytest.mark.parametrize("name", SERIES_MODELS)
def test_clone_gives_an_unfitted_model_with_the_same_params(name):
    model = _fitted(name, seed=4)
    copy = clone(model)
    assert type(copy) is type(model)
    assert copy.get_params() == model.get_params()
    assert [k for k in vars(copy) if k.endswith("_")] == []
    assert clone(model, seed=9).get_params()["seed"] == 9


@pytest.mark.parametrize("name", SERIES_MODELS)
def test_fit_is_deterministic_for_a_seed(name):
    first = dumps_json(_fitted(name, seed=3).to_dict())
    second = dumps_json(make_model(name, seed=3).fit(CONTRACT_POINTS.copy()).to_dict())
    assert first == second


@pytest.mark.parametrize("name", SERIES_MODELS)
def test_artifact_entry_holds_the_settings_to_refit(name):
    model = _fitted(name, seed=2)
    entry = _json(model.to_dict())
    assert entry["settings"] == _json(model.get_params())
    assert _json(make_model(name, entry["settings"]).get_params()) == entry["settings"]
    assert _json(model_from_dict(entry).get_params()) == entry["settings"]


@pytest.mark.parametrize("name", SERIES_MODELS)
def test_refit_params_rebuild_the_same_structure(name):
    model = _fitted(name)
    refit = clone(model, **model.refit_params()).fit(CONTRACT_POINTS)
    np.testing.assert_allclose(
        refit.predict(CONTRACT_POINTS), model.predict(CONTRACT_POINTS), rtol=0.02
    )


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    cap=st.integers(1, 5),
    columns=st.integers(2, 7),
)
def test_forward_selection_capped_is_the_prefix_of_uncapped(seed, cap, columns):
    """Capping stops the greedy search: the first picks are the same, in the same order."""
    rng = np.random.default_rng(seed)
    x = rng.lognormal(size=(24, columns))
    y = x @ rng.uniform(0, 1, columns) + rng.uniform(0.5, 1.0, 24)
    splits = kfold_indices(24, 3, seed)
    full = forward_select(x, y, splits, tol=0.0, max_features=columns)
    capped = forward_select(x, y, splits, tol=0.0, max_features=cap)
    assert capped == full[:cap]
    assert len(set(full)) == len(full) <= columns - 1
