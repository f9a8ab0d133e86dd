"""`dlperf check-config` catches what the workflow would refuse (or run to no use) on a local
run: a missing external_timings file, workers or threads beyond the cores, several nodes."""

from __future__ import annotations

import pytest
import yaml
from clirun import assert_refused, run

import dlperf.bench.envinfo

BASE = "frameworks: [pytorch]\nnetworks: [mlp]\nbatch_sizes: [8]\ndata_sizes: [64]\n"


@pytest.fixture(autouse=True)
def two_cores(monkeypatch):
    monkeypatch.setattr(dlperf.bench.envinfo, "available_cores", lambda: 2)


def _config(tmp_path, text: str) -> str:
    path = tmp_path / "c.yaml"
    path.write_text(BASE + text)
    return str(path)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("procs: [64]\n", ["procs: 64 workers", "give procs up to 2", "--cluster"]),
        ("procs: [1]\nthreads_per_proc: 64\n", ["threads_per_proc: 64", "up to 2"]),
        ("nodes: [2]\nprocs: [2]\n", ["nodes: [2] on a local run", "give nodes: [1]"]),
    ],
)
def test_what_a_local_run_refuses_is_refused(tmp_path, text, words):
    assert_refused(["check-config", _config(tmp_path, text)], *words)
    code, _ = run(["check-config", _config(tmp_path, text), "--cluster"])
    assert code == 0


def test_a_missing_external_timings_file_is_refused(tmp_path):
    path = _config(tmp_path, "procs: [1]\nexternal_timings: nowhere.csv\n")
    assert_refused(["check-config", path, "--study", str(tmp_path)], "nowhere.csv")


def test_a_config_a_local_run_can_run_is_valid(tmp_path):
    code, err = run(["check-config", _config(tmp_path, "procs: [1, 2]\n")])
    assert code == 0, err


def test_the_gpu_sweep_times_enough_iterations_and_a_short_epoch_is_warned(repo, tmp_path):
    """config/gpu.yaml times 20 iterations or more in every configuration; at 51200 samples per
    epoch (its former size) 32 GPUs at batch 256 timed 7, and check-config says so."""
    gpu, defaults = str(repo / "config" / "gpu.yaml"), str(repo / "config" / "config.yaml")
    code, err = run(["check-config", gpu, "--defaults", defaults, "--cluster"])
    assert code == 0 and err == "", err
    short = tmp_path / "short.yaml"
    settings = yaml.safe_load((repo / "config" / "gpu.yaml").read_text())
    short.write_text(yaml.safe_dump({**settings, "data_sizes": [51200]}))
    code, err = run(["check-config", str(short), "--defaults", defaults, "--cluster"])
    assert code == 0 and err.count("\n") == 1, err
    assert "warning: data_sizes: 3 of 18 configurations time fewer than 20" in err
    assert "fewest: 7, at procs 32, batch 256" in err


def test_a_model_artifact_given_as_a_config_is_named_in_one_short_line(study):
    """A fitted artifact (JSON is YAML) was dumped whole into the error, 76 KB on one line."""
    err = assert_refused(
        ["check-config", study["model"], "--defaults", "config/config.yaml"], "model artifact"
    )
    assert len(err) < 400, err


def test_a_long_value_is_quoted_cut(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text(f"procs: {{a: [{', '.join(map(str, range(5000)))}]}}\n")
    err = assert_refused(["check-config", str(config), "--defaults", "config/config.yaml"])
    assert "more characters" in err and len(err) < 600, err
