"""Durations as users write them (a deadline: seconds, or a number with a unit). Standard
library only: the workflow checks its configuration with it before planning any job."""

from __future__ import annotations

import re

from dlperf.errors import UsageError

UNITS = {"s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0}


def parse_duration(text: str) -> float:
    """'3600', '90s', '45m', '2.5h', '1d' -> seconds."""
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*(s|m|min|h|d)?\s*", str(text))
    if not match:
        raise UsageError(
            f"cannot read the deadline {text!r}; write a number of seconds or add a unit: "
            "90s, 45m, 2.5h, 1d"
        )
    seconds = float(match.group(1)) * UNITS[match.group(2) or "s"]
    if seconds <= 0:
        raise UsageError(f"the deadline must be positive, got {text!r}")
    return seconds


def readable(seconds: float) -> str:
    """A duration as a reader takes it in: '45 s', '12.5 min', '10.3 h', '1,234 h' (never
    '3.707e+04 s')."""
    if seconds >= 3600 * 1000:
        return f"{seconds / 3600:,.0f} h"
    if seconds >= 3600:
        return f"{seconds / 3600:.3g} h"
    if seconds >= 60:
        return f"{seconds / 60:.3g} min"
    return f"{seconds:.3g} s"
