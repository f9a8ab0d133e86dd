"""loglin: the a + c*log2 reference fit, with the real model through the contract."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from dlperf.config import default_models
from dlperf.models import (
    MODELS,
    capabilities_of,
    clone,
    make_model,
    model_from_dict,
)

# The models fitted by default: the config schema's default models section.
DEFAULT_MODELS = default_models()


def table(t_iter, procs, batches, data_size=4096):
    rows = [
        {"nodes": 1, "procs": p, "batch_size": b, "data_size": data_size}
        for p in procs
        for b in batches
    ]
    frame = pd.DataFrame(rows)
    iters = np.ceil(frame["data_size"] / (frame["procs"] * frame["batch_size"]))
    frame["epoch_time_s"] = iters * t_iter(frame["procs"], frame["batch_size"])
    return frame


def test_registered_and_fitted_by_default():
    assert MODELS["loglin"] is type(make_model("loglin"))
    assert "loglin" in DEFAULT_MODELS


def test_recovers_a_log_line_in_procs_per_batch_size_and_extrapolates():
    def t_iter(p, b):
        return 0.01 * b + 0.003 * np.log2(p) * (1 + b / 64)

    model = make_model("loglin", seed=3).fit(table(t_iter, [1, 2, 4], [16, 64]))
    target = table(t_iter, [16], [16, 64])
    np.testing.assert_allclose(model.predict(target), target["epoch_time_s"], rtol=1e-9)


def test_unmeasured_batch_size_uses_the_line_in_log2_b_at_that_worker_count():
    def t_iter(p, b):
        return 0.002 + 0.004 * np.log2(b) + 0.001 * p

    model = make_model("loglin").fit(table(t_iter, [1, 2], [8, 16, 32]))
    target = table(t_iter, [2], [128])
    np.testing.assert_allclose(model.predict(target), target["epoch_time_s"], rtol=1e-9)


def test_a_batch_size_measured_at_one_worker_count_has_no_line_in_p():
    """Held out (2, 32), batch 32 is left at p = 1 only: its series has no trend in p, so the
    point comes from the line in log2 b at p = 2, not from the p = 1 time (which would predict
    that adding a worker costs nothing)."""

    def t_iter(p, b):
        return 0.002 + 0.004 * np.log2(b) + 0.003 * np.log2(p)

    frame = table(t_iter, [1, 2], [8, 16, 32])
    held_out = (frame["procs"] == 2) & (frame["batch_size"] == 32)
    model = make_model("loglin").fit(frame[~held_out])
    assert 32.0 not in model.procs_lines_
    np.testing.assert_allclose(
        model.predict(frame[held_out]), frame.loc[held_out, "epoch_time_s"], rtol=1e-9
    )


def test_a_point_in_no_series_uses_the_pooled_line():
    def t_iter(p, b):
        return 0.01 + 0.002 * np.log2(p) + 0.003 * np.log2(b)

    model = make_model("loglin").fit(table(t_iter, [1, 2, 4], [8, 16]))
    target = table(t_iter, [8], [64])
    np.testing.assert_allclose(model.predict(target), target["epoch_time_s"], rtol=1e-9)


def test_contract_clone_round_trip_and_capabilities():
    def t_iter(p, b):
        return 0.01 + 0.001 * b * p**0.2

    frame = table(t_iter, [1, 2, 4], [8, 32])
    model = make_model("loglin", seed=7).fit(frame)
    assert clone(model).get_params() == {"seed": 7}
    restored = model_from_dict(json.loads(json.dumps(model.to_dict())))
    assert restored.get_params() == model.get_params()
    np.testing.assert_array_equal(restored.predict(frame), model.predict(frame))
    assert {"procs", "batch_size"} <= capabilities_of(model).extrapolates_in
    # A trend in both: different predictions along p and along b.
    probe = table(t_iter, [8, 16], [8])
    assert probe.pipe(model.predict)[0] != probe.pipe(model.predict)[1]


def test_needs_positive_times():
    frame = table(lambda p, b: 0.01 + 0 * p, [1, 2], [8])
    frame.loc[0, "epoch_time_s"] = 0.0
    with pytest.raises(ValueError, match="positive"):
        make_model("loglin").fit(frame)
