"""The generic model's physics terms (issue 15 item 1): features, and that the fit finds them."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dlperf import tables
from dlperf.models import make_model
from dlperf.models.terms import TERMS, Extrinsic


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
    points = tables.to_points(timings)
    assert {"threads_per_worker", "cores_per_node"} <= set(points.columns)
    assert "cores_per_node" in tables.TIMING_COLUMNS
