"""Every user error on the command line is one line on stderr and exit status 2: no traceback,
no warning from a library. Driven by hypothesis with hostile values, through ``dlperf.cli.main``
on a real timings table and a real fitted model artifact."""

from __future__ import annotations

import contextlib
import io
import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dlperf.cli import main

SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
MODELS = '{"models": {"generic": {"popsize": 6, "maxiter": 30, "lambdas": [0.0]}}}'


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """A small timings CSV (external format, one framework) and the artifact fitted on it."""
    path = tmp_path_factory.mktemp("hostile")
    rows = []
    for p, b in itertools.product((1, 2, 4), (16, 32, 64)):
        t_iter = 0.003 + 2e-4 * b + 0.01 * (p - 1) / p
        rows.append(
            {
                "framework": "pytorch",
                "network": "mlp",
                "procs": p,
                "batch_size": b,
                "iter_time_s": t_iter,
            }  # fmt: skip
        )
    pd.DataFrame(rows).to_csv(path / "t.csv", index=False)
    artifact = path / "pytorch.json"
    code, _ = run(
        ["fit", "--timings", str(path / "t.csv"), "--framework", "pytorch"]
        + ["--config-json", MODELS, "--out", str(artifact)]
    )
    assert code == 0 and artifact.exists()
    return {"timings": str(path / "t.csv"), "model": str(artifact), "dir": path}


def run(argv: list[str]) -> tuple[int, str]:
    """Exit status and stderr of ``dlperf ARGV``; every warning raised on the way is an error."""
    err = io.StringIO()
    with (
        contextlib.redirect_stderr(err),
        contextlib.redirect_stdout(io.StringIO()),
        warnings.catch_warnings(record=True) as caught,
        np.errstate(all="raise"),
    ):
        warnings.simplefilter("always")
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
    assert not caught, [str(w.message) for w in caught]
    return code, err.getvalue()


def assert_refused(argv: list[str], *words: str) -> str:
    code, err = run(argv)
    assert code == 2, (argv, code, err)
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert "Traceback" not in err and "usage:" not in err
    assert err.startswith("dlperf"), err
    for word in words:
        assert word in err, (word, err)
    return err


def predict_args(study, **overrides) -> list[str]:
    values = {"procs": "2", "batch-size": "32", "data-size": "1024", **overrides}
    argv = ["predict", "--model", study["model"]]
    for name, value in values.items():
        argv += [f"--{name}", value]
    return argv


def plan_args(study, **overrides) -> list[str]:
    values = {"batch-size": "32", "data-size": "1024", "deadline": "1h", **overrides}
    argv = ["plan", "--model", study["model"], "--max-procs", "8"]
    for name, value in values.items():
        argv += [f"--{name}", value]
    return argv


def test_valid_arguments_pass(study):
    assert run(predict_args(study))[0] == 0
    assert run(plan_args(study))[0] == 0


@pytest.mark.parametrize(
    "overrides, words",
    [
        ({"procs": "0"}, ["--procs", "0 is out of range", "from 1"]),
        ({"procs": "nan"}, ["--procs", "'nan' is not a whole number"]),
        ({"procs": "3", "nodes": "2"}, ["--procs 3 is not a multiple of --nodes 2"]),
        ({"data-size": "0"}, ["--data-size", "out of range"]),
        ({"batch-size": "-4"}, ["--batch-size", "out of range"]),
        ({"epochs": "-1"}, ["--epochs", "out of range"]),
        ({"epochs": "nan"}, ["--epochs", "'nan' is not a finite number"]),
        ({"epochs": "inf"}, ["--epochs", "not a finite number"]),
        ({"level": "1"}, ["--level", "below 1"]),
        ({"level": "0"}, ["--level", "above 0"]),
        ({"network": "nosuch"}, ["nosuch", "mlp"]),
        ({"model-name": "nosuch"}, ["nosuch", "generic"]),
    ],
)
def test_predict_refuses_by_name(study, overrides, words):
    assert_refused(predict_args(study, **overrides), *words)


@pytest.mark.parametrize(
    "overrides, words",
    [
        ({"samples": "0"}, ["--samples", "out of range"]),
        ({"samples": "1e400"}, ["--samples", "not a finite number"]),
        ({"data-size": "0"}, ["--data-size"]),
        ({"epochs": "0"}, ["--epochs"]),
        ({"deadline": "0"}, ["deadline", "positive"]),
        ({"deadline": "9" * 400}, ["deadline", "not a finite time"]),
        ({"deadline": "soon"}, ["deadline", "45m"]),
        ({"gpus-per-node": "0"}, ["--gpus-per-node"]),
        ({"level": "2"}, ["--level"]),
    ],
)
def test_plan_refuses_by_name(study, overrides, words):
    assert_refused(plan_args(study, **overrides), *words)


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


def test_bench_refuses_before_starting_anything(tmp_path):
    base = ["bench", "--env", str(tmp_path / "env.json"), "--out", str(tmp_path / "r.json")]
    base += ["--batch-size", "8", "--data-size", "64"]
    assert_refused(base + ["--framework", "nosuch", "--network", "mlp"], "--framework", "pytorch")
    assert_refused(base + ["--framework", "pytorch", "--network", "vgg"], "--network", "lenet")
    good = base + ["--framework", "pytorch", "--network", "mlp"]
    assert_refused(good + ["--procs", "3", "--nodes", "2"], "not a multiple")
    assert_refused(good + ["--timeout", "nan"], "--timeout")
    assert not (tmp_path / "r.json").exists()


def test_env_refuses_an_unknown_framework(tmp_path):
    # Its name becomes a directory name: '../x' would build outside the environments' root.
    assert_refused(
        ["env", "--framework", "../x", "--requirements", "envs/pytorch.txt"]
        + ["--root", str(tmp_path), "--out", str(tmp_path / "env.json")],
        "--framework",
        "pytorch",
    )
    assert list(tmp_path.iterdir()) == []


def test_bad_config_json_is_one_line(study):
    assert_refused(
        ["fit", "--timings", study["timings"], "--framework", "pytorch"]
        + ["--config-json", "{not json", "--out", str(study["dir"] / "x.json")],
        "--config-json is not valid JSON",
    )


# Hostile values: zero and below, far too large, NaN and infinities, not numbers at all (text
# without digits, line breaks included), empty.
no_digits = st.characters(codec="utf-8", exclude_categories=("Nd",), exclude_characters="\x00")
hostile_numbers = (
    st.integers(max_value=0).map(str)
    | st.integers(min_value=10**22).map(str)
    | st.floats(max_value=0).map(repr)
    | st.floats(min_value=1e22, allow_infinity=True).map(repr)
    | st.sampled_from(["nan", "NaN", "inf", "-inf", "1e400", "-0", "0.0", "", " ", "1,5", "0x10"])
    | st.text(alphabet=no_digits, max_size=6)
)
hostile_names = st.text(alphabet=no_digits, min_size=1, max_size=12).filter(
    lambda s: s not in ("pytorch", "tensorflow", "mxnet", "mlp")
)


def with_value(argv: list[str], option: str, value: str) -> list[str]:
    # '--option=value' keeps a value that starts with '-' a value.
    return argv + [f"{option}={value}"]


def without(argv: list[str], option: str) -> list[str]:
    if option not in argv:
        return argv
    i = argv.index(option)
    return argv[:i] + argv[i + 2 :]


@SETTINGS
@given(
    option=st.sampled_from(["--procs", "--nodes", "--batch-size", "--data-size"]),
    value=hostile_numbers,
)
def test_predict_hostile_counts(study, option, value):
    assert_refused(with_value(without(predict_args(study), option), option, value))


@SETTINGS
@given(
    option=st.sampled_from(["--epochs", "--level", "--param-count", "--flops-per-sample"]),
    value=hostile_numbers,
)
def test_predict_hostile_numbers(study, option, value):
    assert_refused(with_value(predict_args(study), option, value))


@SETTINGS
@given(
    option=st.sampled_from(
        ["--samples", "--data-size", "--epochs", "--gpus-per-node", "--max-procs", "--deadline"]
    ),
    value=hostile_numbers,
)
def test_plan_hostile_numbers(study, option, value):
    assert_refused(with_value(without(plan_args(study), option), option, value))


@SETTINGS
@given(command=st.sampled_from(["fit", "validate"]), framework=hostile_names)
def test_fit_and_validate_hostile_frameworks(study, command, framework):
    argv = [command, "--timings", study["timings"], "--out", str(study["dir"] / "never")]
    assert_refused(with_value(argv, "--framework", framework), "unknown framework")
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


@SETTINGS
@given(network=hostile_names, model_name=hostile_names)
def test_predict_hostile_names(study, network, model_name):
    assert_refused(with_value(predict_args(study), "--network", network))
    assert_refused(with_value(predict_args(study), "--model-name", model_name))


@SETTINGS
@given(
    nodes=st.integers(1, 1000),
    per_node=st.integers(1, 1000),
    batch=st.integers(1, 10**6),
    data=st.integers(1, 10**12),
    epochs=st.floats(1e-6, 1e6),
    level=st.floats(0.01, 0.99),
)
def test_predict_at_the_edges_of_what_is_allowed(
    study, nodes, per_node, batch, data, epochs, level
):
    """Values the types accept, up to their bounds: an answer, or one line naming why not;
    never a traceback or a warning."""
    argv = predict_args(
        study,
        nodes=str(nodes),
        procs=str(nodes * per_node),
        **{"batch-size": str(batch), "data-size": str(data)},
        epochs=repr(epochs),
        level=repr(level),
    )
    code, err = run(argv)
    assert code == 0 or (code == 2 and err.count("\n") == 1), (code, err)


@SETTINGS
@given(
    batch=st.integers(1, 10**6),
    data=st.integers(1, 10**12),
    samples=st.none() | st.floats(1e-3, 1e18),
    deadline=st.floats(1e-6, 1e10),
    gpus_per_node=st.integers(1, 16),
    level=st.floats(0.01, 0.99),
)
def test_plan_at_the_edges_of_what_is_allowed(
    study, batch, data, samples, deadline, gpus_per_node, level
):
    argv = plan_args(
        study,
        **{"batch-size": str(batch), "data-size": str(data), "gpus-per-node": str(gpus_per_node)},
        deadline=f"{deadline:f}",
        level=repr(level),
    )
    if samples is not None:
        argv += ["--samples", repr(samples)]
    code, err = run(argv)
    # 1: no layout meets the deadline, which the output says.
    assert code in (0, 1) or (code == 2 and err.count("\n") == 1), (code, err)
