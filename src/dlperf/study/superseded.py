"""Superseded run records: a benchmark measured again on purpose (forced, or its
configuration changed) never loses the record it replaces.

The bench rule's output is flagged ``update`` so Snakemake leaves the previous record in
place (it would delete it before the job starts); ``dlperf bench`` copies it into
``results/history/`` before measuring, named after its content, so keeping the same record
twice (a job stopped and started again) stores it once. Standard library only.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from dlperf.io import atomic_path
from dlperf.layout import HISTORY, RUNS, WORKFLOW


def _runs_root(record: Path) -> Path:
    """The ``runs`` directory above ``record`` (``.../runs/{framework}/{network}/x.json``)."""
    for parent in record.parents:
        if parent.name == RUNS:
            return parent
    raise ValueError(
        f"{record} is not below a `{RUNS}` directory: run records live in "
        f"{WORKFLOW.runs}/<framework>/<network>/"
    )


def _content_id(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def history_path(record: str | os.PathLike) -> Path:
    """Where the current content of ``record`` is kept once superseded:
    ``results/history/runs/{framework}/{network}/{name}.{content id}.json`` for a record of
    the workflow, ``history/{name}.{content id}.json`` beside any other."""
    record = Path(record)
    return _history_folder(record) / f"{record.stem}.{_content_id(record)}{record.suffix}"


def kept_copies(record: str | os.PathLike) -> list[Path]:
    """Every copy of ``record`` kept in the history, whatever its content."""
    record = Path(record)
    return sorted(_history_folder(record).glob(f"{record.stem}.*{record.suffix}"))


def _history_folder(record: Path) -> Path:
    try:
        runs = _runs_root(record)
    except ValueError:
        return record.parent / HISTORY
    return runs.parent / HISTORY / RUNS / record.parent.relative_to(runs)


def keep_previous(record: str | os.PathLike) -> Path | None:
    """Copy an existing ``record`` into the history before it is measured again; the path
    of the copy, or None when there is no previous record."""
    record = Path(record)
    if not record.exists():
        return None
    target = history_path(record)
    if not target.exists():
        with atomic_path(target) as tmp:
            shutil.copyfile(record, tmp)
    return target


def superseded_records(results: str | os.PathLike) -> list[Path]:
    """The kept records of ``results`` (e.g. ``results/``) that no current record equals:
    what re-measuring replaced. A copy of a record that is still current (its job was
    stopped before it wrote a new one) is not counted."""
    results = Path(results)
    kept = sorted((results / HISTORY / RUNS).rglob("*.json"))
    superseded = []
    for path in kept:
        stem, _, content_id = path.stem.rpartition(".")
        current = (
            results
            / RUNS
            / path.parent.relative_to(results / HISTORY / RUNS)
            / f"{stem}{path.suffix}"
        )
        if not (current.exists() and _content_id(current) == content_id):
            superseded.append(path)
    return superseded


def count_superseded(results: str | os.PathLike) -> int:
    """How many superseded run records ``results`` keeps (the report shows this number)."""
    return len(superseded_records(results))
