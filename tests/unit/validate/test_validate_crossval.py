import itertools

import numpy as np
import pandas as pd
import pytest

from dlperf.measurements.points import to_points
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
    for cls in (Proportional, Broken, NetworkAware, Scaled, SkipsSmall):
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


class Scaled(Proportional):
    """Proportional, off by a fixed factor: a model worse by a known margin."""

    name = "scaled"

    def __init__(self, factor: float = 1.2, seed: int = 0) -> None:
        self.factor = factor
        self.seed = seed

    def predict(self, frame):
        return self.factor * super().predict(frame)


class SkipsSmall(Proportional):
    """Refuses training sets without batch 8: skips the fold that holds batch 8 out."""

    name = "skipssmall"

    def fit(self, frame):
        from dlperf.models import InsufficientData

        if 8 not in set(frame["batch_size"]):
            raise InsufficientData("needs batch 8")
        return super().fit(frame)


def noisy_points(seed=0):
    rng = np.random.default_rng(seed)
    frame = points()
    return frame.assign(epoch_time_s=frame["epoch_time_s"] * rng.lognormal(0, 0.05, len(frame)))


def test_summary_names_its_resampling_unit_per_protocol():
    frame = points(networks=("lenet", "mlp"))
    protocols = {"kfold": {"k": 3}, "loo_batch": {}, "extrapolation_procs": {}}
    _, summary = cross_validate(frame, "pytorch", {"networkaware": {}}, protocols, n_boot=50)
    summary = pd.concat(
        [summary, cross_validate(frame, "pytorch", {"networkaware": {}}, {"cross_network": {}})[1]]
    )
    rows = summary[summary["network"] == "mlp"].set_index("protocol")
    assert rows.loc["kfold", "ci_unit"] == "fold" and rows.loc["kfold", "n_units"] == 3
    assert rows.loc["loo_batch", "ci_unit"] == "level" and rows.loc["loo_batch", "n_units"] == 3
    # single split: the held-out configurations (procs 4 x 3 batches) are the units
    assert rows.loc["extrapolation_procs", "ci_unit"] == "configuration"
    assert rows.loc["extrapolation_procs", "n_units"] == 3
    assert rows.loc["cross_network", "ci_unit"] == "configuration"
    assert rows.loc["cross_network", "n_units"] == 9


def test_vs_best_marks_one_best_and_a_clearly_worse_model():
    models = {"proportional": {}, "scaled": {"factor": 1.5}, "networkaware": {}}
    _, summary = cross_validate(noisy_points(), "pytorch", models, {"kfold": {"k": 4}}, n_boot=300)
    rows = summary.set_index("model")
    assert (summary["vs_best"] == "best").sum() == 1
    # networkaware is the same model as proportional: a tie, broken by name, and no difference
    assert rows.loc["networkaware", "vs_best"] == "best"
    assert rows.loc["proportional", "vs_best"] == "not_shown_worse"
    assert rows.loc["proportional", "vs_best_diff"] == 0
    assert (
        rows.loc["proportional", "vs_best_diff_lo"]
        <= 0
        <= rows.loc["proportional", "vs_best_diff_hi"]
    )
    scaled = rows.loc["scaled"]
    assert scaled["vs_best"] == "worse" and scaled["vs_best_diff_lo"] > 0
    assert scaled["vs_best_diff"] == pytest.approx(
        scaled["mape"] - rows.loc["networkaware", "mape"]
    )
    assert scaled["vs_best_diff_lo"] <= scaled["vs_best_diff"] <= scaled["vs_best_diff_hi"]


def test_vs_best_compares_on_the_points_both_predicted():
    models = {"proportional": {}, "skipssmall": {}, "broken": {}}
    predictions, summary = cross_validate(
        noisy_points(1), "pytorch", models, {"loo_batch": {}}, n_boot=200
    )
    rows = summary.set_index("model")
    assert rows.loc["broken", "status"] == "fit_error" and pd.isna(rows.loc["broken", "vs_best"])
    skipping = rows.loc["skipssmall"]
    assert skipping["status"] == "ok" and skipping["n_folds"] == 2
    # same fit as proportional wherever it did fit: on the common points the difference is 0
    assert rows.loc["proportional", "vs_best"] == "best" or skipping["vs_best"] == "best"
    other = skipping if skipping["vs_best"] != "best" else rows.loc["proportional"]
    assert other["vs_best_diff"] == pytest.approx(0.0, abs=1e-12)
    assert other["vs_best"] == "not_shown_worse"


def test_vs_best_without_an_interval_is_not_called_worse():
    models = {"proportional": {}, "scaled": {"factor": 1.5}}
    _, summary = cross_validate(noisy_points(), "pytorch", models, {"kfold": {"k": 3}}, n_boot=0)
    scaled = summary.set_index("model").loc["scaled"]
    assert scaled["vs_best"] == "not_shown_worse" and np.isnan(scaled["vs_best_diff_lo"])
    assert "not shown worse" in scaled["reason"]


def test_noise_floor_is_the_spread_of_the_held_out_repetitions():
    rows = []
    for rep, factor in enumerate((0.9, 1.0, 1.2)):
        frame = points()
        frame["rep"] = rep
        frame["samples_per_s"] = 1.0
        # batch 8 repeated three times (10 % mean deviation from the median), the rest once
        frame["epoch_time_s"] *= np.where(frame["batch_size"] == 8, factor, 1.0)
        rows.append(frame if rep == 0 else frame[frame["batch_size"] == 8])
    reduced = to_points(pd.concat(rows, ignore_index=True))
    assert set(reduced.loc[reduced["n_reps"] == 3, "rep_ape"].round(9)) == {10.0}
    protocols = {"loo_batch": {}, "extrapolation_batch": {"train_max_batch": 16}}
    _, summary = cross_validate(reduced, "pytorch", {"proportional": {}}, protocols, n_boot=20)
    rows = summary.set_index("protocol")
    # loo_batch holds every point out once; only the batch-8 ones were repeated
    assert rows.loc["loo_batch", "noise_ape"] == pytest.approx(10.0)
    # batch 32 alone is held out: measured once, no floor
    assert np.isnan(rows.loc["extrapolation_batch", "noise_ape"])
