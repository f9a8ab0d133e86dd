"""Prediction intervals from the one bootstrap over configurations, on real models and artifacts."""

from __future__ import annotations

import copy
import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest

from dlperf.config import default_models
from dlperf.folds import configuration_groups
from dlperf.models import MODELS, make_model, model_from_dict
from dlperf.models.artifact import fit_framework
from dlperf.models.artifact_check import VERSION, ArtifactError, check_artifact
from dlperf.models.intervals import bootstrap_interval, resample_configurations
from dlperf.models.planning import cost_unit, plan
from dlperf.models.prediction import extrapolation_warnings, predict_rows
from dlperf.report.curves import model_curve

# The models fitted by default: the config schema's default models section.
DEFAULT_MODELS = default_models()


def timings(device: str = "cpu", seed: int = 0, nodes=(1,), procs=(1, 2, 4)) -> pd.DataFrame:
    """A small table shaped like the generic model with 2% noise, two data sizes per config."""
    rng = np.random.default_rng(seed)
    rows = []
    for network, scale in (("lenet", 1.0), ("resnet18", 3.0)):
        for n, p, b, d in itertools.product(nodes, procs, (16, 32, 64), (2048, 4096)):
            if p % n:
                continue
            iters = math.ceil(d / (p * b))
            t_iter = scale * (0.002 + 1e-4 * b**0.95) + 0.004 * (p - 1) / p + 0.01 * (n > 1)
            rows.append(
                {
                    "framework": "pytorch",
                    "network": network,
                    "device": device,
                    "nodes": n,
                    "procs": p,
                    "batch_size": b,
                    "data_size": d,
                    "rep": 0,
                    "param_count": scale * 1e6,
                    "flops_per_sample": scale * 1e8,
                    "epoch_time_s": (0.05 + iters * t_iter) * rng.lognormal(0, 0.02),
                }
            )
    return pd.DataFrame(rows)


REFITS = 8


@pytest.fixture(scope="module")
def artifact():
    models = {name: {} for name in DEFAULT_MODELS} | {"generic_xnet": {}}
    return fit_framework(timings(), "pytorch", models, seed=3, refits=REFITS)


def fitted(artifact):
    """(network, model) of every fitted model, per network and across networks."""
    out = [
        (net, name)
        for net, info in artifact["networks"].items()
        for name, entry in info["models"].items()
        if entry["status"] == "ok"
    ]
    return out + [
        ("lenet", name)
        for name, entry in artifact["all_networks"]["models"].items()
        if entry["status"] == "ok"
    ]


def test_resamples_whole_configurations():
    frame = timings()
    rng = np.random.default_rng(0)
    for _ in range(5):
        resample = resample_configurations(frame, rng)
        # Each drawn configuration brings all of its rows (both data sizes), never a part.
        counts = resample.groupby(["network", "nodes", "procs", "batch_size"]).size()
        assert (counts % 2 == 0).all()
        assert configuration_groups(resample).max() + 1 <= configuration_groups(frame).max() + 1
        assert len(resample) == len(frame)


def test_every_fitted_model_has_refits_in_one_format(artifact):
    pairs = fitted(artifact)
    names = {name for _, name in pairs}
    assert names >= {"generic", "usl", "ernest", "linreg_sfs", "castello", "generic_xnet"}
    for network, name in pairs:
        info = artifact["networks"][network]
        entry = (
            artifact["all_networks"]["models"][name]
            if name == "generic_xnet"
            else info["models"][name]
        )
        stored = entry["interval"]
        assert set(stored) == {
            "method",
            "level_default",
            "refits",
            "relative_residuals",
            "skipped",
        }
        assert len(stored["refits"]) + stored["skipped"] == REFITS
        assert len(stored["refits"]) >= REFITS // 2
        for refit in stored["refits"]:
            assert refit["model"] == name
            assert type(model_from_dict(refit)) is MODELS[name]


def test_refits_keep_the_chosen_penalty(artifact):
    generic = artifact["networks"]["lenet"]["models"]["generic"]
    assert {r["lambda"] for r in generic["interval"]["refits"]} == {generic["lambda"]}


def test_resamples_a_model_cannot_fit_are_skipped_and_counted():
    # Two configurations with different worker counts: USL needs 2 levels of procs, so every
    # resample that drew one configuration twice cannot be fitted.
    frame = timings(procs=(1, 2))
    frame = frame[(frame["network"] == "lenet") & (frame["batch_size"] == 32)]
    model = make_model("usl", {}, 0).fit(frame)
    stored = bootstrap_interval(model, frame, seed=0, refits=20)
    assert stored["skipped"] > 0
    assert len(stored["refits"]) + stored["skipped"] == 20


def test_band_equals_predict_at_every_grid_point_for_every_model(artifact):
    from dlperf.models.answer import within_physics

    grid = pd.DataFrame(
        {"nodes": 1, "procs": [1, 2, 3, 4, 6, 8], "batch_size": 32, "data_size": 4096}
    )
    for network, name in fitted(artifact):
        curve = model_curve(name, artifact, network)
        assert curve.band is not None, name
        assert curve.band_source.startswith("90% prediction interval"), name
        lo, hi = curve.band(grid)
        for i in range(len(grid)):
            point = predict_rows(artifact, network, name, grid.iloc[[i]])
            # The report draws within physics: predict's interval, no faster than perfect
            # scaling of the best measured per-worker throughput.
            point = within_physics(point, artifact["networks"][network]["measured"])
            # Equal up to rounding (one row or many through the same matrix products).
            assert point["epoch_time_lo_s"].iloc[0] == pytest.approx(lo[i], rel=1e-12), name
            assert point["epoch_time_hi_s"].iloc[0] == pytest.approx(hi[i], rel=1e-12), name
        mid = curve.predict(grid)
        assert (lo <= mid * 1.05).all() and (mid <= hi * 1.05).all(), name
        assert (lo < hi).all(), name


def test_interval_covers_most_measurements_and_widens_with_the_level(artifact):
    points = timings()
    points = points[points["network"] == "lenet"].reset_index(drop=True)
    narrow = predict_rows(artifact, "lenet", "generic", points, level=0.5)
    wide = predict_rows(artifact, "lenet", "generic", points, level=0.95)
    assert (wide["epoch_time_hi_s"] - wide["epoch_time_lo_s"] >= 0).all()
    assert (
        wide["epoch_time_hi_s"] - wide["epoch_time_lo_s"]
        >= narrow["epoch_time_hi_s"] - narrow["epoch_time_lo_s"]
    ).all()
    measured = points["epoch_time_s"].to_numpy()
    inside = (wide["epoch_time_lo_s"] <= measured) & (measured <= wide["epoch_time_hi_s"])
    assert inside.mean() >= 0.8


def test_a_model_without_refits_has_no_band_and_says_why(artifact):
    damaged = copy.deepcopy(artifact)
    damaged["networks"]["lenet"]["models"]["ernest"]["interval"]["refits"] = []
    damaged["networks"]["lenet"]["models"]["ernest"]["interval"]["skipped"] = REFITS
    curve = model_curve("ernest", damaged, "lenet")
    assert curve.band is None and curve.band_source == ""
    assert f"none of its {REFITS} bootstrap refits" in curve.no_band_reason
    table = predict_rows(damaged, "lenet", "ernest", timings().head(2))
    assert table["epoch_time_lo_s"].isna().all()
    with pytest.raises(ValueError, match="no prediction interval, so no plan can rest") as caught:
        plan(damaged, "lenet", "ernest", 32, 4096, 1, 1e9, 4, 8, safe=True)
    assert "--" not in str(caught.value)  # the model layer names no option of the command line


def test_safe_plan_works_for_every_model(artifact):
    for network, name in fitted(artifact):
        table, choice = plan(artifact, network, name, 32, 4096, 2, 1e9, 4, 8, safe=True)
        assert choice is not None
        assert (table["total_time_s"] == 2 * table["epoch_time_hi_s"]).all()


def test_cost_is_in_gpu_hours_only_on_gpus(artifact):
    assert cost_unit(artifact, "lenet") == ("cpu_hours", "CPU-hours")
    cuda = fit_framework(timings("cuda"), "pytorch", {"ernest": {}}, seed=0, refits=2)
    assert cost_unit(cuda, "lenet") == ("gpu_hours", "GPU-hours")
    table, _ = plan(cuda, "lenet", "ernest", 32, 4096, 1, 1e9, 4, 8)
    assert "gpu_hours" in table and "cpu_hours" not in table
    unknown = fit_framework(timings("unknown"), "pytorch", {"ernest": {}}, seed=0, refits=2)
    assert cost_unit(unknown, "lenet") == ("worker_hours", "worker-hours")


def test_measured_ranges_and_extrapolation_warnings(artifact):
    measured = dict(artifact["networks"]["lenet"]["measured"])
    # The answer's perfect-scaling bound: the best per-worker throughput measured.
    assert measured.pop("best_samples_per_s_per_worker") > 0
    assert measured == {
        "procs": [1, 2, 4],
        "nodes": [1],
        "batch_size": [16, 32, 64],
        "grad_accum_steps": [1],
        "multi_node": False,
        "iterations": [8, 256],
        "node_capacity": None,  # the timings do not say a node's cores or GPUs
        "disturbed_share": None,  # nor how busy the host was
    }

    def rows(**kw):
        return pd.DataFrame([{"nodes": 1, "procs": 2, "batch_size": 32, "data_size": 1} | kw])

    assert extrapolation_warnings(artifact, "lenet", rows(procs=8)) == []
    (workers,) = extrapolation_warnings(artifact, "lenet", rows(procs=9))
    assert "9 workers is beyond twice the largest measured worker count (4)" in workers
    warnings = extrapolation_warnings(artifact, "lenet", rows(procs=64, nodes=8))
    assert len(warnings) == 2 and "single-node measurements" in warnings[1]
    (batch,) = extrapolation_warnings(artifact, "lenet", rows(batch_size=128))
    assert "batch size 128 is outside the measured range (16..64)" in batch
    # An unseen network (across-network model) is judged on the across-network fit's ranges.
    assert extrapolation_warnings(artifact, "vgg", rows(batch_size=8))


def test_multi_node_ranges_warn_beyond_the_measured_node_counts():
    multi = fit_framework(
        timings(nodes=(1, 2), procs=(1, 2, 4)), "pytorch", {"ernest": {}}, seed=0, refits=2
    )
    assert multi["networks"]["lenet"]["measured"]["multi_node"]
    rows = pd.DataFrame({"nodes": [2, 4], "procs": [4, 8], "batch_size": 32, "data_size": 1})
    (warning,) = extrapolation_warnings(multi, "lenet", rows)
    assert "4 nodes is beyond the measured node counts (1, 2)" in warning


def test_artifact_check_accepts_a_real_artifact_and_names_the_damaged_field(artifact):
    check_artifact(copy.deepcopy(artifact), "a.json")

    def damaged(change):
        bad = copy.deepcopy(artifact)
        change(bad)
        with pytest.raises(ArtifactError) as err:
            check_artifact(bad, "results/models/pytorch.json")
        return str(err.value)

    generic = ("networks", "lenet", "models", "generic")

    def at(bad, path=generic):
        for key in path:
            bad = bad[key]
        return bad

    message = damaged(lambda a: at(a)["terms"][2].update(value=float("nan")))
    assert message == (
        "results/models/pytorch.json: networks.lenet.models.generic.terms[2].value is NaN"
    )
    message = damaged(lambda a: at(a)["terms"][1].update(name="overhed"))
    assert "networks.lenet.models.generic.terms[1].name is 'overhed'" in message
    assert "schema_version is 99" in damaged(lambda a: a.update(schema_version=99))
    assert "schema_version is None" in damaged(lambda a: a.pop("schema_version"))
    assert f"this dlperf reads {VERSION}" in damaged(lambda a: a.update(schema_version=0))
    message = damaged(lambda a: at(a, generic[:3]).update(magic=at(a)))
    assert "networks.lenet.models.magic names an unknown model 'magic'" in message
    message = damaged(
        lambda a: at(a, ("networks", "lenet", "models", "usl"))["constants"].update(
            sigma=float("inf")
        )
    )
    assert "networks.lenet.models.usl.constants.sigma is inf" in message
    message = damaged(
        lambda a: at(a)["interval"]["refits"][0]["exponent"].update(value=float("nan"))
    )
    assert "generic.interval.refits[0].exponent.value is NaN" in message
    message = damaged(
        lambda a: a["all_networks"]["models"]["generic_xnet"].update(**{"lambda": float("nan")})
    )
    assert "all_networks.models.generic_xnet.lambda is NaN" in message


def test_artifact_check_refuses_an_edited_constant_a_deleted_term_and_text(artifact):
    def damaged(change):
        bad = copy.deepcopy(artifact)
        change(bad["networks"]["lenet"]["models"])
        with pytest.raises(ArtifactError) as err:
            check_artifact(bad, "m.json")
        return str(err.value)

    def beyond_bounds(models):
        term = models["generic"]["terms"][0]
        term["value"] = term["bounds"][1] * 10 + 1

    message = damaged(beyond_bounds)
    assert "networks.lenet.models.generic.terms[0].value is" in message
    assert "outside the bounds it was fitted in" in message
    deleted = damaged(lambda models: models["generic"]["terms"].pop(1))
    assert "networks.lenet.models.generic.terms lists" in deleted and "overhead deleted" in deleted
    text = damaged(lambda models: models["generic"]["terms"][2].update(value="0.5"))
    assert "networks.lenet.models.generic.terms[2].value is '0.5', not a number" in text
    text = damaged(lambda models: models["usl"]["constants"].update(sigma="high"))
    assert "networks.lenet.models.usl.constants.sigma is 'high', not a number" in text


def test_the_report_stage_refuses_a_damaged_artifact(artifact, tmp_path):
    from dlperf import stages
    from dlperf.io import atomic_write_json
    from dlperf.report.study import ReportSources

    bad = copy.deepcopy(artifact)
    bad["networks"]["lenet"]["models"]["castello"]["constants"]["latency_s"] = float("nan")
    path = tmp_path / "pytorch.json"
    path.write_text(json.dumps(bad))
    timings_csv = tmp_path / "t.csv"
    timings().to_csv(timings_csv, index=False)
    summary = tmp_path / "summary.csv"
    summary.write_text("framework,network,model,protocol,status\n")
    with pytest.raises(ArtifactError, match="castello.constants.latency_s is NaN"):
        stages.report(
            ReportSources(timings_csv, None, [path], summary, [], {}), tmp_path / "index.html"
        )
    assert not (tmp_path / "index.html").exists()
    atomic_write_json(path, artifact)  # the sound artifact is written by the same writer
    assert check_artifact(json.loads(path.read_text()), str(path))


def test_fitting_without_refits_gives_no_interval_and_says_so():
    bare = fit_framework(timings(), "pytorch", {"ernest": {}}, seed=0, refits=0)
    entry = bare["networks"]["lenet"]["models"]["ernest"]
    assert entry["interval"]["refits"] == [] and entry["interval"]["skipped"] == 0
    curve = model_curve("ernest", bare, "lenet")
    assert curve.band is None and "interval refits set to 0" in curve.no_band_reason
    with pytest.raises(ValueError, match="must be 0 or more"):
        bootstrap_interval(make_model("ernest", {}, 0), timings(), seed=0, refits=-1)
