"""Several studies in date order: each configuration's and each framework's trend, and the
study where a step change happened.

Each study is compared with the first (the trend: ratio and interval of every configuration
and framework relative to where the history starts) and with the one before it (the step:
a configuration or framework significantly slower or faster than in the previous study marks
a step change at that study). The exit status comes from the last step, as for two studies.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass

import matplotlib
import pandas as pd
from matplotlib.figure import Figure

from dlperf.compare import Comparison, Settings, compare
from dlperf.report.rendering import STYLE, SVG_METADATA
from dlperf.study_files import StudyFiles

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


def trend_figure(result: History) -> str:
    """SVG: per framework, each configuration's ratio to the first study (thin) and the
    framework's geometric mean with its interval (thick), steps marked."""
    groups = result.trends[0].groups
    frameworks = sorted(groups.loc[groups["network"] == "", "framework"])
    x = list(range(len(result.sources)))
    with matplotlib.rc_context(STYLE):
        figure = Figure(figsize=(4.2 * max(len(frameworks), 1), 3.2))
        axes = figure.subplots(1, max(len(frameworks), 1), squeeze=False, sharey=True)[0]
        for ax, framework in zip(axes, frameworks, strict=False):
            _draw_framework(ax, result, framework, x)
        axes[0].set_ylabel("ratio to the first study")
        figure.tight_layout()
        out = io.StringIO()
        figure.savefig(out, format="svg", metadata=SVG_METADATA)
    svg = out.getvalue()
    return svg[svg.index("<svg") :]


def _draw_framework(ax, result: History, framework: str, x: list[int]) -> None:
    configs = sorted(
        set().union(
            *(t.rows.loc[t.rows["framework"] == framework, "configuration"] for t in result.trends)
        )
    )
    for name in configs:
        ys = [1.0] + [_value(t.rows, "configuration", name, "ratio") for t in result.trends]
        ax.plot(x, ys, color="0.7", linewidth=0.7)
    mean, lo, hi = ([1.0] for _ in range(3))
    for trend in result.trends:
        for values, column in ((mean, "ratio"), (lo, "ratio_lo"), (hi, "ratio_hi")):
            values.append(_value(trend.groups, "group", framework, column))
    ax.fill_between(x, lo, hi, color="C0", alpha=0.2, linewidth=0)
    ax.plot(x, mean, color="C0", linewidth=2, label="geometric mean")
    for i, step in enumerate(result.steps, start=1):
        verdict = _value(step.groups, "group", framework, "verdict")
        if verdict in STEP_MARKS:
            marker = "^" if verdict == "slower" else "v"
            ax.plot([i], [mean[i]], marker=marker, color="C3", markersize=9, linestyle="none")
    ax.axhline(1.0, color="0.3", linewidth=0.6)
    ax.set_title(framework)
    ax.set_xticks(x, [f"{i + 1}" for i in x])
    ax.set_xlabel("study (oldest first)")


def _value(frame: pd.DataFrame, key: str, name: str, column: str):
    match = frame.loc[frame[key] == name, column]
    return match.iloc[0] if len(match) else math.nan
