"""A model whose package is missing is unavailable, never "not enough data": in the artifact,
in validation and in the error type."""

from __future__ import annotations

import pytest

from dlperf.models import InsufficientData, ModelUnavailable, extrap_pmnf
from dlperf.models.artifact import fit_one
from dlperf.models.conformance import conformance_points
from dlperf.validate.crossval import cross_validate

POINTS = conformance_points(extrap_pmnf.ExtraPModel).assign(framework="pytorch")


@pytest.fixture
def no_extrap(monkeypatch):
    def missing():
        raise ModelUnavailable("Extra-P (package `extrap`) cannot be imported: test")

    monkeypatch.setattr(extrap_pmnf, "_extrap", missing)


def test_a_missing_package_is_its_own_error():
    assert not issubclass(ModelUnavailable, InsufficientData)
    assert not issubclass(InsufficientData, ModelUnavailable)


def test_the_artifact_says_unavailable(no_extrap):
    entry = fit_one("extrap", {}, POINTS, seed=0, refits=0)
    assert entry["status"] == "unavailable" and "cannot be imported" in entry["reason"]


def test_validation_says_unavailable(no_extrap):
    _, summary = cross_validate(
        POINTS, "pytorch", {"extrap": {}, "usl": {}}, {"kfold": {"k": 3}}, seed=0, n_boot=0
    )
    status = summary.set_index("model")["status"]
    assert status["extrap"] == "unavailable" and status["usl"] == "ok"
    assert "cannot be imported" in summary.set_index("model").loc["extrap", "reason"]
