"""The identifiability block of a generic artifact entry, from real fits and bootstrap refits."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dlperf.models.artifact import fit_one
from dlperf.models.identifiability import MIN_REFITS, identifiability_block

TERMS = ["overhead", "compute", "allreduce_bw", "allreduce_lat"]


def points(batches=(8, 16, 32, 64), procs=(1, 2, 4, 8), noise=0.01, seed=0):
    rng = np.random.default_rng(seed)
    rows = [
        {"nodes": 1, "procs": p, "batch_size": b, "data_size": 8192} for p in procs for b in batches
    ]
    frame = pd.DataFrame(rows)
    p, b = frame["procs"], frame["batch_size"]
    # Overhead, compute and a ring all-reduce; no latency term in the truth.
    t_iter = 2e-3 + 1e-3 * b + 8e-3 * (p - 1) / p
    iters = np.ceil(frame["data_size"] / (p * b))
    frame["epoch_time_s"] = iters * t_iter * (1 + noise * rng.standard_normal(len(frame)))
    return frame


def test_present_terms_are_identified_and_an_absent_one_is_not():
    entry = fit_one("generic", {"terms": TERMS, "lambdas": [1e-3]}, points(), seed=0, refits=30)
    block = entry["identifiability"]
    assert block["refits"] == 30 and block["level"] == 0.95
    terms = block["terms"]
    for name in ("compute", "allreduce_bw"):
        assert terms[name]["identified"] is True, terms[name]
        assert 0 < terms[name]["lo"] <= terms[name]["value"] <= terms[name]["hi"]
        assert terms[name]["inclusion"] == 1.0
    assert terms["allreduce_lat"]["identified"] is False, terms["allreduce_lat"]
    assert terms["allreduce_lat"]["lo"] == 0.0
    assert terms["allreduce_lat"]["reason"] == "its interval includes zero"
    assert terms["allreduce_lat"]["inclusion"] < 0.975
    assert block["exponent"]["fitted"] is True and block["exponent"]["reason"] is None
    assert block["exponent"]["lo"] <= block["exponent"]["value"] <= block["exponent"]["hi"]


def test_fixed_exponent_and_inactive_terms_say_why():
    frame = points(batches=(16, 32), procs=(1, 2, 4))
    entry = fit_one("generic", {"terms": TERMS + ["internode"]}, frame, seed=0, refits=12)
    block = entry["identifiability"]
    assert block["exponent"]["fitted"] is False
    assert "2 batch-size level(s)" in block["exponent"]["reason"]
    internode = block["terms"]["internode"]
    assert internode["identified"] is False and "zero at every point" in internode["reason"]


def test_too_few_refits_leave_identification_open():
    entry = fit_one("generic", {"terms": TERMS}, points(), seed=0, refits=MIN_REFITS - 1)
    block = identifiability_block(entry, points())
    assert block["terms"]["compute"]["identified"] is None
    assert "bootstrap refits" in block["terms"]["compute"]["reason"]


def test_baselines_get_no_block():
    assert "identifiability" not in fit_one("loglin", {}, points(), seed=0, refits=3)
