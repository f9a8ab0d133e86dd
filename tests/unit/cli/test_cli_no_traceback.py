"""Inputs a user gets wrong that once ended in a traceback or in dangerous advice: each is now
refused in one line naming the fix, before any work, and nothing of the user's is touched."""

from __future__ import annotations

import json

import pytest
from clirun import assert_refused, run

from dlperf import stages

PREDICT = ["--procs", "8", "--batch-size", "32", "--data-size", "1000"]
FIT = ["--framework", "pytorch", "--config-json", '{"models": {"generic": {"maxiter": 5}}}']


def test_a_directory_given_as_the_model_is_refused(study):
    assert_refused(["predict", "--model", str(study["dir"]), *PREDICT], "is a directory")


def test_a_directory_given_as_timings_is_refused(study, tmp_path):
    argv = ["adaptive-replay", "--timings", str(study["dir"]), "--budget", "0.5"]
    assert_refused([*argv, "--out", str(tmp_path / "r")], "is a directory")


def test_an_artifact_missing_its_terms_is_refused_by_field(study, tmp_path):
    artifact = json.loads(open(study["model"]).read())
    del artifact["networks"]["mlp"]["models"]["generic"]["terms"]
    damaged = tmp_path / "damaged.json"
    damaged.write_text(json.dumps(artifact))
    assert_refused(
        ["predict", "--model", str(damaged), *PREDICT], "networks.mlp.models.generic.terms"
    )


@pytest.mark.parametrize(
    ("command", "out", "extra"),
    [
        ("fit", "{file}/m.json", FIT),
        ("validate", "{file}/v", FIT[2:]),
        ("validate", "{file}", FIT[2:]),
        ("adaptive-replay", "{file}/r", ["--budget", "0.5"]),
        ("combine", "{dir}", []),
    ],
)
def test_an_output_that_cannot_be_written_is_refused_before_any_work(
    study, tmp_path, monkeypatch, command, out, extra
):
    def never(*args, **kwargs):
        raise AssertionError("the command started its work")

    for stage in ("fit", "validate", "adaptive_replay", "combine"):
        monkeypatch.setattr(stages, stage, never)
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    path = out.format(file=a_file, dir=tmp_path)
    inputs = [study["timings"]] if command == "combine" else ["--timings", study["timings"]]
    assert_refused([command, *inputs, *extra, "--out", path], "--out")


def test_a_budget_below_one_run_replays_nothing_and_says_so(study, tmp_path):
    argv = ["adaptive-replay", "--timings", study["timings"], "--budget", "0.01"]
    code, err = run([*argv, "--out", str(tmp_path / "r")])
    assert code == 0 and "Traceback" not in err
    assert "(0 runs) is too few" in err
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["runs_used"] == 0 and summary["mape_random"] is None


def test_a_model_file_given_as_the_environment_is_refused_and_left_alone(study, tmp_path):
    before = open(study["model"]).read()
    record = tmp_path / "run.json"
    argv = ["bench", "--env", study["model"], "--framework", "pytorch", "--network", "mlp"]
    argv += ["--procs", "1", "--batch-size", "8", "--data-size", "64", "--out", str(record)]
    err = assert_refused(argv, "not a framework environment description", "dlperf env")
    assert "delete" not in err.lower()
    assert not record.exists() and open(study["model"]).read() == before


def test_ctrl_c_is_one_line_and_exit_130(monkeypatch, tmp_path):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(stages, "combine", interrupted)
    code, err = run(["combine", str(tmp_path / "a.csv"), "--out", str(tmp_path / "b.csv")])
    assert code == 130 and err.count("\n") == 1 and "interrupted" in err, err
