"""benchmarks/ablation.py: its term sets, its table, and the published tables it reads."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchmarkscripts import load_benchmark

ROOT = Path(__file__).resolve().parents[3]
SHARED = ROOT / ".." / "shared" / "data"


ablation = load_benchmark("ablation")
published = load_benchmark("published")


def test_every_new_term_is_switched_on_and_off_and_both_searches_run():
    rows = ablation.variants()
    everything = set(rows["all"]["terms"])
    for term in ablation.NEW_TERMS:
        assert set(rows[f"base + {term}"]["terms"]) == set(ablation.BASE) | {term}
        assert set(rows[f"all - {term}"]["terms"]) == everything - {term}
    assert rows["base, full DE"]["search"] == "full_de"
    assert "search" not in rows["base"]


def test_table_marks_the_best_of_each_column_and_is_written_between_the_markers(tmp_path):
    results = {
        ("base", "A: kfold (2 series)"): 5.0,
        ("all", "A: kfold (2 series)"): 4.0,
        ("base", "B: loo_batch (1 series)"): 1.0,
        ("all", "B: loo_batch (1 series)"): 2.0,
        ("baseline loglin", "A: kfold (2 series)"): 6.0,
    }
    markdown = ablation.table(results)
    lines = markdown.splitlines()
    assert lines[0] == "| term set | A: kfold (2 series) | B: loo_batch (1 series) |"
    assert "| base | 5.00 | **1.00** |" in lines
    assert "| all | **4.00** | 2.00 |" in lines
    assert "| baseline loglin | 6.00 |  |" in lines
    doc = tmp_path / "model.md"
    doc.write_text(f"before\n{ablation.START}\nstale table\n{ablation.END}\nafter\n")
    ablation.write_into(doc, "python benchmarks/ablation.py --shared x", markdown)
    text = doc.read_text()
    assert text.startswith("before\n") and text.endswith("after\n") and "stale table" not in text
    assert "`python benchmarks/ablation.py --shared x`" in text and markdown in text
    doc.write_text("no markers")
    with pytest.raises(SystemExit, match="markers"):
        ablation.write_into(doc, "cmd", markdown)


@pytest.mark.skipif(not SHARED.exists(), reason="../shared/data is not present")
def test_published_tables_become_scaling_series():
    lam = published.lambda_series(SHARED)
    assert lam["network"].nunique() >= 100
    assert set(lam["procs"]) == {1, 2, 4, 8}
    assert (lam.groupby("network")["procs"].nunique() == 4).all()
    grid = published.nvidia_grid_series(SHARED)
    assert (grid.groupby("network").size() >= 4).all()
    assert set(grid["framework"]) <= {"pytorch", "tensorflow", "mxnet"}
    sweep = published.mxnet_batch_series(SHARED)
    assert (sweep["procs"] == 1).all() and sweep["batch_size"].nunique() > 5
    ssd = published.ssd300_series(SHARED)
    assert np.isfinite(ssd["epoch_time_s"]).all() and isinstance(ssd, pd.DataFrame)


@pytest.mark.slow  # about 30 s: seven models on ~140 scaling series
@pytest.mark.skipif(not SHARED.exists(), reason="../shared/data is not present")
def test_generic_model_beats_loglin_and_every_baseline_extrapolating_workers_on_lambda():
    points = published.lambda_series(SHARED)
    models = {name: {} for name in ("generic", "loglin", "ernest", "castello", "usl")}
    mape = ablation.pooled_mape(points, models, {"extrapolation_procs": {"train_max_procs": 4}})
    errors = mape["extrapolation_procs"]
    assert errors.idxmin() == "generic", errors.to_dict()
    assert errors["generic"] < errors["loglin"] - 0.5, errors.to_dict()
    assert errors["generic"] < 4.0, errors.to_dict()
