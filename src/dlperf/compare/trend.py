"""Several studies in date order: each configuration's and each framework's trend, and the
study where a step change happened.

Each study is compared with the first (the trend: ratio and interval of every configuration
and framework relative to where the history starts) and with the one before it (the step:
a configuration or framework significantly slower or faster than in the previous study marks
a step change at that study). The exit status comes from the last step, as for two studies.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from dlperf.compare.pair import Comparison, Settings, compare
from dlperf.study.files import StudyFiles

STEP_MARKS = {"slower": "▲", "faster": "▼"}  # the step change of a study, in tables


@dataclass
class History:
    sources: list[str]
    trends: list[Comparison]  # the first study with each later one
    steps: list[Comparison]  # each study with the one before it

    @property
    def last(self) -> Comparison:
        return self.steps[-1]

    def table(self, what: str) -> pd.DataFrame:
        """One row per configuration ('rows') or framework ('groups'), one column per study
        (numbered from 1, oldest): the ratio to the first study, with the step's mark (▲
        slower, ▼ faster than the study before, ! a regression) where a step change
        happened."""
        key = "configuration" if what == "rows" else "group"
        columns: dict[str, dict[str, str]] = {}
        for number, (trend, step) in enumerate(zip(self.trends, self.steps, strict=True), 2):
            marks = getattr(step, what).set_index(key)
            cells = {}
            for row in getattr(trend, what).itertuples(index=False):
                name = getattr(row, key)
                cells[name] = f"{row.ratio:.3f}"
                if name in marks.index:
                    regression = "!" if marks.at[name, "regression"] else ""
                    cells[name] += STEP_MARKS.get(marks.at[name, "verdict"], "") + regression
            columns[str(number)] = cells
        names = sorted(set().union(*(c.keys() for c in columns.values())))
        frame = pd.DataFrame({"1": dict.fromkeys(names, "1"), **columns}, index=names)
        frame = frame.fillna("–")
        frame.index.name = "configuration" if what == "rows" else "framework"
        return frame.reset_index()


def history(studies: list[StudyFiles], settings: Settings) -> History:
    """Trends and steps of studies given oldest first (two or more)."""
    first = studies[0]
    return History(
        sources=[s.source for s in studies],
        trends=[compare(first, later, settings) for later in studies[1:]],
        steps=[compare(a, b, settings) for a, b in zip(studies, studies[1:], strict=False)],
    )
