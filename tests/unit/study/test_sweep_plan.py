"""A cluster user's plan (issue 37, M10): retries capped by the site's maxima, and
``dlperf plan-sweep`` printing job groups, sbatch submissions and GPU-hours."""

from __future__ import annotations

import pytest
import yaml

from dlperf import config as cfg
from dlperf.cli import main
from dlperf.pipeline import cluster
from dlperf.study import sweep_plan

GPU = {
    "frameworks": ["pytorch"],
    "networks": ["lenet"],
    "device": "cuda",
    "nodes": [1, 2],
    "procs": [1, 2, 4],
    "max_procs_per_node": 2,
    "batch_sizes": [32],
    "data_sizes": [1024],
    "repeats": 3,
    "timeout_s": 1800,
    "cluster": {"mem_mb_per_proc": 16000, "runtime_min": 45},
}


def gpu_config(**cluster_keys):
    return cfg.validated(GPU | {"cluster": GPU["cluster"] | cluster_keys})


def test_retries_stop_at_the_site_maxima():
    config = gpu_config(max_runtime_min=120, max_mem_mb=48000)
    third = cluster.bench_resources(1, 2, config, attempt=3)
    # Uncapped, attempt 3 asks for 135 min and 96,000 MiB a node.
    assert (third["runtime"], third["mem_mb"]) == (120, 48000)
    second = cluster.bench_resources(1, 2, config, attempt=2)
    assert (second["runtime"], second["mem_mb"]) == (90, 48000)


def test_a_first_request_past_the_site_maximum_is_refused_naming_the_key():
    with pytest.raises(cluster.ClusterConfigError, match="cluster.max_runtime_min"):
        cluster.check(gpu_config(max_runtime_min=30))
    with pytest.raises(cluster.ClusterConfigError, match="cluster.max_mem_mb"):
        cluster.check(gpu_config(max_mem_mb=20000), [(1, 1), (1, 2)])


def test_plan_counts_groups_submissions_and_gpu_hours():
    settings = sweep_plan.profile_settings(["profiles/slurm"], cfg.read_yaml)
    config = gpu_config()
    plans = sweep_plan.plan(cfg.run_configs(config), config, settings)
    layouts = {(p.nodes, p.procs): p for p in plans}
    assert set(layouts) == {(1, 1), (1, 2), (2, 2), (2, 4)}
    assert all(p.runs == 3 and p.per_job == 10 and p.submissions == 1 for p in plans)
    assert layouts[(2, 4)].group_runtime_min == 3 * 45
    # 3 runs x 45 min x (1 + 2 + 2 + 4) GPUs
    assert sum(p.hours(p.runtime_min) for p in plans) == pytest.approx(3 * 0.75 * 9)
    assert layouts[(1, 2)].runtimes_min == (45, 90, 135)  # retries: 2 in the profile


def test_a_later_profile_overrides_the_group_size(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "profile.yaml").write_text(
        yaml.safe_dump({"group-components": ["bench_n{nodes}_p{procs}=1"], "retries": 0})
    )
    settings = sweep_plan.profile_settings(["profiles/slurm", site], cfg.read_yaml)
    config = gpu_config()
    plans = sweep_plan.plan(cfg.run_configs(config), config, settings)
    assert sum(p.submissions for p in plans) == 12
    assert all(p.runtimes_min == (45,) for p in plans)


def test_plan_sweep_prints_the_totals_and_warns_of_a_group_past_the_site_limit(tmp_path, capsys):
    path = tmp_path / "gpu.yaml"
    path.write_text(yaml.safe_dump(GPU | {"cluster": GPU["cluster"] | {"max_runtime_min": 100}}))
    assert main(["plan-sweep", str(path), "--profile", "profiles/slurm"]) == 0
    out = capsys.readouterr().out
    assert "12 benchmarks in 4 sbatch submissions" in out
    assert "GPU-hours requested: 20" in out
    assert "GPU-hours expected: unknown" in out
    assert "Nodes: requested whole (sbatch --exclusive" in out
    # A 1-GPU run holds its whole 2-GPU node: (2 + 2 + 4 + 4) GPUs x 3 runs x 45 min.
    assert "whole nodes hold 27 GPU-hours at the time limits (2 GPUs a node" in out
    # Retried (2 times in the profile), each benchmark asks for up to 100 min: one a job.
    assert 'set group-components to "bench_n{nodes}_p{procs}=1"' in out
    site = tmp_path / "site.yaml"
    site.write_text(yaml.safe_dump({"retries": 0}))
    assert (
        main(["plan-sweep", str(path), "--profile", "profiles/slurm", "--profile", str(site)]) == 0
    )
    assert 'set group-components to "bench_n{nodes}_p{procs}=2"' in capsys.readouterr().out


def test_plan_sweep_says_when_nodes_are_shared(tmp_path, capsys):
    path = tmp_path / "gpu.yaml"
    path.write_text(yaml.safe_dump(GPU | {"cluster": GPU["cluster"] | {"exclusive": False}}))
    assert main(["plan-sweep", str(path), "--profile", "profiles/slurm"]) == 0
    out = capsys.readouterr().out
    assert "Nodes: shared with other jobs (cluster.exclusive: false)" in out
    assert "--exclusive" not in out


def test_the_gpu_sweep_asks_for_what_the_issue_counted(capsys):
    assert main(["plan-sweep", "config/gpu.yaml", "--defaults", "config/config.yaml"]) == 0
    out = capsys.readouterr().out
    assert "648 benchmarks in 72 sbatch submissions" in out
    assert "GPU-hours requested: 4,252" in out


def test_docs_cluster_quotes_the_command_s_totals(capsys):
    """docs/cluster.md's totals for config/gpu.yaml are the command's output, line by line."""
    argv = ["plan-sweep", "config/gpu.yaml", "--defaults", "config/config.yaml"]
    assert main([*argv, "--profile", "profiles/slurm"]) == 0
    totals = capsys.readouterr().out.splitlines()[-3:]
    doc = [line.strip() for line in open("docs/cluster.md", encoding="utf-8")]
    assert all(line in doc for line in totals), totals


def test_a_cpu_sweep_is_charged_in_cpu_core_hours(tmp_path, capsys):
    """On CPU a run holds no GPU: its cores are what it asks for, not "GPU-hours: 0"."""
    path = tmp_path / "cpu.yaml"
    cpu = GPU | {"device": "cpu", "threads_per_proc": 2}
    path.write_text(yaml.safe_dump(cpu))
    assert main(["plan-sweep", str(path), "--profile", "profiles/slurm"]) == 0
    out = capsys.readouterr().out
    assert "GPU" not in out
    # 3 runs x 45 min x (1 + 2 + 2 + 4) workers x 2 cores each
    assert "CPU core-hours requested: 40 " in out
    assert out.splitlines()[0].split()[:2] == ["nodes", "cores"]


@pytest.mark.parametrize(("profile", "said"), [("nonexist", "does not exist"), ("src", "has no")])
def test_a_profile_that_is_not_one_is_named_a_profile(capsys, profile, said):
    assert main(["plan-sweep", "config/gpu.yaml", "--profile", profile]) == 2
    err = capsys.readouterr().err
    assert f"profile {profile} {said}" in err
    assert "a Snakemake profile is a directory holding profile.yaml" in err


def test_expected_gpu_hours_come_from_the_study_s_models(tmp_path, capsys):
    import pandas as pd

    from dlperf.measurements import tables

    rows = [
        {"procs": p, "batch_size": b, "rep": r, "epoch_time_s": 100.0 / p + 2.0 * p + 3200 / b}
        for p in (1, 2, 4, 8)
        for b in (32, 64)
        for r in range(3)
    ]
    frame = pd.DataFrame(rows).assign(
        framework="pytorch", network="lenet", device="cuda", nodes=1, data_size=1024
    )
    timings = tmp_path / "timings.csv"
    tables.write_csv(frame.assign(samples_per_s=1024 / frame["epoch_time_s"]), timings)
    models = tmp_path / "models"
    argv = ["fit", "--timings", str(timings), "--framework", "pytorch"]
    assert main([*argv, "--out", str(models / "pytorch.json")]) == 0
    config = gpu_config()
    runs = cfg.run_configs(config)
    truth = sum((100.0 / r.procs + 2.0 * r.procs + 100.0) * r.procs for r in runs) / 3600
    expected = sweep_plan.expected_hours(runs, config, models)
    assert expected == pytest.approx(truth, rel=0.1)
    assert sweep_plan.expected_hours(runs, config, tmp_path / "none") is None
