"""benchmarks/extrapolation_floor.py: exact hindsight floors of scale-free predictors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from benchmarkscripts import load_benchmark

floor = load_benchmark("extrapolation_floor")
published = load_benchmark("published")
LAMBDA = published.SHARED / published.LAMBDA


def synthetic_times(rng: np.random.Generator, n: int = 60) -> pd.DataFrame:
    """Series at 1, 2, 4, 8 workers: compute plus a saturating ring term, each series scaled."""
    scale = rng.uniform(0.1, 100.0, n)
    ring = rng.uniform(0.0, 0.3, n)
    procs = np.array([1, 2, 4, 8])
    times = scale[:, None] * (1.0 + ring[:, None] * (procs - 1) / procs)
    return pd.DataFrame(times, columns=procs, index=[f"s{i}" for i in range(n)])


def test_a_target_inside_the_family_has_a_zero_floor_and_its_weights_are_found():
    times = synthetic_times(np.random.default_rng(0)).to_numpy()
    # (p-1)/p is 0, 1/2, 3/4, 7/8: t_8 = t_4 + (t_4 - t_2) / 2 exactly (one of many weightings:
    # two constants per series span three columns).
    columns = [times[:, 0], times[:, 1], times[:, 2]]
    value, weights = floor.hindsight_floor(columns, times[:, 3])
    assert value == pytest.approx(0.0, abs=1e-7)
    np.testing.assert_allclose(np.column_stack(columns) @ weights, times[:, 3], rtol=1e-7)


def test_the_floor_is_below_every_member_of_its_family_and_shrinks_with_the_family():
    rng = np.random.default_rng(1)
    times = synthetic_times(rng) * rng.lognormal(0.0, 0.03, (60, 4))  # measurement noise
    train, target = times[[1, 2, 4]].to_numpy(), times[8].to_numpy()
    flat = np.mean(np.abs(train[:, -1] / target - 1.0)) * 100.0
    least_squares_ring = train[:, 2] + (train[:, 2] - train[:, 1]) / 2.0
    ring = np.mean(np.abs(least_squares_ring / target - 1.0)) * 100.0
    values = floor.floors(times, train_max_procs=4)
    assert list(values) == list(floor.FAMILIES)
    assert values["t_last x one factor"] <= flat + 1e-9
    assert values["linear in the training times"] <= min(flat, ring) + 1e-9
    assert np.all(np.diff(list(values.values())) <= 1e-9)  # each family contains the one before
    assert values["linear in the training times"] > 0.5  # noise cannot be fitted away


def test_series_must_be_complete_and_at_one_batch_size():
    points = pd.DataFrame(
        {"network": ["a", "a", "b"], "procs": [1, 2, 1], "batch_size": 8, "epoch_time_s": 1.0}
    )
    with pytest.raises(SystemExit, match="every worker count"):
        floor.epoch_times(points)
    with pytest.raises(SystemExit, match="several batch sizes"):
        floor.epoch_times(points.assign(batch_size=[8, 16, 8]))


@pytest.mark.skipif(not LAMBDA.exists(), reason="../shared/data is not present")
def test_no_scale_free_predictor_reaches_three_percent_on_lambda_even_in_hindsight():
    values = floor.floors(floor.epoch_times(published.lambda_series()), train_max_procs=4)
    assert min(values.values()) > 3.0, values
