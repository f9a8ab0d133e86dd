"""The figures of how a network scales with workers: epoch time and throughput with each
model's curve (``scaling_figure``), measured speed-up and efficiency (``speedup_figure``), and
the Summary's speed-up with the answer's (``summary_figure``)."""

from __future__ import annotations

import pandas as pd

from dlperf.figures import (
    Figure,
    batch_colours,
    canvas,
    label,
    plain_log_ticks,
    render,
    styled,
    whole_workers,
)

from .curves import Curve
from .figure_data import measured_spread, model_curve_on, predicted_speedup, prediction_grid
from .scaling import at_largest_data, measured_speedup


def _measured(ax, sel: pd.DataFrame, data: int, throughput: bool, colour, batch: int) -> None:
    """Medians over repetitions with interquartile bars."""
    median, err = measured_spread(sel, data, throughput)
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
    procs = grid["procs"].to_numpy()
    pred, band = model_curve_on(curve, grid, throughput)
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
    colours = batch_colours(batches)
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
    quantity = "throughput [samples/s]" if throughput else "epoch time [s]"
    label(ax, f"{name}: d={data} samples/epoch", "workers p", quantity)
    whole_workers(ax)
    if not throughput:
        ax.set_yscale("log")
        plain_log_ticks(ax.yaxis)


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
    fig, axes = canvas(len(rows), len(data_sizes), 3.9, 2.9)
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
    title = f"{what} vs workers: {framework} / {network}"
    return render(fig, framework, kind, network, title, caption)


SPEEDUP_CAPTION = (
    "Measured speed-up of the epoch (median epoch time with the fewest workers divided by the "
    "median with p workers, times that fewest count) and parallel efficiency (speed-up / p), "
    "per per-worker batch size b (colour) and samples per epoch d (line style); dotted: ideal."
)


@styled
def speedup_figure(framework: str, network: str, points: pd.DataFrame) -> Figure:
    """Measured speed-up and parallel efficiency against workers, relative to the fewest workers."""
    batches = sorted(int(b) for b in points["batch_size"].unique())
    data_sizes = sorted(int(d) for d in points["data_size"].unique())
    colours = batch_colours(batches)
    styles = {d: ["-", "--", "-.", ":"][i % 4] for i, d in enumerate(data_sizes)}
    fig, axes = canvas(1, 2, 4.2, 3.2)
    ax_s, ax_e = axes[0]
    for (batch, data), sel in measured_speedup(points).groupby(["batch_size", "data_size"]):
        look = {"marker": "o", "ms": 4, "color": colours[batch], "label": f"b={batch}, d={data}"}
        ax_s.plot(sel["procs"], sel["speedup"], styles[data], **look)
        ax_e.plot(sel["procs"], sel["efficiency"], styles[data], **look)
    top = float(points["procs"].max())
    ax_s.plot([1, top], [1, top], "k:", lw=0.8, label="ideal")
    ax_e.axhline(1.0, color="k", ls=":", lw=0.8, label="ideal")
    for ax, what, unit in (
        (ax_s, "speed-up", "speed-up T(1)/T(p) [×]"),
        (ax_e, "efficiency", "parallel efficiency speed-up/p [1]"),
    ):
        label(ax, f"{framework} / {network}: {what}", "workers p", unit)
        whole_workers(ax)
    ax_s.legend(loc="best")
    title = f"Speed-up and efficiency: {framework} / {network}"
    return render(fig, framework, "speedup", network, title, SPEEDUP_CAPTION)


@styled
def summary_figure(
    framework: str, network: str, points: pd.DataFrame, curve: Curve | None
) -> Figure:
    """Speed-up against workers at the largest data size: measured per batch size, and as the
    answer predicts it up to twice the measured workers."""
    data = int(points["data_size"].max())
    speedups = at_largest_data(measured_speedup(points))
    batches = sorted(int(b) for b in speedups["batch_size"].unique())
    colours = batch_colours(batches)
    fig, axes = canvas(1, 1, 4.6, 3.0)
    ax = axes[0, 0]
    top = int(points["procs"].max())
    for batch, sel in speedups.groupby("batch_size"):
        ax.plot(sel["procs"], sel["speedup"], "o", ms=5, color=colours[batch], label=f"b={batch}")
        if curve is None:
            continue
        procs, speedup = predicted_speedup(curve, points, batch, data, sel.iloc[0])
        look = {"color": colours[batch], "lw": 1, "label": f"b={batch} {curve.model}"}
        ax.plot(procs, speedup, "--", **look)
    ax.plot([1, 2 * top], [1, 2 * top], "k:", lw=0.8, label="ideal")
    ax.axvline(top, color="grey", lw=0.8, ls=":")
    title = f"{framework} / {network}: speed-up at d={data} samples/epoch"
    label(ax, title, "workers p", "speed-up [×]")
    whole_workers(ax)
    ax.legend(loc="upper left")
    model = f"the {curve.model} model's prediction" if curve else "no model"
    caption = (
        f"Measured speed-up of an epoch of {data} samples (dots; relative to the fewest workers "
        f"measured, times that count) per per-worker batch size b, and dashed, {model} of it up "
        f"to {2 * top} workers (right of the dotted line: beyond the measurements); dotted "
        "diagonal: ideal."
    )
    return render(fig, framework, "summary", network, f"Speed-up: {framework} / {network}", caption)
