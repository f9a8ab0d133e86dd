import numpy as np
import pytest

from dlperf.validate.metrics import METRICS, ape, metric_values, noise_floor, summarise


def test_perfect_prediction():
    measured = np.array([1.0, 2.0, 4.0, 8.0])
    result = summarise(measured, measured.copy(), units=np.arange(4), n_boot=200, seed=0)
    assert result["mape"] == 0 and result["median_ape"] == 0 and result["max_ape"] == 0
    assert result["rmse"] == 0 and result["r2"] == pytest.approx(1.0)


def test_point_values():
    measured = np.array([1.0, 2.0, 4.0])
    predicted = np.array([1.1, 1.8, 4.0])
    result = summarise(measured, predicted, units=np.arange(3), n_boot=0)
    assert ape(measured, predicted) == pytest.approx([10.0, 10.0, 0.0])
    assert result["mape"] == pytest.approx(20 / 3)
    assert result["median_ape"] == pytest.approx(10.0)
    assert result["max_ape"] == pytest.approx(10.0)
    assert result["rmse"] == pytest.approx(np.sqrt((0.01 + 0.04) / 3))
    ss_tot = np.sum((measured - measured.mean()) ** 2)
    assert result["r2"] == pytest.approx(1 - 0.05 / ss_tot)
    assert all(np.isnan(result[f"{m}_lo"]) for m in METRICS)  # no resamples, no interval


def test_counted_metrics_equal_the_metrics_of_the_repeated_points():
    rng = np.random.default_rng(3)
    measured = rng.uniform(1, 10, 12)
    predicted = measured * (1 + 0.2 * rng.standard_normal(12))
    counts = rng.integers(0, 4, size=(50, 12))
    counts[:, 0] += 1  # no empty resample
    counted = metric_values(measured, predicted, counts)
    for i, row in enumerate(counts):
        expanded = metric_values(
            np.repeat(measured, row), np.repeat(predicted, row), np.ones(row.sum())
        )
        for metric in METRICS:
            assert counted[metric][i] == pytest.approx(expanded[metric]), metric


@pytest.mark.parametrize("seed", range(5))
def test_intervals_bracket_the_estimate(seed):
    rng = np.random.default_rng(seed)
    measured = rng.uniform(1, 10, 30)
    predicted = measured * (1 + 0.2 * rng.standard_normal(30))
    result = summarise(measured, predicted, np.repeat(np.arange(6), 5), n_boot=300, seed=seed)
    for metric in METRICS:
        assert result[f"{metric}_lo"] <= result[metric] <= result[f"{metric}_hi"], metric
        assert result[f"{metric}_lo"] < result[f"{metric}_hi"], metric


def test_intervals_resample_units_not_points():
    # Two units, each with one shared error: resampling units can only give MAPE 0, 10 or 20,
    # whatever the number of points; resampling points would give many values in between.
    measured = np.ones(40)
    predicted = np.r_[np.full(20, 1.0), np.full(20, 1.2)]
    units = np.repeat([0, 1], 20)
    result = summarise(measured, predicted, units, n_boot=500, seed=0)
    assert result["mape"] == pytest.approx(10.0)
    assert result["mape_lo"] == pytest.approx(0.0) and result["mape_hi"] == pytest.approx(20.0)
    # one unit per point: a much narrower interval around the same estimate
    pointwise = summarise(measured, predicted, np.arange(40), n_boot=500, seed=0)
    assert pointwise["mape_hi"] - pointwise["mape_lo"] < 10.0


def test_bootstrap_is_seeded():
    measured = np.linspace(1, 5, 12)
    predicted = measured * 1.1 + 0.1 * np.sin(measured)
    units = np.repeat(np.arange(4), 3)
    assert summarise(measured, predicted, units, seed=1) == summarise(
        measured, predicted, units, seed=1
    )


def test_a_single_unit_has_no_interval_and_constant_measurements_no_r2():
    one = summarise(np.array([2.0]), np.array([2.2]), np.array([0]))
    assert one["mape"] == pytest.approx(10.0) and np.isnan(one["mape_lo"])
    one_unit = summarise(np.array([2.0, 3.0, 4.0]), np.array([2.2, 3.0, 4.0]), np.zeros(3))
    assert all(np.isnan(one_unit[f"{m}_lo"]) and np.isnan(one_unit[f"{m}_hi"]) for m in METRICS)
    flat = summarise(np.array([2.0, 2.0, 2.0]), np.array([2.1, 1.9, 2.0]), np.arange(3))
    assert np.isnan(flat["r2"]) and np.isnan(flat["r2_lo"])


def test_noise_floor_weighs_repetitions_and_skips_single_runs():
    # 3 repetitions deviating 10 % on average, 1 repetition (no spread), 5 deviating 4 %
    assert noise_floor([10.0, np.nan, 4.0], [3, 1, 5]) == pytest.approx((30 + 20) / 8)
    assert np.isnan(noise_floor([np.nan, np.nan], [1, 1]))
