"""The driver of one benchmark job: start the workers, collect rank 0's timings,
write the run record -- also when the run crashed, ran out of memory or timed out.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import dlperf
from dlperf.errors import InputFileError
from dlperf.io import atomic_write_json, read_json

from .backends import CLUSTER_VARIABLES, service_layout
from .cpuload import foreign_cpu
from .datasets import DIGITS_IMAGES, DIGITS_LABELS, digits_to_cifar_shape
from .envinfo import available_cores, host_environment
from .options import TF32_OVERRIDE, precision_environment
from .processes import Command, LaunchResult, Programs, local_plan, run_processes, srun_plan
from .record import new_record
from .resources import combine_ranks
from .spec import RunConfig, run_features

STATUSES = ("ok", "failed", "timeout", "oom")
# Every library's thread-pool size a worker's compute runs on: all set to its thread count.
THREAD_VARIABLES = (
    "DLPERF_THREADS",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "TF_NUM_INTRAOP_THREADS",
)


class EnvironmentMissing(RuntimeError):
    pass


class LayoutUnavailable(RuntimeError):
    """The launcher cannot place the workers as the configuration asks."""


def environment_description(env_file: str | os.PathLike) -> dict:
    """The framework environment description `dlperf env` wrote; an InputFileError naming the
    file `dlperf bench --env` wants when ``env_file`` is another JSON file (a model artifact or
    run record given by mistake), which is left alone."""
    info = read_json(env_file)
    if not (isinstance(info, dict) and isinstance(info.get("python"), str)):
        raise InputFileError(
            f"{env_file} is not a framework environment description (it has no 'python' "
            "field); pass the file `dlperf env` wrote, results/envs/<framework>.json"
        )
    return info


def framework_python(env_file: str | os.PathLike) -> str:
    """The interpreter of a framework environment, from the file the env rule wrote."""
    try:
        info = environment_description(env_file)
    except (OSError, ValueError) as exc:
        raise EnvironmentMissing(
            f"cannot read the framework environment description {env_file}: {exc}. "
            "Build it with `snakemake results/envs/<framework>.json` (or `dlperf env`)."
        ) from exc
    python = info.get("python")
    if not python or not Path(python).exists():
        raise EnvironmentMissing(
            f"the framework environment named in {env_file} is gone ({python}). "
            f"Delete {env_file} and re-run the workflow to rebuild it."
        )
    return python


def threads_per_worker(config: RunConfig, cores: int) -> int:
    if config.threads_per_proc > 0:
        return config.threads_per_proc
    return max(1, cores // config.procs_per_node)


def _package_path(work_dir: Path) -> str:
    """A directory holding only ``dlperf``: put on the workers' PYTHONPATH so the
    framework environment sees this package and nothing else of ours."""
    shim = work_dir / "pythonpath"
    shim.mkdir(parents=True, exist_ok=True)
    link = shim / "dlperf"
    if not link.exists():
        link.symlink_to(Path(dlperf.__file__).resolve().parent, target_is_directory=True)
    return str(shim)


def worker_environment(work_dir: Path, threads: int, config: RunConfig) -> dict:
    env = dict(os.environ)
    # The precision's own switches only: an inherited TF32 override would make a tf32 or
    # mixed-precision run strict FP32 without its record saying so.
    env.pop(TF32_OVERRIDE, None)
    env.update(precision_environment(config.framework, config.precision))
    env.update(dict.fromkeys(THREAD_VARIABLES, str(threads)))
    env.update(
        PYTHONPATH=_package_path(work_dir),
        PYTHONUNBUFFERED="1",
        # MXNet: one engine worker thread, the OpenMP pool does the work.
        MXNET_CPU_WORKER_NTHREADS="1",
        TF_CPP_MIN_LOG_LEVEL="2",
        TF_NUM_INTEROP_THREADS="1",
    )
    env.pop("PYTHONHOME", None)
    return env


def use_srun(config: RunConfig, launcher: str) -> bool:
    if launcher == "srun":
        return True
    if launcher == "local":
        return False
    # auto: inside a Slurm allocation that has room for one task per worker
    return "SLURM_JOB_ID" in os.environ and config.procs > 1 and shutil.which("srun") is not None


def worker_commands(
    config: RunConfig, python: str, work_dir: Path, env: dict, threads: int, srun: bool
) -> list[Command]:
    """Every process of the run: the workers (one per rank, or one srun starting them)
    and, for distributed MXNet, the parameter server's scheduler and server."""
    worker_argv = [python, "-m", "dlperf.bench.worker", "--config", str(work_dir / "config.json")]
    worker_argv += ["--work-dir", str(work_dir)]
    service_argv = [python, "-m", "dlperf.bench.mx_service", "--work-dir", str(work_dir)]
    layout = service_layout(config.framework)
    programs = Programs(worker_argv, service_argv, env, layout, CLUSTER_VARIABLES)
    if srun:
        return srun_plan(config.procs, config.nodes, threads, programs)
    return local_plan(config.procs, programs)


def check_launcher_places(config: RunConfig, srun: bool) -> None:
    """Refuse, before anything runs, a configuration the launcher cannot lay out: the local
    launcher starts every worker on this host, so it cannot run a multi-node configuration,
    and recording one as such would feed single-host timings to the inter-node term."""
    if config.nodes > 1 and not srun:
        raise LayoutUnavailable(
            f"this configuration asks for {config.nodes} nodes, but the local launcher starts "
            "every worker on this host. Run it on a cluster (`snakemake --profile slurm`, or "
            f"`dlperf bench --launcher srun` inside a Slurm allocation of {config.nodes} "
            "nodes), or leave multi-node configurations out of a local sweep (nodes: [1])"
        )


def check_hosts(config: RunConfig, rank_hosts: list[str]) -> None:
    """A run is what it says only if its workers ran on as many hosts as it has nodes."""
    hosts = sorted(set(rank_hosts))
    if len(hosts) != config.nodes:
        raise LayoutUnavailable(
            f"the configuration asks for {config.nodes} node(s), but its {len(rank_hosts)} "
            f"workers ran on {len(hosts)} host(s) ({', '.join(hosts)}); run it in a Slurm "
            f"allocation of {config.nodes} nodes (the Slurm profile asks for them)"
        )


def export_digits(work_dir: Path) -> None:
    """Write the digits dataset as .npy files for the workers (this side has scikit-learn)."""
    try:
        from sklearn.datasets import load_digits
    except ImportError as exc:
        raise RuntimeError(
            "dataset 'digits' needs scikit-learn in the environment that runs `dlperf bench` "
            "(the workflow's own environment has it: pip install scikit-learn)"
        ) from exc
    import numpy as np

    digits = load_digits()
    np.save(work_dir / DIGITS_IMAGES, digits_to_cifar_shape(digits.data))
    np.save(work_dir / DIGITS_LABELS, digits.target.astype(np.int64))


def results_by_rank(results: list[dict]) -> list[dict]:
    return sorted(results, key=lambda r: r["rank"])


def summarise_failure(
    results: list[dict], launch: LaunchResult, timeout_s: float
) -> tuple[str, str]:
    """Status and error text of a run that did not finish cleanly."""
    failed = [r for r in results if r.get("status") != "ok"]
    if launch.timed_out:
        return "timeout", f"the run exceeded its time limit of {timeout_s:.0f} s and was ended"
    if failed:
        first = failed[0]
        return first["status"], f"rank {first['rank']}: {first.get('error', 'unknown error')}"
    killed = [o for o in launch.outcomes if o.returncode in (-9, 137) and not o.ended_by_launcher]
    if killed:
        return "oom", (
            f"{killed[0].name} was killed (SIGKILL), most likely by the out-of-memory killer; "
            f"last output:\n{killed[0].tail(1500)}"
        )
    # Workers first: a service ended by us after a worker crashed is a consequence, not the cause.
    bad = [o for o in launch.workers if o.returncode != 0] or [
        o for o in launch.outcomes if o.returncode != 0
    ]
    if bad:
        return "failed", f"{bad[0].name} exited with code {bad[0].returncode}:\n{bad[0].tail(2000)}"
    return "failed", "rank 0 wrote no result"


def run_benchmark(
    config: RunConfig, env_file: str | os.PathLike, out: str | os.PathLike, launcher: str = "auto"
) -> dict:
    """Run one benchmark job and write its run record to ``out``. Returns the record."""
    out = Path(out)
    host = host_environment()
    record = new_record(config.to_dict(), host, run_features(config))
    work_dir = out.parent / f".{out.stem}.work"
    shutil.rmtree(work_dir, ignore_errors=True)
    work_dir.mkdir(parents=True)
    try:
        python = framework_python(env_file)
        record["environment"]["framework_env"] = str(env_file)
        threads = threads_per_worker(config, available_cores())
        record["environment"]["threads_per_worker"] = threads
        (work_dir / "config.json").write_text(json.dumps(config.to_dict()))
        if config.dataset == "digits":
            export_digits(work_dir)
        srun = use_srun(config, launcher)
        record["launcher"] = "srun" if srun else ("local" if config.procs > 1 else "single")
        check_launcher_places(config, srun)
        commands = worker_commands(
            config, python, work_dir, worker_environment(work_dir, threads, config), threads, srun
        )
        result = run_processes(commands, work_dir / "logs", timeout_s=config.timeout_s)
        for outcome in result.outcomes:
            sys.stdout.write(
                f"--- {outcome.name} (exit {outcome.returncode}) ---\n{outcome.tail()}\n"
            )
        rank0 = work_dir / "rank0.json"
        results = results_by_rank([read_json(p) for p in work_dir.glob("rank*.json")])
        # Every rank's host, in rank order (a rank that wrote nothing is missing).
        record["rank_hosts"] = [r.get("hostname") for r in results]
        all_ok = len(results) == config.procs and all(r.get("status") == "ok" for r in results)
        if rank0.exists() and all_ok and not result.timed_out:
            timing = read_json(rank0)
            record["environment"].update(timing.pop("framework_environment"))
            record["dist"] = timing.pop("dist")
            timing.pop("status")
            timing.pop("rank")
            host_name = timing.pop("hostname")
            cpu_window = timing.pop("cpu_window")
            record.update(timing)
            # Others' CPU use during the timed epoch: flags runs a neighbour disturbed.
            record["noise"] = {
                "cpu_window_rank0": cpu_window,
                **foreign_cpu(results, host_name, timing["epoch_time_s"]),
            }
            record["resources"] = combine_ranks(results_by_rank(results))
            record["ranks"] = len(results)
            check_hosts(config, record["rank_hosts"])
            record["status"] = "ok"
            if any(o.returncode != 0 for o in result.workers):
                # e.g. gloo aborting at teardown after every rank reported its result
                record["warning"] = "a worker exited non-zero after reporting its result"
        else:
            status, error = summarise_failure(results, result, config.timeout_s)
            record["status"], record["error"] = status, error
            record["ranks"] = len(results)
    except (EnvironmentMissing, LayoutUnavailable) as exc:
        record["error"] = str(exc)
    except Exception as exc:  # noqa: BLE001 -- the record must say what went wrong
        record["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        shutil.rmtree(work_dir, ignore_errors=True)
    atomic_write_json(out, record)
    return record
