"""Why runs failed, in a few lines: the failures grouped by their status and the first line of
their error, most frequent first. The report's Summary lists them when no run succeeded, and
the workflow's last line (its ``onsuccess`` handler) names the most frequent one, so a sweep
whose every run failed ends saying why, not with a list of finished jobs.
Standard library only: the Snakefile's ``onsuccess`` handler calls it. ``make run`` runs it
last (``python -m dlperf.report.failure_reasons FAILURES TIMINGS``): exit status 1 (make's 2)
when every run failed, so a script can tell."""

from __future__ import annotations

import csv
import os
import sys
from collections import Counter
from collections.abc import Iterable, Mapping

REASON_CHARS = 200  # a reason's first line, cut here: the full error is in the failures table


def reason(failure: Mapping) -> str:
    """``status: first line of the error`` of one failed run."""
    error = str(failure.get("error") or "").strip()
    first = error.splitlines()[0] if error else "no error message"
    if len(first) > REASON_CHARS:
        first = first[: REASON_CHARS - 1] + "…"
    return f"{failure.get('status') or 'failed'}: {first}"


def reasons(failures: Iterable[Mapping]) -> list[tuple[str, int]]:
    """(reason, number of runs) of the failures, most frequent first, ties by reason."""
    counts = Counter(reason(f) for f in failures)
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


def _rows(path: str | os.PathLike) -> list[dict]:
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            return list(csv.DictReader(fh))
    except FileNotFoundError:
        return []


def all_failed_line(failures_csv: str | os.PathLike, timings_csv: str | os.PathLike) -> str:
    """One line when the study has failed runs and no successful one; empty otherwise."""
    failed = _rows(failures_csv)
    if not failed or _rows(timings_csv):
        return ""
    found = reasons(failed)
    top, count = found[0]
    others = f"; {len(found) - 1} other reason(s)" if len(found) > 1 else ""
    return (
        f"dlperf: all {len(failed)} benchmark run(s) failed, {count} with {top}{others}. "
        "The report's Summary lists every reason."
    )


def print_when_all_failed(
    failures_csv: str | os.PathLike, timings_csv: str | os.PathLike, stream=None
) -> None:
    """Print :func:`all_failed_line` (to stderr by default) when no run succeeded."""
    line = all_failed_line(failures_csv, timings_csv)
    if line:
        print(line, file=stream or sys.stderr)


def exit_status(
    failures_csv: str | os.PathLike, timings_csv: str | os.PathLike, stream=None
) -> int:
    """1, after saying so in one line, when every run failed; else 0 (``make run``'s last step:
    the report is written either way)."""
    line = all_failed_line(failures_csv, timings_csv)
    if not line:
        return 0
    print(
        "dlperf: every benchmark run failed (the Summary of the report says why): this step "
        "exits 1, so `make run` exits 2 (make's status for a failed step)",
        file=stream or sys.stderr,
    )
    return 1


if __name__ == "__main__":
    sys.exit(exit_status(*sys.argv[1:3]))
