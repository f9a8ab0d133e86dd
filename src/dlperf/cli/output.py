"""What every command prints beside its answer."""

from __future__ import annotations

import sys


def warn(command: str, warnings: list[str]) -> None:
    """Each warning on its own line of stderr, naming the command."""
    for warning in warnings:
        print(f"dlperf {command}: warning: {warning}", file=sys.stderr)
