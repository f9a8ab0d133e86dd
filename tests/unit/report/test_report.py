"""The report from a synthetic dataset taken through the real fit, validate and report code."""

import dataclasses
import importlib.util
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dlperf import figures as rendering
from dlperf import stages
from dlperf.io import atomic_write_json
from dlperf.report import table_frames
from dlperf.report.model_figures import breakdown_figure
from dlperf.report.page import build_report
from dlperf.report.scaling_figures import speedup_figure
from dlperf.report.study import ReportSources

SYNTHETIC = Path(__file__).resolve().parents[3] / "tests" / "report" / "synthetic.py"


def _synthetic():
    spec = importlib.util.spec_from_file_location("report_synthetic", SYNTHETIC)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


synthetic = _synthetic()


@pytest.fixture(scope="module")
def data():
    # One data size and three protocols keep it quick; tests/report builds the full set.
    protocols = {"kfold": {"k": 3}, "extrapolation_procs": {}, "cross_network": {}}
    return synthetic.validated(n_boot=100, data_sizes=(1024,), protocols=protocols)


@pytest.fixture(scope="module")
def report(data, tmp_path_factory):
    """The report through the stage function, from files as the workflow writes them."""
    root = tmp_path_factory.mktemp("report")
    paths = {name: root / f"{name}.csv" for name in ("timings", "failures", "summary", "held")}
    data["timings"].to_csv(paths["timings"], index=False)
    data["failures"].to_csv(paths["failures"], index=False)
    data["summary"].to_csv(paths["summary"], index=False)
    data["predictions"].to_csv(paths["held"], index=False)
    atomic_write_json(root / "pytorch.json", data["artifacts"]["pytorch"])
    config = {**data["config"], "report": {"target": TARGET}}
    out = root / "index.html"
    # One record measured again on purpose: its old version is kept in the history.
    kept = root / "results" / "history" / "runs" / "pytorch" / "mlp" / "n1_p1_b8_d1024_r0.ab.json"
    kept.parent.mkdir(parents=True)
    kept.write_text("{}")
    with synthetic.test_model_registered():
        sources = ReportSources(
            timings=paths["timings"],
            failures=paths["failures"],
            models=[root / "pytorch.json"],
            summary=paths["summary"],
            predictions=[paths["held"]],
            config=config,
            results_dir=root / "results",
        )
        written = stages.report(sources, out)
    return out, written


TARGET = {"data_size": 100_000, "epochs": 10, "deadline": "10m"}


def test_the_first_section_is_the_summary(report):
    page = report[0].read_text()
    first = re.search(r'<h2 id="([^"]+)">([^<]+)</h2>', page)
    assert first.groups() == ("summary", "Summary")
    counts = re.sub(r"\s+", " ", page[page.index("<p>") : page.index("</p>")])
    assert re.fullmatch(
        r"<p>\d+ successful runs \(1 of them disturbed by other programs, see Warnings\) and "
        r"1 failed run; \d+ measured configurations of 1 framework "
        r"modelled\.",
        counts,
    ), counts
    summary = page[first.start() : page.index('<h2 id="accuracy"')]
    for network in ("mlp", "lenet"):
        part = summary[summary.index(f'id="summary-pytorch-{network}"') :]
        assert re.search(
            r"<b>Scaling:</b> at 4 workers \(d=1024 samples/epoch\) an epoch is [\d.]+× faster "
            r"than with 1 \(speed-up [\d.]+×, efficiency \d+%\)",
            part,
        )
        assert re.search(
            r"<b>Answer:</b> at \d+ workers? on \d+ nodes? \(b=\d+, d=100000; (inside the "
            r"measured range|[\d.]+× beyond the largest measured worker or node count)\) an epoch "
            r"takes [\d.]+ s, 90% interval [\d.]+–[\d.]+ s\.<details><summary>how</summary>"
            r"From median of \w+",
            part,
        ), part
        # one plain sentence each; the fitted expression folded beneath the breakdown
        assert re.search(
            r"of an iteration is [^<]*<details><summary>how</summary>epoch time = ", part
        )
        assert f'id="fig-pytorch-answer_{network}"' in part
        assert "of an iteration is" in part and "epoch time = " in part
        assert "<b>Plan:</b> 100000 samples × 10 epochs within 10 min" in part
        assert f'id="fig-pytorch-summary_{network}"' in part
        assert f'id="warnings-pytorch-{network}"' in part
    # the detailed tables are folded
    accuracy = page[page.index('<h2 id="accuracy"') :]
    assert accuracy.index("<details>") < accuracy.index('id="validation-table"')


def test_every_section_is_there(report):
    out, written = report
    page = out.read_text()
    for ident in (
        "summary",
        "summary-pytorch-mlp",
        "accuracy",
        "validation-table",
        "ranking",
        "ranking-table",
        "fw-pytorch",
        "pytorch-mlp",
        "pytorch-lenet",
        "resources",
        "resources-table",
        "failed-runs",
        "failures",
        "frameworks-without-runs",
        "configuration",
        "environment-table",
        "config-table",
    ):
        assert f'id="{ident}"' in page, ident
    for network in ("mlp", "lenet"):
        kinds = (
            "summary",
            "answer",
            "scaling",
            "throughput",
            "speedup",
            "accuracy",
            "residuals",
            "breakdown",
        )
        for kind in kinds:
            assert f'id="fig-pytorch-{kind}_{network}"' in page, (kind, network)
            for ext in ("png", "svg"):
                assert (out.parent / "figures" / "pytorch" / f"{kind}_{network}.{ext}").is_file()
    assert len(written) == 2 * 2 * 8
    assert page.count('src="data:image/png;base64,') == 16
    # self-contained: nothing is fetched (links to the SVG/PNG copies are relative)
    assert not re.search(r'(src|href)="(https?:)?//', page)
    for text in (
        "Synthetic CPU @ 3.0GHz",
        "2.3.1+cpu",
        "node001",
        "4242",
        "0123abcd",
        "ImportError: No module named &#x27;tensorflow&#x27;",
        "tensorflow",
    ):
        assert text in page, text


def test_error_table_highlights_the_best_model_and_shows_reasons(data, report):
    page = report[0].read_text()
    table = page[
        page.index('id="validation-table"') : page.index(
            "</table>", page.index('id="validation-table"')
        )
    ]
    ok = data["summary"][data["summary"]["status"] == "ok"]
    assert table.count('<tr class="best">') == ok.groupby(["network", "protocol"]).ngroups
    assert "not_applicable: generic uses no network features" in table
    assert re.search(r"\d\.?\d* \[\d", table)  # value [lo, hi]


def test_ranking_orders_models_by_mean_rank():
    summary = pd.DataFrame(
        {
            "framework": "pytorch",
            "network": "mlp",
            "status": "ok",
            "model": ["a", "b", "a", "b", "a", "b"],
            "protocol": [
                "kfold",
                "kfold",
                "loo_batch",
                "loo_batch",
                "extrapolation_procs",
                "extrapolation_procs",
            ],
            "mape": [1.0, 2.0, 5.0, 3.0, 1.0, 9.0],
        }
    )
    ranking = table_frames.ranking_table(summary)
    assert ranking["model"].tolist() == ["a", "b"]
    assert ranking["place"].tolist() == [1, 2]
    assert ranking["mean rank"].tolist() == ["1.33", "1.67"]
    assert ranking["loo_batch"].tolist() == ["2", "1"]


def test_band_is_the_interval_dlperf_predict_gives(data):
    from dlperf.models.answer import within_physics
    from dlperf.models.prediction import predict_rows
    from dlperf.report.curves import model_curve

    artifact = data["artifacts"]["pytorch"]
    rows = data["points"][data["points"]["network"] == "mlp"].reset_index(drop=True)
    curve = model_curve("generic", artifact, "mlp")
    assert curve.band_source.startswith("90% prediction interval")
    lo, hi = curve.band(rows)
    table = predict_rows(artifact, "mlp", "generic", rows)
    # Drawn within physics: no faster than perfect scaling of the best measured worker.
    table = within_physics(table, artifact["networks"]["mlp"]["measured"])
    assert np.array_equal(lo, table["epoch_time_lo_s"]) and np.array_equal(
        hi, table["epoch_time_hi_s"]
    )
    assert (lo <= curve.predict(rows)).all() and (curve.predict(rows) < hi).all()


def test_figures_are_byte_identical_when_rebuilt(data):
    points = data["points"][data["points"]["network"] == "mlp"].reset_index(drop=True)
    breakdown = data["artifacts"]["pytorch"]["networks"]["mlp"]["models"]["generic"]["breakdown"]
    first = [
        speedup_figure("pytorch", "mlp", points),
        breakdown_figure("pytorch", "mlp", breakdown),
    ]
    second = [
        speedup_figure("pytorch", "mlp", points),
        breakdown_figure("pytorch", "mlp", breakdown),
    ]
    for a, b in zip(first, second, strict=True):
        assert a.png == b.png and a.svg == b.svg
        assert b"Date" not in a.svg and b"Software" not in a.png
        assert a.png.startswith(b"\x89PNG")


def test_resources_and_noisy_runs_reach_the_page(report):
    page = report[0].read_text()
    assert '<table id="resources-table">' in page
    assert "peak host memory of a worker up to" in page
    warnings = page[page.index('id="warnings-pytorch-mlp"') :]
    warnings = warnings[: warnings.index("</div>")]
    assert "1 of " in warnings and "n1 p2 b8 d" in warnings and "r1" in warnings


def _summary_rows(**columns):
    base = {"framework": "f", "network": "n", "protocol": "kfold", "status": "ok"}
    return pd.DataFrame([{**base, **row} for row in columns["rows"]])


def test_the_model_to_believe_ranks_by_vs_best_then_mape():
    from dlperf.report.findings import model_to_believe

    rows = [
        {"model": "a", "mape": 2.0, "vs_best": "worse"},
        {"model": "b", "mape": 3.0, "vs_best": "not_shown_worse"},
        {"model": "c", "mape": 4.0, "vs_best": "best", "noise_ape": 1.5},
    ]
    belief = model_to_believe(_summary_rows(rows=rows))
    assert (belief.model, belief.vs_best, belief.noise_ape, belief.others) == ("c", "best", 1.5, 2)
    without = model_to_believe(_summary_rows(rows=rows).drop(columns=["vs_best", "noise_ape"]))
    assert (without.model, without.vs_best, without.noise_ape) == ("a", None, None)
    # protocols in order of preference: k-fold first
    other = _summary_rows(rows=[{"model": "z", "mape": 1.0, "protocol": "loo_batch"}] + rows)
    assert model_to_believe(other).protocol == "kfold"


def test_a_speed_up_below_one_reads_as_slower():
    from dlperf.report.summary import faster_or_slower

    assert faster_or_slower(2.672) == "2.67× faster"
    assert faster_or_slower(1.0) == "1.00× faster"
    assert faster_or_slower(0.7) == "1.43× slower"


def test_largest_scale_and_dominant_term():
    from dlperf.report.findings import dominant_term, largest_scale

    points = pd.DataFrame(
        {
            "procs": [1, 4, 1, 4, 4],
            "batch_size": [8, 8, 32, 32, 32],
            "data_size": [1024, 1024, 1024, 1024, 512],
            "epoch_time_s": [8.0, 4.0, 6.0, 2.0, 1.5],
        }
    )
    scales = largest_scale(points)
    assert [(s.batch_size, s.speedup, s.efficiency) for s in scales] == [
        (32, 3.0, 0.75),
        (8, 2.0, 0.5),
    ]
    generic = {
        "breakdown": [
            {
                "procs": 4,
                "batch_size": 32,
                "data_size": 1024,
                "seconds": {
                    "fixed": 5.0,
                    "overhead": 1.0,
                    "compute": 2.0,
                    "allreduce_bw": 4.1,
                    "allreduce_lat": 0.9,
                    "internode": 0.0,
                },
            }
        ]
    }
    found = dominant_term(generic, 4, 32, 1024)
    # the fixed part is paid once per epoch, not per iteration: 8 s of iteration terms
    assert found.term == "allreduce_bw" and found.share == pytest.approx(4.1 / 8)
    assert found.communication_share == pytest.approx(5.0 / 8)
    assert dominant_term(generic, 2, 32, 1024) is None


def test_the_fitted_expression_reads_as_words(data):
    from dlperf.report.findings import expression_in_words

    entry = data["artifacts"]["pytorch"]["networks"]["mlp"]["models"]["generic"]
    text = expression_in_words(entry)
    assert text.startswith("epoch time = ")
    assert "iterations × (" in text and "computation of one worker's batch" in text
    on = [t for t in entry["terms"] if t["state"] == "on" and t["value"] > 0]
    assert len(on) == text.count(" + ") + 1


def test_figure_files_are_unique_per_network():
    assert rendering.file_path("pytorch", "scaling_a/b") != rendering.file_path(
        "pytorch", "scaling_a-b"
    )
    assert rendering.file_path("pytorch", "scaling_mlp") == "pytorch/scaling_mlp"
    assert "/" not in rendering.file_path("pytorch", "x/y").split("/", 1)[1]


def test_importing_the_figures_leaves_matplotlib_alone():
    import subprocess
    import sys

    code = (
        "import matplotlib; before = dict(matplotlib.rcParams); import dlperf.report.page; "
        "after = dict(matplotlib.rcParams); "
        "print(sorted(k for k in before if before[k] != after[k]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_worker_axes_tick_whole_workers():
    from matplotlib.figure import Figure

    ax = Figure().subplots()
    ax.plot([1, 2, 3], [1, 2, 3])
    rendering.whole_workers(ax)
    ticks = [t for t in ax.get_xticks() if 1 <= t <= 3]
    assert ticks and all(float(t).is_integer() for t in ticks)


def test_summary_says_when_no_model_comes_near_the_noise():
    from dlperf.report.answer_summary import noise_check
    from dlperf.report.findings import Belief

    far = noise_check(Belief("castello", "kfold", 66.9, 50.0, 80.0, "best", 10.0, 6))
    assert far.startswith("No model comes within 3× the measurements' noise (10%)")
    assert "castello" in far and "66.9%" in far
    near = noise_check(Belief("generic", "kfold", 3.1, 2.0, 4.5, "best", 1.2, 6))
    assert near.startswith("Best validated: generic") and "noise of 1.2%" in near
    assert "no noise floor" in noise_check(Belief("usl", "kfold", 3.1, 2.0, 4.5, None, None, 1))


def test_extrapolated_plans_and_failed_runs_are_warned_about(data):
    from dlperf.models.prediction import extrapolation_warnings
    from dlperf.report import findings

    study = synthetic.study(data)
    answer = findings.planning_answer(study, "pytorch", "mlp", "generic")
    assert answer.choice is not None and answer.extrapolated == []
    # The plan's layout goes through the warnings `dlperf predict` prints.
    layout = pd.DataFrame([{"nodes": 4, "procs": 16, "batch_size": answer.batch_size}])
    beyond = extrapolation_warnings(study.artifacts["pytorch"], "mlp", layout)
    far = dataclasses.replace(answer, choice={**answer.choice, "procs": 16}, extrapolated=beyond)
    (warning,) = findings.plan_answer_warnings(far)
    assert "16 workers is beyond twice the largest measured worker count (4)" in warning
    assert "4 nodes predicted from single-node measurements" in warning
    failed = data["failures"].assign(framework="pytorch", network="mlp")
    study = dataclasses.replace(study, failures=pd.concat([failed, failed]))
    found = findings.network_warnings(study, "pytorch", "mlp", far)
    assert "2 run(s) did not finish (2 failed)" in found[-2] and found[-1] == warning


def test_the_page_counts_the_superseded_records(report):
    assert "superseded run records kept in results/history: <code>1</code>" in report[0].read_text()


def test_adaptive_rounds_show_what_each_round_measured_and_why(data, tmp_path):
    from dlperf.report import sections

    plain = synthetic.study(data)
    assert sections.adaptive(plain) == []  # no section for a full grid
    run = {"framework": "pytorch", "network": "mlp", "device": "cpu", "nodes": 1}
    rounds = (
        {
            "round": 0,
            "runs_before": 0,
            "widest_interval": None,
            "kfold_mape": None,
            "stop": None,
            "chosen": [
                {
                    **run,
                    "procs": 1,
                    "batch_size": 8,
                    "data_size": 1024,
                    "rep": 0,
                    "reason": "initial space-filling design",
                }
            ],
        },
        {
            "round": 1,
            "runs_before": 1,
            "widest_interval": 0.4,
            "kfold_mape": 12.5,
            "stop": "the budget is spent",
            "chosen": [],
        },
    )
    study = dataclasses.replace(plain, adaptive_rounds=rounds)
    (section,) = sections.adaptive(study)
    html = "".join(str(block) for block in section.blocks)
    assert section.title == "Adaptive rounds"
    assert "initial space-filling design" in html and "the budget is spent" in html
    assert 'id="adaptive-rounds"' in html and 'id="adaptive-chosen"' in html
    with synthetic.test_model_registered():
        page = build_report(study, tmp_path / "index.html")
    text = (tmp_path / "index.html").read_text()
    assert 'href="#adaptive"' in text and page


def test_a_term_the_data_do_not_identify_gets_no_share():
    from dlperf.report import findings
    from dlperf.report.summary import breakdown_line

    generic = {
        "terms": [{"name": "compute", "state": "on"}, {"name": "allreduce_bw", "state": "on"}],
        "identifiability": {
            "terms": {"compute": {"identified": True}, "allreduce_bw": {"identified": False}}
        },
        "breakdown": [
            {
                "procs": 4,
                "batch_size": 32,
                "data_size": 1024,
                "seconds": {"compute": 1.0, "allreduce_bw": 3.0},
            }
        ],
    }
    line = breakdown_line(findings.dominant_term(generic, 4, 32, 1024))
    assert "not identified" in line and "75%" not in line and "no share is given" in line
    generic["identifiability"]["terms"]["allreduce_bw"]["identified"] = True
    assert "75% of an iteration" in breakdown_line(findings.dominant_term(generic, 4, 32, 1024))
