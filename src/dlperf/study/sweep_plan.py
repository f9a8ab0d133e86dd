"""A cluster sweep's plan before anything is submitted: its job groups, the number of ``sbatch``
submissions and the GPU-hours it asks for (``dlperf plan-sweep``); on a CPU sweep, CPU
core-hours (a run holds its workers' cores, ``cpus_per_task`` each).

The requests are those the bench rule makes (:func:`dlperf.pipeline.cluster.bench_resources`);
how many benchmarks share one Slurm job comes from the Snakemake profiles given (their
``groups`` and ``group-components``, merged per top-level key as Snakemake merges repeated
``--profile``: a later one wins). Where a study has fitted models, the expected GPU-hours are
the sum of each run's predicted timed epoch (the models' answer), a lower estimate: start-up and
warm-up are not in it.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from dlperf.bench.spec import RunConfig
from dlperf.errors import UsageError
from dlperf.pipeline.cluster import EXCLUSIVE, bench_resources, cpus_per_proc

#: The profile file Snakemake reads in a profile directory (also accepted: a file's own path).
PROFILE_FILE = "profile.yaml"


@dataclass(frozen=True)
class LayoutPlan:
    """The benchmark jobs of one (nodes, procs) layout and the Slurm jobs they make."""

    nodes: int
    procs: int
    runs: int
    per_job: int  # benchmarks one Slurm job runs, one after the other
    gpus: int  # GPUs a run holds (0 on CPU)
    cores: int  # CPU cores a run holds (its workers' cpus_per_task)
    runtimes_min: tuple[int, ...]  # a run's time limit at each attempt (capped by the site)
    mem_mb: int  # memory a node, first attempt
    exclusive: bool  # whole nodes (sbatch --exclusive, cluster.exclusive)
    node_gpus: int | None = None  # GPUs a node has (max_procs_per_node on a GPU sweep)

    @property
    def runtime_min(self) -> int:
        return self.runtimes_min[0]

    @property
    def submissions(self) -> int:
        return math.ceil(self.runs / self.per_job)

    @property
    def group_runtime_min(self) -> int:
        """The time limit of the largest Slurm job of this layout: its runs one after the other."""
        return min(self.per_job, self.runs) * self.runtime_min

    @property
    def held(self) -> int:
        """What a run is charged for: its GPUs on a GPU sweep, else its CPU cores."""
        return self.gpus or self.cores

    def hours(self, minutes: int) -> float:
        """GPU-hours (CPU core-hours on a CPU sweep) of the layout's runs at ``minutes`` each."""
        return self.runs * self.held * minutes / 60.0

    def whole_node_hours(self, minutes: int) -> float | None:
        """GPU-hours the runs' whole nodes hold at ``minutes`` each (every GPU of a node a job
        asks for exclusively); None where a node's GPUs are not known."""
        if not (self.exclusive and self.gpus and self.node_gpus):
            return None
        return self.runs * self.nodes * max(self.node_gpus, self.gpus // self.nodes) * minutes / 60


def profile_settings(profiles: Sequence[str | os.PathLike], read_yaml) -> dict:
    """The profiles' settings (each read by ``read_yaml``) merged per top-level key, later
    ones winning, as Snakemake merges repeated ``--profile``."""
    merged: dict = {}
    for profile in profiles:
        path = Path(profile)
        file = path / PROFILE_FILE if path.is_dir() else path
        if not file.is_file():
            what = f"has no {PROFILE_FILE}" if path.is_dir() else "does not exist"
            raise UsageError(
                f"profile {profile} {what}: a Snakemake profile is a directory holding "
                f"{PROFILE_FILE} (e.g. profiles/slurm) or such a file itself; give its path"
            )
        merged.update(read_yaml(file))
    return merged


def _pairs(entries) -> dict[str, str]:
    return dict(str(entry).split("=", 1) for entry in entries or [])


def bench_group_size(settings: Mapping, nodes: int, procs: int) -> int:
    """How many benchmarks of a layout share one Slurm job under the profiles' ``groups``."""
    group = _pairs(settings.get("groups")).get("bench")
    if group is None:
        return 1
    name = group.format(nodes=nodes, procs=procs)
    for pattern, size in _pairs(settings.get("group-components")).items():
        if pattern.format(nodes=nodes, procs=procs) == name:
            return max(1, int(size))
    return 1


def plan(runs: Sequence[RunConfig], config: Mapping, settings: Mapping) -> list[LayoutPlan]:
    """One :class:`LayoutPlan` per layout of the sweep's ``runs``, in the sweep's order."""
    attempts = 1 + int(settings.get("retries", 0) or 0)
    plans = []
    for (nodes, procs), count in Counter((run.nodes, run.procs) for run in runs).items():
        sized = [bench_resources(nodes, procs, config, a) for a in range(1, attempts + 1)]
        plans.append(
            LayoutPlan(
                nodes=nodes,
                procs=procs,
                runs=count,
                per_job=bench_group_size(settings, nodes, procs),
                gpus=procs if config.get("device") == "cuda" else 0,
                cores=procs * int(sized[0]["cpus_per_task"]),
                runtimes_min=tuple(int(r["runtime"]) for r in sized),
                mem_mb=int(sized[0]["mem_mb"]),
                exclusive=sized[0]["slurm_extra"] == EXCLUSIVE,
                node_gpus=config.get("max_procs_per_node")
                if config.get("device") == "cuda"
                else None,
            )
        )
    return plans


def expected_hours(
    runs: Sequence[RunConfig], config: Mapping, models_dir: str | os.PathLike
) -> float | None:
    """GPU-hours (CPU core-hours on a CPU sweep) of the ``runs``' timed epochs as the study's
    fitted models predict them, or None when a framework or network of the sweep has no model
    there."""
    import pandas as pd

    from dlperf.io import read_json
    from dlperf.models.answer import ANSWER
    from dlperf.models.base import FEATURES
    from dlperf.models.prediction import predict_rows

    per_worker = 1 if config.get("device") == "cuda" else cpus_per_proc(config)
    rows = pd.DataFrame([asdict(run) for run in runs])
    total = 0.0
    for (framework, network), part in rows.groupby(["framework", "network"]):
        path = Path(models_dir) / f"{framework}.json"
        if not path.is_file():
            return None
        artifact = read_json(path)
        if network not in artifact.get("networks", {}):
            return None
        table = predict_rows(artifact, network, ANSWER, part[FEATURES])
        held = part["procs"].to_numpy() * per_worker
        total += float((table["epoch_time_s"].to_numpy() * held).sum())
    return total / 3600.0


def units_of(plans: list[LayoutPlan]) -> tuple[str, str, str]:
    """What the sweep is charged in, as (column, column of hours, total's name): GPUs, or CPU
    cores on a CPU sweep (a GPU-hour figure of 0 would read as free)."""
    if any(p.gpus for p in plans):
        return "GPUs", "GPU-h asked", "GPU-hours"
    return "cores", "core-h asked", "CPU core-hours"


def render(plans: list[LayoutPlan], settings: Mapping, expected: float | None) -> str:
    """The plan as a table and its totals, in plain words."""
    held, column, hours = units_of(plans)
    lines = [
        f"{'nodes':>5} {held:>5} {'runs':>5} {'per job':>7} {'sbatch':>6} "
        f"{'job limit':>9} {'mem/node':>9} {column:>12}"
    ]
    for p in plans:
        lines.append(
            f"{p.nodes:>5} {p.held:>5} {p.runs:>5} {p.per_job:>7} {p.submissions:>6} "
            f"{p.group_runtime_min:>5} min {p.mem_mb / 1024:>6.0f} GB "
            f"{p.hours(p.runtime_min):>12,.0f}"
        )
    asked = sum(p.hours(p.runtime_min) for p in plans)
    retries = int(settings.get("retries", 0) or 0)
    worst = sum(p.hours(minutes) for p in plans for minutes in p.runtimes_min)
    lines += [
        f"{sum(p.runs for p in plans):,} benchmarks in {sum(p.submissions for p in plans):,} "
        "sbatch submissions (plus the small analysis jobs)",
        f"{hours} requested: {asked:,.0f} (every run to its time limit); at most {worst:,.0f} "
        f"if every run failed and was retried {retries} time(s)",
    ]
    if any(p.exclusive for p in plans):
        lines.append(_whole_nodes(plans, hours))
    elif plans:
        lines.append(
            "Nodes: shared with other jobs (cluster.exclusive: false): their load marks runs "
            'disturbed (docs/cluster.md, "Shared nodes")'
        )
    if expected is None:
        lines.append(f"{hours} expected: unknown (no fitted models of this sweep; --models DIR)")
    else:
        lines.append(f"{hours} expected: {expected:,.1f} (the models' timed epochs)")
    return "\n".join(lines)


def _whole_nodes(plans: list[LayoutPlan], hours: str) -> str:
    """What whole nodes hold beyond what the runs use: a job asked with --exclusive holds every
    GPU (or core) of its nodes, where a run may use part of one."""
    said = "Nodes: requested whole (sbatch --exclusive; cluster.exclusive)"
    whole = [p.whole_node_hours(p.runtime_min) for p in plans]
    if all(h is not None for h in whole):
        gpus = plans[0].node_gpus
        return (
            f"{said}: whole nodes hold {sum(whole):,.0f} GPU-hours at the time limits "
            f"({gpus} GPUs a node, max_procs_per_node), what a site billing by node charges"
        )
    return (
        f"{said}: a job holds all of its nodes, more than the {hours} above count where a run "
        "uses part of a node"
    )


def group_warning(plans: list[LayoutPlan], config: Mapping) -> str | None:
    """A line where a grouped Slurm job would ask for more time than the site allows
    (``cluster.max_runtime_min``), at its first attempt or a retry (a retried group asks for
    its unfinished benchmarks' grown limits): sbatch would refuse it."""
    limit = (config.get("cluster") or {}).get("max_runtime_min")
    if limit is None:
        return None
    over = [p for p in plans if min(p.per_job, p.runs) * p.runtimes_min[-1] > int(limit)]
    if not over:
        return None
    longest = max(min(p.per_job, p.runs) * p.runtimes_min[-1] for p in over)
    fits = max(1, int(limit) // max(p.runtimes_min[-1] for p in over))
    return (
        f"warning: {len(over)} layout(s) run several benchmarks in one Slurm job of up to "
        f"{longest} min (last retry), more than cluster.max_runtime_min ({limit}): set "
        f'group-components to "bench_n{{nodes}}_p{{procs}}={fits}" in your site profile '
        "(docs/cluster.md)"
    )
