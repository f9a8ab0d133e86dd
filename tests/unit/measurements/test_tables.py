import json
import math

import numpy as np
import pytest

from dlperf import stages
from dlperf.bench.spec import RunConfig
from dlperf.io import atomic_write_json
from dlperf.measurements import records, tables
from dlperf.measurements.points import to_points
from recordmaker import make_record


def write(tmp_path, name, record):
    path = tmp_path / name
    atomic_write_json(path, record)
    return path


def test_ok_and_failed_runs_are_split(tmp_path, record_factory):
    paths = [
        write(tmp_path, "a.json", record_factory(procs=1, batch=8)),
        write(tmp_path, "b.json", record_factory(procs=2, batch=8)),
        write(tmp_path, "c.json", record_factory(procs=2, batch=16, status="oom")),
    ]
    timings, failures = tables.build_tables(paths)
    assert list(timings["procs"]) == [1, 2]
    assert list(failures["status"]) == ["oom"]
    assert failures["record"].iloc[0].endswith("c.json")
    row = timings.iloc[1]
    assert row["global_batch"] == 16
    assert row["iters_per_epoch"] == math.ceil(64 / 16)
    times = np.array(record_factory(procs=2)["iter_times_s"])
    assert row["iter_time_median_s"] == pytest.approx(np.median(times))
    assert row["iter_time_iqr_s"] == pytest.approx(np.subtract(*np.percentile(times, [75, 25])))
    assert row["iter_time_n"] == len(times)
    assert list(timings.columns) == tables.TIMING_COLUMNS


def test_truncated_record_names_the_file(tmp_path, record_factory):
    path = tmp_path / "t.json"
    path.write_text(json.dumps(record_factory())[:50])
    with pytest.raises(records.RecordError, match="t.json.*truncated"):
        tables.build_tables([path])


def test_damaged_records_are_refused_together_with_their_count_paths_and_the_fix(
    tmp_path, record_factory
):
    paths = [write(tmp_path, "ok.json", record_factory())]
    for k in range(5):
        damaged = tmp_path / f"bad{k}.json"
        damaged.write_text(json.dumps(record_factory())[:50])
        paths.append(damaged)
    with pytest.raises(records.RecordError) as refused:
        tables.build_tables(paths)
    message = str(refused.value)
    assert message.startswith("5 run records cannot be used")
    assert all(f"bad{k}.json" in message for k in range(3)) and "and 2 more" in message
    assert "delete them and re-run the workflow" in message and "\n" not in message


def test_a_record_of_another_format_is_refused_with_the_fix(tmp_path):
    record = make_record() | {"schema_version": records.VERSION + 1}
    path = write(tmp_path, "x.json", record)
    with pytest.raises(records.RecordError, match="format 2, and this dlperf reads format 1.*"):
        records.read_record(path)
    assert records.read_record(write(tmp_path, "y.json", make_record())).status == "ok"


def test_record_without_config_is_refused(tmp_path):
    path = write(tmp_path, "x.json", {"status": "ok"})
    with pytest.raises(records.RecordError, match="lacks config"):
        records.read_record(path)


def test_an_epoch_time_that_its_iteration_times_do_not_add_up_to_is_refused(
    tmp_path, record_factory
):
    record = record_factory(procs=2, batch=8)
    record["epoch_time_s"] *= 3  # edited by hand
    with pytest.raises(records.RecordError, match="epoch_time_s=.* iteration times add up to"):
        records.read_record(write(tmp_path, "x.json", record))
    record = record_factory(procs=2, batch=8)
    record["iter_times_s"].pop()
    with pytest.raises(records.RecordError, match="iters_per_epoch=4 but it holds 3 times"):
        records.read_record(write(tmp_path, "y.json", record))


def test_a_record_whose_configuration_is_not_its_file_name_is_refused(tmp_path, record_factory):
    folder = tmp_path / "runs" / "pytorch" / "mlp"
    ok = write(
        folder.mkdir(parents=True) or folder, "n1_p2_b8_d64_r0.json", record_factory(procs=2)
    )
    assert records.read_record(ok).config["procs"] == 2
    copied = write(folder, "n1_p2_b8_d64_r1.json", record_factory(procs=2))  # a copy: rep 0
    with pytest.raises(records.RecordError, match=r"its configuration \(rep=0\) is not the one"):
        tables.build_tables([ok, copied])
    moved = write(tmp_path / "runs" / "mxnet" / "mlp", "n1_p2_b8_d64_r0.json", record_factory(2))
    with pytest.raises(records.RecordError, match="framework='pytorch'"):
        records.read_record(moved)


def test_points_take_the_median_over_repetitions(tmp_path, record_factory):
    paths = [
        write(tmp_path, f"r{rep}.json", record_factory(rep=rep, iter_s=s))
        for rep, s in enumerate([0.010, 0.020, 0.011])
    ]
    timings, _ = tables.build_tables(paths)
    points = to_points(timings)
    assert len(points) == 1
    assert points["n_reps"].iloc[0] == 3
    assert points["epoch_time_s"].iloc[0] == pytest.approx(np.median(timings["epoch_time_s"]))
    assert points["iters_per_epoch"].iloc[0] == 8


def test_aggregate_writes_csv_parquet_and_failures(tmp_path, record_factory):
    records = [
        write(tmp_path, "a.json", record_factory()),
        write(tmp_path, "b.json", record_factory(batch=16, status="timeout")),
    ]
    out = tmp_path / "out"
    ok, failed = stages.aggregate(records, out / "t.csv", out / "t.parquet", out / "f.csv")
    assert (ok, failed) == (1, 1)
    import pandas as pd

    assert pd.read_parquet(out / "t.parquet").shape[0] == 1
    assert tables.read_timings(out / "t.csv").shape[0] == 1
    assert pd.read_csv(out / "f.csv")["status"].tolist() == ["timeout"]


def test_read_timings_names_missing_columns(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("framework,procs\npytorch,1\n")
    with pytest.raises(ValueError, match="lacks the column"):
        tables.read_timings(path)


def test_iteration_stats_match_numpy():
    rng = np.random.default_rng(1)
    series = [rng.random(n).tolist() for n in (1, 2, 5, 64, 7)]
    stats = tables.iteration_stats(series)
    for i, times in enumerate(series):
        q25, median, q75 = np.percentile(times, [25, 50, 75])
        assert stats["q25"][i] == pytest.approx(q25)
        assert stats["median"][i] == pytest.approx(median)
        assert stats["q75"][i] == pytest.approx(q75)
        assert stats["mean"][i] == pytest.approx(np.mean(times))
        assert stats["n"][i] == len(times)
    assert tables.iteration_stats([])["median"].size == 0


def test_a_record_with_accumulation_is_named_by_its_suffix(tmp_path):
    """The name check reads the accumulation suffix (layout.RUN_RECORD_NAME): a record of 4
    micro-batches per step passes under ..._a4.json and is refused under a plain name."""
    config = RunConfig("pytorch", "mlp", "cpu", 1, 1, 8, 64, 0, grad_accum_steps=4)
    record = make_record(batch=8, data=64)
    record["config"] = config.to_dict()
    folder = tmp_path / "runs" / "pytorch" / "mlp"
    folder.mkdir(parents=True)
    named = write(folder, "n1_p1_b8_d64_r0_a4.json", record)
    assert records.read_record(named).config["grad_accum_steps"] == 4
    plain = write(folder, "n1_p1_b8_d64_r0.json", record)
    with pytest.raises(records.RecordError, match=r"grad_accum_steps=4"):
        records.read_record(plain)


def test_the_gpu_column_names_the_gpu_type_as_nvml_does(tmp_path, record_factory):
    gpu_run = record_factory(procs=1, batch=8)
    gpu_run["environment"]["gpu_names"] = ["NVIDIA A100-SXM4-80GB"] * 4
    paths = [
        write(tmp_path, "a.json", gpu_run),
        write(tmp_path, "b.json", record_factory(procs=2, batch=8)),
    ]
    timings, _ = tables.build_tables(paths)
    assert timings["gpu"].fillna("").tolist() == ["NVIDIA A100-SXM4-80GB", ""]
