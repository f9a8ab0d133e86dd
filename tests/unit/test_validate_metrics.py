import numpy as np
import pytest

from dlperf.validate.metrics import METRICS, ape, summarise


def test_perfect_prediction():
    measured = np.array([1.0, 2.0, 4.0, 8.0])
    result = summarise(measured, measured.copy(), n_boot=200, seed=0)
    assert result["mape"] == 0 and result["median_ape"] == 0 and result["max_ape"] == 0
    assert result["rmse"] == 0 and result["r2"] == pytest.approx(1.0)


def test_point_values():
    measured = np.array([1.0, 2.0, 4.0])
    predicted = np.array([1.1, 1.8, 4.0])
    result = summarise(measured, predicted, n_boot=0)
    assert ape(measured, predicted) == pytest.approx([10.0, 10.0, 0.0])
    assert result["mape"] == pytest.approx(20 / 3)
    assert result["median_ape"] == pytest.approx(10.0)
    assert result["max_ape"] == pytest.approx(10.0)
    assert result["rmse"] == pytest.approx(np.sqrt((0.01 + 0.04) / 3))
    ss_tot = np.sum((measured - measured.mean()) ** 2)
    assert result["r2"] == pytest.approx(1 - 0.05 / ss_tot)
    assert all(np.isnan(result[f"{m}_lo"]) for m in METRICS)  # no resamples, no interval


@pytest.mark.parametrize("seed", range(5))
def test_intervals_bracket_the_estimate(seed):
    rng = np.random.default_rng(seed)
    measured = rng.uniform(1, 10, 30)
    predicted = measured * (1 + 0.2 * rng.standard_normal(30))
    result = summarise(measured, predicted, n_boot=300, seed=seed)
    for metric in METRICS:
        assert result[f"{metric}_lo"] <= result[metric] <= result[f"{metric}_hi"], metric
        assert result[f"{metric}_lo"] < result[f"{metric}_hi"], metric


def test_bootstrap_is_seeded():
    measured = np.linspace(1, 5, 12)
    predicted = measured * 1.1 + 0.1 * np.sin(measured)
    assert summarise(measured, predicted, seed=1) == summarise(measured, predicted, seed=1)


def test_single_point_has_no_interval_and_constant_measurements_no_r2():
    one = summarise(np.array([2.0]), np.array([2.2]))
    assert one["mape"] == pytest.approx(10.0) and np.isnan(one["mape_lo"])
    flat = summarise(np.array([2.0, 2.0, 2.0]), np.array([2.1, 1.9, 2.0]))
    assert np.isnan(flat["r2"]) and np.isnan(flat["r2_lo"])
