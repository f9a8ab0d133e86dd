"""Pre-flight of a busy machine (issue 37, M11): a warning, or a bounded wait, before measuring;
the workflow stops before fitting when most runs came out disturbed."""

from __future__ import annotations

import pandas as pd
import pytest

from dlperf import config as cfg
from dlperf.cli import main
from dlperf.measurements import preflight, tables


def clock(step: float):
    now = [0.0]

    def tick():
        now[0] += step
        return now[0]

    return tick


def test_a_busy_machine_is_waited_for_until_it_is_quiet():
    loads = iter([0.9, 0.6, 0.05])
    outcome = preflight.wait_quiet(60, sample=lambda: next(loads), clock=clock(2.0))
    assert outcome.quiet and outcome.load == 0.05
    assert outcome.message(60).startswith("pre-flight: quiet")


def test_the_wait_is_bounded_and_ends_in_a_warning():
    samples = []

    def busy():
        samples.append(1)
        return 0.8

    outcome = preflight.wait_quiet(10, sample=busy, clock=clock(2.0))
    assert not outcome.quiet and len(samples) <= 6
    message = outcome.message(10)
    assert message.startswith("warning: the machine is busy after waiting")
    assert "80%" in message and "--wait-quiet" in message


def test_without_a_wait_one_sample_decides():
    outcome = preflight.wait_quiet(0, sample=lambda: 0.5, clock=clock(2.0))
    assert not outcome.quiet and "after waiting" not in outcome.message(0)


def test_the_load_is_read_from_the_machine(monkeypatch):
    busy = iter([100.0, 100.0 + 0.5 * 4])
    monkeypatch.setattr(preflight, "machine_busy_s", lambda: next(busy))
    monkeypatch.setattr(preflight.os, "cpu_count", lambda: 4)
    assert preflight.foreign_load(2.0, sleep=lambda s: None) == pytest.approx(0.25)


def test_preflight_command_prints_its_verdict(capsys):
    assert main(["preflight"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(("pre-flight:", "warning: the machine is busy"))


def timings_file(tmp_path, foreign):
    frame = pd.DataFrame(
        {
            "framework": "pytorch",
            "network": "lenet",
            "device": "cpu",
            "nodes": 1,
            "procs": [1, 1, 2, 2],
            "batch_size": 16,
            "data_size": 1024,
            "rep": [0, 1, 0, 1],
            "epoch_time_s": [1.0, 1.1, 0.6, 0.7],
            "samples_per_s": 1000.0,
            "foreign_cpu_fraction": foreign,
        }
    )
    path = tmp_path / "results" / "timings.csv"  # a study's table: the study is tmp_path
    tables.write_csv(frame, path)
    return path


def test_fit_stops_when_most_runs_were_disturbed(tmp_path, capsys):
    path = timings_file(tmp_path, [0.5, 0.4, 0.3, 0.01])
    argv = ["fit", "--timings", str(path), "--framework", "pytorch", "--out"]
    code = main([*argv, str(tmp_path / "m.json"), "--max-disturbed", "0.5"])
    assert code != 0
    err = capsys.readouterr().err
    assert "75% of the runs were disturbed" in err and "remeasure_disturbed" in err
    study = tmp_path.resolve()
    assert f"snakemake --directory {study} remeasure_disturbed, then make run STUDY={study})" in err
    assert not (tmp_path / "m.json").exists()


def test_on_a_cluster_the_stop_leads_with_keeping_the_timings(tmp_path):
    path = timings_file(tmp_path, [0.5, 0.4, 0.3, 0.01])
    timings = tables.read_timings(path).assign(slurm_job_id=[101, 101, 102, 102])
    with pytest.raises(preflight.BusyMachine) as stop:
        preflight.check_disturbed(timings, 0.5)
    message = str(stop.value)
    assert "other jobs shared the Slurm nodes. The timings are kept: raise" in message
    assert "cluster.exclusive: true" in message and "remeasure_disturbed" in message
    assert "quiet machine" not in message


def test_fit_goes_on_when_few_runs_were_disturbed(tmp_path):
    path = timings_file(tmp_path, [0.5, 0.01, 0.02, 0.01])
    preflight.check_disturbed(tables.read_timings(path), 0.5)  # 25 %: no stop


def test_the_threshold_has_a_documented_default():
    config = cfg.load("config/config.yaml")
    assert config["preflight"]["max_disturbed_fraction"] == 0.5
    with pytest.raises(cfg.ConfigError, match="max_disturbed_fraction"):
        cfg.validated(config | {"preflight": {"max_disturbed_fraction": 2}})
