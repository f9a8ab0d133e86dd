"""The report page's building blocks: a section, HTML tables of data frames, escaped text."""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field

import pandas as pd
from markupsafe import Markup

from dlperf.figures import Figure


@dataclass
class Section:
    """One part of the page: a heading (its ``ident`` is the anchor the navigation links to)
    and blocks in page order, each HTML (Markup) or a figure. A folded section shows only its
    heading and ``teaser`` until opened."""

    ident: str
    title: str
    blocks: list[Markup | Figure] = field(default_factory=list)
    level: int = 2
    folded: bool = False
    teaser: str = ""


def esc(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return html.escape(str(value))


def nice_number(value: float) -> str:
    """A number in three significant digits; a missing one as a dash."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:.3g}"


def _cell(value) -> str:
    return esc(nice_number(value) if isinstance(value, float) else value)


def table(
    frame: pd.DataFrame, left=frozenset(), row_classes: list[str] | None = None, ident: str = ""
) -> Markup:
    """A data frame as an HTML table; columns in ``left`` are left-aligned (text)."""
    head = "".join(f'<th class="{"l" if c in left else ""}">{esc(c)}</th>' for c in frame.columns)
    body = []
    for i, row in enumerate(frame.itertuples(index=False)):
        cls = row_classes[i] if row_classes else ""
        cells = "".join(
            f'<td class="{"l" if c in left else ""}">{_cell(v)}</td>'
            for c, v in zip(frame.columns, row, strict=False)
        )
        body.append(f'<tr class="{cls}">{cells}</tr>')
    ident = f' id="{esc(ident)}"' if ident else ""
    return Markup(
        f"<table{ident}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


def paragraph(text: str, cls: str = "", ident: str = "") -> Markup:
    """A paragraph of plain text (escaped)."""
    attrs = (f' class="{cls}"' if cls else "") + (f' id="{esc(ident)}"' if ident else "")
    return Markup(f"<p{attrs}>{esc(text)}</p>")


def introduced(ident: str, title: str, text: str, **options) -> Section:
    """A section that opens with a paragraph of plain text saying what follows; ``options``
    are the Section's other fields (level, folded, teaser)."""
    return Section(ident, title, [paragraph(text)], **options)
