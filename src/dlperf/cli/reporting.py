"""``dlperf report``: the study's HTML report."""

from __future__ import annotations

import argparse

from dlperf.cli import arguments as arg


def add_report(sub) -> None:
    p = sub.add_parser(
        "report",
        help="render the HTML report",
        parents=[arg.timings_input(), arg.config_options("workflow config, shown in the report")],
    )
    p.add_argument("--failures", help="failures table of our own runs (results/failures.csv)")
    p.add_argument("--models", nargs="+", required=True, help="model artifacts")
    p.add_argument("--summary", required=True, help="validation summary CSV")
    p.add_argument("--predictions", nargs="*", default=[], help="per-framework validation CSVs")
    p.add_argument("--out", required=True, type=arg.OUT_FILE, help="index.html to write")
    p.add_argument(
        "--results",
        help="the study's results directory: the report counts the superseded run records "
        "its history/ keeps",
    )
    p.add_argument(
        "--adaptive-rounds",
        nargs="*",
        default=[],
        help="round files of an adaptive sweep (results/adaptive/round*.json)",
    )
    p.add_argument(
        "--figures",
        help="directory for the figures as PNG and SVG (default: figures/ beside --out)",
    )
    p.set_defaults(func=run_report)


def run_report(args: argparse.Namespace) -> int:
    from dlperf import stages
    from dlperf.report.study import ReportSources

    config = arg.config_of(args, sweep=False)
    sources = ReportSources(
        timings=args.timings,
        failures=args.failures,
        models=args.models,
        summary=args.summary,
        predictions=args.predictions,
        config=config,
        hardware=config.get("hardware"),
        results_dir=args.results,
        adaptive_rounds=args.adaptive_rounds,
    )
    written = stages.report(sources, args.out, args.figures)
    print(f"report -> {args.out} ({len(written)} figure files)")
    return 0
