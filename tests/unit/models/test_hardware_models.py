"""The models across hardware and their answer: a GPU type left out is predicted from the
others and the catalogue, the answer says whether it was measured and how far it reaches."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest

from dlperf.errors import UsageError
from dlperf.io import dumps_json
from dlperf.models import InsufficientData, make_model
from dlperf.models.answer import RULES, prior_per_doubling
from dlperf.models.artifact import fit_framework
from dlperf.models.generic_hw import GenericHardwareModel
from dlperf.models.hardware_answer import (
    ANSWER_MODELS,
    answer,
    answer_at,
    backtest,
    conformal_radius,
    form_weights,
    interval_factors,
    kept_share,
    model_weights,
    summary,
)
from dlperf.models.hardware_envelope import envelope
from dlperf.models.prior_hw import (
    answer_interval,
    one_gpu_type_interval,
    shipped_prior,
    two_gpu_types_interval,
)

GPUS = ["V100-SXM2-16GB", "A100-SXM4-80GB", "H100-SXM5-80GB", "RTX 4090", "A10"]


def law_points(gpus=GPUS, noise=0.01, seed=0, power=1.0) -> pd.DataFrame:
    """Points from a generic_hw law (shares of matrix, vector and memory time joined by a
    smooth max of ``power``, a ring)."""
    rows = [
        {"network": "n", "gpu": g, "precision": prec, "nodes": 1, "procs": p, "batch_size": b}
        for g, prec, p, b in itertools.product(gpus, ["amp_fp16"], [1, 2, 4, 8], [32, 64])
    ]
    frame = pd.DataFrame(rows)
    frame["data_size"] = frame["procs"] * frame["batch_size"] * 50
    law = GenericHardwareModel()
    law.constants_ = {"fixed": 0.005, "matrix": 0.02, "vector": 0.002, "memory": 0.0005}
    law.constants_ |= {"ring": 0.3, "latency": 0.0}
    law.power_ = power
    rng = np.random.default_rng(seed)
    frame["epoch_time_s"] = law.predict(frame) * rng.lognormal(0, noise, len(frame))
    return frame


@pytest.mark.parametrize("name", ["generic_hw", "lattuada_hw", "anchored_hw"])
def test_a_gpu_type_left_out_is_predicted_from_the_others(name):
    points = law_points()
    train, test = points[points["gpu"] != "A10"], points[points["gpu"] == "A10"]
    predicted = make_model(name).fit(train).predict(test)
    ape = np.abs(predicted / test["epoch_time_s"].to_numpy() - 1)
    assert ape.mean() < (0.05 if name == "generic_hw" else 0.25)


def test_anchored_hw_borrows_what_the_datasheet_misses_from_the_nearest_gpu_type():
    """Both A100 parts reach 30 % less than their figures say: the one left out is predicted
    from the other, where the power law averages the deficit away (on one worker: the model
    has no link term, so it borrows the other part's communication too)."""
    gpus = [*GPUS, "L40S", "RTX A6000", "H100-PCIe-80GB", "A100-PCIe-80GB"]
    points = law_points(gpus=gpus, noise=0.0).query("procs == 1")
    slow = points["gpu"].str.startswith("A100")
    points.loc[slow, "epoch_time_s"] *= 1.3
    train, test = points[points["gpu"] != "A100-PCIe-80GB"], points[points["gpu"] == gpus[-1]]
    measured = test["epoch_time_s"].to_numpy()
    anchored = make_model("anchored_hw").fit(train).predict(test)
    power_law = make_model("powerlaw_hw").fit(train).predict(test)
    assert np.abs(anchored / measured - 1).mean() < 0.08
    assert np.abs(anchored / measured - 1).mean() < np.abs(power_law / measured - 1).mean() / 2


def test_anchored_hw_scales_perfectly_beyond_the_workers_measured():
    points = law_points(noise=0.02)
    fitted = make_model("anchored_hw").fit(points[points["procs"] <= 4])
    edge = points[points["procs"] == 4].head(3)
    beyond = edge.assign(procs=16, data_size=edge["data_size"] * 4)  # 4x the work, 4x the GPUs
    np.testing.assert_allclose(fitted.predict(beyond), fitted.predict(edge), rtol=1e-9)


def test_generic_hw_learns_the_shares_of_its_law():
    fitted = make_model("generic_hw").fit(law_points(noise=0.0))
    assert fitted.constants_["matrix"] == pytest.approx(0.02, rel=0.05)
    assert fitted.constants_["ring"] == pytest.approx(0.3, rel=0.05)
    assert fitted.power_ == pytest.approx(1.0, abs=0.05)  # parts that add up stay a sum


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_generic_hw_keeps_the_terms_one_worker_count_never_exercised_at_zero(seed):
    """Timings at one worker count say nothing of the ring's and the latency's constants: asked
    beyond, the time per iteration stays the one measured (8x the GPUs, 8x the data: the same
    epoch), where a constant the fit moved freely once made it 1e292 s."""
    fitted = make_model("generic_hw").fit(law_points(noise=0.01, seed=seed).query("procs == 1"))
    assert (fitted.constants_["ring"], fitted.constants_["latency"]) == (0.0, 0.0)
    one = law_points().query("procs == 1")
    eight = one.assign(procs=8, data_size=one["data_size"] * 8)
    np.testing.assert_allclose(fitted.predict(eight), fitted.predict(one), rtol=1e-12)


def test_generic_hw_learns_how_much_the_parts_overlap():
    """Matrix, vector and memory times that overlap (a smooth max of power 6, near a
    roofline) are learned as such, and the GPU type left out is predicted from them."""
    gpus = [*GPUS, "L40S", "RTX A6000", "H100-PCIe-80GB"]
    points = law_points(gpus=gpus, noise=0.0, power=6.0)
    train, test = points[points["gpu"] != "A10"], points[points["gpu"] == "A10"]
    fitted = make_model("generic_hw").fit(train)
    assert fitted.power_ == pytest.approx(6.0, rel=0.1)
    ape = np.abs(fitted.predict(test) / test["epoch_time_s"].to_numpy() - 1)
    assert ape.max() < 0.01
    terms = fitted.term_seconds(test)  # the breakdown splits the smooth max, summing to it
    np.testing.assert_allclose(terms.sum(axis=1), fitted.predict(test), rtol=1e-12)
    assert (terms[["matrix", "vector", "memory"]] >= 0).all().all()


@pytest.mark.parametrize("name", ["generic_hw", "lattuada_hw", "anchored_hw"])
def test_timings_without_hardware_are_not_enough(name):
    points = law_points()
    with pytest.raises(InsufficientData, match="gpu, precision"):
        make_model(name).fit(points.drop(columns=["gpu", "precision"]))
    with pytest.raises(InsufficientData, match="2 or more GPU types"):
        make_model(name).fit(points[points["gpu"] == "A10"])


def test_the_answer_says_measured_reach_and_its_interval():
    points = law_points(gpus=GPUS[:4])
    asked = points[points["gpu"] == "H100-SXM5-80GB"].head(2).copy()
    beyond = asked.assign(gpu="B200 192GB")
    models = [make_model("generic_hw"), make_model("lattuada_hw")]
    found = answer(models, points, pd.concat([asked, beyond], ignore_index=True))
    assert found.measured.tolist() == [True, True, False, False]
    assert np.all(found.reach[:2] == 1.0) and np.all(found.reach[2:] > 2.0)
    assert np.all(found.lo <= found.predicted) and np.all(found.predicted <= found.hi)
    assert sum(found.weights.values()) == pytest.approx(1.0)
    assert "leave-one-GPU-type-out" in found.method


def test_the_weights_shrink_towards_equal_the_fewer_gpu_types_the_backtest_held_out():
    # Mean squared log errors 0.01 and 0.09: inverse-error weights 0.9 and 0.1.
    errors = pd.DataFrame({"near": [0.1, -0.1], "far": [0.3, -0.3]})
    assert model_weights(errors, "unshrunk", 12) == pytest.approx({"near": 0.9, "far": 0.1})
    # Two weights from four GPU types or fewer: nothing of the errors' ranking is kept.
    assert kept_share(2, 4) == 0.0
    assert model_weights(errors, "weighted", 4) == pytest.approx({"near": 0.5, "far": 0.5})
    # From twelve, 1 - 2 / 10 of the inverse-error weights; with many, nearly all of them.
    assert kept_share(2, 12) == pytest.approx(0.8)
    assert model_weights(errors, "weighted", 12) == pytest.approx({"near": 0.82, "far": 0.18})
    assert kept_share(3, 1000) > 0.99
    assert model_weights(errors, "equal", 12) == model_weights(errors, "weighted", 3)


def test_two_gpu_types_answer_without_an_interval():
    points = law_points(gpus=GPUS[:2])
    found = answer([make_model("generic_hw")], points, points.head(3))
    assert found.lo is None and "no interval" in found.method


def test_two_gpu_types_measured_get_the_interval_the_published_table_gave_that_answer():
    """Two GPU types leave no backtest: the answer's models alike, with the interval their
    errors had on the published table, each GPU type asked from pairs of its others; only for
    the combination that table scored, with the shipped slopes."""
    points = law_points(gpus=GPUS[:2])
    tested = backtest([make_model(n) for n in ANSWER_MODELS], points)
    assert set(tested.fitted) == set(ANSWER_MODELS) and tested.errors is None
    block = summary(tested)
    radius, published_reach = answer_interval(tested.fitted, 2, 0.9)
    assert (radius, published_reach) == two_gpu_types_interval(0.9)
    assert radius > one_gpu_type_interval(0.9)[0]  # two GPU types taught more to get wrong
    assert block["interval_factors"] == pytest.approx([np.exp(-radius), np.exp(radius)])
    assert block["beyond_backtest"]["reach"] == published_reach
    assert block["weights"] == form_weights(tested.fitted)
    assert "asked from 2 others" in block["method"]
    asked = points.head(3).assign(gpu="H100-SXM5-80GB")
    found = answer_at(block, asked)
    assert not found.measured.any() and np.all(found.lo < found.predicted)
    assert np.all(found.hi / found.predicted <= np.exp(radius) * (1 + 1e-9))
    # Another combination, or slopes of the user's, was never scored there: no interval.
    fewer = {n: m for n, m in tested.fitted.items() if n != "generic_hw"}
    assert answer_interval(fewer, 2, 0.9) is None
    # prior_hw alone on two GPU types learns its strength there: not what one GPU type scored.
    alone = {"prior_hw": tested.fitted["prior_hw"]}
    assert answer_interval(alone, 2, 0.9) is None
    assert answer_interval(alone, 1, 0.9) == one_gpu_type_interval(0.9)
    slopes = {p: dict(v) for p, v in shipped_prior()["slopes"].items()}
    models = [make_model(n, {"slopes": slopes} if n == "prior_hw" else {}) for n in ANSWER_MODELS]
    assert summary(backtest(models, points))["interval_factors"] is None


def test_beyond_the_workers_measured_the_interval_from_the_backtest_widens():
    """A backtest asks each GPU type at the workers the others measured: beyond them the
    interval's upper side widens with the doublings as the answer for worker counts widens (s
    per unit of log2(1 + D)), its lower side not (more workers never shorten an iteration);
    the interval a published table gave two GPU types, whose questions went beyond the workers
    measured too, does not."""
    points = law_points(gpus=GPUS[:4], noise=0.03).query("procs <= 2")
    block = summary(backtest([make_model(n) for n in ANSWER_MODELS], points))
    assert block["widened_beyond_workers"] == {"procs": [1, 2], "nodes": [1, 1]}
    edge = points[points["gpu"] == "A100-SXM4-80GB"].query("procs == 2").head(1)
    asked = pd.concat(
        [edge.assign(procs=p, data_size=edge["data_size"] * p // 2) for p in (2, 8, 32)],
        ignore_index=True,
    ).assign(gpu="A100-PCIe-80GB")  # not measured, within the figures measured
    found = answer_at(block, asked)
    assert not found.beyond_backtest.any()
    radius = np.log(block["interval_factors"][1])
    s = prior_per_doubling(RULES, 0.9)
    expected = np.hypot(radius, s * np.log2(1 + np.array([0.0, 2.0, 4.0])))
    np.testing.assert_allclose(np.log(found.hi / found.predicted), expected, rtol=1e-9)
    low, _ = envelope(block["envelope"], asked)
    down = np.maximum(found.predicted * block["interval_factors"][0], low)
    np.testing.assert_allclose(found.lo, down, rtol=1e-9)
    pair = points[points["gpu"].isin(GPUS[:2])]
    two = summary(backtest([make_model(n) for n in ANSWER_MODELS], pair))
    assert two["widened_beyond_workers"] is None
    spread = answer_at(two, asked)
    np.testing.assert_allclose(spread.hi / spread.predicted, two["interval_factors"][1])


def test_only_models_across_hardware_are_asked():
    with pytest.raises(UsageError, match="usl does not predict across hardware"):
        answer([make_model("usl")], law_points(), law_points().head(1))


def test_the_conformal_radius_needs_enough_errors():
    assert conformal_radius(np.log([1.1, 0.9, 1.2]), 0.9) == np.inf
    errors = np.log(np.linspace(0.8, 1.25, 40))
    assert conformal_radius(errors, 0.9) == pytest.approx(
        np.quantile(np.abs(errors), 0.92), abs=0.02
    )


@pytest.mark.parametrize("name", ["generic_hw", "lattuada_hw", "powerlaw_hw", "anchored_hw"])
def test_fits_are_deterministic_and_refits_keep_the_structure(name):
    points = law_points(noise=0.02)
    first, second = make_model(name).fit(points), make_model(name).fit(points)
    assert first.to_dict() == second.to_dict()
    refit = type(first)(**first.refit_params()).fit(points)
    np.testing.assert_allclose(refit.predict(points), first.predict(points), rtol=1e-9)


def test_the_asymmetric_interval_gives_room_where_the_errors_lie():
    errors = np.log(np.r_[np.linspace(1.0, 1.5, 30), np.linspace(0.95, 1.0, 30)])
    down, up = interval_factors(errors, 0.8, "asymmetric")
    assert down < 1 / 1.3 and up < 1.1  # answers ran high: the measured time lies below
    with pytest.raises(UsageError, match="unknown interval"):
        interval_factors(errors, 0.8, "wide")


def test_the_fit_stage_fits_across_hardware_when_two_gpu_types_are_measured():
    points = law_points(gpus=GPUS[:4]).assign(framework="pytorch", device="cuda")
    cheap = {"usl": {}}
    artifact = fit_framework(points, "pytorch", cheap, seed=0, refits=2)
    block = artifact["across_hardware"]["n"]["amp_fp16"]
    assert block["status"] == "ok" and set(block["models"]) == set(ANSWER_MODELS)
    assert block["gpus"] == sorted(GPUS[:4]) and "lattuada_hw" in block["apart"]
    entry = json.loads(dumps_json(artifact))["across_hardware"]["n"]["amp_fp16"]
    asked = points.head(2).assign(gpu="NVIDIA B200")
    found = answer_at(entry, asked)
    assert not found.measured.any() and np.all(found.reach > 1) and found.lo is not None
    one_gpu = fit_framework(points[points["gpu"] == GPUS[0]], "pytorch", cheap, 0, refits=2)
    alone = one_gpu["across_hardware"]["n"]["amp_fp16"]
    assert alone["weights"] == {"prior_hw": 1.0} and "apart" not in alone
    assert alone["gpus"] == [GPUS[0]] and "one GPU type measured" in alone["method"]


def test_one_gpu_type_measured_is_answered_by_the_prior_with_the_interval_its_table_gave():
    """What a team asks most ("we measured on V100s; how long on an H100?"): prior_hw, whose
    slopes a published table taught, anchored on the one GPU type measured, its interval the
    conformal quantile of its errors on that table asking each GPU type from each other one."""
    points = law_points(gpus=GPUS[:1])
    tested = backtest([make_model(n) for n in ANSWER_MODELS], points)
    assert set(tested.fitted) == {"prior_hw"} and tested.errors is None
    block = summary(tested)
    radius, published_reach = one_gpu_type_interval(0.9)
    assert block["interval_factors"] == pytest.approx([np.exp(-radius), np.exp(radius)])
    assert block["beyond_backtest"]["reach"] == published_reach
    asked = points.head(3).assign(gpu="H100-SXM5-80GB")
    found = answer_at(block, asked)
    assert not found.measured.any() and not found.beyond_backtest.any()
    # The prior's slopes at full strength: the H100 is faster than the V100 it was asked from.
    assert np.all(found.predicted < points.head(3)["epoch_time_s"].to_numpy())
    assert found.hi / found.predicted == pytest.approx(np.exp(radius))
    # A higher level, a wider interval; none above the highest level the table was scored at.
    assert one_gpu_type_interval(0.95)[0] > radius and one_gpu_type_interval(0.999) is None
    assert summary(tested, level=0.999)["interval_factors"] is None
    # Slopes of the user's were never scored on that table: no interval, and it says so.
    slopes = {p: dict(v) for p, v in shipped_prior()["slopes"].items()}
    own = backtest([make_model("prior_hw", {"slopes": slopes})], points)
    assert summary(own)["interval_factors"] is None and "no interval" in summary(own)["method"]


def test_each_form_weighs_alike_where_the_answer_has_no_backtest_to_weigh_by():
    models = {n: make_model(n) for n in ("powerlaw_hw", "anchored_hw", "generic_hw")}
    assert form_weights(models) == {"powerlaw_hw": 0.25, "anchored_hw": 0.25, "generic_hw": 0.5}
    points = law_points(gpus=GPUS[:2])
    found = answer(list(models.values()), points, points.head(2))
    assert found.beyond_backtest.all() and "each form alike" in found.method


def test_beyond_the_backtested_reach_each_form_weighs_alike_and_the_interval_widens():
    """Within the reach the backtest tested, the backtest's weights; beyond it, each form
    alike (no untested shape carried alone) and a half-width that grows with the doublings
    of reach beyond it."""
    gpus = ["A100-SXM4-80GB", "H100-SXM5-80GB", "A100-PCIe-40GB", "H100-PCIe-80GB"]
    points = law_points(gpus=gpus, noise=0.03)
    tested = backtest([make_model(n) for n in ANSWER_MODELS], points)
    block = summary(tested)
    beyond = block["beyond_backtest"]
    assert beyond["reach"] == pytest.approx(2.0)  # the A100 PCIe's Gen4 link, the H100 PCIe's Gen5
    within = points[points["gpu"] == "A100-SXM4-80GB"].head(2)
    far = pd.concat([within.assign(gpu=g) for g in ("B200 192GB", "T4")])
    asked = pd.concat([within, far], ignore_index=True)
    found = answer_at(block, asked)
    assert found.beyond_backtest.tolist() == [False, False, True, True, True, True]
    # Each model held to what physics allows: powerlaw_hw, four slopes from four GPU types,
    # would ask the B200 to be 65 times slower than the A100 and the T4 45 times faster.
    low, high = envelope(block["envelope"], asked)
    assert found.held_to_envelope.tolist() == [False, False, True, True, True, True]
    logs = {n: np.log(np.clip(m.predict(asked), low, high)) for n, m in tested.fitted.items()}
    backtested = sum(w * logs[n] for n, w in block["weights"].items())
    alike = sum(w * logs[n] for n, w in beyond["weights"].items())
    np.testing.assert_allclose(np.log(found.predicted[:2]), backtested[:2], rtol=1e-12)
    np.testing.assert_allclose(np.log(found.predicted[2:]), alike[2:], rtol=1e-12)
    half = np.log(found.hi / found.predicted)
    np.testing.assert_allclose(half[:2], np.log(block["interval_factors"][1]), rtol=1e-12)
    doublings = np.log2(found.reach[2:] / beyond["reach"])
    assert np.all(half[2:] > np.log(beyond["interval_factors"][1]))
    assert np.all(np.diff(half[2:][np.argsort(doublings)]) >= 0)
    # Beyond the reach the interval starts no narrower than within it, whichever combination's
    # backtest errors are the wider.
    (down, up), (beyond_down, beyond_up) = block["interval_factors"], beyond["interval_factors"]
    assert beyond_down <= down and beyond_up >= up
    assert np.all(half[2:] >= half[:2].max())
