"""Which files of a study's results directory its configuration produces, and what becomes of
the rest: an output the configuration no longer produces (a framework, network or
configuration dropped from the sweep) is moved to ``history/retired/<time>/``, never deleted,
and is left out of the report, the archive, its verification and ``dlperf compare``.

Paths are relative to the results directory (``runs/pytorch/mlp/n1_p1_b8_d64_r0.json``).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from dlperf import config as cfg
from dlperf.layout import (
    ENVS,
    OWN_TABLES,
    PER_FRAMEWORK,
    RELATIVE,
    RESULTS,
    RUNS,
    WORKFLOW,
    StudyLayout,
)

SHOWN = 5  # paths a dry run names; the rest are counted


@dataclass(frozen=True)
class Produced:
    """What one configuration produces: its run records (the whole grid: an adaptive sweep
    measures part of it), the frameworks it benchmarks and those it models."""

    records: frozenset[str]
    benchmarked: frozenset[str]
    # None: external timings that are not readable here (an archive verified elsewhere), so
    # which frameworks are modelled is not judged.
    modelled: frozenset[str] | None

    @classmethod
    def of(cls, config: Mapping) -> Produced:
        records = frozenset(RELATIVE.record_of(run) for run in cfg.run_configs(config))
        benchmarked = frozenset(config["frameworks"])
        external = config.get("external_timings")
        modelled = benchmarked
        if external:
            readable = Path(external).is_file()
            modelled = benchmarked | frozenset(external_frameworks(config)) if readable else None
        return cls(records, benchmarked, modelled)

    def holds(self, relative: str) -> bool:
        """Whether the configuration produces the file at ``relative`` (in results/). Files
        that are not per run or per framework (the report, the adaptive rounds, the history)
        are not judged here: True."""
        parts = PurePosixPath(relative).parts
        if not parts:
            return True
        if parts[0] == RUNS:
            return relative in self.records
        if parts[0] == ENVS and len(parts) == 2:
            return PurePosixPath(parts[1]).stem in self.benchmarked
        if parts[0] in PER_FRAMEWORK and len(parts) == 2:
            if relative == RELATIVE.validation_summary:
                return True
            framework = parts[1].split(".", 1)[0]
            return self.modelled is None or framework in self.modelled
        if relative in OWN_TABLES:
            return bool(self.benchmarked)
        return True


def external_frameworks(config: Mapping) -> list[str]:
    """The frameworks of the config's external timings (none without them). pandas is
    imported only here, when there is a CSV to read: the Snakefile calls this as it loads."""
    if not config.get("external_timings"):
        return []
    from dlperf.measurements.external import frameworks_in

    return frameworks_in(config["external_timings"])


def stale_outputs(results: str | os.PathLike, produced: Produced) -> list[Path]:
    """Files below ``results`` (outside its history and hidden work directories) that the
    configuration does not produce, sorted."""
    results = Path(results)
    found = []
    for top in (RUNS, ENVS, *PER_FRAMEWORK, *OWN_TABLES):
        base = results / top
        paths = [base] if base.is_file() else sorted(base.rglob("*")) if base.is_dir() else []
        for path in paths:
            relative = path.relative_to(results)
            if any(part.startswith(".") for part in relative.parts) or not path.is_file():
                continue
            if not produced.holds(relative.as_posix()):
                found.append(path)
    return sorted(found)


def retire(results: str | os.PathLike, produced: Produced, stamp: str | None = None) -> list[Path]:
    """Move every stale output below ``results/history/retired/<stamp>/`` (its path below
    results kept); the new paths."""
    results = Path(results)
    stamp = stamp or time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    moved = []
    for path in stale_outputs(results, produced):
        target = Path(StudyLayout(os.fspath(results)).retired, stamp, path.relative_to(results))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(path, target)  # same file system: a rename
        moved.append(target)
    return moved


def retire_for_workflow(results: str, config: Mapping) -> None:
    """The workflow's ``onstart`` (workflow/rules/common.smk): retire what the configuration
    no longer produces, and say where it went."""
    moved = retire(results, Produced.of(config))
    if moved:
        where = os.path.commonpath([str(p) for p in moved])
        print(
            f"dlperf: {len(moved)} output(s) the configuration no longer produces (a framework, "
            f"network or configuration dropped) moved to {where}; nothing was deleted"
        )


def retired_records(results: str | os.PathLike, produced: Produced) -> dict[str, Path]:
    """Per run record the configuration produces and ``results`` lacks, its newest retired
    copy (``history/retired/<time>/runs/...``): a value dropped, then asked for again."""
    base = Path(StudyLayout(os.fspath(results)).retired)
    found: dict[str, Path] = {}
    stamps = sorted(p for p in base.iterdir() if p.is_dir()) if base.is_dir() else []
    for stamp in stamps:  # oldest first: a newer copy replaces an older one
        for path in sorted((stamp / RUNS).rglob("*.json")):
            relative = path.relative_to(stamp).as_posix()
            if relative in produced.records and not (Path(results) / relative).exists():
                found[relative] = path
    return found


def restore_for_workflow(results: str, config: Mapping, dry_run: bool) -> None:
    """While the workflow loads, before it plans: move the retired records the configuration
    asks for again back into ``results`` (measured once, not measured again); a dry run lists
    them, and what the run would retire, and moves nothing."""
    produced = Produced.of(config)
    back = retired_records(results, produced)
    if dry_run:
        stale = stale_outputs(results, produced)
        if stale:
            print(
                f"dlperf: a run would retire {len(stale)} output(s) the configuration no "
                f"longer produces to {StudyLayout(results).retired}/: "
                + ", ".join(str(p) for p in stale[:SHOWN])
                + _more(stale)
            )
        if back:
            print(
                f"dlperf: a run would restore {len(back)} retired run record(s) the "
                "configuration asks for again, not measure them (the dry run's job list still "
                f"counts them as {len(back)} bench jobs): "
                + ", ".join(list(back)[:SHOWN])
                + _more(back)
            )
        return
    for relative, path in back.items():
        target = Path(results) / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(path, target)
    if back:
        print(
            f"dlperf: {len(back)} retired run record(s) the configuration asks for again "
            "restored from history/retired (not measured again)"
        )


def _more(listed) -> str:
    return f" and {len(listed) - SHOWN} more" if len(listed) > SHOWN else ""


def not_produced(names: Iterable[str], produced: Produced, root: str = RESULTS) -> list[str]:
    """The names (``results/...``) of files the configuration does not produce."""
    below = StudyLayout(root).relative
    return [n for n in names if (r := below(n)) is not None and not produced.holds(r)]


def not_the_configs(config: dict, names: set[str]) -> list[str]:
    """Run records and per-framework files that are not those of the archived configuration:
    records of another sweep packed under this config.json, or a record of it missing."""
    try:
        produced = Produced.of(cfg.validated(config))
    except (cfg.ConfigError, ValueError, FileNotFoundError) as exc:
        return [f"config.json: not a configuration this dlperf can run ({exc})"]
    problems = [
        f"{name}: not an output of the archived configuration (config.json)"
        for name in sorted(not_produced(names, produced))
    ]
    if not config.get("adaptive", {}).get("enabled"):  # an adaptive sweep measures part of it
        below = {WORKFLOW.relative(n) for n in names}
        records = {r for r in below if r is not None and PurePosixPath(r).parts[:1] == (RUNS,)}
        problems += [
            f"{WORKFLOW.path(name)}: missing (a run of the archived configuration)"
            for name in sorted(produced.records - records)
        ]
    return problems
