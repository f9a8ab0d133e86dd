"""What the ``dlperf`` command line accepts: argument types that refuse a bad value while the
command line is parsed, and the checks that need two arguments together.

Every refusal is one line on stderr and exit status 2 (``Parser.error``), naming the argument,
the value given and what it must be -- never a traceback or a warning from NumPy later on.
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from dlperf.errors import UsageError
from dlperf.layout import RESULTS
from dlperf.limits import MAX_BATCH, MAX_COUNT, MAX_FLOPS, MAX_PARAMS, MAX_SAMPLES

MAX_SEED = 2**32 - 1  # NumPy's seeds
MAX_DEADLINE_S = 1e10  # three centuries


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (no usage block), exit status 2."""

    #: The sub-commands' parsers by name (set by the CLI's build_parser).
    commands: dict[str, argparse.ArgumentParser]

    def error(self, message: str) -> None:
        self.exit(2, f"{self.prog}: error: {one_line(message)}\n")


def one_line(text: object) -> str:
    """``text`` on one line: a message with line breaks (or a value holding one) is joined."""
    return " ".join(part.strip() for part in str(text).splitlines() if part.strip())


def whole(low: int, high: int, what: str) -> Callable[[str], int]:
    """An argument type: a whole number from ``low`` to ``high``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{text!r} is not a whole number; give {what}, a whole number from {low} to {high}"
            ) from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(
                f"{value} is out of range; give {what}, a whole number from {low} to {high}"
            )
        return value

    parse.__name__ = what
    return parse


def writable(kind: str) -> Callable[[str], str]:
    """An argument type: a path a command will write, a ``"file"`` or a ``"directory"``,
    checked before any work (a fit of minutes is not lost to a folder that cannot be written):
    not the other kind, and the nearest existing folder on its way is a writable directory."""

    def parse(text: str) -> str:
        path = Path(text)
        if path.exists() and path.is_dir() != (kind == "directory"):
            raise argparse.ArgumentTypeError(
                f"{text!r} exists and is not a {kind}; give a {kind} to write"
            )
        folder = path if kind == "directory" else path.parent
        while not folder.exists():
            folder = folder.parent
        if not folder.is_dir():
            raise argparse.ArgumentTypeError(
                f"cannot write {text!r}: {folder} is a file, not a directory; choose another path"
            )
        try:
            # A file made and removed, not os.access: root passes that check where nothing can
            # be written (/proc, a read-only mount).
            with tempfile.TemporaryFile(dir=folder):
                pass
        except OSError:
            raise argparse.ArgumentTypeError(
                f"cannot write {text!r}: the directory {folder} is not writable; choose one that is"
            ) from None
        return text

    parse.__name__ = f"{kind} to write"
    return parse


OUT_FILE = writable("file")
OUT_DIR = writable("directory")


def check_written(option: str, path: str | None) -> None:
    """:data:`OUT_FILE`'s check of a file a command will write, made in its handler (before
    any work): UsageError naming the option."""
    if path is None:
        return
    try:
        OUT_FILE(path)
    except argparse.ArgumentTypeError as exc:
        raise UsageError(f"{option}: {exc}") from None


def number(
    low: float, high: float, what: str, high_open: bool = False, low_closed: bool = False
) -> Callable[[str], float]:
    """An argument type: a finite number above ``low`` (from it when ``low_closed``) and up to
    ``high`` (below it when ``high_open``). NaN and infinities are refused by name."""
    upper = "below" if high_open else "up to"
    lower = "from" if low_closed else "above"
    give = f"give {what}, {lower} {low:g} and {upper} {high:g}"

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number; {give}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{text!r} is not a finite number; {give}")
        inside = value < high if high_open else value <= high
        above = value >= low if low_closed else value > low
        if not (above and inside):
            raise argparse.ArgumentTypeError(f"{value:g} is out of range; {give}")
        return value

    parse.__name__ = what
    return parse


def duration(text: str) -> str:
    """An argument type: a deadline in seconds, or with a unit (90m, 2h, 1d), checked here and
    kept as written (the command reads it with the same ``parse_duration``)."""
    from dlperf.durations import parse_duration

    try:
        seconds = parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if not math.isfinite(seconds) or seconds > MAX_DEADLINE_S:
        raise argparse.ArgumentTypeError(
            f"the deadline {text!r} is not a finite time of at most {MAX_DEADLINE_S:g} s"
        )
    return text


COUNT = whole(1, MAX_COUNT, "a count")
WORKERS = whole(1, MAX_COUNT, "a number of workers")
NODES = whole(1, MAX_COUNT, "a number of nodes")
BATCH = whole(1, MAX_BATCH, "a per-worker batch size")
DATA_SIZE = whole(1, MAX_SAMPLES, "samples per epoch")
NON_NEGATIVE = whole(0, MAX_COUNT, "a count")
SEED = whole(0, MAX_SEED, "a seed")
FOLDS = whole(2, MAX_COUNT, "a number of folds")
EPOCHS = number(0, 1e6, "a number of epochs")
SAMPLES = number(0, 1e18, "a number of samples")
LEVEL = number(0, 1, "an interval level", high_open=True)
PARAMS = number(0, MAX_PARAMS, "a parameter count")
FLOPS = number(0, MAX_FLOPS, "FLOPs per sample")
SECONDS = number(0, 1e7, "a time in seconds")
SHARE = number(0, 1, "a share (of a grid's runs)")
FRACTION = number(0, 10, "a fraction (0.05 = 5%)", low_closed=True)
RATE = number(0, 1, "a false discovery rate", high_open=True)
POWER = number(0, 1, "a chance to detect", high_open=True)


def check_layouts(nodes: Sequence[int], procs: Sequence[int]) -> None:
    """Every (nodes, procs) row puts the same number of workers on each node; ValueError
    naming the first row that does not. Rows pair up as the command line gives them (a single
    value stands for every row)."""
    rows = max(len(nodes), len(procs))
    for row in range(rows):
        n = nodes[0] if len(nodes) == 1 else nodes[row] if row < len(nodes) else None
        p = procs[0] if len(procs) == 1 else procs[row] if row < len(procs) else None
        if n is not None and p is not None and p % n:
            where = f" (row {row + 1})" if rows > 1 else ""
            raise UsageError(
                f"--procs {p} is not a multiple of --nodes {n}{where}: every node runs the same "
                "number of workers; give a worker count that the node count divides"
            )


def switch(text: str) -> bool:
    """``true`` or ``false`` (any case), as the workflow writes a boolean setting."""
    lowered = text.lower()
    if lowered not in ("true", "false"):
        raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")
    return lowered == "true"


def add_input_arguments(parser: argparse.ArgumentParser) -> None:
    """`dlperf bench`'s options for what one sample is and how it is trained (the config keys
    image_size, seq_len, precision, accumulation_steps, compile, cuda_graphs and input)."""
    from dlperf.bench.options import INPUTS
    from dlperf.bench.spec import DEFAULT_SEQ_LEN, IMAGE_SIZES, MAX_SEQ_LEN, PRECISIONS

    parser.add_argument(
        "--image-size", type=int, choices=IMAGE_SIZES, default=32, help="image networks' side"
    )
    parser.add_argument(
        "--seq-len",
        type=whole(1, MAX_SEQ_LEN, "tokens per sample"),
        default=DEFAULT_SEQ_LEN,
        help="token networks' tokens per sample",
    )
    parser.add_argument(
        "--precision", choices=PRECISIONS, default="fp32", help="numeric precision (fp32)"
    )
    parser.add_argument(
        "--compile",
        type=switch,
        default=False,
        metavar="{true,false}",
        help="true: compile the step (torch.compile, XLA; MXNet is always hybridized)",
    )
    parser.add_argument(
        "--cuda-graphs",
        type=switch,
        default=False,
        metavar="{true,false}",
        help="true: CUDA graphs (PyTorch, with --compile true, on cuda)",
    )
    parser.add_argument(
        "--input",
        choices=INPUTS,
        default="device",
        help="synthetic batches kept on the device, or copied from the host every step",
    )
    parser.add_argument(
        "--accumulation-steps",
        type=COUNT,
        default=1,
        help="micro-batches (of --batch-size each) per optimizer step",
    )


# Options several commands share, as parent parsers (``add_parser(..., parents=[...])``).


def config_options(config_help: str) -> argparse.ArgumentParser:
    """``--config FILE`` / ``--config-json JSON``: the workflow configuration a command runs
    with; read it with :func:`config_of`."""
    parent = Parser(add_help=False)
    parent.add_argument("--config", help=config_help)
    parent.add_argument("--config-json", help="config sections as JSON (what the workflow passes)")
    return parent


def config_of(args: argparse.Namespace, sweep: bool = True) -> dict:
    """The workflow configuration a command runs with: the --config file, or the sections the
    workflow passes inline (--config-json); schema defaults fill the rest. Without ``sweep``
    (fit, validate, report: the models and validation sections), a --config file needs no
    sweep keys either."""
    from dlperf import config as cfg

    if args.config and sweep:
        return cfg.load(args.config)
    if args.config:
        return cfg.validated(cfg.with_minimal_sweep(cfg.read_yaml(args.config)))
    try:
        sections = json.loads(args.config_json) if args.config_json else {}
    except json.JSONDecodeError as exc:
        raise cfg.ConfigError(
            f"--config-json is not valid JSON ({exc}); pass a JSON object"
        ) from None
    if not isinstance(sections, dict):
        raise cfg.ConfigError(
            '--config-json must be a JSON object of config sections, e.g. {"seed": 1}'
        )
    return cfg.validated(cfg.with_minimal_sweep(sections))


def timings_input() -> argparse.ArgumentParser:
    """``--timings``: the measured points a command reads, ours and external ones."""
    parent = Parser(add_help=False)
    parent.add_argument(
        "--timings",
        required=True,
        nargs="+",
        help="results/timings.csv and/or external timings CSVs (docs/external-timings.md)",
    )
    return parent


def seed_option() -> argparse.ArgumentParser:
    """``--seed``, whose default is the configuration's seed."""
    parent = Parser(add_help=False)
    parent.add_argument("--seed", type=SEED, help="default: the config's seed")
    return parent


def results_option() -> argparse.ArgumentParser:
    """``--results``: a study's results directory."""
    parent = Parser(add_help=False)
    parent.add_argument(
        "--results", default=RESULTS, help=f"the results directory (default: {RESULTS})"
    )
    return parent


def artifact_options(model_name_help: str) -> argparse.ArgumentParser:
    """The model artifact a prediction reads, the model and network in it, the interval level."""
    parent = Parser(add_help=False)
    parent.add_argument("--model", required=True, help="model artifact (results/models/<fw>.json)")
    parent.add_argument("--model-name", default="answer", help=model_name_help)
    parent.add_argument("--network", help="needed when the artifact covers several networks")
    parent.add_argument("--level", type=LEVEL, default=0.9, help="prediction-interval level (0.9)")
    return parent


def sweep_config(config_help: str, defaults_help: str) -> argparse.ArgumentParser:
    """A sweep's config file and the config it is merged into, as the workflow merges them
    (read with ``config.load(args.config, default=args.defaults)``)."""
    parent = Parser(add_help=False)
    parent.add_argument("config", help=config_help)
    parent.add_argument("--defaults", help=defaults_help)
    return parent


# Options several commands declare together, added in place (so that each command's --help
# lists them where it always has).


def add_hardware_options(parser: argparse.ArgumentParser, option: str) -> None:
    """The precision and GPU catalogue the answer across hardware is asked at, with ``option``
    (``--gpu`` or ``--gpus``)."""
    parser.add_argument(
        "--precision", default="fp32", help=f"with {option}: fp32, tf32, amp_fp16 or bf16 (fp32)"
    )
    parser.add_argument("--hardware", help=f"with {option}: your own GPU catalogue file (YAML)")


def add_answer_output(parser: argparse.ArgumentParser, formats: list[str]) -> None:
    """The format of a command's answer (the first by default) and where it goes: standard
    output, or the file ``--out`` (written with :func:`dlperf.cli.output.deliver`)."""
    parser.add_argument(
        "--format",
        choices=formats,
        default=formats[0],
        help=f"format of the answer ({formats[0]})",
    )
    parser.add_argument(
        "--out", type=OUT_FILE, help="write the answer here instead of to standard output"
    )
