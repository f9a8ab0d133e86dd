"""What the `dlperf` command prints: values quoted as the user wrote them (never Python's
``{'a': 1}``) and tables a terminal holds."""

from __future__ import annotations

import json
import re

import pytest
from clirun import assert_refused

from dlperf.quoting import listing, shown

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


def test_predict_and_plan_tables_read_like_a_product(workdir, capsys):
    """Hours as hours, thousands written out, no exponent, one line a row within 100 columns;
    --json keeps the exact seconds."""
    from dlperf.cli import main

    model = ["--model", str(workdir / "pytorch.json"), "--batch-size", "32"]
    work = ["--data-size", "100000000", "--epochs", "90"]
    assert main(["predict", *model, *work, "--procs", "1", "2", "64"]) == 0
    predicted = capsys.readouterr().out.splitlines()
    assert main(["plan", *model, *work, "--deadline", "3d", "--max-procs", "12"]) in (0, 1)
    planned = capsys.readouterr().out.splitlines()
    for lines in (predicted, planned):
        rows = [lines[1]] + [line for line in lines[2:] if line[:1] in " 0123456789"]
        assert len(rows) > 3 and all(len(line) <= 100 for line in rows), lines
        assert not any("e+" in line for line in lines), lines
        assert any(re.search(r"\d h\b", line) for line in lines), lines
        assert "epoch_time_lo_s" not in lines[1] and "epoch 90%" in lines[1]
    assert "100,000,000 samples/epoch" in predicted[0]
    # What the ratio column means, said under the table in one line a terminal holds.
    assert " ratio " in f"{predicted[1]} "
    (legend,) = [line for line in predicted if line.startswith("ratio: ")]
    assert "max(p/P, n/N)" in legend and len(legend) <= 100
    # An epoch, its interval and the total of 90 epochs, in hours; samples/s in thousands.
    assert len(re.findall(r"\d h\b", predicted[2])) == 3, predicted
    assert re.search(r"\d+(\.\d+)?-\d+(\.\d+)? h\b", predicted[2]), predicted
    assert re.search(r" \d{1,3},\d{3} ", predicted[2]), predicted
    assert main(["predict", *model, *work, "--procs", "2", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["predictions"]
    assert row["epoch_time_s"] > 3600 and row["total_time_s"] == pytest.approx(
        row["epoch_time_s"] * 90
    )


def test_predict_with_no_model_fitted_gives_each_reason_in_words(tmp_path):
    from clirun import run

    timings = tmp_path / "t.csv"
    timings.write_text(
        "framework,network,procs,batch_size,iter_time_s\npytorch,mlp,1,8,0.01\npytorch,mlp,1,16,0.02\n"
    )
    artifact = tmp_path / "none.json"
    fit = ["fit", "--timings", str(timings), "--framework", "pytorch", "--allow-unfitted"]
    models = '{"models": {"usl": {}, "ernest": {}}}'
    assert run([*fit, "--config-json", models, "--out", str(artifact)])[0] == 0
    argv = ["predict", "--model", str(artifact), "--procs", "2", "--batch-size", "8"]
    err = assert_refused([*argv, "--data-size", "100"], "no answer: ernest: ", "; usl: ")
    assert not PYTHON_REPR.search(err), err
