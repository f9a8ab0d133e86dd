"""The figures of the fitted models: held-out predictions against measurements
(``accuracy_figure``), their errors at every configuration (``residuals_figure``), and where the
generic model puts an epoch's time (``breakdown_figure``)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dlperf.figures import Figure, canvas, label, palette, plain_log_ticks, render, styled

from .figure_data import CONFIG_KEYS, breakdown_rows, config_positions, model_offsets, protocols

CONFIG_AXIS = "configuration (n nodes, p workers, b batch/worker, d samples/epoch)"
ACCURACY_CAPTION = (
    "Each point is a measured configuration predicted by a model that did not see it, one "
    "panel per validation protocol and one colour per model. On the diagonal: perfect."
)
RESIDUALS_CAPTION = (
    "Absolute percentage error of each held-out prediction at every measured configuration, "
    "one panel per validation protocol, one colour per model (offset a little to be seen)."
)
BREAKDOWN_CAPTION = (
    "Seconds per epoch attributed to each term of the fitted generic model at every measured "
    "configuration (terms the fit switched off are left out); black marks: measured median."
)


def _diagonal(ax, sel: pd.DataFrame) -> None:
    """The line y = x over the panel's values, on log axes; nothing without positive values."""
    values = np.concatenate([sel["measured_s"].to_numpy(float), sel["predicted_s"].to_numpy(float)])
    values = values[np.isfinite(values) & (values > 0)]
    if values.size:
        lo, hi = values.min() * 0.8, values.max() * 1.25
        ax.plot([lo, hi], [lo, hi], "k-", lw=0.8, label="y = x")
        ax.set_xscale("log")
        ax.set_yscale("log")
        plain_log_ticks(ax.xaxis)
        plain_log_ticks(ax.yaxis)


@styled
def accuracy_figure(
    framework: str, network: str, predictions: pd.DataFrame, colours: dict[str, tuple]
) -> Figure:
    """Measured vs held-out predicted epoch time, one panel per protocol, one colour per model."""
    panels = protocols(predictions)
    ncols = min(3, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    fig, axes = canvas(nrows, ncols, 3.4, 3.2)
    for ax in axes.flat[len(panels) :]:
        ax.set_visible(False)
    for ax, protocol in zip(axes.flat, panels, strict=False):
        sel = predictions[predictions["protocol"] == protocol]
        for model, group in sel.groupby("model", sort=True):
            look = {"ms": 4, "alpha": 0.75, "color": colours.get(model), "label": model}
            ax.plot(group["measured_s"], group["predicted_s"], "o", **look)
        _diagonal(ax, sel)
        label(ax, protocol, "measured epoch time [s]", "predicted epoch time [s]")
        ax.legend(loc="upper left")
    title = f"Measured vs predicted: {framework} / {network}"
    return render(fig, framework, "accuracy", network, title, ACCURACY_CAPTION)


@styled
def residuals_figure(
    framework: str, network: str, predictions: pd.DataFrame, colours: dict[str, tuple]
) -> Figure:
    """Held-out APE at every configuration, one panel per protocol."""
    panels = protocols(predictions)
    position, labels = config_positions(predictions)
    width = max(5.0, 0.22 * len(labels) + 2.0)
    fig, axes = canvas(len(panels), 1, width, 2.6)
    offsets = model_offsets(sorted(predictions["model"].unique()))
    for ax, protocol in zip(axes[:, 0], panels, strict=False):
        sel = predictions[predictions["protocol"] == protocol]
        for model, group in sel.groupby("model", sort=True):
            x = np.array([position[tuple(r)] for r in group[CONFIG_KEYS].itertuples(index=False)])
            ax.plot(
                x + offsets[model], group["ape"], "o", ms=4, color=colours.get(model), label=model
            )
        label(ax, protocol, ylabel="APE [%]")
        ax.set_ylim(bottom=0)
        ax.set_xticks(range(len(labels)), labels, rotation=90, fontsize=6)
        ax.legend(loc="upper right")
    axes[-1, 0].set_xlabel(CONFIG_AXIS)
    title = f"Residuals: {framework} / {network}"
    return render(fig, framework, "residuals", network, title, RESIDUALS_CAPTION)


@styled
def breakdown_figure(framework: str, network: str, breakdown: list[dict]) -> Figure:
    """Stacked bars: seconds of each generic-model term at every measured configuration."""
    terms, rows, labels = breakdown_rows(breakdown)
    fig, axes = canvas(1, 1, max(5.0, 0.28 * len(rows) + 2.0), 3.6)
    ax = axes[0, 0]
    bottom = np.zeros(len(rows))
    colours = palette("tab10", np.arange(10))
    for i, term in enumerate(terms):
        values = np.array([r["seconds"][term] for r in rows], dtype=float)
        if np.allclose(values, 0):
            continue  # switched off or not identifiable: nothing to stack
        ax.bar(range(len(rows)), values, bottom=bottom, color=colours[i % 10], label=term)
        bottom += values
    measured = np.array([r["measured_s"] for r in rows], dtype=float)
    ax.plot(range(len(rows)), measured, "k_", ms=10, mew=2, label="measured")
    ax.set_xticks(range(len(rows)), labels, fontsize=6, rotation=90)
    title = f"{framework} / {network}: where the time goes (generic model)"
    label(ax, title, CONFIG_AXIS, "epoch time [s]")
    # Headroom above the tallest bar for the legend, so it covers no bar.
    tallest = float(np.nanmax(np.concatenate([bottom, measured, [0.0]])))
    if tallest > 0:
        ax.set_ylim(0.0, 1.4 * tallest)
    ax.legend(ncol=3, loc="upper left")
    title = f"Time breakdown: {framework} / {network}"
    return render(fig, framework, "breakdown", network, title, BREAKDOWN_CAPTION)
