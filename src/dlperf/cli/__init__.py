"""The ``dlperf`` command: every workflow stage, runnable outside Snakemake too.

One module per group of commands; each command's options are declared beside its handler
(``add_<command>`` then ``run_<command>``), options several commands share are the parent
parsers of :mod:`dlperf.cli.arguments`, and a handler only parses and calls :mod:`dlperf.stages`
(or the library function that is the command). This module builds the parser and runs a command.
"""

from __future__ import annotations

import argparse
import sys

from dlperf import __version__
from dlperf.cli import (
    adaptive_sweeps,
    configuring,
    frameworks,
    measuring,
    modelling,
    predicting,
    preflighting,
    reporting,
    studies,
)
from dlperf.cli import arguments as arg
from dlperf.errors import DlperfError

DESCRIPTION = "The ``dlperf`` command: every workflow stage, runnable outside Snakemake too."

#: Each command's parser, in the order ``dlperf --help`` lists them.
COMMANDS = (
    measuring.add_env,
    measuring.add_bench,
    measuring.add_aggregate,
    modelling.add_fit,
    modelling.add_validate,
    modelling.add_combine,
    reporting.add_report,
    predicting.add_predict,
    predicting.add_plan,
    configuring.add_write_config,
    studies.add_forget_disturbed,
    configuring.add_check_config,
    preflighting.add_plan_sweep,
    preflighting.add_preflight,
    studies.add_archive,
    studies.add_verify_archive,
    adaptive_sweeps.add_adaptive_replay,
    adaptive_sweeps.add_adaptive_round,
    studies.add_compare,
    frameworks.add_compare_frameworks,
)

#: What a user's input can cause: the project's own errors (dlperf.errors.DlperfError and the
#: types derived from it: ``UsageError``, ``UnknownName``, ``ConfigError``, ``InputFileError``,
#: ``ArchiveError``, ``InsufficientData``, ...). A missing input file is refused by the argument
#: types, or raised as ``InputFileError`` where it is opened. Anything else, a plain ValueError,
#: KeyError or FileNotFoundError included, is a bug and shows its traceback.
USER_ERRORS = (DlperfError,)

#: The exit status of a command stopped by Ctrl-C (128 + SIGINT), as a shell reports it.
INTERRUPTED = 130


#: One example per command, shown at the end of its --help.
EXAMPLES = {
    "env": "dlperf env --framework pytorch --requirements envs/pytorch.txt --out pytorch.json",
    "bench": "dlperf bench --env results/envs/pytorch.json --framework pytorch --network mlp "
    "--procs 2 --batch-size 32 --data-size 1024 --out run.json",
    "aggregate": "dlperf aggregate --runs-dir results/runs --timings timings.csv "
    "--failures failures.csv",
    "fit": "dlperf fit --timings results/timings.csv --framework pytorch "
    "--config config/config.yaml --out pytorch.json",
    "validate": "dlperf validate --timings results/timings.csv --config config/config.yaml "
    "--out validation/",
    "combine": "dlperf combine results/validation/*.summary.csv --out summary.csv",
    "report": "snakemake report (the workflow passes report's many inputs)",
    "predict": "dlperf predict --model results/models/pytorch.json --procs 4 8 "
    "--batch-size 32 --data-size 60000 --epochs 10",
    "plan": "dlperf plan --model results/models/pytorch.json --batch-size 32 "
    "--data-size 60000 --epochs 10 --deadline 2h",
    "write-config": "dlperf write-config --config my.yaml --out config.json",
    "forget-disturbed": "dlperf forget-disturbed --results results",
    "check-config": "dlperf check-config my.yaml --defaults config/config.yaml",
    "archive": "dlperf archive --results results --out study.tar.gz",
    "verify-archive": "dlperf verify-archive study.tar.gz --rerun",
    "adaptive-replay": "dlperf adaptive-replay --timings results/timings.csv --budget 0.35 "
    "--out replay/",
    "adaptive-round": "snakemake (the adaptive sweep's rounds run as workflow jobs)",
    "compare": "dlperf compare study-a/results study-b/results",
    "compare-frameworks": "dlperf compare-frameworks --timings results/timings.csv "
    "--models results/models/pytorch.json results/models/tensorflow.json",
    "plan-sweep": "dlperf plan-sweep config/gpu.yaml --defaults config/config.yaml "
    "--profile profiles/slurm",
    "preflight": "dlperf preflight --wait-quiet 300",
}


def build_parser() -> argparse.ArgumentParser:
    parser = arg.Parser(prog="dlperf", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"dlperf {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for add_command in COMMANDS:
        add_command(sub)
    for name, command in sub.choices.items():
        command.epilog = f"example: {EXAMPLES[name]}"
    parser.commands = sub.choices
    return parser


def separator_given_as_value(argv: list[str]) -> str | None:
    """The option given as ``--option=--`` before the end of the options, if any."""
    for token in argv:
        if token == "--":
            return None
        option, equals, value = token.partition("=")
        if token.startswith("-") and equals and value == "--":
            return option
    return None


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    if not (sys.argv[1:] if argv is None else argv):
        # `dlperf` alone: the commands, not "the following arguments are required".
        parser.print_help(sys.stderr)
        return 2
    args, unknown = parser.parse_known_args(argv)
    emptied = separator_given_as_value(sys.argv[1:] if argv is None else argv)
    if emptied:
        # argparse drops a '--' given as '--option=--' and stores an empty list.
        parser.commands[args.command].error(
            f"{emptied}=--: '--' marks the end of the options and cannot be a value; give "
            f"{emptied} a value"
        )
    if unknown:
        # Named by the command they were given to: argparse would say only "dlperf: error".
        parser.commands[args.command].error(
            f"unrecognized arguments: {' '.join(unknown)}; see dlperf {args.command} --help"
        )
    try:
        return args.func(args)
    except USER_ERRORS as exc:
        # One line, whatever the message or a value quoted in it holds.
        print(f"dlperf {args.command}: error: {arg.one_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        # Every output is written atomically: an interrupted command leaves none half-written.
        print(
            f"dlperf {args.command}: interrupted; no output was left half-written", file=sys.stderr
        )
        return INTERRUPTED
