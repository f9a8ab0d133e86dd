"""The report from a synthetic dataset taken through the real fit, validate and report code."""

import importlib.util
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dlperf.report import figures
from dlperf.report import tables as report_tables

SYNTHETIC = Path(__file__).resolve().parents[1] / "report" / "synthetic.py"


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
    out = tmp_path_factory.mktemp("report") / "index.html"
    written = synthetic.write_report(data, out)
    return out, written


def test_every_section_is_there(report):
    out, written = report
    page = out.read_text()
    for ident in (
        "accuracy",
        "validation-table",
        "ranking",
        "ranking-table",
        "fw-pytorch",
        "pytorch-mlp",
        "pytorch-lenet",
        "failed-runs",
        "failures",
        "frameworks-without-runs",
        "configuration",
        "environment-table",
        "config-table",
    ):
        assert f'id="{ident}"' in page, ident
    for network in ("mlp", "lenet"):
        for kind in ("scaling", "throughput", "speedup", "accuracy", "residuals", "breakdown"):
            assert f'id="fig-pytorch-{kind}_{network}"' in page, (kind, network)
            for ext in ("png", "svg"):
                assert (out.parent / "figures" / "pytorch" / f"{kind}_{network}.{ext}").is_file()
    assert len(written) == 2 * 2 * 6
    assert page.count('src="data:image/png;base64,') == 12
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
    ranking = report_tables.ranking_table(summary)
    assert ranking["model"].tolist() == ["a", "b"]
    assert ranking["place"].tolist() == [1, 2]
    assert ranking["mean rank"].tolist() == ["1.33", "1.67"]
    assert ranking["loo_batch"].tolist() == ["2", "1"]


def test_band_is_the_interval_dlperf_predict_gives(data):
    from dlperf.models.prediction import predict_rows
    from dlperf.report.curves import model_curve

    artifact = data["artifacts"]["pytorch"]
    rows = data["points"][data["points"]["network"] == "mlp"].reset_index(drop=True)
    curve = model_curve("generic", artifact, "mlp")
    assert curve.band_source.startswith("90% prediction interval")
    lo, hi = curve.band(rows)
    table = predict_rows(artifact, "mlp", "generic", rows)
    assert np.array_equal(lo, table["epoch_time_lo_s"]) and np.array_equal(
        hi, table["epoch_time_hi_s"]
    )
    assert (lo < curve.predict(rows)).all() and (curve.predict(rows) < hi).all()


def test_figures_are_byte_identical_when_rebuilt(data):
    points = data["points"][data["points"]["network"] == "mlp"].reset_index(drop=True)
    breakdown = data["artifacts"]["pytorch"]["networks"]["mlp"]["models"]["generic"]["breakdown"]
    first = [
        figures.speedup_figure("pytorch", "mlp", points),
        figures.breakdown_figure("pytorch", "mlp", breakdown),
    ]
    second = [
        figures.speedup_figure("pytorch", "mlp", points),
        figures.breakdown_figure("pytorch", "mlp", breakdown),
    ]
    for a, b in zip(first, second, strict=True):
        assert a.png == b.png and a.svg == b.svg
        assert b"Date" not in a.svg and b"Software" not in a.png
        assert a.png.startswith(b"\x89PNG")
