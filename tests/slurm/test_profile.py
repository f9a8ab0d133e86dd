"""`snakemake --profile slurm` from the repository root, as dry runs: they need no cluster
(Snakemake 9.27 plans with the Slurm executor's settings without calling Slurm), so they run
in CI everywhere."""

from __future__ import annotations

import re
import subprocess

import pytest

from dlperf import cluster
from dlperf import config as cfg
from dlperf.bench import spec

pytestmark = [pytest.mark.slow]


def dry_run(workflow_bin, repo, workdir, *args):
    """From the repository root (where `--profile slurm` is found), with the results in an
    empty ``workdir``: a finished `make run` in the checkout leaves nothing to plan there."""
    proc = subprocess.run(
        [
            str(workflow_bin / "snakemake"),
            "--profile",
            "slurm",
            "--directory",
            str(workdir),
            "-n",
            *args,
        ],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    return proc.stdout + proc.stderr


def planned_bench_jobs(text: str) -> dict[str, dict[str, str]]:
    """wildcards line -> resources of every planned bench job."""
    jobs = {}
    for block in re.split(r"\n(?=\[|rule |localrule )", text):
        if not block.startswith("rule bench:"):
            continue
        wildcards = re.search(r"wildcards: (.*)", block).group(1)
        resources = re.search(r"resources: (.*)", block).group(1)
        jobs[wildcards] = dict(item.split("=", 1) for item in resources.split(", "))
    return jobs


def test_profile_is_found_from_the_repository_root(workflow_bin, repo, tmp_path):
    assert (repo / "slurm").resolve() == (repo / "profiles" / "slurm").resolve()
    # The config named explicitly: `configfile:` is looked up in the working directory.
    text = dry_run(workflow_bin, repo, tmp_path, "--configfile", "config/config.yaml")
    assert "Using profiles slurm and workflow specific profile profiles/default" in text
    jobs = planned_bench_jobs(text)
    default = cfg.load(repo / "config" / "config.yaml")
    assert len(jobs) == len(cfg.run_configs(default))
    two = next(res for wc, res in jobs.items() if "procs=2," in wc)
    layout = (two["nodes"], two["tasks"], two["tasks_per_node"], two["mpi"], two["gres"])
    assert layout == ("1", "2", "0", "srun", "")


def test_gpu_config_plans_one_job_per_configuration_with_its_gpus(workflow_bin, repo, tmp_path):
    gpu = cfg.validated(cfg.yaml.safe_load((repo / "config" / "gpu.yaml").read_text()))
    missing = [n for n in gpu["networks"] if n not in spec.NETWORKS]
    if missing:
        pytest.skip(f"networks {missing} are not in dlperf.bench.spec on this branch yet")
    text = dry_run(workflow_bin, repo, tmp_path, "--configfile", "config/gpu.yaml")
    jobs = planned_bench_jobs(text)
    assert len(jobs) == len(cfg.run_configs(gpu))
    seen_layouts = set()
    for wildcards, res in jobs.items():
        nodes = int(re.search(r"nodes=(\d+)", wildcards).group(1))
        procs = int(re.search(r"procs=(\d+)", wildcards).group(1))
        per_node = procs // nodes
        seen_layouts.add((nodes, procs))
        assert 1 <= per_node <= 8
        expected = cluster.bench_resources(nodes, procs, gpu)
        assert res["gres"] == f"gpu:{per_node}"
        assert res["nodes"] == str(nodes) and res["cpus_per_task"] == "8"
        assert res["mem_mb"] == str(16000 * per_node) and res["runtime"] == "45"
        assert res["mpi"] == ("srun" if procs > 1 else "")
        assert res["tasks_per_node"] == str(expected["tasks_per_node"])
        assert res["tasks"] == str(expected["tasks"])
    assert {(1, 8), (2, 16), (4, 32), (4, 4)} <= seen_layouts
