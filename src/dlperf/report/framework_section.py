"""Frameworks side by side as the reader sees it: the report's section right after the
Summary, and the answer of `dlperf compare-frameworks` as text, JSON or HTML. The numbers come
from report/frameworks.py, the figures from report/framework_figures.py."""

from __future__ import annotations

import json
import math

import pandas as pd
from markupsafe import Markup

from .framework_figures import split_figure, throughput_figure
from .frameworks import CONFIDENCE, PARTS, NetworkComparison, compare_frameworks
from .markup import Section, esc, introduced, nice_number, paragraph, table
from .study import Study

INTRO = (
    "Which framework trains each network faster at each scale, and where each loses its time "
    "(the question of Wang et al.), for every network measured in two or more frameworks, "
    "from our own runs (disturbed runs left out). The table gives each framework's throughput "
    "relative to the fastest at every measured scale: the geometric mean over the "
    "configurations (batch size, data size) all of them measured there, with its "
    f"{CONFIDENCE:.0%} interval from the repetitions (the moderated t-test of `dlperf "
    "compare`); below 1 is slower. The split gives the time per iteration in compute, "
    "framework overhead, communication and data wait: the measured median iteration and its "
    "measured data wait, the rest as the framework's generic model shares it out. "
    "`dlperf compare-frameworks` prints the same."
)


def _interval(lo: float, hi: float) -> str:
    if math.isnan(lo) or math.isnan(hi):
        return ""
    return f"{lo:.3f} .. {hi:.3f}"


def ratio_frame(c: NetworkComparison) -> pd.DataFrame:
    """The ratio table as shown: one row per scale and framework."""
    return pd.DataFrame(
        {
            "nodes": c.ratios["nodes"],
            "workers": c.ratios["procs"],
            "framework": c.ratios["framework"],
            "samples/s (geometric mean)": c.ratios["samples_per_s"].round().astype(int),
            "ratio to fastest": [f"{r:.3f}" for r in c.ratios["ratio"]],
            f"{CONFIDENCE:.0%} interval": [
                _interval(lo, hi)
                for lo, hi in zip(c.ratios["ratio_lo"], c.ratios["ratio_hi"], strict=True)
            ],
            "configurations": c.ratios["configurations"],
        }
    )


def split_frame(c: NetworkComparison) -> pd.DataFrame:
    """The split as shown: milliseconds per iteration of each part."""
    frame = pd.DataFrame(
        {"framework": c.split["framework"], "nodes": c.split["nodes"], "workers": c.split["procs"]}
    )
    frame["iteration ms"] = c.split["iteration_s"] * 1e3
    for part in PARTS:
        frame[f"{part.replace('_', ' ')} ms"] = c.split[f"{part}_s"] * 1e3
    return frame


def _network_section(c: NetworkComparison) -> Section:
    return Section(
        f"frameworks-{c.network}",
        f"Frameworks side by side: {c.network}",
        [
            throughput_figure(c),
            table(
                ratio_frame(c),
                left={"framework", f"{CONFIDENCE:.0%} interval"},
                row_classes=["best" if f else "" for f in c.ratios["fastest"]],
                ident=f"framework-ratios-{c.network}",
            ),
            Markup(
                f'<p class="framework-losses" id="framework-losses-{esc(c.network)}">'
                f"<b>Where the time goes:</b> {esc(c.sentence)}</p>"
            ),
            table(split_frame(c), left={"framework"}, ident=f"framework-split-{c.network}"),
            split_figure(c),
        ],
        level=3,
    )


def frameworks_side_by_side(study: Study) -> list[Section]:
    """The report's section: per network measured in two or more frameworks, the figure, the
    ratio table and the split."""
    comparisons = compare_frameworks(study.timings, study.artifacts)
    if not comparisons:
        return []
    head = introduced("frameworks-side-by-side", "Frameworks side by side", INTRO)
    return [head] + [_network_section(c) for c in comparisons]


def _records(frame: pd.DataFrame) -> list[dict]:
    """Rows as JSON-ready records: NaN becomes null."""
    return [
        {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}
        for row in json.loads(frame.to_json(orient="records"))
    ]


def as_json(comparisons: list[NetworkComparison]) -> str:
    return json.dumps(
        [
            {
                "network": c.network,
                "frameworks": list(c.frameworks),
                "confidence": CONFIDENCE,
                "ratios": _records(c.ratios),
                "batch_size": c.batch_size,
                "data_size": c.data_size,
                "split": _records(c.split),
                "where_time_goes": c.sentence,
            }
            for c in comparisons
        ],
        indent=2,
        sort_keys=True,
    )


def as_text(comparisons: list[NetworkComparison]) -> str:
    blocks = []
    for c in comparisons:
        split = split_frame(c).to_string(index=False, float_format=nice_number, na_rep="-")
        blocks.append(
            f"{c.network}: {', '.join(c.frameworks)}\n"
            f"{ratio_frame(c).to_string(index=False, float_format=nice_number, na_rep='-')}\n\n"
            f"time per iteration at b={c.batch_size}, d={c.data_size}:\n{split}\n"
            f"{c.sentence}"
        )
    return "\n\n".join(blocks) + "\n"


def as_html(comparisons: list[NetworkComparison]) -> str:
    parts = [paragraph(INTRO)]
    for c in comparisons:
        parts += [
            Markup(f"<h2>{esc(c.network)}</h2>"),
            table(ratio_frame(c), left={"framework", f"{CONFIDENCE:.0%} interval"}),
            Markup(f"<h3>Time per iteration at b={c.batch_size}, d={c.data_size}</h3>"),
            table(split_frame(c), left={"framework"}),
            paragraph(c.sentence),
        ]
    body = Markup("\n").join(parts)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        "<title>dlperf: frameworks side by side</title></head><body>\n"
        f"<h1>Frameworks side by side</h1>\n{body}\n</body></html>\n"
    )


FORMATS = {"text": as_text, "json": as_json, "html": as_html}


def render(comparisons: list[NetworkComparison], fmt: str) -> str:
    """The comparison in ``fmt`` (text, json or html)."""
    return FORMATS[fmt](comparisons)
