"""How the report's figures look and become bytes: the style, colours and ticks every figure
shares, the canvas, PNG and SVG rendering, file names and saving.

Deterministic: the same inputs give byte-identical PNG and SVG (no dates or software versions
embedded, fixed SVG id salt, everything drawn in sorted order). Every figure is drawn inside
``matplotlib.rc_context(STYLE)`` (the ``styled`` decorator), on figures made without pyplot:
importing this module changes no global matplotlib state.
"""

from __future__ import annotations

import functools
import hashlib
import io
import re
from dataclasses import dataclass
from pathlib import Path

import matplotlib
import numpy as np
from matplotlib.figure import Figure as MplFigure
from matplotlib.ticker import FormatStrFormatter, LogLocator, MaxNLocator

from dlperf.io import atomic_write_bytes

STYLE = {
    "svg.hashsalt": "dlperf",  # stable element ids in SVG output
    "svg.fonttype": "path",
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "font.size": 9,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "legend.fontsize": 7,
}
PNG_METADATA = {"Software": None}
SVG_METADATA = {"Date": None, "Creator": None}


def styled(draw):
    """Draw (and save) a figure with the report's style; text takes the style when drawn."""

    @functools.wraps(draw)
    def wrapper(*args, **kwargs):
        with matplotlib.rc_context(STYLE):
            return draw(*args, **kwargs)

    return wrapper


@dataclass
class Figure:
    path: (
        str  # relative to the figures directory, without extension: "<framework>/<kind>_<network>"
    )
    title: str
    caption: str
    png: bytes
    svg: bytes

    @property
    def ident(self) -> str:
        return "fig-" + self.path.replace("/", "-")


def _file_name(part: str) -> str:
    """A name as a file name: names from external timings may hold spaces or slashes
    (e.g. "ResNet-50 (fp16)"), file names may not. A name that had to change gets a short hash
    of itself, so two names never share a file ("a/b" and "a-b")."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", part).strip("-") or "_"
    if safe == part:
        return safe
    return f"{safe}-{hashlib.sha256(part.encode()).hexdigest()[:8]}"


def file_path(framework: str, name: str) -> str:
    """``framework/name`` as a relative file path, unique per (framework, name)."""
    return f"{_file_name(framework)}/{_file_name(name)}"


def canvas(nrows: int, ncols: int, width: float, height: float):
    """A figure of ``nrows`` x ``ncols`` panels of ``width`` x ``height`` inches each, and its
    axes as a 2-D array."""
    fig = MplFigure(figsize=(width * ncols, height * nrows), layout="constrained")
    return fig, fig.subplots(nrows, ncols, squeeze=False)


def render(
    fig: MplFigure, framework: str, kind: str, network: str, title: str, caption: str
) -> Figure:
    """PNG and SVG of ``fig``, filed as ``<framework>/<kind>_<network>``."""
    path = file_path(framework, f"{kind}_{network}")
    png, svg = io.BytesIO(), io.BytesIO()
    fig.savefig(png, format="png", metadata=PNG_METADATA)
    # The layout was solved while drawing the PNG; keep it rather than solve it again.
    fig.set_layout_engine("none")
    fig.savefig(svg, format="svg", metadata=SVG_METADATA)
    return Figure(path, title, caption, png.getvalue(), svg.getvalue())


def save(figure: Figure, directory: Path) -> list[Path]:
    paths = [directory / f"{figure.path}.png", directory / f"{figure.path}.svg"]
    atomic_write_bytes(paths[0], figure.png)
    atomic_write_bytes(paths[1], figure.svg)
    return paths


def label(ax, title: str, xlabel: str = "", ylabel: str = "") -> None:
    """A panel's title, small (panels sit side by side), and its axes' labels where given."""
    ax.set_title(title, fontsize=8)
    if xlabel:
        ax.set_xlabel(xlabel)
    if ylabel:
        ax.set_ylabel(ylabel)


def plain_log_ticks(axis) -> None:
    """A log axis labelled with plain numbers at 1, 2 and 5 of each decade: no 3×10⁻¹ labels
    crowding each other on a short range."""
    axis.set_minor_locator(LogLocator(subs=(2.0, 5.0)))
    axis.set_minor_formatter(FormatStrFormatter("%.3g"))
    axis.set_major_formatter(FormatStrFormatter("%.3g"))


def whole_workers(ax) -> None:
    """Worker counts are whole numbers: no tick at 1.5 workers."""
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def palette(name: str, positions) -> list[tuple]:
    """Colours of the matplotlib colour map ``name`` at ``positions``."""
    return [tuple(c) for c in matplotlib.colormaps[name](positions)]


def model_colours(names: list[str]) -> dict[str, tuple]:
    """One fixed colour per model name, the same in every figure."""
    colours = palette("tab10", np.arange(10))
    return {name: colours[i % 10] for i, name in enumerate(sorted(names))}


def batch_colours(batches: list[int]) -> dict[int, tuple]:
    """One shade per batch size, light to dark."""
    shades = palette("viridis", np.linspace(0, 0.85, max(len(batches), 1)))
    return dict(zip(batches, shades, strict=False))
