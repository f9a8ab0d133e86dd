"""What re-measures a benchmark: the bench rule's params."""

from __future__ import annotations

from types import SimpleNamespace

from dlperf import config as cfg
from dlperf.io import atomic_write_json
from dlperf.layout import WORKFLOW, accumulation_from_suffix
from dlperf.pipeline import bench_params as remeasure

WILDCARDS = SimpleNamespace(
    framework="pytorch",
    network="mlp",
    nodes="1",
    procs="2",
    batch="8",
    data="64",
    rep="0",
    accum="",
)


def write_record(tmp_path, record_factory, status, timeout_s):
    record = record_factory(procs=2, batch=8, data=64, status=status)
    record["config"]["timeout_s"] = timeout_s
    path = tmp_path / remeasure._record_path(WILDCARDS)
    atomic_write_json(path, record)
    return path


def test_record_path_is_the_workflows(tmp_path):
    run = cfg.validated(
        {"batch_sizes": [8], "data_sizes": [64], "procs": [2], "repeats": 1, "networks": ["mlp"]}
    )
    (config,) = cfg.run_configs(run)
    assert remeasure._record_path(WILDCARDS) == WORKFLOW.record_of(config)
    assert WORKFLOW.record_of(config).endswith("/n1_p2_b8_d64_r0.json")  # as before accumulation


def test_accumulation_adds_a_suffix_the_rule_reads_back():
    run = cfg.validated(
        {
            "batch_sizes": [8],
            "data_sizes": [64],
            "procs": [2],
            "repeats": 1,
            "networks": ["mlp"],
            "accumulation_steps": [1, 4],
        }
    )
    plain, accumulated = cfg.run_configs(run)
    assert (plain.grad_accum_steps, accumulated.grad_accum_steps) == (1, 4)
    wildcards = SimpleNamespace(**{**vars(WILDCARDS), "accum": "_a4"})
    assert remeasure._record_path(wildcards) == WORKFLOW.record_of(accumulated)
    assert accumulation_from_suffix("_a4") == 4 and accumulation_from_suffix("") == 1


def test_input_settings_join_the_measured_settings_only_when_not_the_default():
    base = cfg.validated({"batch_sizes": [8], "data_sizes": [64]})
    settings = remeasure.measured_settings(base)
    assert "--precision" not in settings and "--image-size" not in settings
    changed = remeasure.measured_settings({**base, "precision": "bf16", "image_size": 224})
    assert "--precision bf16" in changed and "--image-size 224" in changed


def test_new_run_gets_the_configured_timeout(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert remeasure.timeout_param({"timeout_s": 900})(WILDCARDS) == 900.0


def test_finished_run_keeps_its_timeout_whatever_the_config_says(
    tmp_path, monkeypatch, record_factory
):
    monkeypatch.chdir(tmp_path)
    for status in ("ok", "failed", "oom"):
        write_record(tmp_path, record_factory, status, 300.0)
        assert remeasure.timeout_param({"timeout_s": 900})(WILDCARDS) == 300.0
        assert remeasure.timeout_param({"timeout_s": 60})(WILDCARDS) == 300.0


def test_timed_out_run_is_measured_again_only_with_a_larger_timeout(
    tmp_path, monkeypatch, record_factory
):
    monkeypatch.chdir(tmp_path)
    write_record(tmp_path, record_factory, "timeout", 300.0)
    assert remeasure.timeout_param({"timeout_s": 300})(WILDCARDS) == 300.0
    assert remeasure.timeout_param({"timeout_s": 200})(WILDCARDS) == 300.0
    assert remeasure.timeout_param({"timeout_s": 900})(WILDCARDS) == 900.0


def test_damaged_record_is_left_to_the_aggregate_stage(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / remeasure._record_path(WILDCARDS)
    path.parent.mkdir(parents=True)
    path.write_text('{"config": ')
    assert remeasure.timeout_param({"timeout_s": 300})(WILDCARDS) == 300.0


def test_measured_settings_leave_out_analysis_seed_and_paths():
    base = cfg.validated({"batch_sizes": [8], "data_sizes": [64]})
    settings = remeasure.measured_settings(base)
    for change in ({"seed": 5}, {"timeout_s": 5}, {"envs_dir": "/x"}, {"models": {"usl": {}}}):
        assert remeasure.measured_settings({**base, **change}) == settings
    for change in ({"device": "cuda"}, {"dataset": "digits"}, {"warmup_iters": 9}):
        assert remeasure.measured_settings({**base, **change}) != settings
