"""Bring-your-own timings: an external CSV read into the same points the models are fitted on.

Format (docs/external-timings.md): at least ``framework, procs, batch_size`` and one of
``epoch_time_s``, ``iter_time_s``, ``samples_per_s``; optional ``nodes`` (default 1),
``data_size``, ``network`` (default ``external``), ``device`` (default ``unknown``), ``rep``,
``param_count``, ``flops_per_sample``, ``grad_accum_steps`` (micro-batches per optimizer step,
default 1; ``batch_size`` is then the per-worker micro-batch).

Epoch time is derived consistently with the models' I(p, b, d) = ceil(d / (p b)):
    epoch_time_s given  -> used as is (then data_size is required: it fixes I)
    iter_time_s given   -> epoch = I * iter_time_s
    samples_per_s given -> epoch = I * p * b / samples_per_s  (samples_per_s is global)
Without data_size, an epoch is taken as DEFAULT_ITERATIONS iterations:
data_size = DEFAULT_ITERATIONS * procs * batch_size, so I is the same at every row.
"""

from __future__ import annotations

import csv
import os

import numpy as np
import pandas as pd

from dlperf.errors import DlperfError, InputFileError, UnknownName
from dlperf.hardware import precision_name
from dlperf.limits import (
    MAX_BATCH,
    MAX_COUNT,
    MAX_FLOPS,
    MAX_PARAMS,
    MAX_RATE,
    MAX_SAMPLES,
    MAX_SECONDS,
    MIN_SECONDS,
)
from dlperf.measurements import tables
from dlperf.measurements.points import to_points

REQUIRED = ["framework", "procs", "batch_size"]
SAFE_NAME = r"[A-Za-z0-9][A-Za-z0-9_.-]*"
TIME_COLUMNS = ["epoch_time_s", "iter_time_s", "samples_per_s"]
INTEGER_COLUMNS = ["procs", "batch_size", "nodes", "data_size", "rep", tables.ACCUMULATION]
FEATURE_COLUMNS = ["param_count", "flops_per_sample"]
DEFAULTS = {"nodes": 1, "network": "external", "device": "unknown"}
# (lowest, highest) value of each numeric column: anything outside is a typo or a unit mix-up,
# refused by column and row before it reaches NumPy or SciPy (dlperf.limits).
LIMITS = {
    "procs": (1, MAX_COUNT),
    "batch_size": (1, MAX_BATCH),
    "nodes": (1, MAX_COUNT),
    "data_size": (1, MAX_SAMPLES),
    "rep": (0, MAX_COUNT),
    # Micro-batches per optimizer step (docs/external-timings.md); absent means 1.
    tables.ACCUMULATION: (1, MAX_COUNT),
    "epoch_time_s": (MIN_SECONDS, MAX_SECONDS),
    "iter_time_s": (MIN_SECONDS, MAX_SECONDS),
    "samples_per_s": (1 / MAX_SECONDS, MAX_RATE),
    "param_count": (1, MAX_PARAMS),
    "flops_per_sample": (1, MAX_FLOPS),
    # How workers share a node (dlperf.measurements.tables.LAYOUT_COLUMNS): threads, cores,
    # MXNet servers.
    "threads_per_worker": (1, MAX_COUNT),
    "cores_per_node": (1, MAX_COUNT),
    "ps_servers": (1, MAX_COUNT),
}
SEPARATORS = {";": "semicolons", "\t": "tabs", "|": "bars"}
DEFAULT_ITERATIONS = 100


class ExternalTimingsError(DlperfError):
    pass


def frameworks_in(path: str | os.PathLike) -> list[str]:
    """The frameworks an external CSV holds (validated as the fit stage will read it)."""
    return sorted(read_external(path)["framework"].unique())


def _fail(path, message: str) -> None:
    raise ExternalTimingsError(
        f"external timings {path}: {message}. See docs/external-timings.md for the format."
    )


def _rows(mask: np.ndarray, limit: int = 5) -> str:
    # Data row k is line k + 1 of the file (line 1 is the header).
    rows = [str(i + 1) for i in np.flatnonzero(mask)[:limit]]
    more = " ..." if mask.sum() > limit else ""
    return f"row(s) {', '.join(rows)}{more} (data rows; the header is line 1)"


def _numeric(raw: pd.DataFrame, column: str, path, integer: bool) -> pd.Series:
    values = pd.to_numeric(raw[column], errors="coerce")
    bad = values.isna().to_numpy()
    if bad.any():
        _fail(
            path,
            f"column {column!r} has missing or non-numeric values at {_rows(bad)}; "
            "fill in a number there",
        )
    infinite = ~np.isfinite(values.to_numpy(float))
    if infinite.any():
        _fail(path, f"column {column!r} has infinite values at {_rows(infinite)}")
    low, high = LIMITS[column]
    if low > 0 and (values <= 0).any():
        _fail(
            path,
            f"column {column!r} must be positive; {_rows((values <= 0).to_numpy())} "
            "have zero or negative values",
        )
    outside = ((values < low) | (values > high)).to_numpy()
    if outside.any():
        _fail(
            path,
            f"column {column!r} must lie between {low:g} and {high:g}; {_rows(outside)} "
            "lie outside (a typo, or another unit?)",
        )
    if integer:
        fractional = (values != np.round(values)).to_numpy()
        if fractional.any():
            _fail(path, f"column {column!r} must hold whole numbers; see {_rows(fractional)}")
        return values.astype(np.int64)
    return values.astype(float)


def _refuse_ragged_rows(path) -> None:
    """Refuse the first non-blank row whose field count differs from the header's, by its
    line: pandas would shift such a row into an index, pad it with blanks or name only the
    tokenizer, and the error would then blame another column."""
    with open(path, encoding="utf-8", newline="") as fh:
        rows = csv.reader(fh)
        header = next(rows, None)
        ragged = next((row for row in rows if row and len(row) != len(header)), None)
        line = rows.line_num
    if ragged is not None and not header_hint(path):
        _fail(
            path,
            f"line {line} has {len(ragged)} fields where the header has {len(header)} (a ragged "
            "row: a missing or extra comma, or an unquoted comma inside a value); give every "
            "row one value per column",
        )


def header_hint(path) -> str:
    """A hint when the first line is not a comma-separated header: a comment line (as the
    published tables' ``# source: ...``), or another separator."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        header = fh.readline()
    if header.lstrip().startswith("#"):
        return (
            f"; its first line is a comment ({header.strip()[:40]!r}...), not the header: delete "
            "the comment line(s) so that the column names come first (e.g. "
            "grep -v '^#' in.csv > out.csv)"
        )
    if "," in header:
        return ""
    for separator, name in SEPARATORS.items():
        if separator in header:
            return (
                f"; its header is separated by {name}, not commas: save it comma-separated with "
                f"decimal points (e.g. pandas.read_csv(path, sep={separator!r})"
                ".to_csv(path, index=False), adding decimal=',' if it writes 0,5 for 0.5)"
            )
    return ""


def read_external(path: str | os.PathLike) -> pd.DataFrame:
    """The external CSV as points (shaped like ``points.to_points``), or an error naming the fix."""
    return to_points(read_external_runs(path))


def _read_raw(path: str | os.PathLike) -> tuple[pd.DataFrame, str]:
    """The external CSV's cells as text, and the time column it is read by; an error naming
    the fix when the file is not a table of runs."""
    try:
        _refuse_ragged_rows(path)
        raw = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])
    except FileNotFoundError:
        raise InputFileError(f"timings file {path} does not exist") from None
    except pd.errors.EmptyDataError:
        _fail(path, "the file is empty")
    except pd.errors.ParserError as exc:
        _fail(path, f"is not a readable CSV ({exc}){header_hint(path)}")
    except UnicodeDecodeError as exc:
        _fail(path, f"is not UTF-8 text ({exc}); save it as UTF-8")
    raw.columns = [str(c).strip() for c in raw.columns]
    missing = [c for c in REQUIRED if c not in raw.columns]
    if missing:
        _fail(path, f"missing required column(s) {', '.join(missing)}{header_hint(path)}")
    times = [c for c in TIME_COLUMNS if c in raw.columns]
    if not times:
        _fail(path, f"needs one of the columns {', '.join(TIME_COLUMNS)}")
    if raw.empty:
        _fail(path, "has a header but no rows")
    time_column = times[0]  # the most direct measurement wins
    if time_column == "epoch_time_s" and "data_size" not in raw.columns:
        _fail(
            path,
            "has epoch_time_s but no data_size column; data_size (samples per epoch) "
            "fixes how many iterations the epoch had, so add it",
        )
    return raw, time_column


def read_external_runs(path: str | os.PathLike) -> pd.DataFrame:
    """The external CSV as runs: one row per measurement (repetitions apart), checked."""
    raw, time_column = _read_raw(path)
    frame = pd.DataFrame(index=raw.index)
    for column in ("framework", "network", "device"):
        if column in raw.columns:
            text = raw[column].fillna("").str.strip()
            if (text == "").any():
                _fail(path, f"column {column!r} is empty at {_rows((text == '').to_numpy())}")
            # A framework's name becomes a file name (results/models/<framework>.json).
            unsafe = ~text.str.fullmatch(SAFE_NAME).to_numpy() & (column == "framework")
            if unsafe.any():
                _fail(
                    path,
                    f"column {column!r} may hold only letters, digits, '.', '_' and "
                    f"'-' (it names files); see {_rows(unsafe)}",
                )
            frame[column] = text
        else:
            frame[column] = DEFAULTS[column]
    _hardware_columns(raw, frame, path)
    for column in ("procs", "batch_size"):
        frame[column] = _numeric(raw, column, path, integer=True)
    frame["nodes"] = (
        _numeric(raw, "nodes", path, integer=True) if "nodes" in raw.columns else DEFAULTS["nodes"]
    )
    uneven = (frame["procs"] % frame["nodes"] != 0).to_numpy()
    if uneven.any():
        _fail(
            path, f"procs must be a multiple of nodes (same workers per node); see {_rows(uneven)}"
        )
    global_batch = frame["procs"] * frame["batch_size"]
    if "data_size" in raw.columns:
        frame["data_size"] = _numeric(raw, "data_size", path, integer=True)
    else:
        frame["data_size"] = DEFAULT_ITERATIONS * global_batch
    frame["rep"] = _numeric(raw, "rep", path, integer=True) if "rep" in raw.columns else 0
    accumulation = tables.ACCUMULATION
    if accumulation in raw.columns:
        # An empty cell is a run without accumulation, as an absent column is.
        frame[accumulation] = _numeric(raw.fillna({accumulation: "1"}), accumulation, path, True)
    else:
        frame[accumulation] = 1
    iters = np.ceil(frame["data_size"] / global_batch)
    measured = _numeric(raw, time_column, path, integer=False)
    if time_column == "epoch_time_s":
        frame["epoch_time_s"] = measured
    elif time_column == "iter_time_s":
        frame["epoch_time_s"] = iters * measured
    else:
        frame["epoch_time_s"] = iters * global_batch / measured
    frame["samples_per_s"] = frame["data_size"] / frame["epoch_time_s"]
    for column in FEATURE_COLUMNS + tables.LAYOUT_COLUMNS:
        if column in raw.columns:
            frame[column] = _numeric(raw, column, path, integer=False)

    keys = tables.POINT_KEYS + [tables.ACCUMULATION, *tables.SERIES_COLUMNS, "rep"]
    duplicated = frame.duplicated(keys, keep=False).to_numpy()
    if duplicated.any():
        _fail(
            path,
            f"{_rows(duplicated)} repeat the same configuration ({', '.join(keys)}); "
            "remove the duplicates or number repetitions in a 'rep' column",
        )
    return frame


def _hardware_columns(raw: pd.DataFrame, frame: pd.DataFrame, path) -> None:
    """``gpu`` (free text, as NVML or a table names it; empty: not said) and ``precision``
    (fp32, tf32, amp_fp16 or bf16, or a published spelling of one; empty: fp32) into ``frame``."""
    gpu = raw["gpu"] if "gpu" in raw.columns else pd.Series("", index=raw.index)
    frame["gpu"] = gpu.fillna("").astype(str).str.strip()
    if "precision" not in raw.columns:
        frame["precision"] = tables.INPUT_COLUMNS["precision"]
        return
    text = raw["precision"].fillna(tables.INPUT_COLUMNS["precision"]).astype(str)
    names = {}
    for value in text.unique():
        try:
            names[value] = precision_name(value)
        except UnknownName as exc:
            _fail(path, f"column 'precision' at {_rows((text == value).to_numpy())}: {exc}")
    frame["precision"] = text.map(names)
