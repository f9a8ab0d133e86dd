import itertools
import json

import numpy as np
import pandas as pd
import pytest

from dlperf.models import InsufficientData, make_model
from dlperf.models.artifact import fit_framework, load_model
from dlperf.models.fit import ExponentSearch, fit_at_lambda
from dlperf.models.generic import GenericModel
from dlperf.models.identify import identify
from dlperf.models.projection import ConstantsForExponent
from dlperf.models.terms import TermColumns, formula_text


def synthetic_points(c0=0.2, c1=2e-3, c2=4e-4, a=0.9, c3=5e-3, c4=0.0, noise=0.0, seed=0):
    rows = []
    for p, b, d in itertools.product([1, 2, 4, 8], [8, 16, 32, 64], [2048, 8192]):
        iters = np.ceil(d / (p * b))
        t_iter = c1 + c2 * b**a + c3 * (p - 1) / p + c4 * np.ceil(np.log2(p))
        rows.append(
            {
                "framework": "pytorch",
                "network": "mlp",
                "device": "cpu",
                "nodes": 1,
                "procs": p,
                "batch_size": b,
                "data_size": d,
                "epoch_time_s": c0 + iters * t_iter,
            }
        )
    frame = pd.DataFrame(rows)
    if noise:
        rng = np.random.default_rng(seed)
        frame["epoch_time_s"] *= 1 + noise * rng.standard_normal(len(frame))
    return frame


FAST = {"popsize": 12, "maxiter": 200, "lambdas": [0.0, 1e-4]}


def test_recovers_noise_free_data():
    points = synthetic_points()
    model = GenericModel(**FAST, seed=0).fit(points)
    measured = points["epoch_time_s"].to_numpy()
    ape = np.abs(model.predict(points) - measured) / measured
    assert ape.max() < 0.02
    assert model.exponent_ == pytest.approx(0.9, abs=0.1)
    # The inter-node term has no support on one node: it is reported, not guessed.
    assert "internode" in model.identification_.inactive


def test_l1_penalty_switches_off_an_unsupported_term():
    points = synthetic_points(c3=0.0, c4=0.0, noise=0.01)
    model = GenericModel(
        terms=["fixed", "overhead", "compute", "allreduce_bw", "allreduce_lat"],
        popsize=12,
        maxiter=200,
        lambdas=[1e-3],
        seed=1,
    ).fit(points)
    seconds = model.term_seconds(points)
    share = seconds.sum() / seconds.sum().sum()
    assert share["allreduce_bw"] + share["allreduce_lat"] < 0.02


def test_terms_are_configurable():
    points = synthetic_points(c3=0.0, c0=0.0)
    model = GenericModel(terms=["overhead", "compute"], **FAST, seed=0).fit(points)
    assert set(model.values_) == {"overhead", "compute"}
    assert formula_text(["overhead", "compute"]) == "T = ceil(d/(p*b)) * (c1 + c2*b^a)"
    with pytest.raises(ValueError, match="unknown generic-model term"):
        make_model("generic", {"terms": ["overhead", "gpu_magic"]})


def test_same_seed_same_constants_and_round_trip():
    points = synthetic_points(noise=0.02)
    first = GenericModel(**FAST, seed=3).fit(points).to_dict()
    second = GenericModel(**FAST, seed=3).fit(points).to_dict()
    assert json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True)
    again = GenericModel.from_dict(first)
    np.testing.assert_allclose(
        again.predict(points), GenericModel.from_dict(second).predict(points)
    )


def test_too_few_points_is_reported_not_raised_by_the_artifact():
    points = synthetic_points().head(2)
    with pytest.raises(InsufficientData):
        GenericModel(**FAST).fit(points)
    artifact = fit_framework(points, "pytorch", {"generic": FAST}, seed=0)
    entry = artifact["networks"]["mlp"]["models"]["generic"]
    assert entry["status"] == "insufficient_data"
    assert "at least" in entry["reason"]


def test_artifact_breakdown_adds_up_and_reloads():
    points = synthetic_points(noise=0.01)
    artifact = fit_framework(points, "pytorch", {"generic": FAST}, seed=0)
    entry = artifact["networks"]["mlp"]["models"]["generic"]
    assert entry["status"] == "ok"
    for row in entry["breakdown"]:
        assert sum(row["seconds"].values()) == pytest.approx(row["predicted_s"])
        assert sum(row["share"].values()) == pytest.approx(1.0)
    model = load_model(json.loads(json.dumps(artifact)), "mlp", "generic")
    assert model.predict(points.head(1))[0] == pytest.approx(entry["breakdown"][0]["predicted_s"])


def test_the_parts_fit_as_the_model_does():
    """Identification, exact constants at an exponent and the search, used on their own."""
    points = synthetic_points(c4=0.0)
    columns = TermColumns(("fixed", "overhead", "compute", "allreduce_bw"))
    found = identify(points, columns, (0.3, 1.5))
    assert found.active == ["fixed", "overhead", "compute", "allreduce_bw"]
    assert found.exponent_fitted
    # At the true exponent and no penalty, the constants are solved exactly.
    exact = ConstantsForExponent.of(points, columns, found, lam=0.0).constants(0.9)
    np.testing.assert_allclose(exact, [0.2, 2e-3, 4e-4, 5e-3], rtol=1e-6)
    search = ExponentSearch((0.3, 1.5), popsize=12, maxiter=200, tol=1e-7)
    solution = fit_at_lambda(points, columns, search, lam=0.0, seed=0)
    assert solution.exponent == pytest.approx(0.9, abs=1e-3)
    model = GenericModel(terms=list(columns.terms), lambdas=[0.0], seed=0).fit(points)
    assert model.values_ == solution.values and model.exponent_ == solution.exponent
    np.testing.assert_allclose(model.predict(points), solution.predict(points, columns))


def scaling_series(procs, batches=(32,)):
    """The given worker counts and batch sizes: what a published GPU scaling table holds."""
    frame = synthetic_points(c0=0.0, c3=5e-3)
    series = frame[frame["batch_size"].isin(batches) & (frame["data_size"] == 8192)]
    return series[series["procs"].isin(procs)].reset_index(drop=True)


def test_with_two_worker_counts_log2_p_carries_the_communication():
    """(p-1)/p and log2 p fit two worker counts alike: the middle shape, log2 p, is kept."""
    columns = TermColumns(("compute", "allreduce_bw", "allreduce_lat"))
    found = identify(scaling_series([1, 4], batches=(16, 64)), columns, (0.3, 1.5))
    assert found.active == ["compute", "allreduce_lat"]
    assert "varies like compute + allreduce_lat" in found.inactive["allreduce_bw"]


def test_with_three_worker_counts_the_growing_latency_term_goes():
    """1, 2 and 4 workers tell the two shapes apart, but an intercept and both pass through all
    three: the saturating ring bandwidth stays, the growing log2 p goes."""
    columns = TermColumns(("compute", "allreduce_bw", "allreduce_lat"))
    found = identify(scaling_series([1, 2, 4]), columns, (0.3, 1.5))
    assert found.active == ["compute", "allreduce_bw"]
    assert "two need 4 worker counts" in found.inactive["allreduce_lat"]
