"""prior_hw: anchored_hw's power law with slopes learned on a published table of many GPU
types, so that a study of two GPU types predicts a third."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from dlperf.errors import ConfigError
from dlperf.models import InsufficientData, make_model, model_from_dict
from dlperf.models.anchored_hw import SLOPES, slope_features
from dlperf.models.prior_hw import (
    HARDWARE_SLOPES,
    LEARNED_AS,
    hardware_strength,
    learn_slopes,
    one_gpu_type_interval,
    shipped_prior,
)

# A power law in the figures and the batch: log(t / (I b)) = w . features + per network and
# configuration intercept.
LAW = {"log matrix": -0.2, "log vector": -0.15, "log memory_bw": -0.6, "log b": -0.25}
MANY = ["V100-SXM2-16GB", "A10", "A100-PCIe-40GB", "A100-SXM4-80GB", "H100-SXM5-80GB"]
MANY += ["RTX 3090", "RTX 4090", "L40S"]


def law_points(
    gpus, networks=("a", "b", "c"), precisions=("fp32", "amp_fp16"), noise=0.0, strength=1.0
):
    rows = [
        {"network": n, "gpu": g, "precision": prec, "nodes": 1, "procs": p, "batch_size": b}
        for n, g, prec, p, b in itertools.product(networks, gpus, precisions, [1, 4], [32, 64])
    ]
    frame = pd.DataFrame(rows)
    frame["data_size"] = frame["procs"] * frame["batch_size"] * 50
    w = np.array([LAW[s] * (strength if s in HARDWARE_SLOPES else 1.0) for s in SLOPES])
    offset = frame["network"].map({"a": -3.0, "b": -2.0, "c": -4.0}) + 0.1 * np.log(frame["procs"])
    per_sample = np.exp(slope_features(frame, None) @ w + offset)
    rng = np.random.default_rng(0)
    frame["epoch_time_s"] = (
        50 * frame["batch_size"] * per_sample * rng.lognormal(0, noise, len(frame))
    )
    return frame


def test_the_slopes_are_learned_per_precision_within_each_network_and_configuration():
    learned = learn_slopes(law_points(MANY))
    assert set(learned) == {"fp32", "amp_fp16"}
    for slopes in learned.values():
        assert slopes == pytest.approx(LAW, abs=1e-9)


def a_study_of_two_gpu_types_and_the_third(strength=1.0):
    """(prior learned on networks a and b of many GPU types, V100 and A100 points of network c,
    its H100 points) under the law, network c at ``strength``."""
    prior = learn_slopes(law_points(MANY, networks=("a", "b")))
    mine = law_points(
        ["V100-SXM2-16GB", "A100-SXM4-80GB", "H100-SXM5-80GB"],
        networks=("c",),
        precisions=("amp_fp16",),
        strength=strength,
    )
    third = mine["gpu"] == "H100-SXM5-80GB"
    return prior, mine[~third], mine[third]


def test_two_gpu_types_and_the_prior_predict_a_third():
    # Two GPU types cannot teach four slopes; the prior learned on many GPU types (of other
    # networks) can, and the intercepts come from the two measured.
    prior, train, test = a_study_of_two_gpu_types_and_the_third()
    with_prior = make_model("prior_hw", {"slopes": prior}).fit(train).predict(test)
    assert with_prior == pytest.approx(test["epoch_time_s"].to_numpy(), rel=1e-9)
    alone = make_model("anchored_hw").fit(train).predict(test)
    assert np.abs(alone / test["epoch_time_s"].to_numpy() - 1).mean() > 0.05


def test_a_network_that_follows_the_hardware_half_as_much_is_learned_so_from_two_gpu_types():
    # A host-bound network: the prior's direction in the figures, half its strength.
    prior, train, test = a_study_of_two_gpu_types_and_the_third(strength=0.5)
    fitted = make_model("prior_hw", {"slopes": prior}).fit(train)
    assert fitted.strengths_ == {"amp_fp16": pytest.approx(0.5, abs=1e-9)}
    assert fitted.slopes_["amp_fp16"]["log b"] == pytest.approx(LAW["log b"], abs=1e-9)
    assert fitted.predict(test) == pytest.approx(test["epoch_time_s"].to_numpy(), rel=1e-9)
    assert "strength k: amp_fp16 0.50" in fitted.formula()


@pytest.mark.parametrize(("strength", "learned"), [(-0.5, 0.0), (1.7, 1.0)])
def test_the_strength_stays_within_physics(strength, learned):
    points = law_points(["V100-SXM2-16GB", "A100-SXM4-80GB"], networks=("a",), strength=strength)
    points = points[points["precision"] == "fp32"]
    keys = points["procs"].astype(str).to_numpy()
    x = slope_features(points, None)
    log_t = np.log(points["epoch_time_s"] / (50 * points["batch_size"])).to_numpy()
    assert hardware_strength(x, log_t, keys, LAW) == pytest.approx(learned)


def test_gpu_types_of_the_same_figures_leave_the_prior_at_full_strength():
    # Two V100s of one chip: the timings differ, the figures do not, so nothing says how much
    # the figures matter.
    points = law_points(["V100-SXM2-16GB", "V100-SXM2-32GB"], networks=("a",))
    points["epoch_time_s"] *= np.where(points["gpu"] == "V100-SXM2-32GB", 1.3, 1.0)
    fitted = make_model("prior_hw").fit(points)
    assert fitted.strengths_ == {"fp32": 1.0, "amp_fp16": 1.0}


def test_tf32_takes_fp32s_slopes_and_bf16_the_mixed_precision_ones():
    prior = {"fp32": dict(LAW), "amp_fp16": {s: 0.5 * v for s, v in LAW.items()}}
    points = law_points(["A100-SXM4-80GB", "H100-SXM5-80GB"], networks=("a",), precisions=("fp32",))
    fitted = make_model("prior_hw", {"slopes": prior}).fit(points.assign(precision="tf32"))
    assert fitted.slopes_ == {"tf32": pytest.approx(prior["fp32"])}
    bf16 = make_model("prior_hw", {"slopes": prior}).fit(points.assign(precision="bf16"))
    # The points follow the full law: twice the strength of the mixed-precision set, bounded.
    assert bf16.strengths_ == {"bf16": 1.0}
    assert bf16.slopes_ == {"bf16": pytest.approx(prior["amp_fp16"])}
    assert LEARNED_AS == {
        "fp32": "fp32",
        "tf32": "fp32",
        "amp_fp16": "amp_fp16",
        "bf16": "amp_fp16",
    }


def test_the_artifact_entry_keeps_the_slopes_it_was_fitted_with():
    points = law_points(["V100-SXM2-16GB", "A100-SXM4-80GB", "A10"], networks=("a",))
    fitted = make_model("prior_hw").fit(points)
    again = model_from_dict(fitted.to_dict())
    asked = points.assign(gpu="H100-SXM5-80GB")
    assert again.predict(asked) == pytest.approx(fitted.predict(asked), rel=1e-12)
    assert again.strengths_ == fitted.strengths_
    # The stored slopes are the shipped ones, the hardware's scaled by the strength learned.
    k = fitted.strengths_["fp32"]
    assert 0 < k <= 1
    shipped = shipped_prior()["slopes"]["fp32"]
    assert fitted.slopes_["fp32"] == {
        s: pytest.approx(v * k if s in HARDWARE_SLOPES else v) for s, v in shipped.items()
    }


def test_slopes_without_every_feature_are_refused_before_any_fit():
    with pytest.raises(ConfigError, match="prior_hw: slopes must give"):
        make_model("prior_hw", {"slopes": {"fp32": {"log matrix": -0.2}}})


def test_a_precision_the_given_slopes_lack_is_refused_naming_it():
    points = law_points(["A100-SXM4-80GB", "H100-SXM5-80GB"], networks=("a",))
    model = make_model("prior_hw", {"slopes": {"fp32": dict(LAW)}})
    with pytest.raises(ConfigError, match="no slopes for amp_fp16"):
        model.fit(points)


def test_the_shipped_prior_has_both_precisions_and_its_source():
    prior = shipped_prior()
    assert set(prior["slopes"]) == set(LEARNED_AS.values())
    assert "lambdal/deeplearning-benchmark" in prior["source"]
    assert prior["learned_on"]["gpu_types"] >= 10
    for slopes in prior["slopes"].values():
        # Doubling every figure saves time, and no more than halves it: within physics.
        hardware = [slopes[s] for s in SLOPES if s != "log b"]
        assert all(v < 0 for v in hardware) and -1.1 < sum(hardware) < 0


def test_the_shipped_interval_for_one_gpu_type_widens_with_the_level():
    radii = shipped_prior()["one_gpu_type"]["radius"]
    levels = sorted(radii)
    assert levels[0] == 0.5 and levels[-1] == 0.99 and len(levels) == 50
    assert all(radii[a] <= radii[b] for a, b in zip(levels, levels[1:], strict=False))
    # A level between two shipped takes the higher one's radius.
    assert one_gpu_type_interval(0.905)[0] == radii[0.91]


def test_one_gpu_type_measured_once_is_enough_for_the_prior():
    """The slopes are the table's: one measured configuration anchors them, and another GPU
    type of higher figures is predicted faster by the table's slopes at full strength."""
    point = pd.DataFrame(
        {"gpu": ["V100-SXM2-16GB"], "precision": ["fp32"], "nodes": [1], "procs": [1],
         "batch_size": [64], "data_size": [6400], "epoch_time_s": [20.0]}
    )  # fmt: skip
    model = make_model("prior_hw").fit(point)
    assert model.strengths_ == {"fp32": 1.0}
    faster = model.predict(point.assign(gpu="A100-SXM4-80GB"))[0]
    x = slope_features(pd.concat([point, point.assign(gpu="A100-SXM4-80GB")]), None)
    slopes = np.array([shipped_prior()["slopes"]["fp32"][s] for s in SLOPES])
    assert faster == pytest.approx(20.0 * np.exp((x[1] - x[0]) @ slopes))
    assert faster < 20.0
    with pytest.raises(InsufficientData, match="anchored_hw learns hardware from 2"):
        make_model("anchored_hw").fit(pd.concat([point] * 4, ignore_index=True))


def test_a_batch_measured_on_the_nearest_gpu_type_anchors_that_batch():
    """A batch sweep whose time per sample bends (launch-bound at small batches): asked at the
    batches the GPU type measured, another GPU type's answer is the measured time at each batch
    scaled by one hardware ratio; between two batches measured, the anchor interpolated in log b,
    and beyond the sweep, the anchor of its edge, nearer the time than the sweep's mean."""
    batches = [1, 4, 16, 64, 256]
    sweep = pd.DataFrame(
        {"gpu": "V100-SXM2-16GB", "precision": "fp32", "nodes": 1, "procs": 1,
         "batch_size": batches, "data_size": [100 * b for b in batches],
         "epoch_time_s": [100 * (0.01 + 1e-4 * b) for b in batches]}
    )  # fmt: skip
    model = make_model("prior_hw").fit(sweep)
    ratio = model.predict(sweep.assign(gpu="A100-SXM4-80GB")) / sweep["epoch_time_s"]
    assert np.allclose(ratio, ratio[0]) and ratio[0] < 1
    # The same model read back from its artifact entry answers alike.
    again = model_from_dict(model.to_dict()).predict(sweep.assign(gpu="A100-SXM4-80GB"))
    assert np.allclose(again / sweep["epoch_time_s"], ratio)
    between = sweep.iloc[[2]].assign(batch_size=32, data_size=3200)
    slopes = shipped_prior()["slopes"]["fp32"]
    residual = np.log(sweep["epoch_time_s"] / sweep["data_size"]) - slopes["log b"] * np.log(
        sweep["batch_size"]
    )
    along = np.interp(np.log(32), np.log(sweep["batch_size"]), residual)
    assert along == pytest.approx((residual[2] + residual[3]) / 2)
    expected = 3200 * np.exp(along + slopes["log b"] * np.log(32))
    assert model.predict(between)[0] == pytest.approx(expected)
    beyond = sweep.iloc[[4]].assign(batch_size=1024, data_size=102400)
    from_edge = 102400 * np.exp(residual[4] + slopes["log b"] * np.log(1024))
    assert model.predict(beyond)[0] == pytest.approx(from_edge)
    # The law's own time there: 100 iterations of 0.01 + 1e-4 b seconds.
    law, from_mean = 100 * (0.01 + 1e-4 * 1024), from_edge * np.exp(residual.mean() - residual[4])
    assert abs(np.log(from_edge / law)) < abs(np.log(from_mean / law)) / 5
    # An artifact entry written before the anchor per batch still answers, over the batches.
    entry = model.to_dict()
    for configuration in entry["configurations"]:
        del configuration["batch_anchors"]
    older = model_from_dict(entry).predict(sweep)
    assert not np.allclose(older, sweep["epoch_time_s"]) and np.all(np.isfinite(older))
