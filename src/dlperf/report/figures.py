"""Matplotlib figures of the report. Deterministic: no dates or versions embedded."""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from dlperf.io import atomic_write_bytes  # noqa: E402

matplotlib.rcParams.update(
    {
        "svg.hashsalt": "dlperf",  # stable element ids in SVG output
        "figure.dpi": 100,
        "savefig.dpi": 110,
        "font.size": 9,
        "axes.grid": True,
        "grid.alpha": 0.3,
    }
)


@dataclass
class Figure:
    name: str
    title: str
    caption: str
    png: bytes
    svg: bytes


def _render(fig, name: str, title: str, caption: str) -> Figure:
    png, svg = io.BytesIO(), io.BytesIO()
    fig.savefig(png, format="png", bbox_inches="tight", metadata={"Software": None})
    fig.savefig(svg, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": None})
    plt.close(fig)
    return Figure(name, title, caption, png.getvalue(), svg.getvalue())


def save(figure: Figure, directory: Path) -> None:
    atomic_write_bytes(directory / f"{figure.name}.png", figure.png)
    atomic_write_bytes(directory / f"{figure.name}.svg", figure.svg)


def _prediction_grid(points: pd.DataFrame, batch: int, data: int) -> pd.DataFrame:
    """Workers from 1 to twice the largest measured count, nodes filled like the measurements."""
    max_procs = int(points["procs"].max())
    per_node = int((points["procs"] / points["nodes"]).max())
    procs = np.unique(np.concatenate([np.arange(1, 2 * max_procs + 1), points["procs"].to_numpy()]))
    return pd.DataFrame(
        {
            "nodes": np.ceil(procs / per_node).astype(int),
            "procs": procs.astype(int),
            "batch_size": batch,
            "data_size": data,
        }
    )


def scaling_figure(framework: str, network: str, points: pd.DataFrame, fitted: dict) -> Figure:
    """Epoch time and throughput against workers: measured medians (IQR bars) and model curves."""
    data_sizes = sorted(points["data_size"].unique())
    batches = sorted(points["batch_size"].unique())
    colours = plt.cm.viridis(np.linspace(0, 0.9, len(batches)))
    fig, axes = plt.subplots(2, len(data_sizes), figsize=(4.2 * len(data_sizes), 6.4), squeeze=False)
    max_procs = points["procs"].max()
    for col, data in enumerate(data_sizes):
        ax_t, ax_s = axes[0, col], axes[1, col]
        for colour, batch in zip(colours, batches):
            sel = points[(points["data_size"] == data) & (points["batch_size"] == batch)].sort_values("procs")
            if sel.empty:
                continue
            err = np.vstack([sel["epoch_time_s"] - sel["epoch_time_q25_s"], sel["epoch_time_q75_s"] - sel["epoch_time_s"]])
            ax_t.errorbar(sel["procs"], sel["epoch_time_s"], yerr=err, fmt="o", color=colour, capsize=3, label=f"b={batch} measured")
            ax_s.plot(sel["procs"], sel["samples_per_s"], "o", color=colour)
            for name, model in fitted.items():
                grid = _prediction_grid(points, batch, data)
                pred = model.predict(grid)
                inside = grid["procs"] <= max_procs
                style = "-" if name == "generic" else ":"
                ax_t.plot(grid["procs"][inside], pred[inside], style, color=colour, alpha=0.8,
                          label=f"b={batch} {name}" if batch == batches[0] or len(fitted) == 1 else None)
                ax_t.plot(grid["procs"][~inside], pred[~inside], "--", color=colour, alpha=0.5)
                ax_s.plot(grid["procs"], data / pred, style, color=colour, alpha=0.6)
        ax_t.set_title(f"{framework} / {network}, d={data} samples/epoch")
        ax_t.set_xlabel("workers p")
        ax_t.set_ylabel("epoch time [s]")
        ax_t.set_yscale("log")
        ax_s.set_xlabel("workers p")
        ax_s.set_ylabel("throughput [samples/s]")
        ax_t.axvline(max_procs, color="grey", lw=0.8, ls=":")
        ax_s.axvline(max_procs, color="grey", lw=0.8, ls=":")
        ax_t.legend(fontsize=7, loc="best")
    fig.tight_layout()
    return _render(
        fig,
        f"scaling_{framework}_{network}",
        f"Scaling: {framework} / {network}",
        "Measured median epoch time (bars: interquartile range over repetitions) and throughput "
        "against the number of workers, one colour per per-worker batch size; lines are the fitted "
        "models, dashed beyond the largest measured worker count (right of the dotted line).",
    )


def measured_vs_predicted_figure(framework: str, predictions: pd.DataFrame, protocol: str) -> Figure:
    fig, ax = plt.subplots(figsize=(4.6, 4.2))
    sel = predictions[(predictions["framework"] == framework) & (predictions["protocol"] == protocol)]
    for model, group in sel.groupby("model", sort=True):
        ax.plot(group["measured_s"], group["predicted_s"], "o", alpha=0.7, label=model)
    if not sel.empty:
        lo = min(sel["measured_s"].min(), sel["predicted_s"].min()) * 0.9
        hi = max(sel["measured_s"].max(), sel["predicted_s"].max()) * 1.1
        ax.plot([lo, hi], [lo, hi], "k-", lw=0.8, label="y = x")
        ax.set_xscale("log")
        ax.set_yscale("log")
    ax.set_xlabel("measured epoch time [s]")
    ax.set_ylabel("predicted epoch time [s]")
    ax.set_title(f"{framework}: held-out predictions ({protocol})")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return _render(
        fig,
        f"measured_vs_predicted_{framework}_{protocol}",
        f"Measured vs predicted: {framework} ({protocol})",
        f"Each point is a configuration predicted by a model that did not see it ({protocol}). "
        "Points on the diagonal are perfect predictions.",
    )


def breakdown_figure(framework: str, network: str, breakdown: list[dict]) -> Figure:
    """Stacked bars: seconds of each generic-model term at every measured configuration."""
    terms = list(breakdown[0]["seconds"]) if breakdown else []
    labels = [f"p{r['procs']} b{r['batch_size']}\nd{r['data_size']}" for r in breakdown]
    fig, ax = plt.subplots(figsize=(max(5.0, 0.45 * len(breakdown) + 1.5), 3.8))
    bottom = np.zeros(len(breakdown))
    colours = plt.cm.tab10(np.arange(len(terms)) % 10)
    for colour, term in zip(colours, terms):
        values = np.array([r["seconds"][term] for r in breakdown])
        if np.allclose(values, 0):
            continue
        ax.bar(range(len(breakdown)), values, bottom=bottom, color=colour, label=term)
        bottom += values
    ax.plot(range(len(breakdown)), [r["measured_s"] for r in breakdown], "k_", ms=12, mew=2, label="measured")
    ax.set_xticks(range(len(breakdown)), labels, fontsize=6, rotation=90)
    ax.set_ylabel("epoch time [s]")
    ax.set_title(f"{framework} / {network}: where the time goes (generic model)")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return _render(
        fig,
        f"breakdown_{framework}_{network}",
        f"Time breakdown: {framework} / {network}",
        "Seconds per epoch attributed to each term of the fitted generic model at every measured "
        "configuration (black marks: measured).",
    )


def nice_number(value: float) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:.3g}"
