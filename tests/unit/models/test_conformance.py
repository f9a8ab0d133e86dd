"""One model list and one contract: every registered model passes check_model, the check finds a
model that breaks the contract, and the config schema names exactly the registered models."""

from __future__ import annotations

import inspect

import pytest

from dlperf.config import schema
from dlperf.models import MODELS, Capabilities, make_model
from dlperf.models.conformance import check_model
from dlperf.models.ernest import ErnestModel
from dlperf.models.generic import GenericModel
from dlperf.models.usl import USLModel


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_registered_model_keeps_the_contract(name):
    check_model(MODELS[name])


class ConvertsInInit(GenericModel):
    def __init__(self, terms=("fixed", "compute"), seed=0):
        self.terms = list(terms)
        self.seed = seed


class SetsMoreInInit(USLModel):
    def __init__(self, seed=0):
        self.seed = seed
        self.cache = {}


class FitReturnsACopy(ErnestModel):
    def fit(self, frame):
        return ErnestModel(seed=self.seed).fit(frame)


class FitChangesItsSeed(ErnestModel):
    def fit(self, frame):
        self.seed = [self.seed]
        return super().fit(frame)


@pytest.mark.parametrize(
    "broken, problem",
    [
        (ConvertsInInit, "changed parameter 'terms'"),
        (SetsMoreInInit, r"sets \['cache'\] beside its parameters"),
        (FitReturnsACopy, "fit does not return self"),
        (FitChangesItsSeed, "fit changed its parameters"),
    ],
)
def test_the_check_names_the_broken_promise(broken, problem):
    with pytest.raises(AssertionError, match=problem):
        check_model(broken)


def test_the_schema_names_exactly_the_registered_models():
    models = schema()["properties"]["models"]
    assert set(models["properties"]) == set(MODELS)
    # The defaults are registered models, each buildable from the schema's empty settings.
    assert set(models["default"]) <= set(MODELS)
    for name in models["default"]:
        make_model(name, models["default"][name])


@pytest.mark.parametrize("name", sorted(MODELS))
def test_the_schema_settings_of_a_model_are_its_parameters(name):
    models = schema()["properties"]["models"]
    entry = models["properties"][name]
    if "$ref" in entry:
        entry = models["$defs"][entry["$ref"].rsplit("/", 1)[-1]]
    parameters = set(inspect.signature(MODELS[name].__init__).parameters) - {"self", "seed"}
    # Every setting a config may give is a parameter (the seed is the config's own key).
    assert set(entry.get("properties", {})) <= parameters


def test_generic_settings_are_refused_before_any_fit():
    with pytest.raises(ValueError, match="unknown generic-model term"):
        make_model("generic", {"terms": ["fixed", "warp_drive"]})
    with pytest.raises(ValueError, match="unknown generic-model search"):
        make_model("generic", {"search": "grid"})
    with pytest.raises(ValueError, match="max_features must be at least 1"):
        make_model("linreg_sfs", {"max_features": 0})


class ClaimsNoTrendInDataSize(ErnestModel):
    name = "ernest_claims"
    capabilities = Capabilities(extrapolates_in=frozenset({"procs"}))


def test_the_check_holds_a_model_to_its_declared_capabilities(monkeypatch):
    # Registered, so the artifact round trip finds it; its d/p regressor is a trend in d.
    monkeypatch.setitem(MODELS, ClaimsNoTrendInDataSize.name, ClaimsNoTrendInDataSize)
    with pytest.raises(AssertionError, match="declares no trend in data_size"):
        check_model(ClaimsNoTrendInDataSize)
