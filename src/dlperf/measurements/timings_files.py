"""Any timings file, ours or brought in, told apart by its columns and read into points or runs.

One reader per format: ``tables.read_timings`` for our own ``timings.csv`` (written by
``dlperf aggregate``), ``external.read_external`` / ``external.read_external_runs`` for a
brought-in CSV (docs/external-timings.md). Every stage reads timings through this module.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import pandas as pd

from dlperf.errors import InputFileError, UsageError
from dlperf.measurements import tables
from dlperf.measurements.external import read_external, read_external_runs
from dlperf.measurements.points import to_points

# Columns only our own `dlperf aggregate` table has: their presence tells the formats apart.
OWN_FORMAT_MARKERS = ["rep", "iter_time_median_s", "epoch_time_s", "network", "device", "data_size"]


def is_own_timings(columns) -> bool:
    return all(c in columns for c in OWN_FORMAT_MARKERS)


def load_all_points(paths: str | os.PathLike | Sequence[str | os.PathLike]) -> pd.DataFrame:
    """The points of one or several timings files (ours and external ones), together."""
    if isinstance(paths, (str, os.PathLike)):
        return load_points(paths)
    frames = [load_points(path) for path in paths]
    if not frames:
        raise UsageError("no timings file given: pass results/timings.csv or an external CSV")
    return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]


def load_runs(paths: Sequence[str | os.PathLike]) -> pd.DataFrame:
    """Every run (repetitions apart) of one or several timings files, ours or external."""
    frames = []
    for path in paths:
        header = columns_of(path)
        frames.append(
            tables.read_timings(path) if is_own_timings(header) else read_external_runs(path)
        )
    return pd.concat(frames, ignore_index=True)


def columns_of(path: str | os.PathLike) -> pd.Index:
    """The header of a timings file (ours or external); an error naming the file and the fix
    when it is missing or not a CSV."""
    fix = (
        "pass a timings table written by `dlperf aggregate` or an external CSV "
        "(docs/external-timings.md)"
    )
    columns = tables.read_csv(path, fix, nrows=0).columns
    with open(path, "rb") as fh:
        if fh.read(256).lstrip()[:1] in (b"{", b"["):
            raise InputFileError(
                f"{path} is JSON (a model artifact or a run record?), not a timings table; {fix}"
            )
    return columns


def load_points(path: str | os.PathLike) -> pd.DataFrame:
    """Points from either our timings table or an external CSV (told apart by their columns)."""
    if is_own_timings(columns_of(path)):
        return to_points(tables.read_timings(path))
    return read_external(path)
