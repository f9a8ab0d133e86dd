"""Only what a change affects re-runs: every line of docs/reproducibility.md's table, proven by
dry runs (and, where the table promises a kept record, real runs) against a finished run."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import pandas as pd
import pytest
import yaml
from snakerun import TINY, planned_jobs, snakemake

from dlperf.study import superseded as history

pytestmark = [pytest.mark.slow, pytest.mark.framework]

ANALYSIS = {"fit", "validate", "validation_summary", "report", "all"}
TABLES = {"aggregate"} | ANALYSIS
RECORD = "results/runs/pytorch/mlp/n1_p2_b16_d256_r0.json"


def tiny_with(tmp_path, **changes):
    config = yaml.safe_load(TINY.read_text())
    config.update(changes)
    path = tmp_path / "changed.yaml"
    path.write_text(yaml.safe_dump(config))
    return path, config


# A changed config is written again as results/config.json (what `dlperf archive` archives): that
# job follows every config change and measures nothing, so the plans below leave it out
# (test_seed checks that it is planned).
CONFIG_WRITTEN = "study_config"


def plan(workflow_bin, repo, workdir, *args, **kwargs) -> dict[str, int]:
    planned = planned_jobs(
        snakemake(workflow_bin, repo, workdir, "-n", *args, timeout=300, **kwargs)
    )
    planned.pop(CONFIG_WRITTEN, None)
    return planned


@pytest.fixture
def study_copy(finished_run, tmp_path):
    """A copy of the finished study (file times kept) that a test may change."""
    copy = tmp_path / "study"
    shutil.copytree(finished_run, copy, symlinks=True)
    return copy


def all_runs(config) -> int:
    sizes = len(config["procs"]) * len(config["batch_sizes"]) * len(config["data_sizes"])
    return sizes * config["repeats"]


# One test per line of the table, named by the line's first column.


def test_nothing(finished_run, workflow_bin, repo):
    assert plan(workflow_bin, repo, finished_run) == {}


def test_seed(finished_run, workflow_bin, repo):
    assert set(plan(workflow_bin, repo, finished_run, "--config", "seed=1")) == ANALYSIS
    raw = snakemake(workflow_bin, repo, finished_run, "-n", "--config", "seed=1", timeout=300)
    assert CONFIG_WRITTEN in planned_jobs(raw)


def test_model_setting(finished_run, workflow_bin, repo, tmp_path):
    config = yaml.safe_load(TINY.read_text())
    path, _ = tiny_with(
        tmp_path,
        models={**config["models"], "generic": {**config["models"]["generic"], "maxiter": 150}},
    )
    assert set(plan(workflow_bin, repo, finished_run, configfile=path)) == ANALYSIS


def test_validation_setting(finished_run, workflow_bin, repo, tmp_path):
    config = yaml.safe_load(TINY.read_text())
    path, _ = tiny_with(tmp_path, validation={**config["validation"], "bootstrap": 100})
    planned = plan(workflow_bin, repo, finished_run, configfile=path)
    assert set(planned) == {"validate", "validation_summary", "report", "all"}


def test_timeout(study_copy, workflow_bin, repo):
    """A larger timeout_s re-measures the timed-out run only, keeping its record; the plan
    after that run has no benchmark left (the params Snakemake recorded are stable)."""
    assert set(plan(workflow_bin, repo, study_copy, "--config", "timeout_s=900")) == {
        "report",
        "all",
    }
    record_path = study_copy / RECORD
    record = json.loads(record_path.read_text())
    record.update(status="timeout", error="the run exceeded its time limit of 300 s")
    record_path.write_text(json.dumps(record))
    assert "bench" not in plan(workflow_bin, repo, study_copy)  # same limit: times out again
    planned = plan(workflow_bin, repo, study_copy, "--config", "timeout_s=900")
    assert planned.pop("bench") == 1 and set(planned) == TABLES

    run = snakemake(workflow_bin, repo, study_copy, "--config", "timeout_s=900", "--until", "bench")
    assert run.returncode == 0, run.stderr[-3000:]
    assert json.loads(record_path.read_text())["config"]["timeout_s"] == 900.0
    assert history.count_superseded(study_copy / "results") == 1
    assert "bench" not in plan(workflow_bin, repo, study_copy, "--config", "timeout_s=900")


def test_new_sweep_values(finished_run, workflow_bin, repo, tmp_path):
    config = yaml.safe_load(TINY.read_text())
    path, changed = tiny_with(tmp_path, batch_sizes=[*config["batch_sizes"], 4])
    planned = plan(workflow_bin, repo, finished_run, configfile=path)
    new_runs = len(changed["procs"]) * len(changed["data_sizes"]) * changed["repeats"]
    assert planned.pop("bench") == new_runs
    assert set(planned) == TABLES


def test_deleted_record(study_copy, workflow_bin, repo):
    (study_copy / RECORD).unlink()
    planned = plan(workflow_bin, repo, study_copy)
    assert planned.pop("bench") == 1 and set(planned) == TABLES


def test_requirements(finished_run, workflow_bin, repo, tmp_path):
    envs = tmp_path / "envs"
    shutil.copytree(repo / "envs", envs)
    with open(envs / "pytorch.txt", "a") as fh:
        fh.write("# a changed pin list\n")
    path, changed = tiny_with(tmp_path, envs_dir=str(envs))
    planned = plan(workflow_bin, repo, finished_run, configfile=path)
    assert planned.pop("framework_env") == 1
    assert planned.pop("bench") == all_runs(changed)


def changed_package(repo, tmp_path, edits: dict[str, str]) -> dict:
    """The environment of a Snakemake that imports a copy of the package with ``edits``
    (path below src/dlperf -> text appended); it shadows the installed one."""
    src = tmp_path / "src"
    shutil.copytree(repo / "src", src, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for module, text in edits.items():
        path = src / "dlperf" / module
        path.write_text(path.read_text() + text)
    return {**os.environ, "PYTHONPATH": str(src)}


def test_one_frameworks_benchmark_code(finished_run, workflow_bin, repo, tmp_path):
    """The tiny study benchmarks PyTorch only: a change to MXNet's networks re-measures
    nothing; the same change to PyTorch's re-measures every PyTorch run."""
    env = changed_package(repo, tmp_path / "mx", {"bench/mx_nets.py": "\nCHANGED = 1\n"})
    assert plan(workflow_bin, repo, finished_run, env=env) == {}
    env = changed_package(repo, tmp_path / "torch", {"bench/torch_nets.py": "\nCHANGED = 1\n"})
    planned = plan(workflow_bin, repo, finished_run, env=env)
    assert planned.pop("bench") == all_runs(yaml.safe_load(TINY.read_text()))
    assert set(planned) == TABLES


def test_other_library_code(finished_run, workflow_bin, repo, tmp_path):
    env = changed_package(
        repo, tmp_path, {"models/generic.py": "\nDEFAULT_LAMBDAS = list(DEFAULT_LAMBDAS)\n"}
    )
    assert set(plan(workflow_bin, repo, finished_run, env=env)) == ANALYSIS


def test_comment(finished_run, workflow_bin, repo, tmp_path):
    env = changed_package(
        repo,
        tmp_path,
        {
            "bench/harness.py": "\n# a comment never re-measures\n",
            "measurements/tables.py": "\n# and none re-aggregates\n",
        },
    )
    assert plan(workflow_bin, repo, finished_run, env=env) == {}


def test_copy(finished_run, workflow_bin, repo, tmp_path):
    """A plain `cp -r` (new file times, in the order cp visits them) elsewhere."""
    copy = tmp_path / "elsewhere" / "deeper" / "study"
    copy.parent.mkdir(parents=True)
    subprocess.run(["cp", "-r", str(finished_run), str(copy)], check=True)
    assert plan(workflow_bin, repo, copy) == {}


def test_forced(study_copy, workflow_bin, repo):
    before = (study_copy / RECORD).read_bytes()
    run = snakemake(workflow_bin, repo, study_copy, "--force", RECORD)
    assert run.returncode == 0, run.stderr[-3000:]
    (kept,) = history.superseded_records(study_copy / "results")
    assert kept.read_bytes() == before and (study_copy / RECORD).read_bytes() != before
    planned = plan(workflow_bin, repo, study_copy)
    assert "bench" not in planned and set(planned) == TABLES


TABLE_TESTS = {
    "nothing": test_nothing,
    "`seed`": test_seed,
    "a model setting (`models:`)": test_model_setting,
    "a validation setting (`validation:`)": test_validation_setting,
    "`timeout_s`": test_timeout,
    "add a batch size, data size, worker count or repetition": test_new_sweep_values,
    # Tested where studies are (it archives the study too).
    "drop a framework, network, batch size, data size, worker count or repetition": (
        "test_studies.py::test_outputs_a_changed_config_drops_are_retired"
    ),
    "delete a run record": test_deleted_record,
    "`envs/<framework>.txt` (any byte of it, a comment or blank line included)": test_requirements,
    "one framework's benchmark code (`dlperf/bench/torch_*.py`, `tf_*.py`, `mx_*.py`)": (
        test_one_frameworks_benchmark_code
    ),
    "other library code in `src/dlperf`": test_other_library_code,
    "a comment, docstring or formatting in `src/dlperf`": test_comment,
    "copy or move the study (or the checkout)": test_copy,
    "force a benchmark (`-f`/`-R`)": test_forced,
}


def test_every_line_of_the_table_has_its_test(repo):
    text = (repo / "docs" / "reproducibility.md").read_text()
    section = text.split("## What re-runs when you change something", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (.+?) \| .+ \| .+ \|$", section, flags=re.MULTILINE)
    lines = [row for row in rows if row not in ("you change", "---")]
    assert lines == list(TABLE_TESTS)


def test_user_models_and_protocols_replace_the_defaults(study_copy, workflow_bin, repo, tmp_path):
    """tiny.yaml lists two protocols and runs those only; a config naming one model fits it
    alone (a user's `models` and `validation.protocols` replace the default's)."""
    summary = pd.read_csv(study_copy / "results" / "validation" / "summary.csv")
    assert set(summary["protocol"]) == set(
        yaml.safe_load(TINY.read_text())["validation"]["protocols"]
    )
    path, _ = tiny_with(tmp_path, models={"generic": {"popsize": 10, "maxiter": 50}})
    run = snakemake(workflow_bin, repo, study_copy, "results/models/pytorch.json", configfile=path)
    assert run.returncode == 0, run.stderr[-3000:]
    artifact = json.loads((study_copy / "results" / "models" / "pytorch.json").read_text())
    assert set(artifact["networks"]["mlp"]["models"]) == {"generic"}
