"""What a failed workflow run says last: each failed job's rule, log and the last line of that
log (where dlperf writes its one-line error), read from Snakemake's own log. Without it, the
line that names the cause sits above kilobytes of the failed job's inputs and command.
Standard library only: the Snakefile's ``onerror`` handler calls it."""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

FAILED_RULE = re.compile(r"Error in rule (\w+):")
JOB_LOG = re.compile(r"\s+log: (.+?) \(check log file\(s\) for error details\)")
TAIL_BYTES = 1 << 16  # the end of a log: its last line is the one that names the cause
SHOWN = 10  # failed jobs listed; the rest are counted


@dataclass(frozen=True)
class FailedJob:
    rule: str
    logs: tuple[str, ...]


def failed_jobs(snakemake_log: str | os.PathLike) -> list[FailedJob]:
    """The failed jobs of one Snakemake run, in the order its log reports them."""
    found, rule = [], None
    with open(snakemake_log, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            line = line.rstrip("\n")
            if match := FAILED_RULE.fullmatch(line):
                if rule is not None:
                    found.append(FailedJob(rule, ()))
                rule = match.group(1)
            elif rule is not None and (match := JOB_LOG.fullmatch(line)):
                found.append(FailedJob(rule, tuple(match.group(1).split(", "))))
                rule = None
            elif rule is not None and not line.startswith(" "):
                found.append(FailedJob(rule, ()))
                rule = None
    if rule is not None:
        found.append(FailedJob(rule, ()))
    return list(dict.fromkeys(found))


def last_line(path: str | os.PathLike) -> str | None:
    """The last non-blank line of a log file; None when there is none (or no file)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(max(0, os.path.getsize(path) - TAIL_BYTES))
            tail = fh.read().decode("utf-8", errors="replace")
    except OSError:
        return None
    lines = [line.strip() for line in tail.splitlines() if line.strip()]
    return lines[-1] if lines else None


def summary(snakemake_logs: list[str]) -> str:
    """Lines to print last: every failed job with the last line of its log."""
    jobs = [job for path in snakemake_logs if Path(path).is_file() for job in failed_jobs(path)]
    if not jobs:
        return ""
    lines = [f"dlperf: {len(jobs)} job(s) failed; the last line of each one's log:"]
    for job in jobs[:SHOWN]:
        if not job.logs:
            lines.append(f"  {job.rule}: no log (see the error above)")
        for log in job.logs:
            lines.append(f"  {job.rule} ({log}): {last_line(log) or 'the log is empty'}")
    if len(jobs) > SHOWN:
        lines.append(f"  ... and {len(jobs) - SHOWN} more (see the Snakemake log above)")
    return "\n".join(lines)


def print_summary(snakemake_logs: list[str], stream=None) -> None:
    """Print :func:`summary` (to stderr by default) when any job failed."""
    text = summary(snakemake_logs)
    if text:
        print(text, file=stream or sys.stderr)
