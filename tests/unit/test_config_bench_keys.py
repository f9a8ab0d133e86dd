"""The benchmark keys of the workflow config: dataset and the network names."""

from __future__ import annotations

import pytest

from dlperf import config as cfg
from dlperf.bench.spec import DATASETS, NETWORKS

SWEEP = {"batch_sizes": [8], "data_sizes": [64]}


def test_schema_enums_match_the_harness():
    properties = cfg.schema()["properties"]
    assert properties["networks"]["items"]["enum"] == list(NETWORKS)
    assert properties["dataset"]["enum"] == list(DATASETS)


def test_dataset_defaults_to_synthetic_and_reaches_every_run():
    assert cfg.validated(SWEEP)["dataset"] == "synthetic"
    config = cfg.validated({**SWEEP, "dataset": "digits", "networks": ["resnet18", "resnet50"]})
    runs = cfg.run_configs(config)
    assert runs and all(run.dataset == "digits" for run in runs)
    assert {run.network for run in runs} == {"resnet18", "resnet50"}


def test_unknown_dataset_is_named_in_the_error():
    with pytest.raises(cfg.ConfigError, match="dataset: 'cifar' is not one of"):
        cfg.validated({**SWEEP, "dataset": "cifar"})
