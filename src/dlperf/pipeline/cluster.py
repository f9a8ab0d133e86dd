"""What one benchmark job asks a cluster scheduler for, as Snakemake resources.

The bench rule's ``resources:`` call :func:`bench_resource` per resource name, so a sweep
asks for exactly the nodes, tasks, GPUs, CPUs and memory each configuration uses. The
names are those of the Snakemake Slurm executor plugin (2.x), chosen so that it builds

    sbatch --nodes=N --ntasks-per-node=P/N --cpus-per-task=C --mem=M -t T [--gres=gpu:P/N]
           [--exclusive]

for a run of P workers on N nodes (``--ntasks=P`` instead on one node, or one worker a
node), and the rule then starts one worker per task with
``srun`` itself (``dlperf bench --launcher srun``). Cluster-specific settings (partition,
account, GPU type) are not decided here: they belong in the Slurm profile. Whole nodes
(``--exclusive``, the plugin's ``slurm_extra``) are asked for unless ``cluster.exclusive`` is
false: a run is marked disturbed by every process on its host, other users' jobs included.

Traps of the plugin this mapping avoids (plugin 2.8.0):

* for a GPU job it reuses ``tasks`` as ``--ntasks-per-gpu`` unless ``tasks_per_gpu`` is
  set, and ``--ntasks-per-gpu`` contradicts ``--ntasks-per-node``: ``tasks_per_gpu`` is
  therefore always 0 (= not emitted);
* an ``mpi`` job needs ``tasks`` > 1 or ``tasks_per_node`` > 1 but not both, and
  ``tasks_per_node`` must be > 1: one worker per node uses ``tasks`` = P instead;
* the job-step executor wraps a job without an ``mpi`` resource in ``srun -n1``, where a
  nested ``srun`` for the workers would need ``--overlap``; with the ``mpi`` key present
  (also as "" for a single worker, which the submit side treats as "not MPI") the rule's
  command runs directly in the batch script.
"""

from __future__ import annotations

import functools
import math
import os
import re
import shlex
from collections.abc import Mapping, Sequence

from dlperf.errors import ConfigError

#: Resource names :func:`bench_resources` sets, in the order the rule lists them.
RESOURCE_NAMES = (
    "nodes",
    "tasks",
    "tasks_per_node",
    "tasks_per_gpu",
    "mpi",
    "gres",
    "cpus_per_task",
    "mem_mb",
    "runtime",
    "slurm_extra",
)

#: The sbatch option that asks for whole nodes (``cluster.exclusive``, docs/cluster.md).
EXCLUSIVE = "--exclusive"

#: Minutes added to the benchmark's own time limit (``timeout_s``) for the job's time
#: limit: starting the interpreter, importing the framework, writing the record.
RUNTIME_MARGIN_MIN = 10

#: Executors that run jobs inside Slurm allocations (the submitting side and the job step).
SLURM_EXECUTORS = ("slurm", "slurm-jobstep")


class ClusterConfigError(ConfigError):
    pass


def _as_int(value, name: str) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ClusterConfigError(f"{name} must be an integer, got {value!r}") from None
    if number < 1:
        raise ClusterConfigError(f"{name} must be at least 1, got {number}")
    return number


def cpus_per_proc(config: Mapping) -> int:
    """CPUs for each worker: ``cluster.cpus_per_proc``, else ``threads_per_proc``, else 1."""
    cluster = config.get("cluster") or {}
    threads = int(config.get("threads_per_proc") or 0)
    cpus = cluster.get("cpus_per_proc")
    if cpus is None:
        return max(1, threads)
    cpus = _as_int(cpus, "cluster.cpus_per_proc")
    if threads > cpus:
        raise ClusterConfigError(
            f"threads_per_proc ({threads}) is larger than cluster.cpus_per_proc ({cpus}): "
            "each worker would run more threads than it has CPUs. Raise cluster.cpus_per_proc "
            "or lower threads_per_proc."
        )
    return cpus


def _site_max(config: Mapping, key: str) -> int | None:
    """The site's largest request for ``cluster.<key>`` (the partition's limit), or None."""
    value = (config.get("cluster") or {}).get(key)
    return None if value is None else _as_int(value, f"cluster.{key}")


def _retried(first: int, attempt: int, config: Mapping, key: str, unit: str) -> int:
    """``first`` (attempt 1's request) grown with the attempt number, never past the site's
    maximum ``cluster.<key>``: a retry asks for more, up to what the site allows, instead of
    a multiple Slurm refuses (attempt 3 of a 45-minute job asked for 135, past many limits)."""
    limit = _site_max(config, key)
    if limit is not None and first > limit:
        raise ClusterConfigError(
            f"a benchmark job asks for {first} {unit}, more than cluster.{key} ({limit}): "
            f"lower the request or raise cluster.{key} to the site's limit"
        )
    grown = first * _as_int(attempt, "attempt")
    return grown if limit is None else min(grown, limit)


def runtime_minutes(config: Mapping, attempt: int = 1) -> int:
    """Time limit of a job in minutes: ``cluster.runtime_min`` (default: the benchmark's
    ``timeout_s`` plus a margin), times the attempt number up to ``cluster.max_runtime_min``,
    so that a job the scheduler ended for its time limit is retried with more."""
    cluster = config.get("cluster") or {}
    base = cluster.get("runtime_min")
    if base is None:
        base = math.ceil(float(config["timeout_s"]) / 60.0) + RUNTIME_MARGIN_MIN
    first = _as_int(base, "cluster.runtime_min")
    return _retried(first, attempt, config, "max_runtime_min", "minutes")


def exclusive(config: Mapping) -> bool:
    """Whether benchmark jobs ask for whole nodes: ``cluster.exclusive``, true by default."""
    return bool((config.get("cluster") or {}).get("exclusive", True))


def mem_mb(config: Mapping, procs_per_node: int, attempt: int = 1) -> int:
    """Memory per node in MiB: ``cluster.mem_mb_per_proc`` per worker on the node, times the
    attempt number up to ``cluster.max_mem_mb`` (a job killed for exceeding its memory is
    retried with more)."""
    cluster = config.get("cluster") or {}
    per_proc = _as_int(cluster.get("mem_mb_per_proc", 4000), "cluster.mem_mb_per_proc")
    return _retried(per_proc * procs_per_node, attempt, config, "max_mem_mb", "MiB a node")


def bench_resources(
    nodes: int, procs: int, config: Mapping, attempt: int = 1
) -> dict[str, int | str]:
    """Snakemake resources of the benchmark job of ``procs`` workers on ``nodes`` nodes."""
    nodes = _as_int(nodes, "nodes")
    procs = _as_int(procs, "procs")
    if procs % nodes:
        raise ClusterConfigError(
            f"procs ({procs}) must be a multiple of nodes ({nodes}): every node runs the same "
            "number of workers"
        )
    per_node = procs // nodes
    distributed = procs > 1
    spread = nodes > 1 and per_node > 1
    resources: dict[str, int | str] = {
        "nodes": nodes,
        # One task per worker. Several nodes with several workers each need --ntasks-per-node
        # (Slurm would not split --ntasks evenly); otherwise --ntasks says it, and
        # tasks_per_node stays 0 for every single-node layout: one value for the whole sweep
        # (see sweep_resource). The module docstring says why one of the two is always 0.
        "tasks": 0 if spread else procs,
        "tasks_per_node": per_node if spread else 0,
        "tasks_per_gpu": 0,
        "mpi": "srun" if distributed else "",
        "gres": f"gpu:{per_node}" if config.get("device") == "cuda" else "",
        "cpus_per_task": cpus_per_proc(config),
        "mem_mb": mem_mb(config, per_node, attempt),
        "runtime": runtime_minutes(config, attempt),
        "slurm_extra": EXCLUSIVE if exclusive(config) else "",
    }
    return resources


def bench_resource(name: str, config: Mapping):
    """A resource function for the bench rule: ``f(wildcards, attempt) -> value``."""
    if name not in RESOURCE_NAMES:
        raise KeyError(f"unknown bench resource {name!r}; known: {', '.join(RESOURCE_NAMES)}")

    def resource(wildcards, attempt=1):
        return _layout_resources(wildcards.nodes, wildcards.procs, attempt)[name]

    # Snakemake asks once per job and resource; a sweep has few layouts, so each is sized once.
    @functools.cache
    def _layout_resources(nodes: str, procs: str, attempt: int) -> dict[str, int | str]:
        return bench_resources(int(nodes), int(procs), config, attempt)

    resource.__name__ = f"bench_{name}"
    return resource


#: Resources that do not change with the attempt number (memory and time limit do).
ATTEMPT_INDEPENDENT = tuple(name for name in RESOURCE_NAMES if name not in ("mem_mb", "runtime"))


def sweep_resource(name: str, config: Mapping, layouts: list[tuple[int, int]]):
    """The bench rule's resource: a plain value when every (nodes, procs) layout of the sweep
    asks for the same and the attempt does not change it, else :func:`bench_resource`.
    Snakemake evaluates a resource function once per job, through its own wrappers, at about
    a tenth of a millisecond each: with ten of them that was a third of planning a big sweep."""
    function = bench_resource(name, config)
    if name not in ATTEMPT_INDEPENDENT or not layouts:
        return function
    values = {bench_resources(nodes, procs, config)[name] for nodes, procs in layouts}
    return values.pop() if len(values) == 1 else function


def launcher(executor_name: str | None, slurm_job_step: bool = False) -> str:
    """How ``dlperf bench`` starts its workers: one ``srun`` task per worker under the Slurm
    executor, and in the job step it runs on a node (there the job's command is run by a
    nested Snakemake with the local executor in remote mode, inside the Slurm job); the
    local launcher's own choice otherwise."""
    if executor_name in SLURM_EXECUTORS or slurm_job_step:
        return "srun"
    return "auto"


def runs_on_slurm(workflow) -> bool:
    """True when Snakemake submits jobs to Slurm or runs one inside a Slurm job step."""
    plugin = getattr(workflow, "executor_plugin", None)
    name = plugin.cli_prefix if plugin is not None else None
    step = bool(getattr(workflow, "remote_exec", False)) and "SLURM_JOB_ID" in os.environ
    return launcher(name, step) == "srun"


def is_planning_process(workflow) -> bool:
    """True for the Snakemake process that plans the run, not a job's own process."""
    return not (workflow.remote_exec or workflow.subprocess_exec)


def is_local_run(workflow) -> bool:
    """True for the Snakemake process that plans a run on this machine: not a job's own
    process, and no ``--jobs`` (a cluster executor needs it, as the Slurm profile gives it; a
    local run gives ``--cores``). Known while the Snakefile loads, unlike the executor."""
    return is_planning_process(workflow) and workflow.resource_settings.nodes is None


def is_dry_run(argv: Sequence[str]) -> bool:
    """Whether the Snakemake command line ``argv`` asks for a dry run (``-n``, ``-np``,
    ``--dry-run``): the executor that says so is chosen only after the Snakefile loads."""
    for given in argv[1:]:
        if given in ("--dry-run", "--dryrun", "--just-print"):
            return True
        if re.fullmatch(r"-[A-Za-z]*n[A-Za-z]*", given):
            return True
    return False


def local_launch(config: Mapping) -> str:
    """``dlperf bench``'s launch options on a local run (see :func:`bench_launch`)."""
    return shlex.join(["--launcher", "auto", "--threads-per-proc", str(config["threads_per_proc"])])


def rule_resources(config: Mapping, layouts: list[tuple[int, int]], workflow) -> dict:
    """The bench rule's resources. Where a cluster reads them, each is sized per job
    (:func:`sweep_resource`, :func:`bench_launch`). A local run ignores them (every job gets the
    machine): plain values there, those of the sweep's largest layout, since Snakemake's work
    per job and resource function was a third of planning a large sweep."""
    if not is_local_run(workflow):
        sized = {name: sweep_resource(name, config, layouts) for name in RESOURCE_NAMES}
        return sized | {"launch": bench_launch(config, workflow)}
    nodes, procs = max(layouts, key=lambda layout: (layout[1], layout[0]))
    return bench_resources(nodes, procs, config) | {"launch": local_launch(config)}


def bench_launch(config: Mapping, workflow):
    """A resource function for the bench rule: ``dlperf bench``'s ``--launcher`` and
    ``--threads-per-proc`` options, read when the job is planned (after the executor is
    known). Under Slurm the workers are started as ``srun`` tasks and get the CPUs each task
    was given (``--cpus-per-task``), which the job step cannot see any more: the Slurm
    plugin's job step removes the SLURM_* variables of the allocation. Locally the local
    launcher's own choice and the configured ``threads_per_proc`` (0 = share the job's
    cores). A resource, not a param: a dry run plans with Snakemake's dry-run executor, and
    a param that changed with the executor would make every benchmark look out of date
    (:func:`thread_settings` is the param that re-runs them when a setting changes). One
    function for both options: Snakemake's work per function and job is what planning a
    large sweep costs."""

    def resource(wildcards):
        if runs_on_slurm(workflow):
            launcher, threads = "srun", cpus_per_proc(config)
        else:
            return local_launch(config)
        return shlex.join(["--launcher", launcher, "--threads-per-proc", str(threads)])

    resource.__name__ = "bench_launch"
    return resource


def thread_settings(config: Mapping) -> str:
    """The settings that decide a worker's threads, locally and under Slurm: a bench param,
    so that changing either re-measures (the command gets the one that applies from
    :func:`bench_launch`)."""
    return f"threads_per_proc={config['threads_per_proc']} cpus_per_proc={cpus_per_proc(config)}"


def check(config: Mapping, layouts: list[tuple[int, int]] = ()) -> None:
    """Raise ClusterConfigError now for a ``cluster`` section no job could be sized with, or a
    (nodes, procs) layout whose first request passes the site's maxima."""
    cpus_per_proc(config)
    runtime_minutes(config)
    mem_mb(config, 1)
    for nodes, procs in layouts:
        bench_resources(nodes, procs, config)
