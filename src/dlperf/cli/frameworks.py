"""``dlperf compare-frameworks``: one study's frameworks side by side, per network measured in
two or more of them (the table the report shows right after its Summary)."""

from __future__ import annotations

import argparse
from pathlib import Path

from dlperf.cli import arguments as arg
from dlperf.cli.output import deliver


def add_compare_frameworks(sub) -> None:
    p = sub.add_parser(
        "compare-frameworks",
        help="which framework trains each network faster at each scale, and where each loses "
        "its time",
    )
    p.add_argument("--timings", required=True, help="our own runs (results/timings.csv)")
    p.add_argument(
        "--models",
        nargs="*",
        default=[],
        help="model artifacts, or directories of them (results/models): the generic model's "
        "terms split the time per iteration; without them only the data wait is split off",
    )
    arg.add_answer_output(p, ["text", "json", "html"])
    p.set_defaults(func=run_compare_frameworks)


def _artifact_files(paths: list[str]) -> list[Path]:
    """Each path as given, or the artifacts (*.json) of a directory."""
    files = []
    for path in map(Path, paths):
        files += sorted(path.glob("*.json")) if path.is_dir() else [path]
    return files


def run_compare_frameworks(args: argparse.Namespace) -> int:
    from dlperf.errors import NotComparable
    from dlperf.measurements.tables import read_timings
    from dlperf.models.artifact_check import load_artifact
    from dlperf.report.framework_section import render
    from dlperf.report.frameworks import compare_frameworks

    timings = read_timings(args.timings)
    artifacts = {}
    for path in _artifact_files(args.models):
        artifact = load_artifact(path)  # refuses a damaged artifact, naming the field
        artifacts[artifact["framework"]] = artifact
    comparisons = compare_frameworks(timings, artifacts)
    if not comparisons:
        raise NotComparable(
            f"no network in {args.timings} has successful runs of two or more frameworks; "
            "measure a network with several frameworks (config key frameworks)"
        )
    deliver(args.out, render(comparisons, args.format), f"{len(comparisons)} network(s) compared")
    return 0
