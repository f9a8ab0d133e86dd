import itertools

import numpy as np
import pandas as pd
import pytest

from dlperf.models import MODELS, Capabilities
from dlperf.models.base import PerformanceModel
from dlperf.validate.crossval import POINT_COLUMNS, SUMMARY_COLUMNS, cross_validate


class Proportional(PerformanceModel):
    """epoch = k * d / p: quick to fit; counts its fits to check the cache."""

    name = "proportional"
    description = "test model"
    min_points = 4
    fits = 0

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def fit(self, frame):
        Proportional.fits += 1
        self.check_enough(frame)
        work = frame["data_size"] / frame["procs"]
        self.k = float(np.median(frame["epoch_time_s"] / work))
        return self

    def predict(self, frame):
        return self.k * (frame["data_size"] / frame["procs"]).to_numpy(float)

    def to_dict(self):
        return {"model": self.name, "k": self.k}

    @classmethod
    def from_dict(cls, data):
        model = cls()
        model.k = data["k"]
        return model


class Broken(Proportional):
    name = "broken"

    def fit(self, frame):
        raise np.linalg.LinAlgError("singular matrix")


class NetworkAware(Proportional):
    name = "networkaware"
    capabilities = Capabilities(uses_network_features=True)


@pytest.fixture(autouse=True)
def registered(monkeypatch):
    for cls in (Proportional, Broken, NetworkAware):
        monkeypatch.setitem(MODELS, cls.name, cls)
    Proportional.fits = 0


def points(networks=("mlp",), procs=(1, 2, 4), batches=(8, 16, 32)):
    rows = [
        {
            "framework": "pytorch",
            "network": n,
            "device": "cpu",
            "nodes": 1,
            "procs": p,
            "batch_size": b,
            "data_size": d,
            "epoch_time_s": 0.01 * d / p * (1 + 0.01 * b),
        }
        for n, p, b, d in itertools.product(networks, procs, batches, (512, 1024))
    ]
    return pd.DataFrame(rows)


def test_outputs_have_the_contract_columns_and_correct_errors():
    frame = points()
    predictions, summary = cross_validate(
        frame, "pytorch", {"proportional": {}}, {"kfold": {"k": 3}}, n_boot=50
    )
    assert list(predictions.columns) == POINT_COLUMNS
    assert list(summary.columns) == SUMMARY_COLUMNS
    assert len(predictions) == len(frame)  # every point held out exactly once
    assert sorted(predictions["fold"].unique()) == ["fold0", "fold1", "fold2"]
    expected = (
        np.abs(predictions["predicted_s"] - predictions["measured_s"])
        / predictions["measured_s"]
        * 100
    )
    assert np.allclose(predictions["ape"], expected)
    merged = predictions.merge(frame, on=["nodes", "procs", "batch_size", "data_size"])
    assert np.allclose(merged["measured_s"], merged["epoch_time_s"])
    (row,) = summary.itertuples()
    assert row.status == "ok" and row.n_folds == 3 and row.n_points == len(frame)
    assert row.mape == pytest.approx(predictions["ape"].mean())
    assert row.mape_lo <= row.mape <= row.mape_hi


def test_protocols_that_cannot_run_are_reported_with_their_reason():
    frame = points(procs=(1, 2))
    protocols = {
        "loo_procs": {},
        "cross_network": {},
        "extrapolation_batch": {"train_max_batch": 16},
        "extrapolation_procs": {},
    }
    predictions, summary = cross_validate(
        frame, "pytorch", {"proportional": {}}, protocols, n_boot=20
    )
    by_protocol = summary.set_index("protocol")
    assert by_protocol.loc["loo_procs", "status"] == "not_run"
    assert "at least 3 levels of procs" in by_protocol.loc["loo_procs", "reason"]
    assert by_protocol.loc["cross_network", "status"] == "not_run"
    assert "at least 2 networks" in by_protocol.loc["cross_network", "reason"]
    # training on batch 8 and 16 leaves 8 points: enough for this model
    assert by_protocol.loc["extrapolation_batch", "status"] == "ok"
    assert set(predictions["batch_size"]) == {32}
    # procs {1, 2}: extrapolating trains on procs 1 alone, which cannot inform
    assert by_protocol.loc["extrapolation_procs", "status"] == "insufficient_data"
    assert "single level of procs" in by_protocol.loc["extrapolation_procs", "reason"]
    assert np.isnan(by_protocol.loc["extrapolation_procs", "mape"])


def test_too_few_points_for_a_fold_and_fit_errors_are_reported():
    frame = points(procs=(1, 2, 4), batches=(8,))  # 6 points
    _, summary = cross_validate(
        frame, "pytorch", {"proportional": {}, "broken": {}}, {"loo_procs": {}}, n_boot=20
    )
    rows = summary.set_index(["model", "protocol"])
    loo = rows.loc[("proportional", "loo_procs")]
    assert loo["status"] == "ok" and loo["n_folds"] == 3
    # one data size: training on procs 1 and 2 leaves 2 points, this model needs 4
    small = frame[frame["data_size"] == 512]
    _, extrapolated = cross_validate(
        small, "pytorch", {"proportional": {}}, {"extrapolation_procs": {"train_max_procs": 2}}
    )
    (extrapolation,) = extrapolated.to_dict("records")
    assert extrapolation["status"] == "insufficient_data"
    assert "needs at least 4" in extrapolation["reason"]
    broken = rows.loc[("broken", "loo_procs")]
    assert broken["status"] == "fit_error" and "LinAlgError: singular matrix" in broken["reason"]


def test_cross_network_runs_only_for_models_with_network_features():
    frame = points(networks=("lenet", "mlp"))
    predictions, summary = cross_validate(
        frame, "pytorch", {"proportional": {}, "networkaware": {}}, {"cross_network": {}}, n_boot=20
    )
    rows = summary.set_index(["model", "network"])
    assert rows.loc[("proportional", "mlp"), "status"] == "not_applicable"
    assert "cannot predict a network" in rows.loc[("proportional", "mlp"), "reason"]
    assert rows.loc[("networkaware", "mlp"), "status"] == "ok"
    held = predictions[predictions["network"] == "mlp"]
    assert set(held["fold"]) == {"held_out=mlp"} and len(held) == (frame["network"] == "mlp").sum()


def test_identical_training_sets_are_fitted_once():
    frame = points(procs=(1, 2, 4), batches=(8, 16, 32))
    # extrapolation with the default limit trains on procs {1, 2}: the loo_procs fold procs=4
    cross_validate(
        frame,
        "pytorch",
        {"proportional": {}},
        {"loo_procs": {}, "extrapolation_procs": {}},
        n_boot=0,
    )
    assert Proportional.fits == 3


def test_unknown_protocol_is_an_error_naming_the_choices():
    with pytest.raises(ValueError, match="unknown validation protocol.*holdout.*choose from"):
        cross_validate(points(), "pytorch", {"proportional": {}}, {"holdout": {}})


def test_framework_without_points_gives_empty_tables():
    predictions, summary = cross_validate(points(), "mxnet", {"proportional": {}}, {"kfold": {}})
    assert predictions.empty and summary.empty and list(summary.columns) == SUMMARY_COLUMNS
