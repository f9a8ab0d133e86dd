"""Only what a change affects re-runs: proven by dry runs against a finished workflow run."""

from __future__ import annotations

import shutil

import pytest
import yaml
from snakerun import TINY, planned_jobs, snakemake

pytestmark = [pytest.mark.slow, pytest.mark.framework]

ANALYSIS = {"fit", "validate", "validation_summary", "report", "all"}
# A changed config is written again as results/config.json (what `dlperf archive` archives).
CONFIG_WRITTEN = {"study_config"}


def tiny_with(tmp_path, **changes):
    config = yaml.safe_load(TINY.read_text())
    config.update(changes)
    path = tmp_path / "changed.yaml"
    path.write_text(yaml.safe_dump(config))
    return path, config


def test_model_setting_change_reruns_no_benchmark(finished_run, workflow_bin, repo, tmp_path):
    config = yaml.safe_load(TINY.read_text())
    path, _ = tiny_with(
        tmp_path,
        models={**config["models"], "generic": {**config["models"]["generic"], "maxiter": 150}},
    )
    plan = planned_jobs(
        snakemake(workflow_bin, repo, finished_run, "-n", configfile=path, timeout=300)
    )
    assert set(plan) == ANALYSIS | CONFIG_WRITTEN


def test_validation_setting_change_reruns_validate_and_report_only(
    finished_run, workflow_bin, repo, tmp_path
):
    config = yaml.safe_load(TINY.read_text())
    path, _ = tiny_with(tmp_path, validation={**config["validation"], "bootstrap": 100})
    plan = planned_jobs(
        snakemake(workflow_bin, repo, finished_run, "-n", configfile=path, timeout=300)
    )
    assert set(plan) == {"validate", "validation_summary", "report", "all"} | CONFIG_WRITTEN


def test_new_batch_size_runs_only_its_benchmarks(finished_run, workflow_bin, repo, tmp_path):
    config = yaml.safe_load(TINY.read_text())
    path, changed = tiny_with(tmp_path, batch_sizes=[*config["batch_sizes"], 4])
    plan = planned_jobs(
        snakemake(workflow_bin, repo, finished_run, "-n", configfile=path, timeout=300)
    )
    new_runs = len(changed["procs"]) * len(changed["data_sizes"]) * changed["repeats"]
    assert plan.pop("bench") == new_runs
    assert set(plan) == {"aggregate"} | ANALYSIS | CONFIG_WRITTEN


def test_changed_requirements_rebuild_env_and_rerun_its_benchmarks(
    finished_run, workflow_bin, repo, tmp_path
):
    envs = tmp_path / "envs"
    shutil.copytree(repo / "envs", envs)
    with open(envs / "pytorch.txt", "a") as fh:
        fh.write("# a changed pin list\n")
    path, changed = tiny_with(tmp_path, envs_dir=str(envs))
    plan = planned_jobs(
        snakemake(workflow_bin, repo, finished_run, "-n", configfile=path, timeout=300)
    )
    all_runs = len(changed["procs"]) * len(changed["batch_sizes"]) * len(changed["data_sizes"])
    assert plan.pop("framework_env") == 1
    assert plan.pop("bench") == all_runs * changed["repeats"]


def test_library_code_change_reruns_only_its_stages(finished_run, workflow_bin, repo, tmp_path):
    """A copy of the package with one changed statement in the models shadows the installed one."""
    src = tmp_path / "src"
    shutil.copytree(repo / "src", src, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    generic = src / "dlperf" / "models" / "generic.py"
    generic.write_text(generic.read_text() + "\nDEFAULT_LAMBDAS = list(DEFAULT_LAMBDAS)\n")
    comment_only = src / "dlperf" / "bench" / "harness.py"
    comment_only.write_text(comment_only.read_text() + "\n# a comment never re-measures\n")
    import os

    env = {**os.environ, "PYTHONPATH": str(src)}
    plan = planned_jobs(snakemake(workflow_bin, repo, finished_run, "-n", timeout=300, env=env))
    assert set(plan) == ANALYSIS
