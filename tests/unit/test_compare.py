"""`dlperf compare` on studies built from run records as `dlperf bench` writes them."""

from __future__ import annotations

import itertools
import shutil
import tarfile

import numpy as np
import pytest

from dlperf import compare, stages
from dlperf.cli import main
from dlperf.io import atomic_write_json
from dlperf.models.artifact import fit_framework
from dlperf.study_files import load_study
from dlperf.tables import to_points
from recordmaker import make_record

CONFIGS = list(itertools.product((1, 2, 4), (8, 16)))  # (procs, batch)
SLOW = (2, 16)


def _records(seed: int, slow_config=None, factor=1.0):
    """Three repetitions of six configurations; iteration times with a few % of noise."""
    rng = np.random.default_rng(seed)
    records = []
    for (procs, batch), rep in itertools.product(CONFIGS, range(3)):
        record = make_record(procs=procs, batch=batch, data=512, rep=rep)
        base = 0.002 + 1e-4 * batch + 0.001 * (procs - 1) / procs
        times = base * rng.lognormal(0.0, 0.03, size=len(record["iter_times_s"]))
        if (procs, batch) == slow_config:
            times = times * factor
        record["iter_times_s"] = times.tolist()
        record["epoch_time_s"] = float(times.sum())
        records.append(record)
    return records


def _write_study(root, records):
    for record in records:
        c = record["config"]
        name = f"n{c['nodes']}_p{c['procs']}_b{c['batch_size']}_d{c['data_size']}_r{c['rep']}"
        atomic_write_json(root / "runs" / c["framework"] / c["network"] / f"{name}.json", record)
    return root


@pytest.fixture(scope="module")
def studies(tmp_path_factory):
    root = tmp_path_factory.mktemp("compare")
    a = _write_study(root / "a", _records(seed=1))
    b = _write_study(root / "b", _records(seed=1, slow_config=SLOW, factor=1.15))
    return a, b


def test_a_study_compared_with_itself_reports_nothing(studies, capsys):
    a, _ = studies
    assert main(["compare", str(a), str(a)]) == 0
    out = capsys.readouterr().out
    assert "no regression beyond 5%" in out
    result = compare.compare(load_study(a), load_study(a), compare.Settings())
    assert result.reports_nothing
    assert len(result.rows) == len(CONFIGS)
    assert (result.rows["ratio"] == 1.0).all() and (result.rows["p_adjusted"] == 1.0).all()


def test_one_configuration_15_percent_slower_is_named_and_exits_1(studies, capsys, tmp_path):
    a, b = studies
    assert main(["compare", str(a), str(b)]) == 1
    out = capsys.readouterr().out
    assert "REGRESSION: 1 configuration(s)" in out
    assert "pytorch/mlp cpu n1 p2 b16 d512" in out
    result = compare.compare(load_study(a), load_study(b), compare.Settings())
    slow = result.slower
    assert slow["configuration"].tolist() == ["pytorch/mlp cpu n1 p2 b16 d512"]
    assert slow["ratio"].iloc[0] == pytest.approx(1.15, rel=1e-9)
    assert slow["ratio_lo"].iloc[0] < 1.15 < slow["ratio_hi"].iloc[0]
    assert result.faster.empty and len(result.regressions) == 1
    # the same slowdown is no regression when the threshold is above it
    assert main(["compare", str(a), str(b), "--threshold", "0.2"]) == 0
    # and the reverse comparison finds it faster, which fails nothing
    reverse = compare.compare(load_study(b), load_study(a), compare.Settings())
    assert reverse.faster["configuration"].tolist() == ["pytorch/mlp cpu n1 p2 b16 d512"]
    assert reverse.regressions.empty
    html = tmp_path / "c.html"
    assert main(["compare", str(a), str(b), "--format", "html", "--out", str(html)]) == 1
    assert "<td>pytorch/mlp cpu n1 p2 b16 d512</td>" in html.read_text()


def test_archives_compare_like_directories(studies, tmp_path):
    a, b = studies
    # The study's records as `dlperf archive` lays them out (under results/); compare reads
    # nothing else of an archive, so the rest of a finished study is left out here.
    archived = tmp_path / "b.tar.gz"
    with tarfile.open(archived, "w:gz") as tar:
        tar.add(b, arcname="results")
    from_dir = compare.compare(load_study(a), load_study(b), compare.Settings())
    from_archive = compare.compare(load_study(a), load_study(archived), compare.Settings())
    assert from_archive.rows.drop(columns=[]).equals(from_dir.rows)


def test_runs_outside_the_baseline_models_interval_are_flagged(studies, tmp_path):
    a, _ = studies
    timings_csv = tmp_path / "timings.csv"
    stages.aggregate(sorted(a.glob("runs/**/*.json")), timings_csv, None, tmp_path / "f.csv")
    from dlperf.tables import read_timings

    points = to_points(read_timings(timings_csv))
    settings = {"lambdas": [0.0], "popsize": 6, "maxiter": 30}
    artifact = fit_framework(points, "pytorch", {"generic": settings}, seed=0)
    baseline = load_study(a)
    baseline.artifacts["pytorch"] = artifact
    itself = compare.check_against_model(baseline, load_study(a), compare.Settings())
    assert itself[0].empty and itself[1] == []
    # A new configuration the baseline never ran, three times slower than the model says.
    far = tmp_path / "far"
    shutil.copytree(a, far)
    record = make_record(procs=8, batch=8, data=512)
    record["iter_times_s"] = [0.05] * len(record["iter_times_s"])
    record["epoch_time_s"] = 0.05 * len(record["iter_times_s"])
    _write_study(far, [record])
    flags, notes = compare.check_against_model(baseline, load_study(far), compare.Settings())
    assert flags["configuration"].tolist() == ["pytorch/mlp cpu n1 p8 b8 d512"]
    assert not flags["baseline_inside"].iloc[0] and notes == []
    without_model = compare.check_against_model(load_study(a), load_study(far), compare.Settings())
    assert "no model artifact" in without_model[1][0]


def test_unreadable_inputs_are_named(tmp_path, capsys):
    assert main(["compare", str(tmp_path), str(tmp_path)]) == 2
    assert "holds no run records" in capsys.readouterr().err
    bad = tmp_path / "x.tar.gz"
    bad.write_bytes(b"not a tar")
    assert main(["compare", str(bad), str(bad)]) == 2
    assert "not a readable dlperf archive" in capsys.readouterr().err


def test_a_change_within_the_run_to_run_spread_is_not_flagged(tmp_path):
    base = _records(seed=2)
    for record in base:  # repetition 2 of every configuration ran 20% slower
        if record["config"]["rep"] == 2:
            record["iter_times_s"] = [t * 1.2 for t in record["iter_times_s"]]
            record["epoch_time_s"] *= 1.2
            record["noise"] = {"foreign_cpu_fraction": 0.4}
    cand = _records(seed=3, slow_config=SLOW, factor=1.1)
    a = _write_study(tmp_path / "a", base)
    b = _write_study(tmp_path / "b", cand)
    result = compare.compare(load_study(a), load_study(b), compare.Settings())
    row = result.rows[result.rows["configuration"] == "pytorch/mlp cpu n1 p2 b16 d512"].iloc[0]
    assert row["p_adjusted"] < 0.05 and row["ratio_lo"] > 1.0  # the test alone would flag it
    assert row["run_spread"] == pytest.approx(0.2, abs=0.03)
    assert row["verdict"] == "same" and result.regressions.empty
    assert (result.rows["disturbed_runs"] == 1).all()
    assert main(["compare", str(a), str(b)]) == 0
