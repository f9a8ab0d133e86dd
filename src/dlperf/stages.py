"""One function per workflow stage, on file paths. The Snakemake rules and the
``dlperf`` command both call these, so a stage runs the same way in and out of
the workflow.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from dlperf.io import atomic_write_json
from dlperf.layout import WORKFLOW
from dlperf.measurements import tables

if TYPE_CHECKING:
    from dlperf.report.study import ReportSources

PathLike = str | os.PathLike


def aggregate(
    records: Sequence[PathLike],
    timings_csv: PathLike,
    timings_parquet: PathLike | None,
    failures_csv: PathLike,
) -> tuple[int, int]:
    """All run records -> the timings table (CSV + Parquet) and the failures table."""
    timings, failures = tables.build_tables(records)
    tables.write_csv(timings, timings_csv)
    if timings_parquet:
        tables.write_parquet(timings, timings_parquet)
    tables.write_csv(failures, failures_csv)
    return len(timings), len(failures)


def fit(
    timings_csv: PathLike | Sequence[PathLike],
    framework: str,
    models: dict,
    seed: int,
    out: PathLike,
    refits: int | None = None,
    hardware: str | None = None,
) -> dict:
    """Fit every model of ``framework`` on the points of one or several timings files, each with
    ``refits`` bootstrap refits for its prediction interval (default: DEFAULT_REFITS); with
    ``hardware``, a user's GPU catalogue beside the shipped one (docs/hardware.md)."""
    from dlperf.measurements.timings_files import load_all_points
    from dlperf.models.artifact import fit_framework, unfitted_artifact
    from dlperf.models.intervals import DEFAULT_REFITS

    points = load_all_points(timings_csv)
    if (points["framework"] == framework).any():
        refits = DEFAULT_REFITS if refits is None else refits
        artifact = fit_framework(points, framework, models, seed, refits, hardware)
    else:
        # Every run failed: the artifact says so, and the report still shows the failures.
        artifact = unfitted_artifact(
            framework,
            seed,
            f"{timings_csv} has no successful run of {framework}; "
            f"{WORKFLOW.failures} says why its runs failed",
        )
    atomic_write_json(out, artifact)
    return artifact


def check_quiet(timings_csv: PathLike | Sequence[PathLike], max_fraction: float) -> None:
    """Stop (``BusyMachine``) when more than ``max_fraction`` of the runs whose host load was
    measured were disturbed (external timings have no such column and do not count)."""
    from dlperf.measurements.preflight import check_disturbed

    paths = [timings_csv] if isinstance(timings_csv, (str, os.PathLike)) else list(timings_csv)
    own = [frame for frame in map(tables.read_csv, paths) if tables.FOREIGN_CPU in frame]
    if own:
        # The study holds results/timings.csv: the commands that re-measure name its directory.
        study = Path(paths[0]).resolve().parent.parent
        check_disturbed(pd.concat(own, ignore_index=True), max_fraction, str(study))


def validate(
    timings_csv: PathLike | Sequence[PathLike],
    framework: str,
    models: dict,
    protocols: dict,
    seed: int,
    out_points: PathLike,
    out_summary: PathLike,
    n_boot: int = 1000,
    hardware: str | None = None,
) -> pd.DataFrame:
    from dlperf.measurements.timings_files import load_all_points
    from dlperf.validate.crossval import cross_validate

    points = load_all_points(timings_csv)
    predictions, summary = cross_validate(
        points, framework, models, protocols, seed, n_boot, hardware
    )
    # The same results in the same order whatever order the config lists protocols and models.
    predictions = predictions.sort_values(
        ["network", "protocol", "model", "fold"], kind="stable"
    ).reset_index(drop=True)
    summary = summary.sort_values(["network", "protocol", "model"], kind="stable").reset_index(
        drop=True
    )
    tables.write_csv(predictions, out_points)
    tables.write_csv(summary, out_summary)
    return summary


def combine(csvs: Sequence[PathLike], out: PathLike) -> pd.DataFrame:
    """Concatenate per-framework tables (same columns) into one."""
    frames = [tables.read_csv(p) for p in csvs]
    combined = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    tables.write_csv(combined, out)
    return combined


def report(
    sources: ReportSources, out_html: PathLike, figures_dir: PathLike | None = None
) -> list[Path]:
    """The HTML report and its figures from a study's files; the figure files written."""
    from dlperf.report.page import build_report
    from dlperf.report.study import Study

    study = Study.from_files(sources)
    return build_report(study, Path(out_html), Path(figures_dir) if figures_dir else None)


def adaptive_replay(
    timings_csv: PathLike | Sequence[PathLike],
    budget: float,
    settings: dict,
    out_dir: PathLike,
) -> dict:
    """The adaptive loop on a measured grid: ``rounds.csv`` and ``summary.json`` in ``out_dir``."""
    from dlperf.adaptive.loop import AdaptiveSettings
    from dlperf.adaptive.replay import replay
    from dlperf.measurements.timings_files import load_runs

    paths = [timings_csv] if isinstance(timings_csv, (str, os.PathLike)) else list(timings_csv)
    rounds, summary = replay(load_runs(paths), budget, AdaptiveSettings.from_config(settings))
    out = Path(out_dir)
    tables.write_csv(rounds, out / "rounds.csv")
    atomic_write_json(out / "summary.json", summary)
    return summary


def run_records(runs_dir: PathLike) -> list[str]:
    """Every run record below ``runs_dir``, in a stable order."""
    import glob

    return sorted(glob.glob(str(Path(runs_dir) / "**" / "*.json"), recursive=True))


def chosen_frameworks(
    timings_csv: PathLike | Sequence[PathLike], requested: Sequence[str] | None = None
) -> list[str]:
    """The frameworks to fit or validate: ``requested``, each checked against the timings
    (UnknownName naming the ones they hold), or every framework the timings hold."""
    from dlperf.bench.spec import FRAMEWORKS
    from dlperf.errors import UnknownName
    from dlperf.measurements.timings_files import columns_of, is_own_timings, load_all_points

    paths = [timings_csv] if isinstance(timings_csv, (str, os.PathLike)) else list(timings_csv)
    held = set(load_all_points(paths)["framework"].dropna().astype(str))
    if not requested:
        return sorted(held)
    # Our own table leaves out a framework whose every run failed (failures.csv keeps those):
    # such a framework is fitted as "no successful run", not refused.
    if any(is_own_timings(columns_of(path)) for path in paths):
        held |= set(FRAMEWORKS)
    unknown = [name for name in requested if name not in held]
    if unknown:
        raise UnknownName(
            f"unknown framework {', '.join(repr(name) for name in unknown)}; known frameworks "
            f"(from {', '.join(map(str, paths))}): {', '.join(sorted(held)) or 'none'}. "
            "Choose one of those with --framework"
        )
    return list(requested)


def chosen_protocols(configured: dict, chosen: Sequence[str] | None, settings: dict) -> dict:
    """The validation protocols to run: the configured ones, or the ``chosen`` ones (aliases
    such as ``loo`` expanded) each with ``settings``."""
    from dlperf.validate.protocols import expand_aliases

    if not chosen:
        return dict(configured)
    return {protocol: settings for protocol in expand_aliases(chosen)}


def validation_files(out_dir: PathLike, framework: str) -> tuple[Path, Path]:
    """Where a framework's validation goes: its predictions and its summary."""
    from dlperf import layout

    out = Path(out_dir)
    points, summary = layout.PER_FRAMEWORK[layout.VALIDATION]
    return out / points.format(framework), out / summary.format(framework)


def validate_frameworks(
    timings_csv: PathLike | Sequence[PathLike],
    frameworks: Sequence[str],
    out_dir: PathLike,
    combined: PathLike | None = None,
    **settings,
) -> dict[str, pd.DataFrame]:
    """:func:`validate` each framework into ``out_dir`` (:func:`validation_files`) with
    ``settings``, :func:`validate`'s own (models, protocols, seed, n_boot, hardware), and the
    summaries together into ``combined`` when given. Returns each framework's summary."""
    summaries = {}
    for framework in frameworks:
        points, summary = validation_files(out_dir, framework)
        summaries[framework] = validate(
            timings_csv, framework, out_points=points, out_summary=summary, **settings
        )
    if combined is not None:
        combine([validation_files(out_dir, f)[1] for f in frameworks], combined)
    return summaries
