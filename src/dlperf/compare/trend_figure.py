"""The trend figure of `dlperf compare` on several studies: per framework, each configuration's
ratio to the first study and the framework's geometric mean, step changes marked."""

from __future__ import annotations

import io
import math

import matplotlib
import pandas as pd
from matplotlib.figure import Figure

from dlperf.compare.trend import STEP_MARKS, History
from dlperf.figures import STYLE, SVG_METADATA


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
