"""`snakemake --profile slurm` from the repository root, as dry runs: they need no cluster
(Snakemake 9.27 plans with the Slurm executor's settings without calling Slurm), so they run
in CI everywhere."""

from __future__ import annotations

import re
import subprocess

import pytest

from dlperf import config as cfg
from dlperf.bench import spec
from dlperf.pipeline import cluster

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
    """wildcards line -> resources of every planned bench job (inside job groups too)."""
    text = "\n".join(line.strip() for line in text.splitlines())
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
    # Whole nodes for every benchmark (cluster.exclusive, true by default): sbatch --exclusive.
    assert {res["slurm_extra"] for res in jobs.values()} == {"--exclusive"}


def planned_groups(text: str) -> dict[str, list[str]]:
    """Group job header -> wildcards lines of the bench jobs it holds, in plan order."""
    groups: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        header = re.search(r"Group job (\S+) \(jobs", line)
        if header:
            current = groups.setdefault(f"{header.group(1)}#{len(groups)}", [])
        elif current is not None and line.strip().startswith("wildcards: framework="):
            current.append(line.strip())
    return groups


def test_benchmarks_are_grouped_by_layout_ten_per_slurm_job(workflow_bin, repo, tmp_path):
    """The profile's job groups: every bench job is in a group of its own layout, at most
    10 to a Slurm job, so the default sweep's 108 runs go out as 12 jobs."""
    text = dry_run(workflow_bin, repo, tmp_path, "--configfile", "config/config.yaml")
    groups = {name: wcs for name, wcs in planned_groups(text).items() if name.startswith("bench_")}
    runs = cfg.run_configs(cfg.load(repo / "config" / "config.yaml"))
    assert sum(len(wcs) for wcs in groups.values()) == len(runs)
    for name, wildcards in groups.items():
        nodes, procs = re.match(r"bench_n(\d+)_p(\d+)#", name).groups()
        assert 1 <= len(wildcards) <= 10, (name, wildcards)
        assert all(f"nodes={nodes}, procs={procs}," in wc for wc in wildcards), (name, wildcards)
    per_layout = {}
    for name in groups:
        per_layout[name.split("#")[0]] = per_layout.get(name.split("#")[0], 0) + 1
    assert per_layout == {"bench_n1_p1": 6, "bench_n1_p2": 6}  # 54 runs each, 10 a job


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
