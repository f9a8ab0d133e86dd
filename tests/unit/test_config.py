import json

import pytest
import yaml

from dlperf import config as cfg
from dlperf.layout import WORKFLOW


def test_default_config_is_valid_and_gets_defaults(repo):
    loaded = cfg.load(repo / "config" / "config.yaml")
    assert loaded["device"] == "cpu"
    assert "generic" in loaded["models"]
    runs = cfg.run_configs(loaded)
    expected = (
        len(loaded["frameworks"])
        * len(loaded["networks"])
        * len(cfg.run_layouts(loaded))
        * len(loaded["batch_sizes"])
        * len(loaded["data_sizes"])
        * loaded["repeats"]
    )
    assert len(runs) == expected
    assert len({WORKFLOW.record_of(r) for r in runs}) == expected


def test_default_sweep_is_meaningful(repo):
    """Issue 2: at least two worker counts, three batch sizes, two data sizes."""
    loaded = cfg.load(repo / "config" / "config.yaml")
    assert len(loaded["procs"]) >= 2
    assert len(loaded["batch_sizes"]) >= 3
    assert len(loaded["data_sizes"]) >= 2


def test_misspelled_key_is_named(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"batch_sizes": [8], "data_sizes": [64], "repeat": 2}))
    with pytest.raises(cfg.ConfigError, match="'repeat'") as info:
        cfg.load(path)
    assert "repeats" in str(info.value)  # the allowed keys are listed


def test_bad_values_are_named():
    with pytest.raises(cfg.ConfigError, match="batch_sizes"):
        cfg.validated({"batch_sizes": [0], "data_sizes": [64]})
    with pytest.raises(cfg.ConfigError, match="device"):
        cfg.validated({"batch_sizes": [8], "data_sizes": [64], "device": "tpu"})


def test_impossible_layout_is_refused():
    with pytest.raises(cfg.ConfigError, match="multiple of nodes"):
        cfg.validated({"batch_sizes": [8], "data_sizes": [64], "nodes": [2], "procs": [3]})


def test_layouts_skip_uneven_pairs():
    loaded = cfg.validated(
        {"batch_sizes": [8], "data_sizes": [64], "nodes": [1, 2], "procs": [1, 2, 4]}
    )
    assert cfg.run_layouts(loaded) == [(1, 1), (1, 2), (1, 4), (2, 2), (2, 4)]


def test_missing_and_malformed_files(tmp_path):
    with pytest.raises(cfg.ConfigError, match="does not exist"):
        cfg.load(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("batch_sizes: [8\n")
    with pytest.raises(cfg.ConfigError, match="not valid YAML"):
        cfg.load(bad)


def test_more_workers_per_node_than_allowed_is_refused():
    with pytest.raises(cfg.ConfigError, match="max_procs_per_node=2"):
        cfg.validated(
            {
                "batch_sizes": [8],
                "data_sizes": [64],
                "nodes": [1],
                "procs": [4],
                "max_procs_per_node": 2,
            }
        )


def test_missing_framework_environment_is_a_failed_run_naming_the_fix(tmp_path):
    from dlperf.bench.runner import run_benchmark
    from dlperf.bench.spec import RunConfig

    out = tmp_path / "run.json"
    record = run_benchmark(
        RunConfig("pytorch", "mlp", "cpu", 1, 1, 8, 64, 0), tmp_path / "nope.json", out
    )
    assert record["status"] == "failed"
    assert "nope.json" in record["error"] and "dlperf env" in record["error"]
    assert json.loads(out.read_text())["status"] == "failed"


def test_a_key_given_twice_is_refused_with_its_line(tmp_path):
    path = tmp_path / "twice.yaml"
    path.write_text("frameworks: [pytorch]\nprocs: [1]\nbatch_sizes: [8]\nprocs: [64]\n")
    with pytest.raises(cfg.ConfigError, match=r"twice.yaml:4:1: .*'procs' is given twice"):
        cfg.read_yaml(path)


def test_a_list_key_given_one_value_is_the_one_element_list():
    given = {"frameworks": "pytorch", "procs": 2, "accumulation_steps": 2, "batch_sizes": 8}
    config = cfg.validated({**given, "data_sizes": [64]})
    assert config["frameworks"] == ["pytorch"] and config["procs"] == [2]
    assert config["accumulation_steps"] == [2] and config["batch_sizes"] == [8]


def test_every_default_model_fits_on_the_default_sweep(repo, tmp_path):
    """Each model the default config lists can be fitted on what the default sweep measures (its
    worker counts, batch and data sizes): none is there only to report insufficient_data."""
    import itertools

    import numpy as np

    from dlperf import stages
    from dlperf.io import atomic_write_json
    from dlperf.measurements.points import to_points
    from dlperf.measurements.tables import read_timings
    from dlperf.models.artifact import fit_one
    from recordmaker import make_record

    loaded = cfg.load(repo / "config" / "config.yaml")
    records = []
    grid = itertools.product(
        cfg.run_layouts(loaded), loaded["batch_sizes"], loaded["data_sizes"], range(2)
    )
    rng = np.random.default_rng(0)
    for (_nodes, procs), batch, data, rep in grid:
        iter_s = (2e-3 + 1e-4 * batch + 1e-3 * (procs - 1)) * rng.lognormal(0.0, 0.01)
        record = make_record(procs=procs, batch=batch, data=data, rep=rep, iter_s=iter_s)
        records.append(tmp_path / f"p{procs}_b{batch}_d{data}_r{rep}.json")
        atomic_write_json(records[-1], record)
    timings = tmp_path / "timings.csv"
    stages.aggregate(records, timings, tmp_path / "t.parquet", tmp_path / "failures.csv")
    points = to_points(read_timings(timings))
    for name, settings in loaded["models"].items():
        # The search's effort only (the generic model's): what data a fit needs is unchanged.
        quick = {**settings, "popsize": 8, "maxiter": 40} if name == "generic" else settings
        entry = fit_one(name, quick, points, seed=0, refits=0)
        assert entry["status"] == "ok", (name, entry.get("reason"))
