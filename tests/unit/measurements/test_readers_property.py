"""Property-based tests of the readers: any input either reads cleanly or fails with our error
naming the file -- never a crash from deep inside pandas or NumPy."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dlperf import config as cfg
from dlperf.measurements import external, records, tables

SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 10**6)
    | st.floats(allow_nan=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=6)
    ),
    max_leaves=20,
)


def mutated_record(record: dict, draw_key, draw_value) -> dict:
    record = json.loads(json.dumps(record))
    target = record if draw_key[0] == "top" else record["config"]
    if draw_key[2]:
        target.pop(draw_key[1], None)
    else:
        target[draw_key[1]] = draw_value
    return record


@SETTINGS
@given(value=json_values)
def test_arbitrary_json_is_a_record_error_or_a_row(tmp_path_factory, value):
    path = tmp_path_factory.mktemp("r") / "run.json"
    path.write_text(json.dumps(value))
    try:
        timings, failures = tables.build_tables([path])
    except records.RecordError as exc:
        assert str(path) in str(exc)
    else:
        assert len(timings) + len(failures) == 1


@SETTINGS
@given(
    key=st.tuples(
        st.sampled_from(["top", "config"]),
        st.sampled_from(
            [
                "status",
                "iter_times_s",
                "epoch_time_s",
                "warmup_iters",
                "procs",
                "batch_size",
                "config",
                "environment",
                "iters_per_epoch",
                "samples_per_s",
            ]
        ),
        st.booleans(),
    ),
    value=json_values,
)
def test_damaged_records_are_refused_by_name(tmp_path_factory, record_factory, key, value):
    path = tmp_path_factory.mktemp("r") / "run.json"
    path.write_text(json.dumps(mutated_record(record_factory(), key, value)))
    try:
        timings, _ = tables.build_tables([path])
    except records.RecordError as exc:
        assert str(path) in str(exc) and "Delete it" in str(exc)
    else:
        assert (timings["epoch_time_s"] > 0).all()


@SETTINGS
@given(
    text=st.text(
        alphabet=st.sampled_from(list("0123456789.,-eE\n xabfrmwokptch_nsizd")), max_size=300
    )
)
def test_arbitrary_csv_is_an_external_error_or_points(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("c") / "t.csv"
    path.write_text("framework,procs,batch_size,epoch_time_s,data_size\n" + text)
    try:
        points = external.read_external(path)
    except external.ExternalTimingsError as exc:
        assert str(path) in str(exc)
    else:
        assert (points["epoch_time_s"] > 0).all()
        assert not points.duplicated(
            ["framework", "network", "nodes", "procs", "batch_size", "data_size"]
        ).any()


@SETTINGS
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from(["pytorch", "mxnet", "", "bad name"]),
            st.integers(-2, 8),
            st.integers(-1, 64),
            st.floats(-1, 10) | st.just(float("nan")),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_external_rows_are_checked_one_by_one(tmp_path_factory, rows):
    path = tmp_path_factory.mktemp("c") / "t.csv"
    pd.DataFrame(rows, columns=["framework", "procs", "batch_size", "iter_time_s"]).to_csv(
        path, index=False
    )
    try:
        points = external.read_external(path)
    except external.ExternalTimingsError as exc:
        assert "row" in str(exc) or "column" in str(exc) or "repeat" in str(exc)
    else:
        assert (points["procs"] > 0).all() and (points["epoch_time_s"] > 0).all()


hostile_cells = (
    st.sampled_from(
        ["inf", "-inf", "Infinity", "1e308", "1e30", "nan", "1.5", "1e-300", "0", "-1", "", "x"]
    )
    | st.floats().map(repr)
    | st.integers(-10, 10**20).map(str)
)


@SETTINGS
@given(
    time_column=st.sampled_from(["epoch_time_s", "iter_time_s", "samples_per_s"]),
    rows=st.lists(
        st.tuples(
            st.sampled_from(["pytorch", "mxnet"]),
            hostile_cells | st.integers(1, 8).map(str),  # procs
            hostile_cells | st.integers(1, 64).map(str),  # batch_size
            hostile_cells | st.integers(1, 4096).map(str),  # data_size
            hostile_cells | st.floats(0.001, 10).map(repr),  # the time column
        ),
        min_size=1,
        max_size=6,
    ),
)
def test_infinite_and_absurd_values_are_named_by_column_and_row(
    tmp_path_factory, time_column, rows
):
    """Whatever the numbers, the reader names a column and a row, or returns finite points;
    nothing it lets through makes NumPy warn."""
    path = tmp_path_factory.mktemp("c") / "t.csv"
    lines = [f"framework,procs,batch_size,data_size,{time_column}"] + [",".join(r) for r in rows]
    path.write_text("\n".join(lines) + "\n")
    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        try:
            points = external.read_external(path)
        except external.ExternalTimingsError as exc:
            message = str(exc)
            assert str(path) in message
            assert ("column '" in message and "row(s)" in message) or "repeat" in message
            return
    numbers = points[["procs", "batch_size", "data_size", "epoch_time_s", "samples_per_s"]]
    assert np.isfinite(numbers.to_numpy(float)).all() and (numbers.to_numpy(float) > 0).all()


@SETTINGS
@given(extra=st.dictionaries(st.text(min_size=1, max_size=10), json_values, max_size=3))
def test_config_errors_are_config_errors(extra):
    data = {"batch_sizes": [8], "data_sizes": [64], **extra}
    try:
        loaded = cfg.validated(data)
    except cfg.ConfigError as exc:
        assert "invalid configuration" in str(exc)
    else:
        assert cfg.run_configs(loaded)
