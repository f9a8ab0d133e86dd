"""The Summary's word on disturbed runs: which were flagged, how many the models left out
(dlperf.measurements.tables.left_out) and how to measure them again."""

from __future__ import annotations

import pandas as pd

from dlperf.measurements import tables

SHOWN = 6  # runs named; the rest are counted
# The study is named by a word, not its path: a report re-run from an archive elsewhere is the
# same bytes.
REMEASURE = (
    "`dlperf forget-disturbed --results STUDY/results` then `make run STUDY=STUDY`, or "
    "`snakemake --directory STUDY remeasure_disturbed` (STUDY: this study's directory)"
)


def _label(row) -> str:
    return f"n{row.nodes} p{row.procs} b{row.batch_size} d{row.data_size} r{row.rep}"


def run_warnings(timings: pd.DataFrame) -> list[str]:
    """One warning when runs were disturbed: how many, which, how many the models left out
    and why, and the command that re-measures them."""
    flagged = tables.disturbed(timings)
    if not flagged.any():
        return []
    noisy = timings[flagged]
    names = ", ".join(_label(r) for r in noisy.head(SHOWN).itertuples(index=False))
    more = f" and {len(noisy) - SHOWN} more" if len(noisy) > SHOWN else ""
    dropped = int(tables.left_out(timings).sum())
    kept = len(noisy) - dropped
    text = (
        f"{len(noisy)} of {len(timings)} runs were disturbed: other programs used more than "
        f"{tables.NOISY_FOREIGN_CPU:.0%} of the host's CPU during the timed epoch ({names}{more}). "
        f"{dropped} of them were left out of the models (an undisturbed repetition of the same "
        "configuration stands for it)"
    )
    if kept:
        text += (
            f"; {kept} were kept, being all the measurements of their configurations, so the "
            "models there rest on disturbed times"
        )
    return [text + f". Re-measure them on a quiet machine: {REMEASURE}."]
