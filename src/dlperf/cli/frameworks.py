"""``dlperf compare-frameworks``: one study's frameworks side by side, per network measured in
two or more of them (the table the report shows right after its Summary)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dlperf.cli import arguments as arg


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
    p.add_argument(
        "--format",
        choices=["text", "json", "html"],
        default="text",
        help="format of the answer (text)",
    )
    p.add_argument(
        "--out", type=arg.OUT_FILE, help="write the answer here instead of to standard output"
    )
    p.set_defaults(func=run_compare_frameworks)


def _artifact_files(paths: list[str]) -> list[Path]:
    """Each path as given, or the artifacts (*.json) of a directory."""
    files = []
    for path in map(Path, paths):
        files += sorted(path.glob("*.json")) if path.is_dir() else [path]
    return files


def run_compare_frameworks(args: argparse.Namespace) -> int:
    from dlperf.errors import NotComparable
    from dlperf.io import atomic_write_text
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
    text = render(comparisons, args.format)
    if args.out:
        atomic_write_text(args.out, text)
        print(f"{len(comparisons)} network(s) compared -> {args.out}")
    else:
        sys.stdout.write(text)
    return 0
