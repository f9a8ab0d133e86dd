"""How the answer combines its models at a row (dlperf.models.combination)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dlperf.models.combination import bootstrap_floor, weighted_median


def test_one_model_far_from_the_others_moves_the_median_no_further_than_the_next():
    logs = np.array([[0.0], [0.1], [0.2], [5.0]])
    weights = np.array([0.25, 0.25, 0.25, 0.25])
    # Half the weight ends exactly on the second model: midway to the third.
    assert np.isclose(weighted_median(logs, weights)[0], 0.15)
    runaway = logs.copy()
    runaway[3, 0] = 50.0
    assert weighted_median(runaway, weights)[0] == weighted_median(logs, weights)[0]
    # A weighted mean would move with it: the reason the answer is a median.
    assert np.sum(weights[:, None] * runaway, axis=0)[0] > 10


def test_the_median_follows_the_weights_per_row():
    logs = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0]])
    assert weighted_median(logs, np.array([0.6, 0.2, 0.2])).tolist() == [0.0, 1.0]
    assert weighted_median(logs, np.array([0.2, 0.2, 0.6])).tolist() == [2.0, 2.0]


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
