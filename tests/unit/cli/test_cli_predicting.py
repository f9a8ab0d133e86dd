"""`dlperf predict` and `plan` on a fitted artifact: answers, warnings, and every bad value
refused in one line (hypothesis with hostile values, and values at the edges of what is allowed)."""

from __future__ import annotations

import itertools
import json
import math
import re

import pandas as pd
import pytest
from clirun import (
    SETTINGS,
    assert_refused,
    hostile_names,
    hostile_numbers,
    run,
    with_value,
    without,
)
from hypothesis import given
from hypothesis import strategies as st

from dlperf.cli import main
from dlperf.models.planning import layouts, parse_duration
from dlperf.models.prior_hw import one_gpu_type_interval


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


def test_predict_gives_time_throughput_and_an_interval(workdir, capsys):
    assert (
        main(
            [
                "predict",
                "--model",
                str(workdir / "pytorch.json"),
                "--procs",
                "2",
                "8",
                "--batch-size",
                "32",
                "--data-size",
                "10000",
                "--json",
            ]
        )
        == 0
    )
    rows = json.loads(capsys.readouterr().out)["predictions"]
    assert len(rows) == 2
    for row in rows:
        assert row["epoch_time_lo_s"] <= row["epoch_time_s"] <= row["epoch_time_hi_s"]
        assert row["samples_per_s"] == pytest.approx(10000 / row["epoch_time_s"])


def test_predict_reads_only_the_artifact(workdir, tmp_path, capsys):
    moved = tmp_path / "only.json"
    moved.write_bytes((workdir / "pytorch.json").read_bytes())
    options = "--model-name castello --procs 4 --batch-size 16 --data-size 512".split()
    assert main(["predict", "--model", str(moved), *options]) == 0
    assert "castello" in capsys.readouterr().out


def test_predict_explains_a_missing_model(workdir, capsys):
    options = "--model-name nope --procs 2 --batch-size 32 --data-size 100".split()
    assert main(["predict", "--model", str(workdir / "pytorch.json"), *options]) == 2
    assert "has no model 'nope'" in capsys.readouterr().err


def test_plan_picks_the_fewest_workers_that_meet_the_deadline(workdir, capsys):
    args = [
        "plan",
        "--model",
        str(workdir / "pytorch.json"),
        "--batch-size",
        "32",
        "--data-size",
        "100000",
        "--epochs",
        "3",
        "--gpus-per-node",
        "4",
        "--max-procs",
        "8",
    ]
    assert main([*args, "--deadline", "1d"]) == 0
    assert "choice (workers): 1 workers" in capsys.readouterr().out
    # Tight deadline: more workers needed; impossible deadline: exit 1 with the fastest option.
    assert main([*args, "--deadline", "60s"]) == 0
    assert "choice (workers): 3 workers on 1 node(s)" in capsys.readouterr().out
    assert main([*args, "--deadline", "5s"]) == 1
    assert "no layout up to 8 workers meets the deadline" in capsys.readouterr().out


def test_plan_puts_as_many_workers_on_a_node_as_a_measured_node_held(workdir, tmp_path, capsys):
    """On a study of 2-core nodes, 4 workers take 2 nodes; 8 per node without a record."""
    artifact = json.loads((workdir / "pytorch.json").read_text())
    args = ["--batch-size", "32", "--data-size", "100000", "--deadline", "1s", "--max-procs", "4"]
    assert main(["plan", "--model", str(workdir / "pytorch.json"), *args]) == 1
    assert "the fastest is 4 workers on 1 node(s)" in capsys.readouterr().out
    artifact["networks"]["resnet18"]["measured"]["node_capacity"] = 2
    two_cores = tmp_path / "two-cores.json"
    two_cores.write_text(json.dumps(artifact))
    assert main(["plan", "--model", str(two_cores), *args]) == 1
    assert "the fastest is 4 workers on 2 node(s)" in capsys.readouterr().out
    assert main(["plan", "--model", str(two_cores), *args, "--gpus-per-node", "4"]) == 1
    assert "the fastest is 4 workers on 1 node(s)" in capsys.readouterr().out


def test_plan_keeps_to_powers_of_two_when_asked(workdir, capsys):
    args = ["plan", "--model", str(workdir / "pytorch.json"), "--batch-size", "32"]
    args += ["--data-size", "100000", "--epochs", "3", "--gpus-per-node", "4", "--max-procs", "8"]
    # 3 workers meet this deadline; kept to powers of two the plan proposes 4.
    assert main([*args, "--deadline", "60s", "--powers-of-two"]) == 0
    out = capsys.readouterr().out
    assert "choice (workers): 4 workers on 1 node(s)" in out
    procs = [line.split()[1] for line in out.splitlines()[2:] if line.split()[0].isdigit()]
    assert procs == ["1", "2", "4", "8"], out
    assert layouts(10, 4, powers_of_two=True) == [(1, 1), (1, 2), (1, 4), (2, 8)]


def test_plan_over_a_million_workers_prints_a_screenful_without_exponents(workdir, capsys):
    args = ["plan", "--model", str(workdir / "pytorch.json"), "--batch-size", "32"]
    args += ["--data-size", "100000000", "--epochs", "90", "--deadline", "3h"]
    main([*args, "--max-procs", "1000000"])
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert len(lines) < 40, len(lines)
    assert "more layouts not shown; lower --max-procs to see them all" in out
    assert "e+0" not in out, out
    assert "deadline 3 h" in lines[0]


def test_plan_by_cost_and_safety_margin(workdir, capsys):
    from dlperf.io import read_json
    from dlperf.models.planning import plan

    artifact = read_json(workdir / "pytorch.json")
    table, fastest = plan(artifact, "resnet18", "generic", 32, 100000, 3, 1e9, 4, 8, "workers")
    deadline = float(table["total_time_s"].iloc[2]) * 1.001  # what 3 workers just make
    table, choice = plan(artifact, "resnet18", "generic", 32, 100000, 3, deadline, 4, 8, "workers")
    assert choice["procs"] == table[table["meets_deadline"]]["procs"].min()
    _, by_cost = plan(artifact, "resnet18", "generic", 32, 100000, 3, deadline, 4, 8, "cost")
    feasible = table[table["meets_deadline"]]
    # An external table without a device column: the cost is in worker-hours.
    assert by_cost["worker_hours"] == pytest.approx(feasible["worker_hours"].min())
    safe_table, _ = plan(
        artifact, "resnet18", "generic", 32, 100000, 3, deadline, 4, 8, "workers", safe=True
    )
    assert (safe_table["total_time_s"] >= table["total_time_s"]).all()


def _ok_models(artifact: dict) -> list[str]:
    models = artifact["networks"]["resnet18"]["models"]
    return sorted(name for name, entry in models.items() if entry["status"] == "ok")


def test_predict_prints_an_interval_for_every_fitted_model(workdir, capsys):
    artifact = json.loads((workdir / "pytorch.json").read_text())
    assert len(_ok_models(artifact)) >= 5
    for name in _ok_models(artifact):
        args = ["predict", "--model", str(workdir / "pytorch.json"), "--model-name", name]
        assert main([*args, "--procs", "4", "--batch-size", "32", "--data-size", "8192"]) == 0
        out = capsys.readouterr()
        assert "90% prediction interval" in out.out and out.err == ""
        assert (
            main([*args, "--procs", "4", "--batch-size", "32", "--data-size", "8192", "--json"])
            == 0
        )
        (row,) = json.loads(capsys.readouterr().out)["predictions"]
        assert 0 < row["epoch_time_lo_s"] < row["epoch_time_hi_s"], name
        assert row["samples_per_s_lo"] < row["samples_per_s_hi"], name


def test_predict_warns_outside_the_measured_ranges(workdir, capsys):
    args = ["predict", "--model", str(workdir / "pytorch.json"), "--batch-size", "32"]
    assert main([*args, "--procs", "64", "--nodes", "8", "--data-size", "100000"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("dlperf predict: warning: 64 workers is beyond twice the largest")
    assert "8 nodes predicted from single-node measurements" in err[1]
    assert main([*args, "--procs", "8", "--data-size", "100000"]) == 0
    assert capsys.readouterr().err == ""


def test_predict_warns_of_disturbed_runs_and_of_more_workers_than_a_node_holds(
    workdir, tmp_path, capsys
):
    artifact = json.loads((workdir / "pytorch.json").read_text())
    measured = artifact["networks"]["resnet18"]["measured"]
    # Brought in: neither a node's cores or GPUs nor how busy the host was are known ...
    assert measured["node_capacity"] is None and measured["disturbed_share"] is None
    # ... as they are for our own runs: as if measured on 8-core nodes, mostly disturbed.
    measured.update(node_capacity=8, disturbed_share=0.92)
    artifact["networks"]["resnet18"]["device"] = ["cpu"]
    changed = tmp_path / "disturbed.json"
    changed.write_text(json.dumps(artifact))
    args = ["predict", "--model", str(changed), "--batch-size", "32", "--data-size", "100000"]
    assert main([*args, "--procs", "16", "--nodes", "1"]) == 0
    err = capsys.readouterr().err
    assert "warning: 16 workers per node is more than a measured node had (8 cores)" in err
    assert "ask for more nodes (--nodes)" in err
    assert "warning: 92% of the runs behind these models were disturbed" in err
    assert main([*args, "--procs", "16", "--nodes", "2"]) == 0
    assert "per node" not in capsys.readouterr().err


def _json_of(argv, capsys) -> str:
    assert main(argv) == 0
    return capsys.readouterr().out


def test_plan_warns_as_predict_does_and_of_a_deadline_met_only_at_the_prediction(
    workdir, tmp_path, capsys
):
    """`plan` said nothing of mostly disturbed runs (predict did), nor that its choice met the
    deadline only at its predicted time while its interval's upper end passed it."""
    artifact = json.loads((workdir / "pytorch.json").read_text())
    artifact["networks"]["resnet18"]["measured"].update(disturbed_share=0.92)
    changed = tmp_path / "disturbed.json"
    changed.write_text(json.dumps(artifact))
    ask = ["--batch-size", "32", "--data-size", "100000", "--epochs", "10"]
    assert main(["predict", "--model", str(changed), "--procs", "1", *ask]) == 0
    err = capsys.readouterr().err
    assert "warning: 92% of the runs behind these models were disturbed" in err
    predicted = json.loads(
        _json_of(["predict", "--model", str(changed), "--procs", "1", *ask, "--json"], capsys)
    )["predictions"][0]
    # A deadline between the predicted total and its interval's upper end, for one worker.
    deadline = (predicted["total_time_s"] + predicted["epoch_time_hi_s"] * 10) / 2
    plan = ["plan", "--model", str(changed), *ask, "--deadline", f"{deadline:.0f}"]
    assert main([*plan, "--max-procs", "1"]) == 0
    err = capsys.readouterr().err
    assert "warning: 92% of the runs behind these models were disturbed" in err
    assert "meets the deadline at its predicted time, not at its interval's upper end" in err
    assert main([*plan, "--max-procs", "1", "--safe"]) == 1
    assert "not at its interval's upper end" not in capsys.readouterr().err


@pytest.mark.parametrize(
    ("damage", "field"),
    [
        (
            lambda a: a["networks"]["resnet18"]["models"]["generic"]["terms"][2].update(
                value=float("nan")
            ),
            "networks.resnet18.models.generic.terms[2].value is NaN",
        ),
        (
            lambda a: a["networks"]["resnet18"]["models"]["generic"]["terms"][0].update(
                name="renamed"
            ),
            "networks.resnet18.models.generic.terms[0].name is 'renamed'",
        ),
        (lambda a: a.update(schema_version=99), "schema_version is 99"),
        (
            lambda a: a["networks"]["resnet18"]["models"].update(
                mystery=a["networks"]["resnet18"]["models"]["ernest"]
            ),
            "networks.resnet18.models.mystery names an unknown model 'mystery'",
        ),
    ],
)
def test_a_damaged_artifact_is_refused_naming_the_field(workdir, tmp_path, capsys, damage, field):
    artifact = json.loads((workdir / "pytorch.json").read_text())
    damage(artifact)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(artifact))  # NaN written as JSON's NaN token, as an editor might
    for command in (
        ["predict", "--procs", "2", "--data-size", "1000"],
        ["plan", "--deadline", "1h", "--data-size", "1000"],
    ):
        assert main([*command, "--model", str(bad), "--batch-size", "32"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"{bad}: {field}" in err


@pytest.mark.parametrize(
    ("devices", "unit"),
    [(["cuda"], "GPU-hours"), (["cpu"], "CPU-hours"), (["unknown"], "worker-hours")],
)
def test_plan_names_the_cost_by_device_and_safe_works_for_a_baseline(
    workdir, tmp_path, capsys, devices, unit
):
    artifact = json.loads((workdir / "pytorch.json").read_text())
    artifact["networks"]["resnet18"]["device"] = devices
    path = tmp_path / "art.json"
    path.write_text(json.dumps(artifact))
    args = ["plan", "--model", str(path), "--model-name", "ernest", "--batch-size", "32"]
    assert main([*args, "--data-size", "100000", "--deadline", "1d", "--safe"]) == 0
    out = capsys.readouterr().out
    assert out.rstrip().endswith(unit)
    assert ("GPU-hours" in out) == (unit == "GPU-hours")


def test_durations_and_layouts():
    assert parse_duration("90") == 90 and parse_duration("2h") == 7200
    assert parse_duration("1.5m") == 90 and parse_duration("1d") == 86400
    with pytest.raises(ValueError, match="90s, 45m"):
        parse_duration("soon")
    assert layouts(10, 4) == [(1, 1), (1, 2), (1, 3), (1, 4), (2, 6), (2, 8), (3, 9)]


def test_predict_answers_by_default_as_the_report_does(workdir, capsys):
    """Fitted on 1-8 GPUs, asked for 64: the answer, its interval and its models, the same the
    report's Summary gives."""
    from dlperf.report.answer_summary import answer_at

    args = ["predict", "--model", str(workdir / "pytorch.json"), "--procs", "64"]
    args += ["--batch-size", "32", "--data-size", "10000", "--json"]
    assert main(args) == 0
    captured = capsys.readouterr()
    answer = json.loads(captured.out)
    assert answer["model"] == "answer"
    (row,) = answer["predictions"]
    assert row["ratio"] == 8.0 and row["models"]
    assert row["epoch_time_lo_s"] < row["epoch_time_s"] < row["epoch_time_hi_s"]
    assert "beyond twice the largest measured worker count" in captured.err
    artifact = json.loads((workdir / "pytorch.json").read_text())
    summary = answer_at(
        artifact, "resnet18", {"nodes": 1, "procs": 64, "batch_size": 32, "data_size": 10000}
    )
    assert summary.predicted_s == pytest.approx(row["epoch_time_s"])
    assert (summary.lo_s, summary.hi_s) == pytest.approx(
        (row["epoch_time_lo_s"], row["epoch_time_hi_s"])
    )
    # The Summary carries the warnings predict gives at the same row.
    assert any(
        w.startswith("At 64 workers on 1 node, 64 workers is beyond") for w in summary.warnings
    )
    spread = answer_at(
        artifact, "resnet18", {"nodes": 4, "procs": 32, "batch_size": 32, "data_size": 10000}
    )
    assert "At 32 workers on 4 nodes, 4 nodes predicted from single-node measurements" in " ".join(
        spread.warnings
    )
    # Gradient accumulation: the all-reduce once per 4 micro-batches makes an epoch no slower.
    assert main([*args[:-1], "--grad-accum-steps", "4", "--json"]) == 0
    (accumulated,) = json.loads(capsys.readouterr().out)["predictions"]
    assert accumulated["grad_accum_steps"] == 4
    assert accumulated["epoch_time_s"] <= row["epoch_time_s"] * 1.001
    # --model-name still gives one model.
    assert main([*args[:-1], "--model-name", "usl", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["model"] == "usl"


def fitted_external(rows: list[dict], tmp_path, capsys):
    """``dlperf fit`` of ``rows`` written as an external-timings file: the artifact's path."""
    pd.DataFrame(rows).to_csv(tmp_path / "t.csv", index=False)
    artifact = tmp_path / "pytorch.json"
    fit = ["fit", "--timings", str(tmp_path / "t.csv"), "--framework", "pytorch"]
    assert main(fit + ["--config-json", '{"models": {"usl": {}}}', "--out", str(artifact)]) == 0
    capsys.readouterr()
    return artifact


def test_predict_asks_for_a_gpu_never_measured(tmp_path, capsys):
    """Timings of three GPU types (external CSV with gpu and precision): `dlperf fit` then
    `predict --gpu` for a fourth says it was not measured and how far beyond it reaches."""
    rates = {"Tesla V100-SXM2-16GB": 1.0, "NVIDIA A100-SXM4-80GB": 2.5, "A10": 1.2}
    rows = [
        {"framework": "pytorch", "network": "mlp", "gpu": gpu, "precision": "AMP/FP16",
         "procs": p, "batch_size": b, "iter_time_s": 0.002 + 1e-4 * b / speed + 0.004 * (p - 1) / p}
        for (gpu, speed), p, b in itertools.product(rates.items(), (1, 2, 4), (16, 32, 64))
    ]  # fmt: skip
    artifact = fitted_external(rows, tmp_path, capsys)
    ask = ["predict", "--model", str(artifact), "--procs", "2", "--batch-size", "32"]
    ask += ["--data-size", "6400", "--gpu", "H100 80GB HBM3", "--precision", "amp_fp16", "--json"]
    assert main(ask) == 0
    said = json.loads(capsys.readouterr().out)
    assert said["gpu"] == "H100-SXM5-80GB" and "not measured" in said["said"]
    row = said["predictions"][0]
    assert (
        row["reach"] > 1 and row["epoch_time_lo_s"] <= row["epoch_time_s"] <= row["epoch_time_hi_s"]
    )
    # 3.2x beyond in tensor rate: within the backtest's reach (the A10's link, 4.7x below the
    # others'); a B200 (7.2x) lies beyond it, answered by each form alike, its interval wider.
    assert row["beyond_backtest"] is False
    assert isinstance(row["held_to_envelope"], bool)
    assert main(ask[:-5] + ["--gpu", "B200", "--precision", "amp_fp16", "--json"]) == 0
    far = json.loads(capsys.readouterr().out)["predictions"][0]
    assert far["beyond_backtest"] is True
    assert (
        far["epoch_time_hi_s"] / far["epoch_time_s"] > row["epoch_time_hi_s"] / row["epoch_time_s"]
    )
    code, err = run(ask[:-5] + ["--gpu", "H100 80GB HBM3", "--precision", "bf16"])
    assert code == 2 and "no answer across hardware for mlp at bf16" in err
    # A GPU of the user's own catalogue file.
    mine = tmp_path / "gpus.yaml"
    mine.write_text(
        "sources: {s: {title: sheet, url: 'https://example.org'}}\n"
        "gpus:\n- name: Z9000\n  peak_tflops: {fp32: 50, tf32: 200, fp16: 400, bf16: 400}\n"
        "  memory_gb: 64\n  memory_bandwidth_gbs: 3000\n"
        "  link: {name: PCIe, bandwidth_gbs: 128}\n"
        "  sources: {peak_tflops: s, memory: s, link: s}\n"
    )
    user_gpu = ["--gpu", "Z9000", "--precision", "amp_fp16", "--hardware", str(mine), "--json"]
    assert main(ask[:-5] + user_gpu) == 0
    assert json.loads(capsys.readouterr().out)["gpu"] == "Z9000"
    # Choosing among GPU types by deadline and the user's prices.
    prices = tmp_path / "prices.yaml"
    prices.write_text("A10: 0.75\nA100 80GB SXM4: 1.79\nH100 80GB HBM3: 2.99\n")
    plan = ["plan", "--model", str(artifact), "--batch-size", "32", "--data-size", "6400000"]
    plan += ["--epochs", "10", "--deadline", "1h", "--precision", "amp_fp16"]
    plan += ["--gpus", "A10", "A100 80GB SXM4", "H100 80GB HBM3", "--prices", str(prices)]
    assert main(plan) == 0
    out = capsys.readouterr().out
    assert re.search(r"H100-SXM5-80GB +no ", out) and "cheapest: " in out
    # The cheapest a GPU type never measured: said to be an extrapolation, with its reach and
    # whether it meets the deadline at its interval's upper end (--safe judges there).
    prices.write_text("A10: 0.75\nA100 80GB SXM4: 1.79\nH100 80GB HBM3: 0.5\n")
    risk = "H100-SXM5-80GB was not measured: its answer is an extrapolation to a GPU type whose "
    risk += "figures lie up to 3.2x beyond those measured"
    for flags, end in [([], "it misses the deadline"), (["--safe"], "it meets the deadline")]:
        assert main([*plan, *flags]) == 0
        said = capsys.readouterr()
        assert f"dlperf plan: warning: {risk}" in said.err and end in said.err
        (line,) = [x for x in said.out.splitlines() if x.startswith("cheapest: ")]
        assert "x H100-SXM5-80GB" in line and risk in line and end in line
    # What the reach column means, said under the table.
    assert "reach: how far the GPU's datasheet figures lie outside the GPU types measured" in (
        said.out
    )
    prices.write_text("A10: -1\n")
    code, err = run(plan)
    assert code == 2 and "'A10' needs a price >= 0" in err


def test_predict_asks_an_h100_from_v100_timings_alone(tmp_path, capsys):
    """ "We measured on V100s; how long on an H100?": timings of one GPU type, `dlperf fit`, then
    `predict --gpu` answers from prior_hw anchored on the V100, with its published interval,
    and `plan --gpus` weighs the measured V100 against the H100."""
    rows = [
        {"framework": "pytorch", "network": "resnet", "gpu": "Tesla V100-SXM2-16GB",
         "precision": "fp32", "procs": p, "batch_size": 64, "iter_time_s": 0.2 + 0.01 * (p - 1)}
        for p in (1, 2, 4, 8)
    ]  # fmt: skip
    artifact = fitted_external(rows, tmp_path, capsys)
    ask = ["predict", "--model", str(artifact), "--procs", "8", "--batch-size", "64"]
    ask += ["--data-size", "51200", "--gpu", "H100 80GB HBM3", "--precision", "fp32", "--json"]
    assert main(ask) == 0
    said = json.loads(capsys.readouterr().out)
    assert "not measured" in said["said"]
    assert "one GPU type measured (V100-SXM2-16GB)" in said["said"]
    (row,) = said["predictions"]
    on_v100 = 100 * (0.2 + 0.07)  # 100 iterations of 8 x 64 samples at 8 workers
    # The prior's slopes: the H100 (TF32 tensor cores, 3.7x the bandwidth) several times faster.
    assert 2 < on_v100 / row["epoch_time_s"] < 10
    radius, _ = one_gpu_type_interval(0.9)
    assert row["epoch_time_hi_s"] / row["epoch_time_s"] == pytest.approx(math.exp(radius))
    assert row["epoch_time_s"] / row["epoch_time_lo_s"] == pytest.approx(math.exp(radius))
    assert row["beyond_backtest"] is False and row["reach"] > 1
    plan = ["plan", "--model", str(artifact), "--batch-size", "64", "--data-size", "5120000"]
    plan += ["--epochs", "1", "--deadline", "1h", "--precision", "fp32"]
    assert main([*plan, "--gpus", "V100-SXM2-16GB", "H100 80GB HBM3"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"V100-SXM2-16GB +yes ", out) and re.search(r"H100-SXM5-80GB +no ", out)
