import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dlperf.validate.protocols import expand_aliases, plan, plan_cross_network


def grid(procs=(1, 2, 4), batches=(8, 16, 32), data=(512,), networks=("mlp",)):
    rows = [
        {"network": n, "nodes": 1, "procs": p, "batch_size": b, "data_size": d, "epoch_time_s": 1.0}
        for n, p, b, d in itertools.product(networks, procs, batches, data)
    ]
    return pd.DataFrame(rows)


def test_kfold_partitions_every_point_once_and_is_seeded():
    points = grid()
    splits = plan(points, "kfold", {"k": 4}, seed=3).splits
    assert len(splits) == 4
    tested = np.concatenate([s.test for s in splits])
    assert sorted(tested) == list(range(len(points)))
    for s in splits:
        assert not set(s.train) & set(s.test)
        assert len(s.train) + len(s.test) == len(points)
    again = plan(points, "kfold", {"k": 4}, seed=3).splits
    assert all(np.array_equal(a.test, b.test) for a, b in zip(splits, again, strict=True))
    other = plan(points, "kfold", {"k": 4}, seed=4).splits
    assert not all(np.array_equal(a.test, b.test) for a, b in zip(splits, other, strict=True))


def test_kfold_keeps_each_configuration_in_one_fold():
    # 2 networks x 2 node counts x 3 worker counts x 3 batches, 3 data sizes, 3 repetitions each:
    # rows of one configuration differ only in data size and repetition.
    rows = [
        {"network": n, "nodes": nodes, "procs": p, "batch_size": b, "data_size": d, "rep": r}
        for n, nodes, p, b, d, r in itertools.product(
            ("lenet", "mlp"), (1, 2), (2, 4, 8), (8, 16, 32), (256, 512, 1024), range(3)
        )
    ]
    points = pd.DataFrame(rows).sample(frac=1.0, random_state=0).reset_index(drop=True)
    result = plan(points, "kfold", {"k": 5}, seed=1)
    assert len(result.splits) == 5 and result.unit == "fold"
    fold_of = np.full(len(points), -1)
    for number, split in enumerate(result.splits):
        assert fold_of[split.test].max() == -1  # no point is tested twice
        fold_of[split.test] = number
        assert not set(split.train) & set(split.test)
        assert len(split.train) + len(split.test) == len(points)
    assert fold_of.min() == 0  # every point is tested once
    folds_per_group = (
        points.assign(fold=fold_of)
        .groupby(["network", "nodes", "procs", "batch_size"])["fold"]
        .nunique()
    )
    assert len(folds_per_group) == 36 and (folds_per_group == 1).all()


def test_kfold_counts_configurations_not_points():
    # 2 configurations, measured at 3 data sizes: 6 points, still too few to split
    result = plan(grid(procs=(1,), batches=(8, 16), data=(256, 512, 1024)), "kfold", {"k": 5})
    assert not result.splits and "at least 3 measured configurations" in result.reason
    assert "found 2" in result.reason and result.status == "not_run"
    # k above the number of configurations is capped at it
    assert len(plan(grid(procs=(1,), data=(256, 512)), "kfold", {"k": 5}).splits) == 3


@pytest.mark.parametrize("protocol, column", [("loo_procs", "procs"), ("loo_batch", "batch_size")])
def test_leave_one_level_out_tests_each_level_on_its_own(protocol, column):
    points = grid()
    result = plan(points, protocol)
    assert [s.fold.split("=")[1] for s in result.splits] == [
        str(v) for v in sorted(points[column].unique())
    ]
    for s in result.splits:
        held = points.iloc[s.test][column].unique()
        assert len(held) == 1
        assert held[0] not in set(points.iloc[s.train][column])
        assert len(s.train) + len(s.test) == len(points)


def test_leave_one_level_out_needs_three_levels():
    result = plan(grid(procs=(1, 2)), "loo_procs")
    assert not result.splits
    assert "at least 3 levels of procs, found 2 (1, 2)" in result.reason


def test_extrapolation_uses_the_threshold_or_all_but_the_top_level():
    points = grid(procs=(1, 2, 4, 8))
    default = plan(points, "extrapolation_procs").splits[0]
    assert set(points.iloc[default.train]["procs"]) == {1, 2, 4}
    assert set(points.iloc[default.test]["procs"]) == {8}
    set_limit = plan(points, "extrapolation_procs", {"train_max_procs": 2}).splits[0]
    assert set(points.iloc[set_limit.train]["procs"]) == {1, 2}
    assert set(points.iloc[set_limit.test]["procs"]) == {4, 8}
    batch = plan(points, "extrapolation_batch", {"train_max_batch": 16}).splits[0]
    assert set(points.iloc[batch.train]["batch_size"]) == {8, 16}
    assert set(points.iloc[batch.test]["batch_size"]) == {32}


@pytest.mark.parametrize(
    "protocol, column, setting",
    [
        ("extrapolation_procs", "procs", "train_max_procs"),
        ("extrapolation_batch", "batch_size", "train_max_batch"),
    ],
)
def test_extrapolation_from_a_single_level_cannot_inform(protocol, column, setting):
    points = grid(procs=(1, 2), batches=(8, 16))
    result = plan(points, protocol)  # default: train on every level but the largest, one here
    assert not result.splits and result.status == "insufficient_data"
    assert f"single level of {column}" in result.reason and f"raise {setting}" in result.reason
    # two training levels inform
    informative = plan(grid(procs=(1, 2, 4), batches=(8, 16, 32)), protocol)
    assert informative.splits and informative.reason is None
    assert informative.unit == "configuration"


def test_extrapolation_reasons_name_the_setting_to_change():
    points = grid(procs=(1, 2))
    assert (
        "lower train_max_procs"
        in plan(points, "extrapolation_procs", {"train_max_procs": 2}).reason
    )
    assert (
        "raise train_max_batch"
        in plan(points, "extrapolation_batch", {"train_max_batch": 4}).reason
    )
    assert "at least 2 levels" in plan(grid(procs=(1,)), "extrapolation_procs").reason


def test_cross_network_holds_out_each_network():
    points = grid(networks=("lenet", "mlp", "resnet18"))
    plans = plan_cross_network(points)
    assert sorted(plans) == ["lenet", "mlp", "resnet18"]
    for network, result in plans.items():
        (split,) = result.splits
        assert set(points.iloc[split.test]["network"]) == {network}
        assert network not in set(points.iloc[split.train]["network"])


def test_cross_network_with_one_network_says_why():
    (result,) = plan_cross_network(grid()).values()
    assert not result.splits and "at least 2 networks" in result.reason


def test_aliases_and_unknown_protocols():
    assert expand_aliases(["loo", "kfold", "loo_procs"]) == ["loo_procs", "loo_batch", "kfold"]
    assert expand_aliases(["extrapolation"]) == ["extrapolation_procs", "extrapolation_batch"]
    with pytest.raises(ValueError, match="unknown validation protocol 'holdout'"):
        expand_aliases(["holdout"])
    with pytest.raises(ValueError, match="unknown validation protocol"):
        plan(grid(), "holdout")


@settings(max_examples=60, deadline=None)
@given(
    configurations=st.lists(
        st.tuples(st.sampled_from((1, 2)), st.sampled_from((1, 2, 4, 8)), st.sampled_from((8, 16))),
        min_size=1,
        max_size=16,
        unique=True,
    ),
    copies=st.integers(1, 4),
    k=st.integers(2, 6),
    seed=st.integers(0, 2**16),
)
def test_kfold_property_whole_configurations_in_one_fold(configurations, copies, k, seed):
    # each configuration measured at `copies` data sizes (or repetitions), rows shuffled
    rows = [
        {"network": "mlp", "nodes": n, "procs": p, "batch_size": b, "data_size": 256 * (c + 1)}
        for (n, p, b), c in itertools.product(configurations, range(copies))
    ]
    points = pd.DataFrame(rows).sample(frac=1.0, random_state=seed % 1000).reset_index(drop=True)
    result = plan(points, "kfold", {"k": k}, seed=seed)
    if len(configurations) < 3:
        assert not result.splits and f"found {len(configurations)}" in result.reason
        return
    assert len(result.splits) == min(k, len(configurations))
    fold_of = np.full(len(points), -1)
    for number, split in enumerate(result.splits):
        assert len(split.test) and (fold_of[split.test] == -1).all()
        fold_of[split.test] = number
        assert sorted(np.concatenate([split.train, split.test])) == list(range(len(points)))
    assert (fold_of >= 0).all()
    keys = points[["nodes", "procs", "batch_size"]].apply(tuple, axis=1)
    assert (pd.Series(fold_of).groupby(keys).nunique() == 1).all()
