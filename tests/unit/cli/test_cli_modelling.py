"""`dlperf fit` and `validate` on a timings CSV in the external format; a bad framework, number
or config refused in one line."""

from __future__ import annotations

import json

import pandas as pd
from clirun import SETTINGS, assert_refused, hostile_names, hostile_numbers, with_value
from hypothesis import example, given
from hypothesis import strategies as st

from dlperf.cli import main


def test_fit_writes_all_six_models(workdir):
    artifact = json.loads((workdir / "pytorch.json").read_text())
    models = artifact["networks"]["resnet18"]["models"]
    assert set(models) == {"generic", "usl", "ernest", "extrap", "linreg_sfs", "castello"}
    assert models["generic"]["status"] == "ok"
    assert all(m["status"] in ("ok", "unavailable") for m in models.values())


def on_workdir(command: str, workdir, *options: str) -> list[str]:
    """`dlperf COMMAND` on the workdir's timings, for pytorch, with its config."""
    timings = ["--timings", str(workdir / "ext.csv"), "--framework", "pytorch"]
    return [command, *timings, "--config", str(workdir / "config.yaml"), *options]


def test_fit_is_byte_identical_when_repeated(workdir):
    again = workdir / "again.json"
    assert main(on_workdir("fit", workdir, "--out", str(again))) == 0
    assert again.read_bytes() == (workdir / "pytorch.json").read_bytes()


def test_validate_puts_the_generic_model_beside_every_baseline(workdir):
    out = workdir / "validation"
    options = ["--protocol", "extrapolation_procs", "--train-max-procs", "4", "--out", str(out)]
    assert main(on_workdir("validate", workdir, *options)) == 0
    summary = pd.read_csv(out / "summary.csv")
    assert set(summary["model"]) == {"generic", "usl", "ernest", "extrap", "linreg_sfs", "castello"}
    generic = summary.set_index("model").loc["generic"]
    assert generic["status"] == "ok" and generic["mape"] < 10


def test_unknown_framework_is_named_with_the_known_ones(study):
    out = study["dir"] / "nosuch.json"
    err = assert_refused(
        ["fit", "--timings", study["timings"], "--framework", "nosuch", "--out", str(out)],
        "unknown framework 'nosuch'",
        "pytorch",
    )
    assert "tensorflow" not in err  # an external table knows only its own frameworks
    assert not out.exists()
    assert_refused(
        ["validate", "--timings", study["timings"], "--framework", "mxnet"]
        + ["--out", str(study["dir"] / "v")],
        "unknown framework 'mxnet'",
    )


def test_bad_config_json_is_one_line(study):
    assert_refused(
        ["fit", "--timings", study["timings"], "--framework", "pytorch"]
        + ["--config-json", "{not json", "--out", str(study["dir"] / "x.json")],
        "--config-json is not valid JSON",
    )


@SETTINGS
@given(command=st.sampled_from(["fit", "validate"]), framework=hostile_names)
@example(command="fit", framework="--")
def test_fit_and_validate_hostile_frameworks(study, command, framework):
    argv = [command, "--timings", study["timings"], "--out", str(study["dir"] / "never")]
    # argparse cannot keep '--' as a value: refused as such (it once ended in a traceback).
    expected = "cannot be a value" if framework == "--" else "unknown framework"
    assert_refused(with_value(argv, "--framework", framework), expected)
    assert not (study["dir"] / "never").exists()


@SETTINGS
@given(
    option=st.sampled_from(["--seed", "--k", "--train-max-procs", "--train-max-batch"]),
    value=hostile_numbers,
)
def test_validate_hostile_numbers(study, option, value):
    argv = ["validate", "--timings", study["timings"], "--out", str(study["dir"] / "never")]
    if option == "--seed" and value.strip() in ("0", "-0"):
        value = "-1"  # 0 is a valid seed
    assert_refused(with_value(argv, option, value))
