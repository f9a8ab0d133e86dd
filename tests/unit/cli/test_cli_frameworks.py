"""`dlperf compare-frameworks` on a synthetic study of three frameworks: the table in each
format, the generic models' split when artifacts are given, and one-line refusals."""

from __future__ import annotations

import json

import pytest
from clirun import assert_refused

from dlperf.cli import main
from dlperf.io import atomic_write_json
from dlperf.measurements import tables
from dlperf.measurements.points import to_points
from dlperf.models.artifact import fit_framework

THREE = ("pytorch", "tensorflow", "mxnet")


@pytest.fixture(scope="module")
def study(tmp_path_factory, report_synthetic):
    """results/timings.csv of three frameworks and results/models with their generic models."""
    synthetic = report_synthetic
    root = tmp_path_factory.mktemp("study")
    timings = synthetic.synthetic_timings(frameworks=THREE)
    tables.write_csv(timings, root / "timings.csv")
    points = to_points(timings)
    for framework in THREE:
        own = points[points["framework"] == framework].reset_index(drop=True)
        artifact = fit_framework(own, framework, {"generic": synthetic.FAST_GENERIC}, 0, refits=20)
        atomic_write_json(root / "models" / f"{framework}.json", artifact)
    return root


def test_text_is_the_ratio_table_and_the_split(study, capsys):
    assert main(["compare-frameworks", "--timings", str(study / "timings.csv")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("lenet: mxnet, pytorch, tensorflow\n")
    assert "ratio to fastest" in out and "95% interval" in out
    assert "no generic model or data wait to split it by" in out  # no --models
    assert "mlp" not in out  # measured in one framework only


def test_json_with_the_models_splits_the_iteration(study, capsys):
    argv = ["compare-frameworks", "--timings", str(study / "timings.csv")]
    assert main([*argv, "--models", str(study / "models"), "--format", "json"]) == 0
    (lenet,) = json.loads(capsys.readouterr().out)
    assert {r["framework"] for r in lenet["ratios"] if r["fastest"]} == {"pytorch"}
    slower = [r for r in lenet["ratios"] if not r["fastest"]]
    assert all(r["ratio_lo"] < r["ratio"] < r["ratio_hi"] < 1.0 for r in slower)
    assert all(r["compute_s"] > 0 for r in lenet["split"])
    assert "its largest loss in" in lenet["where_time_goes"]


def test_html_goes_to_a_file(study, tmp_path, capsys):
    out = tmp_path / "frameworks.html"
    argv = ["compare-frameworks", "--timings", str(study / "timings.csv"), "--format", "html"]
    assert main([*argv, "--out", str(out)]) == 0
    assert "1 network(s) compared" in capsys.readouterr().out
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<h2>lenet</h2>" in page


def test_refusals_are_one_line(study, tmp_path):
    only = tables.read_timings(study / "timings.csv")
    only = only[only["framework"] == "pytorch"]
    tables.write_csv(only, tmp_path / "one.csv")
    assert_refused(
        ["compare-frameworks", "--timings", str(tmp_path / "one.csv")],
        "two or more frameworks",
    )
    assert_refused(["compare-frameworks", "--timings", str(tmp_path / "none.csv")], "none.csv")
    assert_refused(["compare-frameworks", "--timings", "t.csv", "--format", "pdf"], "--format")
