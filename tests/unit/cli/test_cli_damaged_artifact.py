"""A fitted model artifact with a field of the wrong JSON type (a string, a number, a list, an
object or null where another is written) is refused in one line naming the field, exit 2, by
every command that reads it, never a traceback."""

from __future__ import annotations

import copy
import json

import pytest
from clirun import assert_refused

from dlperf.cli import main
from dlperf.models.artifact_check import FIELD_TYPES, NULLABLE

CONFIG = """
batch_sizes: [1]
data_sizes: [1]
models:
  generic: {lambdas: [0.0], popsize: 6, maxiter: 30}
  usl: {}
  ernest: {}
  extrap: {}
  linreg_sfs: {}
  castello: {}
  loglin: {}
"""
PREDICT = ["--procs", "8", "--batch-size", "32", "--data-size", "1000"]
WRONG = {"str": "x", "int": 5, "list": [1], "dict": {"a": 1}, "null": None}
KINDS = {
    "a string": ("str",),
    "a number": ("int",),
    "an integer": ("int",),
    "a boolean": (),
    "an object": ("dict",),
    "a list": ("list",),
}
# Each model of the fit above with the fields its entry holds (checked against the fit below).
FIELDS = {
    "generic": (
        *("terms", "exponent", "lambda", "breakdown", "identifiability", "switched_off"),
        *("inner_cv_mape", "network_features", "across_networks"),
    ),
    "usl": ("constants", "variant"),
    "ernest": ("constants",),
    "extrap": ("functions",),
    "linreg_sfs": ("coefficients", "intercept", "selected_features"),
    "castello": ("constants", "hardware", "flops_per_sample", "param_count"),
    "loglin": ("procs_lines", "batch_lines", "pooled"),
}
COMMON = ("model", "status", "formula", "settings", "interval", "train_mape", "train_points")
CASES = [
    (model, field, kind)
    for model, fields in FIELDS.items()
    for field in (*COMMON, *fields)
    for kind in WRONG
    if kind not in KINDS[FIELD_TYPES[field]] and not (kind == "null" and field in NULLABLE)
]


@pytest.fixture(scope="module")
def fitted(tmp_path_factory, workdir):
    path = tmp_path_factory.mktemp("damaged")
    (path / "config.yaml").write_text(CONFIG)
    argv = ["fit", "--timings", str(workdir / "ext.csv"), "--framework", "pytorch"]
    assert main([*argv, "--config", str(path / "config.yaml"), "--out", str(path / "m.json")]) == 0
    return json.loads((path / "m.json").read_text())


def test_the_cases_cover_every_field_of_the_fitted_entries(fitted):
    entries = fitted["networks"]["resnet18"]["models"]
    assert set(entries) == set(FIELDS)
    for model, entry in entries.items():
        assert set(entry) == {*COMMON, *FIELDS[model]}
        assert set(entry) <= set(FIELD_TYPES)


@pytest.mark.parametrize(("model", "field", "kind"), CASES)
def test_a_field_of_the_wrong_type_is_refused_by_name(fitted, tmp_path, model, field, kind):
    damaged = copy.deepcopy(fitted)
    damaged["networks"]["resnet18"]["models"][model][field] = WRONG[kind]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(damaged))
    err = assert_refused(["predict", "--model", str(path), *PREDICT], str(path))
    assert f"networks.resnet18.models.{model}.{field} must be {FIELD_TYPES[field]}" in err


@pytest.mark.parametrize(
    ("where", "value"),
    [
        (("loglin", "batch_lines", 0), 5),
        (("loglin", "batch_lines", 0, "a"), "x"),
        (("generic", "terms", 0), "x"),
        (("generic", "terms", 0, "value"), [1]),
        (("usl", "constants"), "x"),
        (("usl", "constants", "sigma"), None),
        (("extrap", "functions", 0, "parameters"), 5),
        (("generic", "interval", "refits"), 5),
        (("generic", "interval", "refits", 0), "x"),
        (("generic", "interval", "relative_residuals", 0), "x"),
        (("generic", "settings", "terms"), 5),
    ],
)
def test_a_value_of_the_wrong_type_inside_a_field_is_refused(fitted, tmp_path, where, value):
    damaged = copy.deepcopy(fitted)
    parent = damaged["networks"]["resnet18"]["models"]
    for key in where[:-1]:
        parent = parent[key]
    parent[where[-1]] = value
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(damaged))
    err = assert_refused(["predict", "--model", str(path), *PREDICT], str(path))
    assert f"networks.resnet18.models.{where[0]}.{where[1]}" in err or where[0] in err


def test_the_issue_s_example_reads_as_the_fix(fitted, tmp_path):
    damaged = copy.deepcopy(fitted)
    damaged["networks"]["resnet18"]["models"]["loglin"]["batch_lines"] = 5
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(damaged))
    assert_refused(
        ["predict", "--model", str(path), *PREDICT],
        f"{path}: networks.resnet18.models.loglin.batch_lines must be a list, got 5; "
        "fit again (dlperf fit) or restore the file",
    )
