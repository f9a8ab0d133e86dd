"""What `dlperf plan` prints: a table a terminal holds (the first layouts, the chosen and the
fastest, not one line per worker count up to --max-procs) and numbers without exponents."""

from __future__ import annotations

import pandas as pd

#: Layouts printed at most; the rest are counted.
MAX_ROWS = 24


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


def number(value: float) -> str:
    """A table cell: four significant digits, thousands written out ('37,070', not 3.707e+04)."""
    if value != value:  # NaN
        return "NaN"
    if abs(value) >= 1e4:
        return f"{value:,.0f}"
    return f"{value:.4g}"


def table_text(table: pd.DataFrame, choice: dict | None, columns: list[str]) -> str:
    shown = rows_to_show(table, choice)
    text = shown[columns].to_string(index=False, float_format=number)
    left = len(table) - len(shown)
    if left:
        text += f"\n({left} more layouts not shown; lower --max-procs to see them all)"
    return text
