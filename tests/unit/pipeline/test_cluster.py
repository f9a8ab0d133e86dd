"""The Slurm resources of a benchmark job (dlperf.pipeline.cluster), and the sbatch line the
Slurm executor plugin builds from them."""

from __future__ import annotations

import shlex
from types import SimpleNamespace

import pytest

from dlperf import config as cfg
from dlperf.pipeline import bench_params as remeasure
from dlperf.pipeline import cluster


def sweep(**overrides):
    return cfg.validated({"batch_sizes": [8], "data_sizes": [64], **overrides})


class Resources(dict):
    """What the plugin sees as ``job.resources``: a mapping with attribute access."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def sbatch_line(resources: dict, threads: int = 1) -> str:
    submit = pytest.importorskip("snakemake_executor_plugin_slurm.submit_string")
    utils = pytest.importorskip("snakemake_executor_plugin_slurm.utils")
    job = SimpleNamespace(resources=Resources(resources), threads=threads)
    params = {
        "run_uuid": "uuid",
        "slurm_logfile": "log",
        "comment_str": "rule_bench",
        "account": "",
        "partition": "",
        "workdir": "",
    }
    # as the plugin's executor does: the submit string, then the GPU part
    return submit.get_submit_command(job, params) + utils.set_gres_string(job)


def test_single_cpu_worker_is_one_task():
    res = cluster.bench_resources(1, 1, sweep())
    assert res["nodes"] == 1 and res["tasks"] == 1 and res["mpi"] == "" and res["gres"] == ""
    line = sbatch_line(res)
    assert "--nodes=1" in line and "--ntasks=1" in line and "--cpus-per-task=1" in line
    assert "--gres" not in line and "--gpus" not in line


def test_distributed_cpu_run_on_one_node():
    res = cluster.bench_resources(1, 2, sweep(threads_per_proc=2))
    assert res["mpi"] == "srun" and res["tasks"] == 2 and res["tasks_per_node"] == 0
    line = sbatch_line(res)
    assert "--nodes=1 " in line and "--ntasks=2" in line and "--cpus-per-task=2" in line
    assert "--ntasks-per-node" not in line and "--mem 8000" in line


def test_eight_gpus_on_one_node():
    res = cluster.bench_resources(1, 8, sweep(device="cuda"))
    line = sbatch_line(res)
    for flag in ("--nodes=1", "--ntasks=8", "--gres=gpu:8"):
        assert flag in line, (flag, line)
    assert "--ntasks-per-gpu" not in line and "--ntasks-per-node" not in line


def test_single_node_sweep_has_one_tasks_per_node_value():
    config = sweep(procs=[1, 2, 4, 8])
    layouts = cfg.run_layouts(config)
    assert cluster.sweep_resource("tasks_per_node", config, layouts) == 0
    assert callable(cluster.sweep_resource("tasks", config, layouts))


def test_gpu_sweep_asks_for_one_gpu_per_worker_on_every_node():
    config = sweep(device="cuda", cluster={"cpus_per_proc": 8, "mem_mb_per_proc": 16000})
    res = cluster.bench_resources(2, 8, config)
    assert res["gres"] == "gpu:4" and res["tasks_per_node"] == 4 and res["tasks_per_gpu"] == 0
    line = sbatch_line(res)
    flags = ("--nodes=2", "--ntasks-per-node=4", "--cpus-per-task=8", "--gres=gpu:4", "--mem 64000")
    for flag in flags:
        assert flag in line, (flag, line)
    # the plugin's trap: `tasks` reused as --ntasks-per-gpu for GPU jobs
    assert "--ntasks-per-gpu" not in line and "--gpus" not in line


def test_one_gpu_worker_per_node_uses_tasks():
    res = cluster.bench_resources(4, 4, sweep(device="cuda"))
    assert res["tasks"] == 4 and res["tasks_per_node"] == 0 and res["gres"] == "gpu:1"
    line = sbatch_line(res)
    assert "--nodes=4" in line and "--ntasks=4" in line and "--ntasks-per-gpu" not in line


def test_single_gpu_worker():
    line = sbatch_line(cluster.bench_resources(1, 1, sweep(device="cuda")))
    assert "--gres=gpu:1" in line and "--ntasks-per-gpu" not in line and "--nodes=1" in line


def test_retries_get_more_time_and_memory():
    config = sweep(timeout_s=300, cluster={"mem_mb_per_proc": 1000})
    first = cluster.bench_resources(1, 2, config, attempt=1)
    third = cluster.bench_resources(1, 2, config, attempt=3)
    assert first["runtime"] == 5 + cluster.RUNTIME_MARGIN_MIN
    assert third["runtime"] == 3 * first["runtime"]
    assert (first["mem_mb"], third["mem_mb"]) == (2000, 6000)
    assert cluster.runtime_minutes(sweep(cluster={"runtime_min": 7}), attempt=2) == 14


def test_cpus_per_task_follows_threads_or_the_cluster_key():
    assert cluster.cpus_per_proc(sweep()) == 1
    assert cluster.cpus_per_proc(sweep(threads_per_proc=3)) == 3
    assert cluster.cpus_per_proc(sweep(threads_per_proc=2, cluster={"cpus_per_proc": 6})) == 6
    with pytest.raises(cluster.ClusterConfigError, match="Raise cluster.cpus_per_proc"):
        cluster.cpus_per_proc(sweep(threads_per_proc=8, cluster={"cpus_per_proc": 2}))


def test_uneven_layout_is_refused():
    with pytest.raises(cluster.ClusterConfigError, match="multiple of nodes"):
        cluster.bench_resources(2, 3, sweep())


def test_unknown_cluster_key_is_named():
    with pytest.raises(cfg.ConfigError, match="cpus_per_task"):
        sweep(cluster={"cpus_per_task": 4})


def test_resource_functions_read_wildcards_and_attempt():
    config = sweep(device="cuda")
    wildcards = SimpleNamespace(nodes="2", procs="4")
    assert cluster.bench_resource("gres", config)(wildcards) == "gpu:2"
    assert cluster.bench_resource("mem_mb", config)(wildcards, attempt=2) == 2 * 2 * 4000
    with pytest.raises(KeyError, match="known"):
        cluster.bench_resource("gpus", config)


def test_launcher_and_threads_follow_the_executor(monkeypatch):
    config = sweep(cluster={"cpus_per_proc": 3})
    local = SimpleNamespace(executor_plugin=SimpleNamespace(cli_prefix="local"), remote_exec=False)
    submit = SimpleNamespace(executor_plugin=SimpleNamespace(cli_prefix="slurm"), remote_exec=False)
    step = SimpleNamespace(executor_plugin=SimpleNamespace(cli_prefix="local"), remote_exec=True)
    on_local = "--launcher auto --threads-per-proc 0"
    on_slurm = "--launcher srun --threads-per-proc 3"
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    assert cluster.bench_launch(config, local)(None) == on_local
    assert cluster.bench_launch(config, submit)(None) == on_slurm
    assert cluster.bench_launch(config, step)(None) == on_local  # remote, but not inside Slurm
    monkeypatch.setenv("SLURM_JOB_ID", "42")
    assert cluster.bench_launch(config, step)(None) == on_slurm
    assert cluster.bench_launch(config, local)(None) == on_local  # local run inside salloc


def test_resource_functions_size_each_layout_once(monkeypatch):
    config = sweep()
    calls = []
    sized = cluster.bench_resources
    monkeypatch.setattr(
        cluster, "bench_resources", lambda *a, **k: calls.append(a) or sized(*a, **k)
    )
    tasks = cluster.bench_resource("tasks", config)
    wildcards = SimpleNamespace(nodes="1", procs="4")
    assert [tasks(wildcards) for _ in range(3)] == [4, 4, 4]
    assert tasks(wildcards, attempt=2) == 4
    assert len(calls) == 2  # one per (layout, attempt)


def test_thread_settings_do_not_depend_on_the_executor():
    config = sweep(threads_per_proc=2, cluster={"cpus_per_proc": 3})
    assert cluster.thread_settings(config) == "threads_per_proc=2 cpus_per_proc=3"


def test_measured_settings_are_one_shell_quoted_string():
    options = remeasure.measured_settings(sweep(timeout_s=90))
    assert shlex.split(options)[:2] == ["--device", "cpu"]
    assert "--warmup-iters" in options and "--timeout" not in options


def test_max_procs_per_node_drops_layouts_a_node_cannot_hold():
    config = sweep(nodes=[1, 2], procs=[1, 2, 4, 8, 16], max_procs_per_node=8)
    expected = [(1, 1), (1, 2), (1, 4), (1, 8), (2, 2), (2, 4), (2, 8), (2, 16)]
    assert cfg.run_layouts(config) == expected
    assert (1, 16) in cfg.run_layouts(sweep(nodes=[1], procs=[16]))


def test_a_dry_run_is_known_from_the_command_line():
    from dlperf.pipeline.cluster import is_dry_run

    assert is_dry_run(["snakemake", "-n"]) and is_dry_run(["snakemake", "-np", "all"])
    assert is_dry_run(["snakemake", "--dry-run"]) and is_dry_run(["snakemake", "--dryrun"])
    assert not is_dry_run(["snakemake", "--cores", "2", "-p", "--configfile", "n.yaml"])


def planning(cluster_run: bool):
    """The Snakemake process that plans a run: with ``--jobs`` (a cluster) or ``--cores``."""
    nodes = 50 if cluster_run else None
    return SimpleNamespace(
        remote_exec=False,
        subprocess_exec=False,
        resource_settings=SimpleNamespace(nodes=nodes),
        executor_plugin=SimpleNamespace(cli_prefix="slurm" if cluster_run else "local"),
    )


def test_benchmark_jobs_ask_for_whole_nodes_by_default():
    config = sweep(procs=[1, 2])
    layouts = cfg.run_layouts(config)
    assert config["cluster"]["exclusive"] is True
    resources = cluster.rule_resources(config, layouts, planning(cluster_run=True))
    assert resources["slurm_extra"] == "--exclusive"
    assert " --exclusive" in sbatch_line(cluster.bench_resources(1, 2, config))


def test_a_site_that_forbids_exclusive_nodes_turns_it_off():
    config = sweep(procs=[1, 2], cluster={"exclusive": False})
    resources = cluster.rule_resources(config, cfg.run_layouts(config), planning(cluster_run=True))
    assert resources["slurm_extra"] == ""
    assert "--exclusive" not in sbatch_line(cluster.bench_resources(1, 2, config))
    with pytest.raises(cfg.ConfigError, match="exclusive"):
        cfg.validated({"cluster": {"exclusive": "no"}})
