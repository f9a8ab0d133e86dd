"""`snakemake --profile slurm` against a live local Slurm cluster (see conftest.py).

Two sweeps run at once, each from its own directory holding the config and a `slurm`
link to profiles/slurm (as a user's checkout has one):

* CPU: one single-worker and one 2-worker configuration -> two Slurm jobs (job groups of
  one configuration each: the profile groups benchmarks by layout); the 2-worker job has 2
  tasks and its workers are started with srun and find their ranks from Slurm;
* GPU (device: cuda): a 1-GPU configuration is scheduled onto a fake GPU and recorded as a
  failed run (no usable CUDA device), and a 4-GPU configuration, more GPUs than the node
  has, is rejected by sbatch: Snakemake reports that job and completes the rest.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slurm, pytest.mark.slow]

SNAKEMAKE_TIMEOUT = 420  # seconds, per Snakemake call (killed after that)
# Test-only settings on top of the profile: no slurmdbd here, so squeue for the status;
# short polling so short jobs finish quickly.
TEST_OPTIONS = [
    "--slurm-status-command",
    "squeue",
    "--slurm-init-seconds-before-status-checks",
    "2",
    "--latency-wait",
    "5",
]
SWEEP = {
    "frameworks": ["pytorch"],
    "networks": ["mlp"],
    "nodes": [1],
    "batch_sizes": [8],
    "data_sizes": [64],
    "repeats": 1,
    "warmup_iters": 1,
    "timeout_s": 120,
    "cluster": {"mem_mb_per_proc": 1000},
    # A test machine is shared: keep going whatever share of the runs was disturbed.
    "preflight": {"max_disturbed_fraction": 1.0},
}
CPU = {**SWEEP, "procs": [1, 2]}
GPU = {**SWEEP, "procs": [1, 4], "device": "cuda"}


def record_path(procs: int) -> str:
    return f"results/runs/pytorch/mlp/n1_p{procs}_b8_d64_r0.json"


def prepare(workdir: Path, repo: Path, sweep: dict) -> None:
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "slurm").symlink_to(repo / "profiles" / "slurm", target_is_directory=True)
    (workdir / "config.yaml").write_text(json.dumps(sweep))


def snakemake_argv(workflow_bin: Path, repo: Path, *args: str) -> list[str]:
    return [
        str(workflow_bin / "snakemake"),
        "--snakefile",
        str(repo / "Snakefile"),
        "--profile",
        "slurm",
        "--configfile",
        "config.yaml",
        *TEST_OPTIONS,
        *args,
    ]


def submitted_jobs(log: str) -> dict[str, list[str]]:
    """Slurm job ids per rule/wildcards (or job group) directory, from Snakemake's
    submission lines."""
    jobs: dict[str, list[str]] = {}
    pattern = (
        r"submitted with SLURM jobid (\d+) "
        r"\(log: .*/logs/slurm/((?:rule|group)_[^/]+(?:/[^/]+)?)/\d+\.log\)"
    )
    for job_id, where in re.findall(pattern, log):
        jobs.setdefault(where, []).append(job_id)
    return jobs


def scontrol(job_id: str) -> dict[str, str]:
    out = subprocess.run(
        ["scontrol", "-o", "show", "job", job_id], capture_output=True, text=True, timeout=30
    ).stdout
    return dict(item.split("=", 1) for item in out.split() if "=" in item)


@pytest.fixture(scope="module")
def pytorch_env(workflow_bin, repo, tmp_path_factory):
    """Build (or reuse) the PyTorch environment up front, so that the Slurm jobs only look
    it up (a fresh build downloads PyTorch, which is not what these tests time)."""
    out = tmp_path_factory.mktemp("env") / "pytorch.json"
    proc = subprocess.run(
        [
            str(workflow_bin / "dlperf"),
            "env",
            "--framework",
            "pytorch",
            "--requirements",
            str(repo / "envs" / "pytorch.txt"),
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def sweeps(local_slurm, pytorch_env, workflow_bin, repo, tmp_path_factory):
    """Run the CPU and the GPU sweep through Slurm at the same time."""
    base = tmp_path_factory.mktemp("slurm")
    runs = {}
    # --verbose for the GPU sweep: Snakemake reports a group job sbatch refused without the
    # plugin's message; the debug lines still show each sbatch call.
    for name, sweep, options in (
        ("cpu", CPU, [record_path(1), record_path(2)]),
        ("gpu", GPU, [record_path(1), record_path(4), "--verbose"]),
    ):
        workdir = base / name
        prepare(workdir, repo, sweep)
        log = open(workdir / "snakemake.out", "w")
        proc = subprocess.Popen(
            snakemake_argv(workflow_bin, repo, *options),
            cwd=workdir,
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
        )
        runs[name] = {"dir": workdir, "proc": proc, "log_fh": log}
    deadline = time.monotonic() + SNAKEMAKE_TIMEOUT
    for run in runs.values():
        try:
            run["proc"].wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            for other in runs.values():
                other["proc"].kill()
            pytest.fail(
                f"snakemake did not finish within {SNAKEMAKE_TIMEOUT} s: "
                + (run["dir"] / "snakemake.out").read_text()[-4000:]
            )
        run["log_fh"].close()
        run["rc"] = run["proc"].returncode
        run["log"] = (run["dir"] / "snakemake.out").read_text()
    return runs


def test_cpu_sweep_runs_as_one_slurm_job_per_layout(sweeps):
    run = sweeps["cpu"]
    assert run["rc"] == 0, run["log"][-5000:]
    jobs = submitted_jobs(run["log"])
    bench = {k: v for k, v in jobs.items() if k.startswith("group_bench_")}
    assert sorted(bench) == ["group_bench_n1_p1_bench", "group_bench_n1_p2_bench"]
    assert all(len(ids) == 1 for ids in bench.values()), bench
    listed = subprocess.run(
        ["squeue", "--states=all", "-h", "-o", "%i|%T|%k"],
        capture_output=True,
        text=True,
        timeout=30,
    ).stdout
    for where, (job_id,) in bench.items():
        rows = [line.split("|") for line in listed.splitlines() if line.split("|")[0] == job_id]
        assert len(rows) == 1, (job_id, listed)
        _, state, comment = rows[0]
        assert state == "COMPLETED"
        assert comment == "rule_" + where.removeprefix("group_")

    # the 2-worker configuration: one job, 2 tasks on 1 node, 1000 MiB per worker
    job = scontrol(bench["group_bench_n1_p2_bench"][0])
    assert job["NumNodes"] == "1" and job["NumTasks"] == "2" and job["CPUs/Task"] == "1", job
    assert job["MinMemoryNode"] == "2000M", job


def test_distributed_run_is_launched_with_srun_and_ranks_come_from_slurm(sweeps):
    workdir = sweeps["cpu"]["dir"]
    record = json.loads((workdir / record_path(2)).read_text())
    assert record["status"] == "ok", record.get("error")
    assert record["ranks"] == 2 and record["launcher"] == "srun"
    assert record["dist"]["source"] == "slurm" and record["dist"]["world_size"] == 2
    assert record["environment"]["slurm_job_id"] is not None
    single = json.loads((workdir / record_path(1)).read_text())
    assert single["status"] == "ok" and single["launcher"] == "srun" and single["ranks"] == 1
    assert single["environment"]["threads_per_worker"] == 1  # the job's --cpus-per-task


def test_second_invocation_plans_nothing(sweeps, workflow_bin, repo):
    workdir = sweeps["cpu"]["dir"]
    proc = subprocess.run(
        snakemake_argv(workflow_bin, repo, "-n", record_path(1), record_path(2)),
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=SNAKEMAKE_TIMEOUT,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "Nothing to be done" in proc.stdout + proc.stderr


def test_gpu_run_gets_a_gpu_and_is_recorded_as_failed_without_cuda(sweeps):
    run = sweeps["gpu"]
    jobs = submitted_jobs(run["log"])
    (job_id,) = jobs["group_bench_n1_p1_bench"]
    assert scontrol(job_id)["TresPerNode"] == "gres:gpu:1"
    record = json.loads((run["dir"] / record_path(1)).read_text())
    assert record["status"] == "failed"
    assert "no usable CUDA device" in record["error"], record["error"]
    # Whole nodes (cluster.exclusive, the default): Slurm gives the job every GPU of its node.
    visible = record["environment"]["slurm"].get("CUDA_VISIBLE_DEVICES", "").split(",")
    assert visible and set(visible) <= {"0", "1"}, visible
    assert record["config"]["device"] == "cuda"


def test_job_the_cluster_cannot_run_is_reported_and_the_rest_completes(sweeps):
    run = sweeps["gpu"]
    assert run["rc"] != 0
    assert "Error in group bench_n1_p4" in run["log"]
    assert "group_bench_n1_p4_bench" not in submitted_jobs(run["log"])
    # The reason, which Snakemake does not repeat for a group job: sbatch refuses the request.
    refused = subprocess.run(
        ["sbatch", "--test-only", "--nodes=1", "--ntasks=4", "--gres=gpu:4", "--wrap", "true"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert refused.returncode != 0
    assert "Requested node configuration is not available" in refused.stderr
    assert not (run["dir"] / record_path(4)).exists()
    assert (run["dir"] / record_path(1)).exists()  # the other job completed


def test_retries_ask_for_more_time_and_memory(sweeps):
    """The rejected job is retried (profile `retries: 2`) with attempt x runtime and memory;
    its sbatch lines (in the error messages) show the whole request."""
    calls = re.findall(r"sbatch call:\s+(sbatch .*)", sweeps["gpu"]["log"])
    calls = [c for c in calls if "rule_bench_n1_p4_bench" in c]
    assert len(calls) == 3, calls
    for attempt, call in enumerate(calls, start=1):
        # timeout_s 120 -> 2 + 10 minutes; 4 workers x 1000 MiB
        assert f" -t {12 * attempt} --mem {4000 * attempt} " in call, call
        assert "--nodes=1 --ntasks=4 --cpus-per-task=1" in call, call
        assert "--gres=gpu:4" in call and "--ntasks-per-gpu" not in call, call
        assert f"--attempt {attempt} " in call, call
