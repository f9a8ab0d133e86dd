"""The report page: its sections in order, the navigation derived from them, one Jinja2
template. One self-contained HTML file (figures embedded as data URIs); the figures are also
written as PNG and SVG into a directory beside it."""

from __future__ import annotations

import base64
import os
from collections.abc import Callable
from pathlib import Path

import jinja2

from dlperf import figures as rendering
from dlperf.io import atomic_write_text
from dlperf.measurements import tables

from . import sections
from .framework_section import frameworks_side_by_side
from .hardware_section import which_hardware
from .markup import Section
from .study import Study
from .summary import summary
from .template import PAGE

# The page from top to bottom; each part takes the study and returns its sections.
PARTS: tuple[Callable[[Study], list[Section]], ...] = (
    summary,
    frameworks_side_by_side,
    sections.accuracy,
    which_hardware,
    sections.adaptive,
    sections.frameworks,
    sections.resources,
    sections.failures,
    sections.environment,
)


def _data_uri(figure: rendering.Figure) -> str:
    return "data:image/png;base64," + base64.b64encode(figure.png).decode("ascii")


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.tests["figure"] = lambda block: isinstance(block, rendering.Figure)
    env.filters["data_uri"] = _data_uri
    return env


def render_page(study: Study, parts: list[Section], link_dir: str) -> str:
    return (
        _environment()
        .from_string(PAGE)
        .render(
            sections=parts,
            nav=[s for s in parts if s.level <= 3],
            link_dir=link_dir,
            n_runs=len(study.timings),
            n_disturbed=int(tables.disturbed(study.timings).sum()),
            n_failed=len(study.failures),
            n_points=len(study.points),
            n_frameworks=len(study.artifacts),
        )
    )


def build_report(study: Study, out_html: Path, figures_dir: Path | None = None) -> list[Path]:
    """Write the page and every figure (PNG + SVG, under ``figures_dir``, default figures/
    beside the page); return the figure paths."""
    out_html = Path(out_html)
    figures_dir = Path(figures_dir) if figures_dir else out_html.parent / "figures"
    link_dir = Path(os.path.relpath(figures_dir, out_html.parent)).as_posix()
    parts = [section for part in PARTS for section in part(study)]
    # The directory is the report's output even when no run succeeded and it holds no figure.
    figures_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for section in parts:
        for block in section.blocks:
            if isinstance(block, rendering.Figure):
                written += rendering.save(block, figures_dir)
    atomic_write_text(out_html, render_page(study, parts, link_dir))
    return written
