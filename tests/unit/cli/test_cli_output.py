"""What the `dlperf` command prints: values quoted as the user wrote them (never Python's
``{'a': 1}``) and tables a terminal holds."""

from __future__ import annotations

import re

import pytest
from clirun import assert_refused

from dlperf.errors import listing, shown

PYTHON_REPR = re.compile(r"[\[{(]'|': |\{'")


@pytest.mark.parametrize(
    ("yaml", "said"),
    [
        ("procs: {a: 1}\n", "procs: {a=1} is not of type 'array'"),
        ("models: {generic: {popsize: [1, 2]}}\n", "popsize: [1, 2] is not of type"),
        ("frameworks: [pytorch, jax]\n", "'jax' is not one of pytorch, tensorflow, mxnet"),
        ("networks: [mlp, {x: 1}]\n", "networks.1: {x=1} is not of type 'string'"),
        ("precision: [fp8]\n", "precision: [fp8] is not one of fp32, tf32"),
    ],
)
def test_a_bad_config_value_is_quoted_as_written(tmp_path, yaml, said):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml)
    err = assert_refused(["check-config", str(path)], said)
    assert not PYTHON_REPR.search(err), err


def test_predict_with_a_model_the_artifact_lacks_lists_what_it_has(study):
    argv = ["predict", "--model", study["model"], "--model-name", "usl", "--procs", "2"]
    err = assert_refused([*argv, "--batch-size", "8", "--data-size", "100"], "it has mlp=[")
    assert not PYTHON_REPR.search(err), err


def test_values_are_shown_as_people_write_them():
    assert shown({"mlp": ["generic", "usl"]}) == "{mlp=[generic, usl]}"
    assert listing({"mlp": ["generic", "usl"], "lenet": []}) == "mlp=[generic, usl], lenet=[]"
    assert (shown("jax"), shown(3), shown([1, 2.5])) == ("'jax'", "3", "[1, 2.5]")
