"""``dlperf adaptive-round`` and ``adaptive-replay``: the next round of an adaptive sweep, and
the loop replayed on a measured grid."""

from __future__ import annotations

import argparse

from dlperf.cli import arguments as arg
from dlperf.cli.output import warn


def add_adaptive_replay(sub) -> None:
    p = sub.add_parser(
        "adaptive-replay",
        help="run the adaptive loop on a measured table: what it would have saved",
        parents=[arg.timings_input()],
    )
    p.add_argument(
        "--budget", required=True, type=arg.SHARE, help="share of the grid's runs to use, e.g. 0.35"
    )
    p.add_argument("--seed", type=arg.SEED, default=0, help="seed of the random baseline (0)")
    p.add_argument("--model-name", default="generic", help="the model the loop fits (generic)")
    p.add_argument("--initial", type=arg.COUNT, help="configurations per series in round 0 (4)")
    p.add_argument("--per-round", type=arg.COUNT, help="runs per later round (4)")
    p.add_argument(
        "--out", required=True, type=arg.OUT_DIR, help="directory for rounds.csv and summary.json"
    )
    p.set_defaults(func=run_adaptive_replay)


def run_adaptive_replay(args: argparse.Namespace) -> int:
    from dlperf import stages

    settings = {"seed": args.seed, "model": args.model_name}
    if args.initial is not None:
        settings["initial"] = args.initial
    if args.per_round is not None:
        settings["per_round"] = args.per_round
    summary = stages.adaptive_replay(args.timings, args.budget, settings, args.out)
    print(
        f"{summary['runs_used']} of {summary['runs_total']} runs in {summary['rounds']} rounds "
        f"({summary['stop']}): MAPE {_percent(summary['mape_adaptive'])} adaptive, "
        f"{_percent(summary['mape_random'])} random, {_percent(summary['mape_full'])} full grid "
        f"-> {args.out}"
    )
    if summary["mape_adaptive"] is None or summary["mape_random"] is None:
        warn(
            "adaptive-replay",
            [
                f"--budget {args.budget:g} ({summary['budget_runs']} runs) is too few to fit the "
                f"{summary['model']} model on every series, so its error is undefined; raise "
                "--budget"
            ],
        )
    return 0


def _percent(mape: float | None) -> str:
    """A MAPE the replay could compute, or why not (a series the model cannot be fitted on)."""
    return "undefined" if mape is None else f"{mape:.3g}%"


def add_adaptive_round(sub) -> None:
    p = sub.add_parser(
        "adaptive-round",
        help="choose the next round of an adaptive sweep (the workflow's step)",
        parents=[arg.config_options("workflow config (sweep and adaptive sections)")],
    )
    p.add_argument("records", nargs="*", help="run records of the rounds before")
    p.add_argument(
        "--round", type=arg.NON_NEGATIVE, required=True, help="the round to choose (0 = initial)"
    )
    p.add_argument("--out", required=True, type=arg.OUT_FILE, help="round file to write (JSON)")
    p.set_defaults(func=run_adaptive_round)


def run_adaptive_round(args: argparse.Namespace) -> int:
    from dlperf.adaptive.sweep import choose_round

    result = choose_round(arg.config_of(args), args.records, args.round, args.out)
    what = result["stop"] or f"{len(result['chosen'])} configurations"
    print(f"round {args.round}: {what} -> {args.out}")
    return 0
