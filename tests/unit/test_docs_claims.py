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


def snakemake_commands(path: Path) -> list[list[str]]:
    """Every snakemake command of a page, in code spans and indented lines, as words."""
    text = path.read_text(encoding="utf-8")
    spans = re.findall(r"`([^`]*\bsnakemake\b[^`]*)`", text) + command_lines(path)
    # A shell comment and a line continuation are no words of the command.
    return [
        span.split("#")[0].replace("\\", " ").split()
        for span in spans
        if re.match(r"(\.venv/bin/)?snakemake\b", span)
    ]


def test_no_documented_snakemake_command_reads_a_target_as_a_config_file():
    """`--configfile FILE archive` reads `archive` as a second config file (the option takes
    every word up to the next option): a documented command gives `--configfile=FILE`, or
    nothing but options after `--configfile FILE`."""
    found = [
        (page.name, " ".join(words))
        for page in [*DOCS, ROOT / "config" / "README.md"]
        for words in snakemake_commands(page)
        for i, word in enumerate(words)
        if word == "--configfile" and len(words) > i + 2 and not words[i + 2].startswith("-")
    ]
    assert found == []


def test_the_readme_archives_a_study_in_its_own_directory():
    commands = [" ".join(w) for w in snakemake_commands(ROOT / "README.md")]
    assert ".venv/bin/snakemake --directory studies/pytorch-only archive" in commands
    assert "snakemake --directory studies/pytorch-only --configfile=my.yaml" in commands


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
