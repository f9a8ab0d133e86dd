"""A cluster sweep's plan before anything is submitted: its job groups, the number of ``sbatch``
submissions and the GPU-hours it asks for (``dlperf plan-sweep``).

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
from dlperf.pipeline.cluster import EXCLUSIVE, bench_resources

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
    runtimes_min: tuple[int, ...]  # a run's time limit at each attempt (capped by the site)
    mem_mb: int  # memory a node, first attempt
    exclusive: bool  # whole nodes (sbatch --exclusive, cluster.exclusive)

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

    def gpu_hours(self, minutes: int) -> float:
        return self.runs * self.gpus * minutes / 60.0


def profile_settings(profiles: Sequence[str | os.PathLike], read_yaml) -> dict:
    """The profiles' settings (each read by ``read_yaml``) merged per top-level key, later
    ones winning, as Snakemake merges repeated ``--profile``."""
    merged: dict = {}
    for profile in profiles:
        path = Path(profile)
        merged.update(read_yaml(path / PROFILE_FILE if path.is_dir() else path))
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
                runtimes_min=tuple(int(r["runtime"]) for r in sized),
                mem_mb=int(sized[0]["mem_mb"]),
                exclusive=sized[0]["slurm_extra"] == EXCLUSIVE,
            )
        )
    return plans


def expected_gpu_hours(
    runs: Sequence[RunConfig], config: Mapping, models_dir: str | os.PathLike
) -> float | None:
    """GPU-hours of the ``runs``' timed epochs as the study's fitted models predict them, or
    None when a framework or network of the sweep has no model there."""
    import pandas as pd

    from dlperf.io import read_json
    from dlperf.models.answer import ANSWER
    from dlperf.models.base import FEATURES
    from dlperf.models.prediction import predict_rows

    if config.get("device") != "cuda":
        return 0.0
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
        total += float((table["epoch_time_s"].to_numpy() * part["procs"].to_numpy()).sum())
    return total / 3600.0


def render(plans: list[LayoutPlan], settings: Mapping, expected: float | None) -> str:
    """The plan as a table and its totals, in plain words."""
    lines = [
        f"{'nodes':>5} {'GPUs':>4} {'runs':>5} {'per job':>7} {'sbatch':>6} "
        f"{'job limit':>9} {'mem/node':>9} {'GPU-h asked':>11}"
    ]
    for p in plans:
        lines.append(
            f"{p.nodes:>5} {p.gpus:>4} {p.runs:>5} {p.per_job:>7} {p.submissions:>6} "
            f"{p.group_runtime_min:>5} min {p.mem_mb / 1024:>6.0f} GB "
            f"{p.gpu_hours(p.runtime_min):>11,.0f}"
        )
    asked = sum(p.gpu_hours(p.runtime_min) for p in plans)
    retries = int(settings.get("retries", 0) or 0)
    worst = sum(p.gpu_hours(minutes) for p in plans for minutes in p.runtimes_min)
    lines += [
        f"{sum(p.runs for p in plans):,} benchmarks in {sum(p.submissions for p in plans):,} "
        "sbatch submissions (plus the small analysis jobs)",
        f"GPU-hours requested: {asked:,.0f} (every run to its time limit); at most {worst:,.0f} "
        f"if every run failed and was retried {retries} time(s)",
    ]
    if any(p.exclusive for p in plans):
        lines.append("Nodes: requested whole (sbatch --exclusive; cluster.exclusive)")
    elif plans:
        lines.append(
            "Nodes: shared with other jobs (cluster.exclusive: false): their load marks runs "
            'disturbed (docs/cluster.md, "Shared nodes")'
        )
    if expected is None:
        lines.append("GPU-hours expected: unknown (no fitted models of this sweep; --models DIR)")
    else:
        lines.append(f"GPU-hours expected: {expected:,.1f} (the models' timed epochs)")
    return "\n".join(lines)


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
