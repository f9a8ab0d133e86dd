"""The generic model's physics terms (issue 15 item 1): features, and that the fit finds them."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from dlperf.measurements import tables
from dlperf.measurements.external import read_external
from dlperf.measurements.points import to_points
from dlperf.models import make_model, model_from_dict
from dlperf.models.artifact import fit_framework
from dlperf.models.prediction import predict_rows
from dlperf.models.terms import TERMS, Extrinsic, smooth_min


def cpu_table(procs, batches, threads_per_worker=None, cores=2, device="cpu"):
    rows = []
    for p in procs:
        for b in batches:
            for d in (1024, 2048):
                threads = threads_per_worker or max(1, cores // p)
                rows.append(
                    dict(
                        nodes=1,
                        procs=p,
                        batch_size=b,
                        data_size=d,
                        device=device,
                        threads_per_worker=threads,
                        cores_per_node=cores,
                    )
                )
    return pd.DataFrame(rows)


def test_core_slowdown_follows_the_workers_share_of_the_cores():
    frame = cpu_table([1, 2, 4], [8], cores=2)
    # p=1: 2 threads on 2 cores; p=2: 1 thread each; p=4: 1 thread each, only half a core.
    np.testing.assert_allclose(Extrinsic.of(frame).core_slowdown, [1.0, 1.0, 2.0, 2.0, 4.0, 4.0])
    fixed = cpu_table([1, 4], [8], threads_per_worker=1, cores=8)
    # One thread of eight cores either way: the same slowdown until the node is full.
    np.testing.assert_allclose(Extrinsic.of(fixed).core_slowdown, [8.0] * 4)


def test_absent_columns_or_an_accelerator_mean_an_own_device():
    frame = cpu_table([1, 2], [8])
    for other in (frame.drop(columns=["cores_per_node"]), frame.assign(device="cuda")):
        x = Extrinsic.of(other)
        np.testing.assert_array_equal(x.core_slowdown, 1.0)
        assert not TERMS["core_share"].feature(x).any()


def test_ps_sync_and_internode_scaling_features():
    frame = pd.DataFrame(
        dict(procs=[1, 2, 4, 8, 8], nodes=[1, 1, 2, 4, 8], batch_size=8, ps_servers=[1, 1, 1, 2, 2])
    )
    x = Extrinsic.of(frame)
    np.testing.assert_array_equal(TERMS["ps_sync"].feature(x), [0, 2, 4, 4, 4])
    np.testing.assert_array_equal(TERMS["internode_scaling"].feature(x), [0, 0, 1, 2, 3])


def epoch_times(frame, t_iter):
    iters = np.ceil(frame["data_size"] / (frame["procs"] * frame["batch_size"]))
    return iters * t_iter


def test_generic_model_attributes_shared_cores_to_core_share_not_to_all_reduce():
    frame = cpu_table([1, 2], [16, 32, 64])
    p, b = frame["procs"], frame["batch_size"]
    # Compute doubles per worker at p=2 (half the cores); a small all-reduce on top.
    t_iter = 2e-4 * b * p + 1e-3 * (p - 1) / p + 5e-4
    frame["epoch_time_s"] = epoch_times(frame, t_iter)
    terms = ["overhead", "compute", "allreduce_bw", "core_share"]
    with_share = make_model("generic", {"terms": terms, "lambdas": [0.0]}, seed=0).fit(frame)
    without = make_model("generic", {"terms": terms[:3], "lambdas": [0.0]}, seed=0).fit(frame)
    assert with_share.train_mape_ < 0.1
    assert without.train_mape_ > 10 * with_share.train_mape_
    np.testing.assert_allclose(with_share.values_["core_share"], 2e-4, rtol=0.05)
    np.testing.assert_allclose(with_share.values_["allreduce_bw"], 1e-3, rtol=0.05)


def test_points_carry_the_cores_setting():
    timings = cpu_table([1, 2], [8]).assign(
        framework="pytorch", network="lenet", rep=1, epoch_time_s=1.0, samples_per_s=1.0
    )
    points = to_points(timings)
    assert {"threads_per_worker", "cores_per_node"} <= set(points.columns)
    assert "cores_per_node" in tables.TIMING_COLUMNS


def overlap_table():
    rows = [
        dict(nodes=1, procs=p, batch_size=b, data_size=8192)
        for p in (1, 2, 4, 8)
        for b in (8, 16, 32, 64)
    ]
    frame = pd.DataFrame(rows)
    p, b = frame["procs"].to_numpy(float), frame["batch_size"].to_numpy(float)
    exchange, compute = 0.02 * (p - 1) / p, 1e-3 * b
    t_iter = 2e-3 + compute + exchange - smooth_min(exchange, 0.6 * compute)
    frame["epoch_time_s"] = epoch_times(frame, t_iter)
    return frame


def test_smooth_min_is_below_the_min_and_zero_with_a_zero_side():
    x, y = np.array([0.0, 1.0, 1.0, 10.0]), np.array([1.0, 0.0, 1.0, 1.0])
    m = smooth_min(x, y)
    assert m[0] == m[1] == 0.0
    assert m[2] == pytest.approx(2 ** (-1 / 4))
    assert m[3] == pytest.approx(1.0, rel=1e-3)
    assert np.all(m <= np.minimum(x, y))


def test_overlap_term_recovers_the_hidden_share_and_shows_negative_seconds():
    frame = overlap_table()
    terms = ["overhead", "compute", "allreduce_bw"]
    model = make_model("generic", {"terms": terms + ["overlap"], "lambdas": [0.0]}, seed=0)
    model.fit(frame)
    without = make_model("generic", {"terms": terms, "lambdas": [0.0]}, seed=0).fit(frame)
    assert model.train_mape_ < 0.01 < 1.0 < without.train_mape_
    assert model.values_["overlap"] == pytest.approx(0.6, rel=1e-3)
    seconds = model.term_seconds(frame)
    assert (seconds["overlap"] <= 0).all() and (seconds["overlap"] < 0).any()
    np.testing.assert_allclose(seconds.sum(axis=1), model.predict(frame))
    # Round trip through the artifact entry keeps the nonlinear prediction.
    again = model_from_dict(json.loads(json.dumps(model.to_dict())))
    np.testing.assert_allclose(again.predict(frame), model.predict(frame))


def test_overlap_needs_compute_and_communication():
    frame = overlap_table()
    model = make_model("generic", {"terms": ["overhead", "compute", "overlap"]}).fit(frame)
    assert "overlap" in model.identification_.inactive


def test_full_differential_evolution_matches_the_exact_constants_on_linear_terms():
    frame = overlap_table()
    settings = {"terms": ["overhead", "compute", "allreduce_bw"], "lambdas": [0.0]}
    exact = make_model("generic", settings, seed=0).fit(frame)
    full = make_model("generic", {**settings, "search": "full_de"}, seed=0).fit(frame)
    assert full.get_params()["search"] == "full_de"
    assert full.train_mape_ == pytest.approx(exact.train_mape_, rel=1e-3)
    np.testing.assert_allclose(full.predict(frame), exact.predict(frame), rtol=1e-3)
    with pytest.raises(ValueError, match="full_de"):
        make_model("generic", {"search": "newton"})


def test_external_csv_carries_the_layout_columns(tmp_path):
    path = tmp_path / "ext.csv"
    pd.DataFrame(
        dict(
            framework="pytorch",
            device="cpu",
            procs=[1, 2],
            batch_size=8,
            iter_time_s=[0.1, 0.2],
            threads_per_worker=[4, 2],
            cores_per_node=4,
        )
    ).to_csv(path, index=False)
    points = read_external(path)
    np.testing.assert_array_equal(Extrinsic.of(points).core_slowdown, [1.0, 2.0])


def test_predictions_assume_the_measured_sharing_of_the_cores():
    """predict and plan rows carry no layout columns: the artifact's `layout` fills them, so a
    prediction at a measured configuration equals the fit there (core_share included) and more
    workers on the node share its cores as the measured ones did."""
    frame = cpu_table([1, 2], [16, 32, 64]).assign(framework="pytorch", network="lenet")
    p, b = frame["procs"], frame["batch_size"]
    frame["epoch_time_s"] = epoch_times(frame, 2e-4 * b * p + 1e-3 * (p - 1) / p + 5e-4)
    frame["samples_per_s"] = frame["data_size"] / frame["epoch_time_s"]
    artifact = fit_framework(frame, "pytorch", {"generic": {"lambdas": [0.0]}}, seed=0, refits=0)
    assert artifact["networks"]["lenet"]["layout"] == {
        "device": "cpu",
        "cores_per_node": 2,
        "threads_per_worker": "shared",
    }
    bare = frame[["nodes", "procs", "batch_size", "data_size"]]
    predicted = predict_rows(artifact, "lenet", "generic", bare)["epoch_time_s"]
    np.testing.assert_allclose(predicted, frame["epoch_time_s"], rtol=0.01)
    # Four workers on two cores: each has half a core, so its compute per sample doubles again
    # and an epoch takes about as long as with two (half the iterations, each twice as long);
    # without the layout (s = 1) it would take about a quarter.
    two = bare[bare["procs"] == 2]
    four = predict_rows(artifact, "lenet", "generic", two.assign(procs=4))["epoch_time_s"]
    ratio = four.to_numpy() / frame.loc[two.index, "epoch_time_s"].to_numpy()
    assert ((ratio > 0.8) & (ratio < 1.2)).all(), ratio
