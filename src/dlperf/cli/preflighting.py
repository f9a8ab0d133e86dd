"""``dlperf plan-sweep`` and ``dlperf preflight``: what a sweep will ask of a cluster, and whether
this machine is quiet enough to measure on, both before anything runs."""

from __future__ import annotations

import argparse

from dlperf.cli import arguments as arg

#: How long ``--wait-quiet`` may wait: a day at most.
WAIT = arg.number(0, 86400, "a wait in seconds (up to 86400)", low_closed=True)


def add_plan_sweep(sub) -> None:
    p = sub.add_parser(
        "plan-sweep",
        help="a cluster sweep's plan before submitting it: job groups, sbatch submissions, "
        "GPU-hours requested and expected (CPU core-hours on a CPU sweep)",
        parents=[
            arg.sweep_config(
                "the sweep's config file (as given to snakemake --configfile)",
                "the config it is merged into (config/config.yaml)",
            )
        ],
    )
    p.add_argument(
        "--profile",
        action="append",
        default=[],
        help="a Snakemake profile the sweep runs with: a directory holding profile.yaml, or "
        "that file; repeat it as for "
        "snakemake, later ones win (default: profiles/slurm)",
    )
    p.add_argument(
        "--models",
        help="a study's fitted models (results/models): the expected GPU-hours from them",
    )
    p.set_defaults(func=run_plan_sweep)


def run_plan_sweep(args: argparse.Namespace) -> int:
    from dlperf import config as cfg
    from dlperf.study import sweep_plan

    config = cfg.load(args.config, default=args.defaults)
    settings = sweep_plan.profile_settings(args.profile or ["profiles/slurm"], cfg.read_yaml)
    runs = cfg.run_configs(config)
    plans = sweep_plan.plan(runs, config, settings)
    expected = sweep_plan.expected_hours(runs, config, args.models) if args.models else None
    print(sweep_plan.render(plans, settings, expected))
    warning = sweep_plan.group_warning(plans, config)
    if warning:
        print(warning)
    return 0


def add_preflight(sub) -> None:
    p = sub.add_parser(
        "preflight",
        help="before measuring: warn when other programs load this machine's CPUs "
        "(their runs would come out disturbed), or wait for it to be quiet",
    )
    p.add_argument(
        "--wait-quiet",
        type=WAIT,
        default=0.0,
        metavar="SECONDS",
        help="wait up to this long for the load to fall below the disturbed threshold "
        "(default 0: check once and warn)",
    )
    p.set_defaults(func=run_preflight)


def run_preflight(args: argparse.Namespace) -> int:
    from dlperf.measurements.preflight import wait_quiet

    print(wait_quiet(args.wait_quiet).message(args.wait_quiet))
    return 0
