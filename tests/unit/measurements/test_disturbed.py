"""Disturbed runs: left out of the models where an undisturbed repetition stands for them,
counted in the Summary, and measured again (only they) on request."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from dlperf import stages
from dlperf.cli import main
from dlperf.io import atomic_write_json
from dlperf.measurements import tables
from dlperf.measurements.points import to_points
from dlperf.report import disturbed
from recordmaker import make_record


def timings(foreign):
    """One configuration measured three times and another twice (epoch 29 s: disturbed)."""
    rows = [
        {"procs": 1, "rep": 0, "epoch_time_s": 0.70},
        {"procs": 1, "rep": 1, "epoch_time_s": 0.68},
        {"procs": 1, "rep": 2, "epoch_time_s": 29.0},
        {"procs": 2, "rep": 0, "epoch_time_s": 0.50},
        {"procs": 2, "rep": 1, "epoch_time_s": 0.52},
    ]
    frame = pd.DataFrame(rows).assign(
        framework="mxnet", network="lenet", device="cpu", nodes=1, batch_size=16, data_size=1024
    )
    return frame.assign(samples_per_s=1.0, foreign_cpu_fraction=foreign)


def test_disturbed_runs_are_left_out_of_the_points_where_a_clean_repetition_exists():
    frame = timings([0.01, 0.02, 0.45, 0.30, 0.40])
    assert tables.left_out(frame).tolist() == [False, False, True, False, False]
    points = to_points(frame)
    assert points["epoch_time_s"].tolist() == pytest.approx([0.69, 0.51])
    assert points["n_reps"].tolist() == [2, 2]  # p2: only disturbed runs, kept
    (warning,) = disturbed.run_warnings(frame)
    assert warning.startswith("3 of 5 runs were disturbed")
    assert "1 of them were left out of the models" in warning
    assert "2 were kept, being all the measurements of their configurations" in warning
    assert "snakemake --directory STUDY remeasure_disturbed" in warning
    assert "make run STUDY=STUDY" in warning
    assert disturbed.run_warnings(timings(0.01)) == []


def test_the_points_count_the_disturbed_runs_and_what_a_node_holds():
    """The fit records the share of disturbed runs and the node's capacity (its cores), so that
    `dlperf predict` can warn from the artifact alone."""
    from dlperf.models.artifact import measured_levels, node_capacity

    frame = timings([0.01, 0.02, 0.45, 0.30, 0.40]).assign(cores_per_node=2)
    points = to_points(frame)
    assert points["runs_measured"].tolist() == [3, 2]
    assert points["runs_disturbed"].tolist() == [1, 2]
    measured = measured_levels(points)
    assert measured["disturbed_share"] == pytest.approx(3 / 5)
    assert measured["node_capacity"] == 2
    gpus = frame.assign(device="cuda", gpu_names="A100;A100;A100;A100")
    assert measured_levels(to_points(gpus))["node_capacity"] == 4
    # Without the cores or GPUs (a brought-in table): none recorded; the Summary's target then
    # takes the most workers per node measured.
    assert measured_levels(to_points(timings(0.0)))["node_capacity"] is None
    assert node_capacity(to_points(timings(0.0))) == 2
    assert measured_levels(to_points(timings(0.0)))["disturbed_share"] == 0.0
    unmeasured = timings(0.0).drop(columns="foreign_cpu_fraction")
    assert measured_levels(to_points(unmeasured))["disturbed_share"] is None


def _study(root):
    """A study in ``root``/results: three runs of one configuration, the second disturbed."""
    results = root / "results"
    records = []
    for rep in range(3):
        record = make_record(procs=1, batch=8, data=64, rep=rep)
        record["noise"] = {"foreign_cpu_fraction": 0.4 if rep == 1 else 0.0}
        path = results / "runs" / "pytorch" / "mlp" / f"n1_p1_b8_d64_r{rep}.json"
        atomic_write_json(path, record)
        records.append(path)
    stages.aggregate(records, results / "timings.csv", None, results / "failures.csv")
    return results, records


def test_forget_disturbed_keeps_their_records_in_the_history_and_removes_them(
    tmp_path, capsys, monkeypatch
):
    results, records = _study(tmp_path)
    monkeypatch.chdir(tmp_path)
    listing = tmp_path / "disturbed.json"
    argv = ["forget-disturbed", "--timings", str(results / "timings.csv")]
    assert main([*argv, "--results", str(results), "--out", str(listing)]) == 0
    out = capsys.readouterr().out
    assert "1 disturbed run(s) kept in" in out
    assert "; `make run` (or `snakemake`) measures exactly them again" in out
    assert [p.exists() for p in records] == [True, False, True]
    assert json.loads(listing.read_text())["records"] == [str(records[1])]
    (kept,) = (results / "history" / "runs" / "pytorch" / "mlp").glob("n1_p1_b8_d64_r1.*.json")
    assert json.loads(kept.read_text())["noise"]["foreign_cpu_fraction"] == 0.4


def test_forget_disturbed_acts_on_the_study_of_the_timings_given(tmp_path, monkeypatch, capsys):
    """From another study's folder, --timings of s1 removes s1's record, not the folder's."""
    s1, s1_records = _study(tmp_path / "s1")
    here, here_records = _study(tmp_path / "wd")
    monkeypatch.chdir(here.parent)
    assert main(["forget-disturbed", "--timings", str(s1 / "timings.csv")]) == 0
    out = capsys.readouterr().out
    assert "1 disturbed run(s) kept in" in out
    # It names the study to run again, as fit's and the report's hints do.
    study = s1.parent
    assert f"`make run STUDY={study}` (or `snakemake --directory {study}`) measures" in out
    assert [p.exists() for p in s1_records] == [True, False, True]
    assert all(p.exists() for p in here_records)
    # Again: nothing left to remove, and it says so.
    assert main(["forget-disturbed", "--timings", str(s1 / "timings.csv")]) == 0
    assert "0 disturbed run(s) kept in" in capsys.readouterr().out
    # --results of another study than the table's: refused, nothing touched.
    argv = ["forget-disturbed", "--timings", str(s1 / "timings.csv"), "--results", str(here)]
    assert main(argv) == 2
    assert "is the table of the study in" in capsys.readouterr().err
    assert all(p.exists() for p in here_records)


def test_forget_disturbed_of_a_study_named_by_its_results_alone(tmp_path, monkeypatch, capsys):
    """The report's hint, `dlperf forget-disturbed --results STUDY/results`, failed from any
    other folder: --timings defaulted to ./results/timings.csv."""
    s1, s1_records = _study(tmp_path / "s1")
    monkeypatch.chdir(tmp_path)
    assert main(["forget-disturbed", "--results", str(s1)]) == 0
    assert "1 disturbed run(s) kept in" in capsys.readouterr().out
    assert [p.exists() for p in s1_records] == [True, False, True]


def test_forget_disturbed_of_a_table_without_its_records_is_refused(tmp_path, capsys):
    """A copy of the table away from its study: no record found, refused instead of "removed"."""
    s1, _ = _study(tmp_path / "s1")
    copy = tmp_path / "elsewhere" / "timings.csv"
    copy.parent.mkdir()
    copy.write_text((s1 / "timings.csv").read_text())
    assert main(["forget-disturbed", "--timings", str(copy)]) == 2
    err = capsys.readouterr().err
    assert "none of the 1 disturbed run(s)" in err and "belongs to another study" in err


def test_forget_disturbed_finds_the_records_of_runs_with_accumulation(tmp_path):
    """A disturbed run of 2 micro-batches per step is found under its ..._a2.json name."""
    results = tmp_path / "results"
    records = []
    for rep in range(2):
        record = make_record(procs=1, batch=8, data=64, rep=rep)
        record["config"]["grad_accum_steps"] = 2
        record["noise"] = {"foreign_cpu_fraction": 0.4 if rep == 1 else 0.0}
        path = results / "runs" / "pytorch" / "mlp" / f"n1_p1_b8_d64_r{rep}_a2.json"
        atomic_write_json(path, record)
        records.append(path)
    stages.aggregate(records, results / "timings.csv", None, results / "failures.csv")
    argv = ["forget-disturbed", "--timings", str(results / "timings.csv")]
    assert main([*argv, "--results", str(results)]) == 0
    assert records[0].exists() and not records[1].exists()
