"""Small things a new user meets: `dlperf` alone, `plan` given the work twice, `predict --json`
without the warnings."""

from __future__ import annotations

import contextlib
import io
import json

from clirun import assert_refused, run

from dlperf.cli import main


def test_dlperf_alone_lists_its_commands():
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert main([]) == 2
    assert "predict" in err.getvalue() and "check-config" in err.getvalue()


def test_plan_refuses_epochs_and_samples_together(study):
    argv = ["plan", "--model", study["model"], "--batch-size", "32", "--deadline", "1h"]
    assert_refused([*argv, "--samples", "1000", "--epochs", "3"], "--epochs and --samples")
    code, err = run([*argv, "--samples", "1000"])
    assert code in (0, 1) and "Traceback" not in err


def test_predict_json_carries_the_warnings(study, capsys):
    argv = ["predict", "--model", study["model"], "--procs", "64", "--nodes", "4"]
    assert main([*argv, "--batch-size", "32", "--data-size", "1000", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["warnings"] and any("nodes" in w for w in answer["warnings"])


def test_an_artifact_from_another_version_is_warned_about(study, tmp_path, capsys):
    artifact = json.loads(open(study["model"]).read())
    artifact["dlperf_version"] = "0.0.1"
    older = tmp_path / "older.json"
    older.write_text(json.dumps(artifact))
    argv = ["predict", "--model", str(older), "--procs", "2", "--batch-size", "32"]
    assert main([*argv, "--data-size", "1000", "--json"]) == 0
    out = capsys.readouterr()
    assert "fitted by dlperf 0.0.1" in out.err
    assert any("fitted by dlperf 0.0.1" in w for w in json.loads(out.out)["warnings"])


def test_fit_with_no_model_fitted_exits_1_unless_allowed(tmp_path):
    import pandas as pd

    timings = tmp_path / "one.csv"
    row = {"framework": "pytorch", "network": "mlp", "procs": 1, "batch_size": 8}
    pd.DataFrame([{**row, "iter_time_s": 0.01}]).to_csv(timings, index=False)
    argv = ["fit", "--timings", str(timings), "--framework", "pytorch"]
    argv += ["--config-json", '{"models": {"usl": {}}}', "--out", str(tmp_path / "m.json")]
    code, err = run(argv)
    assert code == 1 and "no model could be fitted" in err, err
    assert run([*argv, "--allow-unfitted"])[0] == 0


def test_fit_and_validate_take_a_config_of_only_a_models_section(study, tmp_path):
    """`--config` help says "(models section)": no sweep keys are asked for."""
    config = tmp_path / "models.yaml"
    config.write_text("models:\n  usl: {}\n")
    argv = ["fit", "--timings", study["timings"], "--framework", "pytorch"]
    code, err = run([*argv, "--config", str(config), "--out", str(tmp_path / "m.json")])
    assert code == 0, err
    assert "batch_sizes" not in err


def test_aggregate_names_a_runs_dir_that_is_not_there_or_empty(tmp_path):
    out = ["--timings", str(tmp_path / "t.csv"), "--failures", str(tmp_path / "f.csv")]
    assert_refused(["aggregate", "--runs-dir", str(tmp_path / "nope"), *out], "is not a directory")
    code, err = run(["aggregate", "--runs-dir", str(tmp_path), *out])
    assert code == 2 and f"no run records below {tmp_path}" in err
