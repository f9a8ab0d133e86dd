"""What every command prints beside its answer, and where its answer goes."""

from __future__ import annotations

import sys

from dlperf.io import atomic_write_text


def warn(command: str, warnings: list[str]) -> None:
    """Each warning on its own line of stderr, naming the command."""
    for warning in warnings:
        print(f"dlperf {command}: warning: {warning}", file=sys.stderr)


def data_warnings(artifact: dict, network: str) -> list[str]:
    """What a user must know of the data behind any answer of ``network``, whatever is asked:
    an artifact of another dlperf version, and runs mostly disturbed by other programs (the
    same for `predict` and `plan`)."""
    from dlperf.measurements.tables import mostly_disturbed
    from dlperf.models.artifact_check import version_warnings
    from dlperf.models.prediction import measured_ranges

    share = (measured_ranges(artifact, network) or {}).get("disturbed_share")
    return version_warnings(artifact) + mostly_disturbed(share)


def deliver(out: str | None, text: str, said: str) -> None:
    """A command's answer: written atomically to ``out`` (saying ``said -> out``), or to
    standard output."""
    if out:
        atomic_write_text(out, text)
        print(f"{said} -> {out}")
    else:
        sys.stdout.write(text)
