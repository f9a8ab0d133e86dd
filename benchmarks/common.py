"""Shared by the benchmark scripts: timing and the one-line result format.

The machine these run on is often shared (tests, builds), so every figure is taken as CPU time
(this process plus its finished children): it counts only the work done, not the waiting for a
core. Wall-clock time is printed beside it, with the load average, for context.
"""

from __future__ import annotations

import itertools
import os
import re
import resource
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dlperf.io import atomic_write_text


@dataclass(frozen=True)
class Timing:
    cpu_s: float
    wall_s: float


def _cpu_now() -> float:
    """CPU seconds (user + system) of this process and of its waited-for children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def timed(fn: Callable[[], object]) -> Timing:
    """CPU and wall-clock seconds of one call of ``fn()``."""
    cpu, wall = _cpu_now(), time.perf_counter()
    fn()
    return Timing(_cpu_now() - cpu, time.perf_counter() - wall)


def best_of(fn: Callable[[], object], repeats: int = 3) -> Timing:
    """The least CPU time of ``repeats`` calls of ``fn()`` (the least disturbed), with its wall."""
    return min((timed(fn) for _ in range(repeats)), key=lambda t: t.cpu_s)


def load() -> str:
    """The 1-minute load average over the core count, e.g. '2.31 on 2 cores'."""
    return f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores"


def report(
    name: str, value: float, unit: str, target: float | None = None, wall: float | None = None
) -> bool:
    """Print one figure beside its target; True when the target holds (or there is none)."""
    beside = f"   (wall {wall:.2f} {unit}, load {load()})" if wall is not None else ""
    if target is None:
        print(f"{name:<48} {value:10.3f} {unit}{beside}", flush=True)
        return True
    ok = value <= target
    verdict = "ok" if ok else "MISSED"
    print(
        f"{name:<48} {value:10.3f} {unit}   target <= {target:g} {unit}   {verdict}{beside}",
        flush=True,
    )
    return ok


def markers(name: str) -> tuple[str, str]:
    """The comment pair a script's measured block sits between in a Markdown file."""
    return f"<!-- {name}:start -->", f"<!-- {name}:end -->"


def write_between_markers(doc: Path, name: str, body: str) -> None:
    """Replace what lies between the ``name`` markers of ``doc`` with ``body`` (atomically), so a
    measured table in the docs is always the one its script last printed."""
    start, end = markers(name)
    text = doc.read_text(encoding="utf-8")
    if start not in text or end not in text:
        raise SystemExit(f"{doc} has no {start} ... {end} markers to write the table between")
    pattern = re.compile(re.escape(start) + ".*?" + re.escape(end), re.S)
    atomic_write_text(doc, pattern.sub(lambda _: f"{start}\n{body}\n{end}", text))


def weight_grid(count: int, step: float) -> list[tuple[float, ...]]:
    """Every weighting of ``count`` models on a grid of ``step`` that sums to 1 (66 for three
    models at 0.1): the combinations the hindsight bounds search."""
    steps = round(1 / step)
    return [
        tuple(k / steps for k in counts)
        for counts in itertools.product(range(steps + 1), repeat=count)
        if sum(counts) == steps
    ]


def measured_command(script: str, argv: list[str] | None) -> str:
    """The command that printed a measured block, as a reader reruns it: without ``--cache DIR``
    (where the fits are kept is no part of the measurement)."""
    given = list(argv if argv is not None else sys.argv[1:])
    if "--cache" in given:
        del given[given.index("--cache") : given.index("--cache") + 2]
    return f".venv/bin/python benchmarks/{script} " + " ".join(given)


def add_timings_argument(parser, help_text: str) -> None:
    """``--timings CSV ...``: a user's own external-timings files (docs/external-timings.md) as
    tables the answers are judged on."""
    parser.add_argument(
        "--timings", type=Path, nargs="+", default=[], metavar="CSV", help=help_text
    )
