"""`dlperf fit`, `validate`, `predict` and `plan` on a timings CSV in the external format."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest

from dlperf.cli import main
from dlperf.models.planning import layouts, parse_duration

MODELS_CONFIG = """
batch_sizes: [1]
data_sizes: [1]
models:
  generic: {lambdas: [0.0]}
  usl: {}
  ernest: {}
  extrap: {}
  linreg_sfs: {}
  castello: {}
"""


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli")
    rng = np.random.default_rng(0)
    rows = []
    for framework in ("pytorch", "mxnet"):
        for p, b in itertools.product((1, 2, 4, 8), (16, 32, 64)):
            t_iter = 0.003 + 2e-4 * b**0.9 + 0.01 * (p - 1) / p + 0.002 * np.ceil(np.log2(p))
            rows.append(
                {
                    "framework": framework,
                    "network": "resnet18",
                    "procs": p,
                    "batch_size": b,
                    "iter_time_s": t_iter * rng.lognormal(0, 0.01),
                }
            )
    pd.DataFrame(rows).to_csv(path / "ext.csv", index=False)
    (path / "config.yaml").write_text(MODELS_CONFIG)
    assert (
        main(
            [
                "fit",
                "--timings",
                str(path / "ext.csv"),
                "--framework",
                "pytorch",
                "--config",
                str(path / "config.yaml"),
                "--out",
                str(path / "pytorch.json"),
            ]
        )
        == 0
    )
    return path


def test_fit_writes_all_six_models(workdir):
    artifact = json.loads((workdir / "pytorch.json").read_text())
    models = artifact["networks"]["resnet18"]["models"]
    assert set(models) == {"generic", "usl", "ernest", "extrap", "linreg_sfs", "castello"}
    assert models["generic"]["status"] == "ok"
    assert all(m["status"] in ("ok", "unavailable") for m in models.values())


def test_fit_is_byte_identical_when_repeated(workdir):
    again = workdir / "again.json"
    assert (
        main(
            [
                "fit",
                "--timings",
                str(workdir / "ext.csv"),
                "--framework",
                "pytorch",
                "--config",
                str(workdir / "config.yaml"),
                "--out",
                str(again),
            ]
        )
        == 0
    )
    assert again.read_bytes() == (workdir / "pytorch.json").read_bytes()


def test_validate_puts_the_generic_model_beside_every_baseline(workdir):
    out = workdir / "validation"
    assert (
        main(
            [
                "validate",
                "--timings",
                str(workdir / "ext.csv"),
                "--framework",
                "pytorch",
                "--config",
                str(workdir / "config.yaml"),
                "--protocol",
                "extrapolation_procs",
                "--train-max-procs",
                "4",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    summary = pd.read_csv(out / "summary.csv")
    assert set(summary["model"]) == {"generic", "usl", "ernest", "extrap", "linreg_sfs", "castello"}
    generic = summary.set_index("model").loc["generic"]
    assert generic["status"] == "ok" and generic["mape"] < 10


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
    assert (
        main(
            [
                "predict",
                "--model",
                str(moved),
                "--model-name",
                "castello",
                "--procs",
                "4",
                "--batch-size",
                "16",
                "--data-size",
                "512",
            ]
        )
        == 0
    )
    assert "castello" in capsys.readouterr().out


def test_predict_explains_a_missing_model(workdir, capsys):
    assert (
        main(
            [
                "predict",
                "--model",
                str(workdir / "pytorch.json"),
                "--model-name",
                "nope",
                "--procs",
                "2",
                "--batch-size",
                "32",
                "--data-size",
                "100",
            ]
        )
        == 2
    )
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
    # Gradient accumulation: the all-reduce once per 4 micro-batches makes an epoch no slower.
    assert main([*args[:-1], "--grad-accum-steps", "4", "--json"]) == 0
    (accumulated,) = json.loads(capsys.readouterr().out)["predictions"]
    assert accumulated["grad_accum_steps"] == 4
    assert accumulated["epoch_time_s"] <= row["epoch_time_s"] * 1.001
    # --model-name still gives one model.
    assert main([*args[:-1], "--model-name", "usl", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["model"] == "usl"
