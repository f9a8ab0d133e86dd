"""`dlperf compare` on two or more studies: a baseline and a candidate, or a history of steps.
Its own module, not a stage: it reads studies (dlperf.study.files, which opens archives), and the
re-run behind an archive's check calls the stages."""

from __future__ import annotations

import os
from collections.abc import Sequence

from dlperf.compare.pair import compare
from dlperf.compare.rendering import render, render_history
from dlperf.compare.trend import history
from dlperf.errors import UsageError
from dlperf.study.files import load_study


def compare_studies(
    studies: Sequence[str | os.PathLike], settings, output_format: str
) -> tuple[bool, str]:
    """Compare studies (oldest first): two as baseline and candidate, more as a history, each
    with the one before. Returns whether the last step regressed, and the answer as text in
    ``output_format`` (markdown or html)."""
    if len(studies) < 2:
        raise UsageError(
            f"compare needs two or more studies (oldest first), got {len(studies)}; "
            "name a baseline and a candidate"
        )
    loaded = [load_study(s) for s in studies]
    if len(loaded) == 2:
        result = compare(loaded[0], loaded[1], settings)
        return result.failed, render(result, output_format)
    steps = history(loaded, settings)  # the exit status is the last step's
    return steps.last.failed, render_history(steps, output_format)
