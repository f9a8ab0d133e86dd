"""How the answer combines its models at a row (dlperf.models.combination)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dlperf.models.combination import bootstrap_floor, weighted_median


def test_one_model_far_from_the_others_moves_the_median_no_further_than_its_neighbours():
    logs = np.array([[0.0], [0.1], [0.2], [5.0]])
    weights = np.array([0.25, 0.25, 0.25, 0.25])
    # The half lies midway between the second and third models' middles.
    assert np.isclose(weighted_median(logs, weights)[0], 0.15)
    runaway = logs.copy()
    runaway[3, 0] = 50.0
    assert weighted_median(runaway, weights)[0] == weighted_median(logs, weights)[0]
    # A weighted mean would move with it: the reason the answer is a median.
    assert np.sum(weights[:, None] * runaway, axis=0)[0] > 10


def test_the_median_follows_the_weights_per_row_and_moves_smoothly_with_them():
    logs = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0]])
    # First column: middles 0.35 (0), 0.8 (1), 0.95 (2), so one half is 1/3 of the way from 0
    # to 1; second: 0.1 (0), 0.55 (1), 0.95 (2), 8/9 of the way.
    assert np.allclose(weighted_median(logs, np.array([0.7, 0.2, 0.1])), [1 / 3, 8 / 9])
    # A model holding most of the weight draws the median most of the way to its value.
    assert np.all(weighted_median(logs, np.array([0.05, 0.05, 0.9])) > 1.85)
    # No step as the weights shift: small changes of weight, small changes of the median.
    shifts = np.linspace(0.2, 0.6, 41)
    path = [weighted_median(logs, np.array([w, 0.6 - w / 2, 0.4 - w / 2]))[0] for w in shifts]
    assert np.max(np.abs(np.diff(path))) < 0.05


def test_two_models_give_their_weighted_mean():
    logs = np.array([[0.0, 1.0], [1.0, 3.0]])
    assert np.allclose(weighted_median(logs, np.array([0.75, 0.25])), [0.25, 1.5])


def _table(epoch, lo, hi):
    return pd.DataFrame({"epoch_time_s": epoch, "epoch_time_lo_s": lo, "epoch_time_hi_s": hi})


def test_a_wild_bootstrap_of_one_model_does_not_set_the_interval():
    tables = {
        "a": _table([10.0], [9.0], [11.0]),
        "b": _table([10.0], [9.5], [10.5]),
        "c": _table([10.0], [4.0], [30.0]),  # refits on a few resampled counts swung far
        "d": _table([10.0], [np.nan], [np.nan]),  # no interval: left out of the floor
    }
    lo, hi = bootstrap_floor(tables, ["a", "b", "c", "d"], np.array([0]))
    assert np.allclose([lo[0], hi[0]], [9.0, 11.0])
    # Of two models, the middle of their bounds (in log).
    lo, hi = bootstrap_floor(tables, ["a", "c"], np.array([0]))
    assert np.allclose([lo[0], hi[0]], [6.0, np.sqrt(330.0)])
    assert np.isnan(bootstrap_floor(tables, ["d"], np.array([0]))[0]).all()
