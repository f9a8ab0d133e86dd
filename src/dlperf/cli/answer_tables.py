"""What `dlperf predict` and `plan` print as text: tables a terminal holds. One number format
per column (thousands written out, never an exponent), times as durations people read
(:func:`dlperf.durations.readable`), each interval folded into one ``lo-hi`` column, what every
row shares said once above the table, what a ``ratio`` or ``reach`` column means said under it,
and at most :data:`MAX_ROWS` layouts. ``--json`` keeps the exact seconds."""

from __future__ import annotations

import pandas as pd

from dlperf.durations import readable

#: Layouts printed at most; the rest are counted.
MAX_ROWS = 24

#: Column headers as a reader names them; other columns keep their own name.
HEADERS = {
    "batch_size": "batch",
    "data_size": "samples/epoch",
    "grad_accum_steps": "accum",
    "epoch_time_s": "epoch",
    "total_time_s": "total",
    "samples_per_s": "samples/s",
    "meets_deadline": "meets deadline",
    "gpu_hours": "GPU-hours",
    "cpu_hours": "CPU-hours",
    "worker_hours": "worker-hours",
    "param_count": "params",
    "flops_per_sample": "FLOPs/sample",
}

#: How a value every row shares is said above the table instead of in a column.
SHARED = {
    "network": "{}",
    "nodes": "{:,} node(s)",
    "batch_size": "batch {:,}/worker",
    "data_size": "{:,} samples/epoch",
    "grad_accum_steps": "{:,} micro-batches/step",
    "param_count": "{:,.0f} parameters",
    "flops_per_sample": "{:,.0f} FLOPs/sample",
    "models": "answer from the {}",
}
#: Shared values not worth saying: the default.
UNSAID = {"grad_accum_steps": 1}

#: What a column that is no plain quantity means, said in a line under a table that shows it.
LEGEND = {
    "ratio": "max(p/P, n/N), P and N the most workers and nodes measured; above 1: extrapolated",
    "reach": "how far the GPU's datasheet figures lie outside the GPU types measured; above 1: "
    "extrapolated",
    "beyond_backtest": "the GPU lies farther beyond those measured than any GPU type the backtest "
    "held out: each form of model weighs alike and the interval is widened",
    "held_to_envelope": "a model asked for more than physics allows (slower or faster than every "
    "GPU type measured at the configuration, scaled by the datasheet figures) was held to it",
}


def number(value: float) -> str:
    """A count or cost: four significant digits, thousands written out ('37,070', '1.5'; never
    3.707e+04)."""
    if value != value:  # NaN
        return "NaN"
    if abs(value) >= 1e4:
        return f"{value:,.0f}"
    return f"{value:,.4g}"


def rate(value: float) -> str:
    """A throughput: whole numbers with thousands written out from 100 up, three significant
    digits below ('93,708', '597', '1.68')."""
    if value != value:
        return "NaN"
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def duration(seconds: float | None) -> str:
    """A time as :func:`dlperf.durations.readable` says it; empty when there is none."""
    return "" if pd.isna(seconds) else readable(seconds)


def span(lo: float | None, hi: float | None) -> str:
    """A time's interval as one cell, ``lo-hi``, its unit written once when both ends share it
    ('11.5-15.4 h', '45 s-2.1 min'); empty without one."""
    if pd.isna(lo) or pd.isna(hi):
        return ""
    low, high = readable(lo), readable(hi)
    low_number, _, low_unit = low.partition(" ")
    if low_unit and high.endswith(f" {low_unit}"):
        low = low_number
    return f"{low}-{high}"


def _cells(values: pd.Series, column: str) -> list[str]:
    """One column's cells, in the one format of its kind of value."""
    if column.startswith("samples_per_s"):
        return [rate(v) for v in values]
    if column.endswith("_s"):
        return [duration(v) for v in values]
    if values.dtype == bool:
        return ["yes" if v else "no" for v in values]
    if pd.api.types.is_integer_dtype(values):
        return [f"{v:,}" for v in values]
    if pd.api.types.is_float_dtype(values):
        return ["" if pd.isna(v) else number(v) for v in values]
    return ["" if v is None else str(v) for v in values]


def _interval(frame: pd.DataFrame, column: str) -> tuple[str, str] | None:
    """The columns of a time's interval (epoch_time_lo_s, epoch_time_hi_s), if the table has
    them. A throughput's interval is the time's over the samples: it stays in --json."""
    if not column.endswith("_time_s"):
        return None
    lo, hi = f"{column[:-2]}_lo_s", f"{column[:-2]}_hi_s"
    return (lo, hi) if lo in frame and hi in frame and frame[lo].notna().any() else None


def _layout(cells: dict[str, list[str]]) -> str:
    widths = [max(len(h), *(len(c) for c in col)) for h, col in cells.items()]
    rows = [list(cells), *zip(*cells.values(), strict=True)]
    return "\n".join(
        "  ".join(text.rjust(width) for text, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )


def table_text(
    frame: pd.DataFrame, columns: list[str], level: float, keep: tuple[str, ...] = ()
) -> tuple[str, str]:
    """``(shared, table)``: what every row has in common (the columns of :data:`SHARED` of one
    value, but those in ``keep``), said once; and the other ``columns`` as a table, each time
    followed by its interval at ``level`` in one ``lo-hi`` column, and a line under it for each
    column of :data:`LEGEND` shown."""
    shared, cells = [], {}
    for column in columns:
        if column not in frame:
            continue
        values = frame[column]
        if column in SHARED and column not in keep and values.nunique(dropna=False) == 1:
            if UNSAID.get(column) != values.iloc[0]:
                shared.append(SHARED[column].format(values.iloc[0]))
            continue
        cells[HEADERS.get(column, column)] = _cells(values, column)
        bounds = _interval(frame, column)
        if bounds is not None:
            lo, hi = (frame[b] for b in bounds)
            cells[f"{HEADERS.get(column, column)} {level:.0%}"] = [
                span(a, b) for a, b in zip(lo, hi, strict=True)
            ]
    legend = [f"{name}: {LEGEND[name]}" for name in cells if name in LEGEND]
    return ", ".join(shared), "\n".join([_layout(cells), *legend])


def rows_to_show(table: pd.DataFrame, choice: dict | None, limit: int = MAX_ROWS) -> pd.DataFrame:
    """The first layouts, plus the chosen and the fastest one wherever they are, in order."""
    if len(table) <= limit:
        return table
    keep = set(table.index[: limit - 2])
    keep.add(table["total_time_s"].idxmin())
    if choice is not None:
        chosen = table[(table["procs"] == choice["procs"]) & (table["nodes"] == choice["nodes"])]
        keep |= set(chosen.index)
    return table.loc[sorted(keep)]


def plan_text(table: pd.DataFrame, choice: dict | None, columns: list[str], level: float) -> str:
    """`dlperf plan`'s table: the layouts to show, and how many more there are."""
    shown = rows_to_show(table, choice)
    _, text = table_text(shown, columns, level, keep=("nodes",))
    left = len(table) - len(shown)
    if left:
        text += f"\n({left} more layouts not shown; lower --max-procs to see them all)"
    return text
