"""``dlperf check-config`` and ``write-config``: a configuration checked before a study runs,
and the effective one written beside its results."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dlperf.cli import arguments as arg


def add_write_config(sub) -> None:
    p = sub.add_parser(
        "write-config",
        help="write the effective configuration (defaults filled in) as JSON: "
        "results/config.json, which `dlperf archive` archives",
        parents=[arg.config_options("a workflow config file")],
    )
    p.add_argument("--out", required=True, type=arg.OUT_FILE, help="JSON file to write")
    p.set_defaults(func=run_write_config)


def run_write_config(args: argparse.Namespace) -> int:
    from dlperf.io import atomic_write_json

    atomic_write_json(args.out, arg.config_of(args))
    print(f"the effective configuration -> {args.out}")
    return 0


def add_check_config(sub) -> None:
    p = sub.add_parser(
        "check-config",
        help="check a config file before running it: YAML errors with file, line and column, "
        "then every value that cannot run",
        parents=[
            arg.sweep_config(
                "the config file (as given to snakemake --configfile)",
                "the config it is merged into, as the workflow does (config/config.yaml)",
            )
        ],
    )
    p.add_argument(
        "--study",
        default=".",
        help="the study's directory, where the workflow reads a relative external_timings path "
        "(default: the current directory)",
    )
    p.add_argument(
        "--cluster",
        action="store_true",
        help="the sweep runs on a cluster: skip the checks against this machine (cores, GPUs, "
        "one node) that a local run makes",
    )
    p.set_defaults(func=run_check_config)


def run_check_config(args: argparse.Namespace) -> int:
    from dlperf import config as cfg
    from dlperf.bench.envinfo import available_cores
    from dlperf.pipeline import sweep_checks
    from dlperf.study.outputs import external_frameworks

    config = cfg.load(args.config, default=args.defaults)
    if config["external_timings"]:
        # Read as the workflow reads it while it loads: a missing or malformed file is refused.
        external_frameworks(
            {"external_timings": str(Path(args.study) / config["external_timings"])}
        )
    if config["frameworks"] and not args.cluster:
        problems = sweep_checks.local_machine_problems(
            config, available_cores(), sweep_checks.visible_gpus()
        )
        if problems:
            raise cfg.ConfigError(
                f"{args.config}: a local run refuses it: "
                + "; ".join(problems)
                + " (pass --cluster when the sweep runs on a cluster)"
            )
    runs = cfg.run_configs(config)
    for warning in sweep_checks.short_epochs(runs):
        print(f"{args.config}: warning: {warning}", file=sys.stderr)
    print(f"{args.config}: valid ({len(runs)} benchmark runs in the sweep)")
    return 0
