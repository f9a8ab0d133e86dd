"""Matplotlib figures of the report.

Deterministic: the same inputs give byte-identical PNG and SVG (no dates or software versions
embedded, fixed SVG id salt, everything drawn in sorted order). Every figure is drawn inside
``matplotlib.rc_context(STYLE)`` (the ``styled`` decorator), on figures made without pyplot:
importing this module changes no global matplotlib state.
"""

from __future__ import annotations

import functools
import hashlib
import io
import math
import re
from dataclasses import dataclass
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.figure import Figure as MplFigure
from matplotlib.ticker import FormatStrFormatter, LogLocator, MaxNLocator

from dlperf.io import atomic_write_bytes

from .curves import Curve
from .scaling import at_largest_data, measured_speedup

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
CONFIG_AXIS = "configuration (n nodes, p workers, b batch/worker, d samples/epoch)"
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


def _render(
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


def _plain_log_ticks(axis) -> None:
    """A log axis labelled with plain numbers at 1, 2 and 5 of each decade: no 3×10⁻¹ labels
    crowding each other on a short range."""
    axis.set_minor_locator(LogLocator(subs=(2.0, 5.0)))
    axis.set_minor_formatter(FormatStrFormatter("%.3g"))
    axis.set_major_formatter(FormatStrFormatter("%.3g"))


def _whole_workers(ax) -> None:
    """Worker counts are whole numbers: no tick at 1.5 workers."""
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def save(figure: Figure, directory: Path) -> list[Path]:
    paths = [directory / f"{figure.path}.png", directory / f"{figure.path}.svg"]
    atomic_write_bytes(paths[0], figure.png)
    atomic_write_bytes(paths[1], figure.svg)
    return paths


def _figure(nrows: int, ncols: int, width: float, height: float):
    fig = MplFigure(figsize=(width * ncols, height * nrows), layout="constrained")
    return fig, fig.subplots(nrows, ncols, squeeze=False)


def _palette(name: str, positions) -> list[tuple]:
    return [tuple(c) for c in matplotlib.colormaps[name](positions)]


def model_colours(names: list[str]) -> dict[str, tuple]:
    """One fixed colour per model name, the same in every figure."""
    palette = _palette("tab10", np.arange(10))
    return {name: palette[i % 10] for i, name in enumerate(sorted(names))}


def _batch_colours(batches: list[int]) -> dict[int, tuple]:
    shades = _palette("viridis", np.linspace(0, 0.85, max(len(batches), 1)))
    return dict(zip(batches, shades, strict=False))


def prediction_grid(points: pd.DataFrame, batch: int, data: int) -> pd.DataFrame:
    """Workers from 1 to twice the largest measured count, nodes filled like the measurements."""
    max_procs = int(points["procs"].max())
    per_node = max(1, int((points["procs"] / points["nodes"]).max()))
    procs = np.unique(
        np.concatenate([np.arange(1, 2 * max_procs + 1), points["procs"].to_numpy(int)])
    )
    first = points.iloc[0]
    return pd.DataFrame(
        {
            "framework": first["framework"],
            "network": first["network"],
            "device": first["device"],
            "nodes": np.ceil(procs / per_node).astype(int),
            "procs": procs.astype(int),
            "batch_size": int(batch),
            "data_size": int(data),
        }
    )


def _measured(ax, sel: pd.DataFrame, data: int, throughput: bool, colour, batch: int) -> None:
    """Medians over repetitions with interquartile bars; throughput is d / epoch time, so the
    time quartiles swap ends."""
    median, q25, q75 = (
        sel[k].to_numpy(float) for k in ("epoch_time_s", "epoch_time_q25_s", "epoch_time_q75_s")
    )
    if throughput:
        median, q25, q75 = data / median, data / q75, data / q25
    err = np.vstack([np.maximum(median - q25, 0), np.maximum(q75 - median, 0)])
    ax.errorbar(
        sel["procs"],
        median,
        yerr=err,
        fmt="o",
        ms=4,
        color=colour,
        capsize=3,
        label=f"b={batch} measured",
    )


def _model_line(
    ax, curve: Curve, grid: pd.DataFrame, max_procs: int, throughput: bool, colour, batch: int
) -> None:
    """The model's curve, solid inside the measured workers and dashed beyond, with its band."""
    data = int(grid["data_size"].iloc[0])
    procs = grid["procs"].to_numpy()
    pred = np.asarray(curve.predict(grid), dtype=float)
    band = curve.band(grid) if curve.band else None
    if throughput:
        pred = data / pred
        band = (data / band[1], data / band[0]) if band else None
    inside, beyond = procs <= max_procs, procs >= max_procs
    ax.plot(
        procs[inside], pred[inside], "-", color=colour, lw=1.2, label=f"b={batch} {curve.model}"
    )
    ax.plot(procs[beyond], pred[beyond], "--", color=colour, lw=1.2)
    if band is not None:
        ax.fill_between(procs, band[0], band[1], color=colour, alpha=0.15, lw=0)


def _scaling_panel(
    ax, points: pd.DataFrame, curve: Curve | None, name: str, data: int, throughput: bool
) -> None:
    """One panel: every batch size at one data size, measured and as one model predicts."""
    batches = sorted(int(b) for b in points["batch_size"].unique())
    colours = _batch_colours(batches)
    max_procs = int(points["procs"].max())
    for batch in batches:
        sel = points[(points["data_size"] == data) & (points["batch_size"] == batch)]
        if sel.empty:
            continue
        _measured(ax, sel.sort_values("procs"), data, throughput, colours[batch], batch)
        if curve is not None:
            grid = prediction_grid(points, batch, data)
            _model_line(ax, curve, grid, max_procs, throughput, colours[batch], batch)
    ax.axvline(max_procs, color="grey", lw=0.8, ls=":")
    ax.set_title(f"{name}: d={data} samples/epoch", fontsize=8)
    ax.set_xlabel("workers p")
    ax.set_ylabel("throughput [samples/s]" if throughput else "epoch time [s]")
    _whole_workers(ax)
    if not throughput:
        ax.set_yscale("log")
        _plain_log_ticks(ax.yaxis)


def _band_caption(curves: dict[str, Curve]) -> str:
    bands = sorted({f"{n}: {c.band_source}" for n, c in curves.items() if c.band_source})
    no_band = sorted(f"{n} ({c.no_band_reason})" for n, c in curves.items() if not c.band_source)
    text = "; ".join(bands) if bands else "none available"
    if no_band:
        text += f"; no band for {'; '.join(no_band)}"
    return text


@styled
def scaling_figure(
    framework: str, network: str, points: pd.DataFrame, curves: dict[str, Curve], quantity: str
) -> Figure:
    """Epoch time (quantity 'time') or throughput ('throughput') against workers: measured
    medians with IQR bars, and per model (one row each) its curve and band, extrapolated."""
    data_sizes = sorted(int(d) for d in points["data_size"].unique())
    rows = sorted(curves) or ["(no fitted model)"]
    throughput = quantity == "throughput"
    fig, axes = _figure(len(rows), len(data_sizes), 3.9, 2.9)
    for r, name in enumerate(rows):
        for c, data in enumerate(data_sizes):
            _scaling_panel(axes[r, c], points, curves.get(name), name, data, throughput)
        axes[r, 0].legend(loc="best", ncol=1)
    what = "Throughput" if throughput else "Epoch time"
    caption = (
        f"{what} against the number of workers: measured medians over repetitions (bars: "
        "interquartile range), one colour per per-worker batch size; one row per fitted model, "
        "solid inside the measured range and dashed beyond it (right of the dotted line). "
        "Shaded: the model's prediction interval as `dlperf predict` gives it (bootstrap refits "
        f"over resampled configurations, with the scatter of single runs): {_band_caption(curves)}."
    )
    kind = "throughput" if throughput else "scaling"
    return _render(
        fig, framework, kind, network, f"{what} vs workers: {framework} / {network}", caption
    )


@styled
def speedup_figure(framework: str, network: str, points: pd.DataFrame) -> Figure:
    """Measured speed-up and parallel efficiency against workers, relative to the fewest workers."""
    batches = sorted(int(b) for b in points["batch_size"].unique())
    data_sizes = sorted(int(d) for d in points["data_size"].unique())
    colours = _batch_colours(batches)
    styles = {d: ["-", "--", "-.", ":"][i % 4] for i, d in enumerate(data_sizes)}
    fig, axes = _figure(1, 2, 4.2, 3.2)
    ax_s, ax_e = axes[0]
    for (batch, data), sel in measured_speedup(points).groupby(["batch_size", "data_size"]):
        look = {"marker": "o", "ms": 4, "color": colours[batch], "label": f"b={batch}, d={data}"}
        ax_s.plot(sel["procs"], sel["speedup"], styles[data], **look)
        ax_e.plot(sel["procs"], sel["efficiency"], styles[data], **look)
    top = float(points["procs"].max())
    ax_s.plot([1, top], [1, top], "k:", lw=0.8, label="ideal")
    ax_e.axhline(1.0, color="k", ls=":", lw=0.8, label="ideal")
    for ax, what in ((ax_s, "speed-up"), (ax_e, "efficiency")):
        ax.set_xlabel("workers p")
        ax.set_title(f"{framework} / {network}: {what}", fontsize=8)
        _whole_workers(ax)
    ax_s.set_ylabel("speed-up T(1)/T(p) [×]")
    ax_e.set_ylabel("parallel efficiency speed-up/p [1]")
    ax_s.legend(loc="best")
    return _render(
        fig,
        framework,
        "speedup",
        network,
        f"Speed-up and efficiency: {framework} / {network}",
        "Measured speed-up of the epoch (median epoch time with the fewest workers divided by the "
        "median with p workers, times that fewest count) and parallel efficiency (speed-up / p), "
        "per per-worker batch size b (colour) and samples per epoch d (line style); dotted: ideal.",
    )


@styled
def summary_figure(
    framework: str, network: str, points: pd.DataFrame, curve: Curve | None
) -> Figure:
    """Speed-up against workers at the largest data size: measured per batch size, and as the
    answer predicts it up to twice the measured workers."""
    data = int(points["data_size"].max())
    speedups = at_largest_data(measured_speedup(points))
    batches = sorted(int(b) for b in speedups["batch_size"].unique())
    colours = _batch_colours(batches)
    fig, axes = _figure(1, 1, 4.6, 3.0)
    ax = axes[0, 0]
    top = int(points["procs"].max())
    for batch, sel in speedups.groupby("batch_size"):
        ax.plot(sel["procs"], sel["speedup"], "o", ms=5, color=colours[batch], label=f"b={batch}")
        if curve is None:
            continue
        grid = prediction_grid(points, batch, data)
        base = sel.iloc[0]
        grid = grid[grid["procs"] >= base["procs"]]
        pred = np.asarray(curve.predict(grid), dtype=float)
        ax.plot(
            grid["procs"],
            pred[0] / pred * base["procs"],
            "--",
            color=colours[batch],
            lw=1,
            label=f"b={batch} {curve.model}",
        )
    ax.plot([1, 2 * top], [1, 2 * top], "k:", lw=0.8, label="ideal")
    ax.axvline(top, color="grey", lw=0.8, ls=":")
    ax.set_xlabel("workers p")
    ax.set_ylabel("speed-up [×]")
    ax.set_title(f"{framework} / {network}: speed-up at d={data} samples/epoch", fontsize=8)
    _whole_workers(ax)
    ax.legend(loc="upper left")
    model = f"the {curve.model} model's prediction" if curve else "no model"
    return _render(
        fig,
        framework,
        "summary",
        network,
        f"Speed-up: {framework} / {network}",
        f"Measured speed-up of an epoch of {data} samples (dots; relative to the fewest workers "
        f"measured, times that count) per per-worker batch size b, and dashed, {model} of it up "
        f"to {2 * top} workers (right of the dotted line: beyond the measurements); dotted "
        "diagonal: ideal.",
    )


def _protocol_panels(predictions: pd.DataFrame) -> list[str]:
    return sorted(predictions["protocol"].unique())


@styled
def accuracy_figure(
    framework: str, network: str, predictions: pd.DataFrame, colours: dict[str, tuple]
) -> Figure:
    """Measured vs held-out predicted epoch time, one panel per protocol, one colour per model."""
    protocols = _protocol_panels(predictions)
    ncols = min(3, len(protocols))
    nrows = math.ceil(len(protocols) / ncols)
    fig, axes = _figure(nrows, ncols, 3.4, 3.2)
    for ax in axes.flat[len(protocols) :]:
        ax.set_visible(False)
    for ax, protocol in zip(axes.flat, protocols, strict=False):
        sel = predictions[predictions["protocol"] == protocol]
        for model, group in sel.groupby("model", sort=True):
            ax.plot(
                group["measured_s"],
                group["predicted_s"],
                "o",
                ms=4,
                alpha=0.75,
                color=colours.get(model),
                label=model,
            )
        values = np.concatenate(
            [sel["measured_s"].to_numpy(float), sel["predicted_s"].to_numpy(float)]
        )
        values = values[np.isfinite(values) & (values > 0)]
        if values.size:
            lo, hi = values.min() * 0.8, values.max() * 1.25
            ax.plot([lo, hi], [lo, hi], "k-", lw=0.8, label="y = x")
            ax.set_xscale("log")
            ax.set_yscale("log")
            _plain_log_ticks(ax.xaxis)
            _plain_log_ticks(ax.yaxis)
        ax.set_title(protocol, fontsize=8)
        ax.set_xlabel("measured epoch time [s]")
        ax.set_ylabel("predicted epoch time [s]")
        ax.legend(loc="upper left")
    return _render(
        fig,
        framework,
        "accuracy",
        network,
        f"Measured vs predicted: {framework} / {network}",
        "Each point is a measured configuration predicted by a model that did not see it, one "
        "panel per validation protocol and one colour per model. On the diagonal: perfect.",
    )


@styled
def residuals_figure(
    framework: str, network: str, predictions: pd.DataFrame, colours: dict[str, tuple]
) -> Figure:
    """Held-out APE at every configuration, one panel per protocol."""
    protocols = _protocol_panels(predictions)
    keys = ["nodes", "procs", "batch_size", "data_size"]
    configs = predictions[keys].drop_duplicates().sort_values(keys).reset_index(drop=True)
    position = {tuple(row): i for i, row in enumerate(configs.itertuples(index=False))}
    labels = [f"n{n} p{p} b{b} d{d}" for n, p, b, d in configs.itertuples(index=False)]
    width = max(5.0, 0.22 * len(labels) + 2.0)
    fig, axes = _figure(len(protocols), 1, width, 2.6)
    models = sorted(predictions["model"].unique())
    offsets = {m: (i - (len(models) - 1) / 2) * 0.12 for i, m in enumerate(models)}
    for ax, protocol in zip(axes[:, 0], protocols, strict=False):
        sel = predictions[predictions["protocol"] == protocol]
        for model, group in sel.groupby("model", sort=True):
            x = np.array([position[tuple(r)] for r in group[keys].itertuples(index=False)])
            ax.plot(
                x + offsets[model], group["ape"], "o", ms=4, color=colours.get(model), label=model
            )
        ax.set_title(protocol, fontsize=8)
        ax.set_ylabel("APE [%]")
        ax.set_ylim(bottom=0)
        ax.set_xticks(range(len(labels)), labels, rotation=90, fontsize=6)
        ax.legend(loc="upper right")
    axes[-1, 0].set_xlabel(CONFIG_AXIS)
    return _render(
        fig,
        framework,
        "residuals",
        network,
        f"Residuals: {framework} / {network}",
        "Absolute percentage error of each held-out prediction at every measured configuration, "
        "one panel per validation protocol, one colour per model (offset a little to be seen).",
    )


@styled
def breakdown_figure(framework: str, network: str, breakdown: list[dict]) -> Figure:
    """Stacked bars: seconds of each generic-model term at every measured configuration."""
    terms = list(breakdown[0]["seconds"]) if breakdown else []
    keys = ("nodes", "procs", "batch_size", "data_size")
    rows = sorted(breakdown, key=lambda r: tuple(r[k] for k in keys))
    labels = [f"n{r['nodes']} p{r['procs']} b{r['batch_size']} d{r['data_size']}" for r in rows]
    fig, axes = _figure(1, 1, max(5.0, 0.28 * len(rows) + 2.0), 3.6)
    ax = axes[0, 0]
    bottom = np.zeros(len(rows))
    palette = _palette("tab10", np.arange(10))
    for i, term in enumerate(terms):
        values = np.array([r["seconds"][term] for r in rows], dtype=float)
        if np.allclose(values, 0):
            continue  # switched off or not identifiable: nothing to stack
        ax.bar(range(len(rows)), values, bottom=bottom, color=palette[i % 10], label=term)
        bottom += values
    ax.plot(range(len(rows)), [r["measured_s"] for r in rows], "k_", ms=10, mew=2, label="measured")
    ax.set_xticks(range(len(rows)), labels, fontsize=6, rotation=90)
    ax.set_xlabel(CONFIG_AXIS)
    ax.set_ylabel("epoch time [s]")
    ax.set_title(f"{framework} / {network}: where the time goes (generic model)", fontsize=8)
    ax.legend(ncol=2, loc="upper left")
    return _render(
        fig,
        framework,
        "breakdown",
        network,
        f"Time breakdown: {framework} / {network}",
        "Seconds per epoch attributed to each term of the fitted generic model at every measured "
        "configuration (terms the fit switched off are left out); black marks: measured median.",
    )


def nice_number(value: float) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:.3g}"
