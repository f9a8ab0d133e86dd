"""``dlperf fit``, ``validate`` and ``combine``: the performance models fitted and
cross-validated on the timings."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dlperf import layout
from dlperf.cli import arguments as arg


def _on_timings(sub, command: str, command_help: str, config_help: str):
    """The parser of a command that fits on the timings with the config's models and seed, and
    the user's GPU catalogue."""
    parents = [arg.timings_input(), arg.config_options(config_help), arg.seed_option()]
    p = sub.add_parser(command, help=command_help, parents=parents)
    p.add_argument(
        "--hardware", help="your own GPU catalogue (YAML; docs/hardware.md); config key hardware"
    )
    return p


def add_fit(sub) -> None:
    config_help = "workflow config (models section); default settings otherwise"
    p = _on_timings(sub, "fit", "fit the performance models of one framework", config_help)
    p.add_argument("--framework", required=True, help="framework of the timings to fit")
    p.add_argument(
        "--interval-refits",
        type=arg.NON_NEGATIVE,
        help="bootstrap refits per model for its prediction interval (default 20; 0: none)",
    )
    p.add_argument(
        "--max-disturbed",
        type=arg.SHARE,
        help="refuse to fit when more than this share of the runs were disturbed by other "
        "programs (the workflow passes preflight.max_disturbed_fraction); default: no check",
    )
    p.add_argument("--out", required=True, type=arg.OUT_FILE, help="model artifact (JSON)")
    p.add_argument(
        "--allow-unfitted",
        action="store_true",
        help="exit 0 when no model could be fitted (the workflow: its report says why); "
        "otherwise that exits 1",
    )
    p.set_defaults(func=run_fit)


def run_fit(args: argparse.Namespace) -> int:
    from dlperf import stages

    config = arg.config_of(args, sweep=False)
    stages.chosen_frameworks(args.timings, [args.framework])
    if args.max_disturbed is not None:
        stages.check_quiet(args.timings, args.max_disturbed)
    seed = args.seed if args.seed is not None else config["seed"]
    hardware = args.hardware or config.get("hardware")
    artifact = stages.fit(
        args.timings,
        args.framework,
        config["models"],
        seed,
        args.out,
        args.interval_refits,
        hardware,
    )
    groups = list(artifact["networks"].items())
    if "all_networks" in artifact:
        groups.append(("all networks", artifact["all_networks"]))
    fitted = 0
    for network, info in groups:
        for name, entry in info["models"].items():
            print(f"{args.framework}/{network}/{name}: {entry['status']} ({_fit_detail(entry)})")
            fitted += entry["status"] == "ok"
    print(f"-> {args.out}")
    if fitted or args.allow_unfitted:
        return 0
    # The artifact says why for each model; a script must not take it for a usable one.
    print(
        f"dlperf fit: error: no model could be fitted on {args.framework}'s timings (the "
        "reasons are above); measure more configurations",
        file=sys.stderr,
    )
    return 1


def _fit_detail(entry: dict) -> str:
    """A fitted model's training error and interval refits, or why it was not fitted."""
    if entry["status"] != "ok":
        return entry["reason"]
    refits = len(entry["interval"]["refits"])
    return (
        f"train MAPE {entry['train_mape']:.2f}%, "
        f"{refits}/{refits + entry['interval']['skipped']} interval refits"
    )


def add_validate(sub) -> None:
    config_help = "workflow config (models and validation sections)"
    p = _on_timings(sub, "validate", "cross-validate the models", config_help)
    p.add_argument(
        "--framework", action="append", help="repeatable; default: every framework in the table"
    )
    p.add_argument(
        "--protocol",
        action="append",
        help="repeatable: kfold, loo_procs, loo_batch, extrapolation_procs, extrapolation_batch, "
        "cross_network, cross_hardware, or loo / extrapolation for both of a pair; default: the "
        "config's protocols",
    )
    p.add_argument("--k", type=arg.FOLDS, help="folds for --protocol kfold")
    p.add_argument(
        "--train-max-procs", type=arg.WORKERS, help="for extrapolation_procs: train on procs <= N"
    )
    p.add_argument(
        "--train-max-batch", type=arg.BATCH, help="for extrapolation_batch: train on batch <= N"
    )
    p.add_argument(
        "--out",
        required=True,
        type=arg.OUT_DIR,
        help="output directory: <framework>.csv, <framework>.summary.csv",
    )
    p.add_argument(
        "--no-summary",
        action="store_true",
        help="skip OUT/summary.csv (the workflow combines the per-framework summaries "
        "with `dlperf combine`)",
    )
    p.set_defaults(func=run_validate)


def run_validate(args: argparse.Namespace) -> int:
    from dlperf import stages

    config = arg.config_of(args, sweep=False)
    settings = {
        key: value
        for key, value in (
            ("train_max_procs", args.train_max_procs),
            ("train_max_batch", args.train_max_batch),
            ("k", args.k),
        )
        if value is not None
    }
    protocols = stages.chosen_protocols(config["validation"]["protocols"], args.protocol, settings)
    combined = None if args.no_summary else Path(args.out) / layout.VALIDATION_SUMMARY
    summaries = stages.validate_frameworks(
        args.timings,
        stages.chosen_frameworks(args.timings, args.framework),
        args.out,
        combined,
        models=config["models"],
        protocols=protocols,
        seed=args.seed if args.seed is not None else config["seed"],
        n_boot=config["validation"]["bootstrap"],
        hardware=args.hardware or config.get("hardware"),
    )
    for framework, summary in summaries.items():
        shown = summary[["network", "model", "protocol", "status", "mape"]]
        print(f"{framework}:\n{shown.to_string(index=False)}")
    if combined is not None:
        print(f"-> {combined}")
    return 0


def add_combine(sub) -> None:
    p = sub.add_parser("combine", help="concatenate per-framework tables of the same columns")
    p.add_argument("tables", nargs="+", help="CSV files, e.g. results/validation/*.summary.csv")
    p.add_argument("--out", required=True, type=arg.OUT_FILE, help="combined CSV")
    p.set_defaults(func=run_combine)


def run_combine(args: argparse.Namespace) -> int:
    from dlperf import stages

    combined = stages.combine(args.tables, args.out)
    print(f"{len(args.tables)} tables, {len(combined)} rows -> {args.out}")
    return 0
