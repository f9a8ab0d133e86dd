"""What the documentation states about the code holds: commands that run as written in any
shell, and limits equal to the ones the code applies."""

from __future__ import annotations

import re
from pathlib import Path

from dlperf.measurements.external import LIMITS

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def command_lines(path: Path) -> list[str]:
    """Indented lines that call a command (dlperf, snakemake, make)."""
    return [
        line.strip()
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.startswith("    ") and re.match(r"\s+(\.venv/bin/)?(dlperf|snakemake|make)\b", line)
    ]


def test_no_documented_command_needs_globstar():
    # `**` matches one directory level in bash unless `shopt -s globstar`: records are missed.
    found = [(p.name, c) for p in DOCS for c in command_lines(p) if "**" in c]
    assert found == []


def _bound(text: str) -> float:
    return float(text.split()[0].replace(",", ""))


def test_the_external_timings_limits_table_is_the_codes():
    text = (ROOT / "docs" / "external-timings.md").read_text(encoding="utf-8")
    text = text.split("| column | lowest | highest |", 1)[1].split("\n\n", 1)[0]
    rows = re.findall(r"^\| (`[^|]+)\| ([^|]+) \| ([^|]+) \|$", text, flags=re.MULTILINE)
    documented = {}
    for columns, low, high in rows:
        for column in re.findall(r"`(\w+)`", columns):
            documented[column] = (_bound(low), _bound(high))
    for column, (low, high) in documented.items():
        assert (low, high) == (LIMITS[column][0], LIMITS[column][1]), column
    assert {"batch_size", "procs", "data_size", "iter_time_s"} <= set(documented)
