"""Measure the disturbed runs again, and only them: their records are kept in the history
(dlperf.study.superseded) and removed, so the workflow measures exactly those configurations again
(every run record is a target of the workflow; a missing one is measured). The Snakefile loads
this module: pandas only where a table is read."""

from __future__ import annotations

import os
from pathlib import Path

from dlperf.errors import UsageError
from dlperf.io import atomic_write_json, read_json
from dlperf.layout import StudyLayout, accumulation_suffix
from dlperf.study.superseded import keep_previous, kept_copies


def disturbed_records(timings_csv: str | os.PathLike, results: str | os.PathLike) -> list[Path]:
    """The run records (below ``results``) of every run the timings table flags as disturbed."""
    from dlperf.measurements import tables  # pandas: not while the Snakefile loads (listed_records)
    from dlperf.measurements.points import with_accumulation

    timings = tables.read_timings(timings_csv)
    noisy = with_accumulation(timings[tables.disturbed(timings)])
    layout = StudyLayout(os.fspath(results))
    return [
        Path(layout.run_record(**row, accum=accumulation_suffix(int(steps))))
        for row, steps in zip(
            noisy[tables.CONFIG_COLUMNS].to_dict(orient="records"),
            noisy[tables.ACCUMULATION],
            strict=True,
        )
    ]


def forget_disturbed(
    timings_csv: str | os.PathLike, results: str | os.PathLike, out: str | os.PathLike | None
) -> tuple[list[Path], list[Path]]:
    """Keep each disturbed run's record in the history and remove it; write the list of every
    flagged record to ``out`` (JSON ``{"records": [...]}``) when given. (Every flagged record,
    those removed now: the others were kept and removed before.) UsageError, touching nothing,
    when no flagged run has a record or a kept copy below ``results``: the table is another
    study's."""
    records = disturbed_records(timings_csv, results)
    if records and not any(r.exists() or kept_copies(r) for r in records):
        raise UsageError(
            f"none of the {len(records)} disturbed run(s) of {timings_csv} has a record in "
            f"{results}: the table belongs to another study; pass that study's --results"
        )
    removed = []
    for record in records:
        if keep_previous(record) is not None:
            record.unlink()
            removed.append(record)
    if out is not None:
        atomic_write_json(out, {"records": [str(r) for r in records]})
    return records, removed


def listed_records(listing: str | os.PathLike) -> list[str]:
    """The records a ``forget_disturbed`` listing names (the remeasure rule's input)."""
    return list(read_json(listing)["records"])
