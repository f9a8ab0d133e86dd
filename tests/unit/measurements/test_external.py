"""Bring-your-own timings: parsing, derived epoch times, and errors that name column and row."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dlperf.errors import InputFileError
from dlperf.measurements.external import (
    DEFAULT_ITERATIONS,
    ExternalTimingsError,
    read_external,
)
from dlperf.measurements.tables import POINT_KEYS
from dlperf.measurements.timings_files import load_points


def write(tmp_path, text: str, name: str = "ext.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_minimal_file_gets_defaults_and_the_points_shape(tmp_path):
    path = write(
        tmp_path, "framework,procs,batch_size,samples_per_s\npytorch,1,32,1000\npytorch,2,32,1800\n"
    )
    points = read_external(path)
    assert set(POINT_KEYS + ["epoch_time_s", "iters_per_epoch", "n_reps"]) <= set(points.columns)
    assert (points["nodes"] == 1).all() and (points["network"] == "external").all()
    # Without data_size an epoch is DEFAULT_ITERATIONS iterations of the global batch.
    assert (points["iters_per_epoch"] == DEFAULT_ITERATIONS).all()
    row = points[points["procs"] == 2].iloc[0]
    assert row["data_size"] == DEFAULT_ITERATIONS * 64
    assert row["epoch_time_s"] == pytest.approx(DEFAULT_ITERATIONS * 64 / 1800)


def test_iteration_time_and_epoch_time_are_consistent(tmp_path):
    path = write(
        tmp_path,
        "framework,network,nodes,procs,batch_size,data_size,iter_time_s\n"
        "mxnet,resnet,1,2,16,100,0.5\n",
    )
    row = read_external(path).iloc[0]
    assert row["iters_per_epoch"] == 4  # ceil(100 / 32)
    assert row["epoch_time_s"] == pytest.approx(2.0)


def test_repetitions_are_medianed_like_our_own_table(tmp_path):
    path = write(
        tmp_path,
        "framework,procs,batch_size,data_size,epoch_time_s,rep\n"
        "tf,1,8,64,1.0,0\ntf,1,8,64,3.0,1\ntf,1,8,64,2.0,2\n",
    )
    points = read_external(path)
    assert len(points) == 1 and points["epoch_time_s"].iloc[0] == 2.0
    assert points["n_reps"].iloc[0] == 3


@pytest.mark.parametrize(
    "text, words",
    [
        ("procs,batch_size,samples_per_s\n1,2,3\n", ["framework"]),
        ("framework,procs,batch_size\npytorch,1,2\n", ["epoch_time_s", "iter_time_s"]),
        (
            "framework,procs,batch_size,samples_per_s\npytorch,1,2,3\npytorch,x,2,3\n",
            ["'procs'", "row(s) 2"],
        ),
        (
            "framework,procs,batch_size,samples_per_s\npytorch,1,2,\n",
            ["'samples_per_s'", "row(s) 1"],
        ),
        (
            "framework,procs,batch_size,iter_time_s\npytorch,1,2,0.1\npytorch,2,2,-1\n",
            ["'iter_time_s'", "positive", "row(s) 2"],
        ),
        (
            "framework,procs,batch_size,iter_time_s\npytorch,1,2,0.1\npytorch,1,2,0.2\n",
            ["row(s) 1, 2", "same configuration", "rep"],
        ),
        ("framework,procs,batch_size,epoch_time_s\npytorch,1,2,3\n", ["data_size"]),
        ("framework,procs,batch_size,iter_time_s\npytorch,1.5,2,3\n", ["whole numbers"]),
        ("framework,nodes,procs,batch_size,iter_time_s\npytorch,2,3,2,3\n", ["multiple of nodes"]),
        ("framework,procs,batch_size,iter_time_s\n,1,2,3\n", ["'framework'", "row(s) 1"]),
        # Infinite and absurd values, before anything reaches NumPy or SciPy.
        (
            "framework,procs,batch_size,iter_time_s\npytorch,1,2,0.1\npytorch,2,2,inf\n",
            ["'iter_time_s'", "infinite", "row(s) 2"],
        ),
        (
            "framework,procs,batch_size,iter_time_s\npytorch,1,2,-inf\n",
            ["'iter_time_s'", "infinite", "row(s) 1"],
        ),
        (
            "framework,procs,batch_size,data_size,epoch_time_s\npytorch,1,2,64,1e308\n",
            ["'epoch_time_s'", "between", "row(s) 1"],
        ),
        (
            "framework,procs,batch_size,iter_time_s\npytorch,1,2,0.1\npytorch,1e30,2,0.1\n",
            ["'procs'", "between 1 and", "row(s) 2"],
        ),
        (
            "framework,procs,batch_size,samples_per_s\npytorch,1,2,1e-300\n",
            ["'samples_per_s'", "between", "row(s) 1"],
        ),
        (
            "framework,procs,batch_size,data_size,iter_time_s\npytorch,1,2,1e13,0.1\n",
            ["'data_size'", "between", "row(s) 1"],
        ),
        (
            "framework,procs,batch_size,iter_time_s,param_count\npytorch,1,2,0.1,1e300\n",
            ["'param_count'", "row(s) 1"],
        ),
        ("framework,procs,batch_size,iter_time_s,rep\npytorch,1,2,0.1,-1\n", ["'rep'", "row(s) 1"]),
        ("framework,procs,batch_size,iter_time_s\npytorch,2.5,2,0.1\n", ["'procs'", "whole"]),
        # The separator: a ';'-separated file, with and without decimal commas.
        (
            "framework;procs;batch_size;iter_time_s\npytorch;1;2;0.1\n",
            ["separated by semicolons", "sep=';'"],
        ),
        (
            "framework;procs;batch_size;iter_time_s\npytorch;1;2;0,1\n",
            ["separated by semicolons", "decimal=','"],
        ),
        ("framework\tprocs\tbatch_size\tsamples_per_s\npytorch\t1\t2\t3\n", ["tabs"]),
    ],
)
def test_errors_name_the_column_and_the_row(tmp_path, text, words):
    with pytest.raises(ExternalTimingsError) as info:
        read_external(write(tmp_path, text))
    for word in words:
        assert word in str(info.value)
    assert "docs/external-timings.md" in str(info.value)


def test_load_points_tells_our_table_from_an_external_one(tmp_path):
    own = pd.DataFrame(
        {
            "framework": ["pytorch"] * 2,
            "network": ["lenet"] * 2,
            "device": ["cpu"] * 2,
            "nodes": [1, 1],
            "procs": [1, 1],
            "batch_size": [8, 8],
            "data_size": [64, 64],
            "rep": [0, 1],
            "iter_time_median_s": [0.1, 0.1],
            "epoch_time_s": [1.0, 1.2],
            "samples_per_s": [64.0, 53.0],
            "param_count": [1000, 1000],
        }
    )
    own.to_csv(tmp_path / "timings.csv", index=False)
    points = load_points(tmp_path / "timings.csv")
    assert len(points) == 1 and points["epoch_time_s"].iloc[0] == pytest.approx(1.1)
    assert points["param_count"].iloc[0] == 1000  # network features ride along
    external = write(tmp_path, "framework,procs,batch_size,iter_time_s\npytorch,1,8,0.1\n")
    assert load_points(external)["network"].iloc[0] == "external"
    with pytest.raises(InputFileError, match="does not exist"):
        load_points(tmp_path / "missing.csv")


def test_the_shipped_example_is_valid():
    from pathlib import Path

    example = Path(__file__).resolve().parents[3] / "examples" / "timings-example.csv"
    points = read_external(example)
    assert len(points) >= 6 and np.all(points["epoch_time_s"] > 0)
    assert points["procs"].nunique() >= 2 and points["batch_size"].nunique() >= 2


def test_an_unreadable_file_gets_the_separator_hint(tmp_path):
    # Decimal commas give rows of different lengths: pandas cannot even read it.
    text = "framework;procs;batch_size;iter_time_s\npytorch;1;2;0,1\npytorch;2;2;0,1,5\n"
    for reader in (load_points, read_external):
        with pytest.raises(ExternalTimingsError) as info:
            reader(write(tmp_path, text))
        assert "not a readable CSV" in str(info.value)
        assert "separated by semicolons" in str(info.value)


def test_a_comment_line_before_the_header_is_named_with_the_fix(tmp_path):
    # The published tables start with a `# source: ...` line; pandas takes it for the header.
    text = "# source: x.org, path: a.json; commits: 1\nframework,procs,batch_size,iter_time_s\n"
    for reader in (load_points, read_external):
        with pytest.raises(ExternalTimingsError) as info:
            reader(write(tmp_path, text + "pytorch,1,8,0.1\n"))
        assert "missing required column(s)" in str(info.value)
        assert "its first line is a comment" in str(info.value)
        assert "delete the comment line(s)" in str(info.value)


def test_gpu_and_precision_make_different_configurations(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(
        "framework,network,gpu,precision,procs,batch_size,samples_per_s\n"
        "pytorch,resnet50,NVIDIA A100-SXM4-80GB,AMP/FP16,1,64,1000\n"
        "pytorch,resnet50,NVIDIA A100-SXM4-80GB,fp32,1,64,500\n"
        "pytorch,resnet50,Tesla V100-SXM2-16GB,,1,64,300\n"
    )
    points = read_external(path)
    assert len(points) == 3
    assert points["precision"].tolist() == ["amp_fp16", "fp32", "fp32"]
    assert set(points["gpu"]) == {"NVIDIA A100-SXM4-80GB", "Tesla V100-SXM2-16GB"}


def test_an_unknown_precision_is_refused_naming_the_rows(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("framework,precision,procs,batch_size,samples_per_s\npytorch,int4,1,8,10\n")
    with pytest.raises(ExternalTimingsError, match="'precision' at row.*unknown precision 'int4'"):
        read_external(path)


@pytest.mark.parametrize(
    "row, fields",
    [("pytorch,2,8,0.1,extra", 5), ("pytorch,2,0.1", 3)],
)
def test_a_ragged_row_is_named_by_its_line_not_blamed_on_a_column(tmp_path, row, fields):
    text = f"framework,procs,batch_size,iter_time_s\npytorch,1,8,0.1\n{row}\n"
    with pytest.raises(
        ExternalTimingsError, match=f"line 3 has {fields} fields where the header has 4"
    ):
        read_external(write(tmp_path, text))
