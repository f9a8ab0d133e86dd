"""What every command prints beside its answer, and where its answer goes."""

from __future__ import annotations

import sys

from dlperf.io import atomic_write_text


def warn(command: str, warnings: list[str]) -> None:
    """Each warning on its own line of stderr, naming the command."""
    for warning in warnings:
        print(f"dlperf {command}: warning: {warning}", file=sys.stderr)


def deliver(out: str | None, text: str, said: str) -> None:
    """A command's answer: written atomically to ``out`` (saying ``said -> out``), or to
    standard output."""
    if out:
        atomic_write_text(out, text)
        print(f"{said} -> {out}")
    else:
        sys.stdout.write(text)
