"""The figures of frameworks side by side: throughput against workers with every framework on
one axes, and the time per iteration split into its parts for each framework."""

from __future__ import annotations

import numpy as np

from dlperf.figures import Figure, canvas, label, palette, render, styled, whole_workers

from .frameworks import PARTS, NetworkComparison

# The figures of all frameworks together are filed under this name (frameworks' own go under
# theirs).
FILED_UNDER = "frameworks"


def framework_colours(frameworks: tuple[str, ...]) -> dict[str, tuple]:
    """One colour per framework, the same in both figures."""
    colours = palette("tab10", np.arange(10))
    return {f: colours[i % 10] for i, f in enumerate(sorted(frameworks))}


@styled
def throughput_figure(comparison: NetworkComparison) -> Figure:
    """Throughput against workers, every framework on one axes: the median of the repetitions,
    bars from the lowest to the highest, one line per framework."""
    c = comparison
    colours = framework_colours(c.frameworks)
    fig, axes = canvas(1, 1, 5.6, 3.4)
    ax = axes[0, 0]
    for framework, sel in c.throughput.groupby("framework", sort=True):
        below = (sel["median"] - sel["low"]).to_numpy(float)
        above = (sel["high"] - sel["median"]).to_numpy(float)
        ax.errorbar(
            sel["procs"],
            sel["median"],
            yerr=np.vstack([below, above]),
            fmt="o-",
            ms=4,
            lw=1.2,
            capsize=3,
            color=colours[framework],
            label=framework,
        )
    ax.set_ylim(bottom=0)
    title = f"{c.network}: throughput, b={c.batch_size} per worker, d={c.data_size}"
    label(ax, title, "workers p", "throughput [samples/s]")
    whole_workers(ax)
    ax.legend(loc="best")
    caption = (
        f"Training throughput of {c.network} against the number of workers, one line per "
        f"framework ({', '.join(c.frameworks)}), at {c.batch_size} samples per worker and "
        f"{c.data_size} samples per epoch (the largest batch and data size every framework "
        "measured; the fewest nodes at each worker count): dots, the median of the "
        "repetitions; bars, from the slowest to the fastest repetition. Higher is faster."
    )
    return render(
        fig, FILED_UNDER, "throughput", c.network, f"Frameworks side by side: {c.network}", caption
    )


@styled
def split_figure(comparison: NetworkComparison) -> Figure:
    """Stacked bars: each framework's time per iteration at each scale, split into its parts."""
    c = comparison
    split = c.split.dropna(subset=["iteration_s"]).sort_values(["procs", "nodes", "framework"])
    labels = [f"{r.framework}\np={r.procs}" for r in split.itertuples(index=False)]
    fig, axes = canvas(1, 1, max(4.8, 0.55 * len(split) + 1.6), 3.4)
    ax = axes[0, 0]
    x = np.arange(len(split))
    bottom = np.zeros(len(split))
    colours = palette("Set2", np.arange(len(PARTS)))
    for part, colour in zip(PARTS, colours, strict=True):
        ms = split[f"{part}_s"].fillna(0.0).to_numpy(float) * 1e3
        ax.bar(x, ms, bottom=bottom, color=colour, label=part.replace("_", " "), width=0.7)
        bottom += ms
    ax.plot(x, split["iteration_s"].to_numpy(float) * 1e3, "k_", ms=14, mew=2, label="measured")
    ax.set_xticks(x, labels, fontsize=7)
    title = f"{c.network}: time per iteration, b={c.batch_size}, d={c.data_size}"
    label(ax, title, "framework and workers", "time per iteration [ms]")
    ax.set_ylim(0.0, 1.35 * float(max(bottom.max(initial=0.0), 1e-9)))
    ax.legend(ncol=5, loc="upper left", fontsize=6)
    caption = (
        f"Where an iteration of {c.network} goes in each framework, per worker count: the "
        "measured median iteration (black tick) less its measured data wait, split into "
        "compute, framework overhead and communication as the framework's generic model "
        "shares out the iteration it predicts there (communication less what it hides behind "
        "compute). A bar with only the data wait, or none, had no generic model to split it."
    )
    return render(
        fig, FILED_UNDER, "iteration_split", c.network, f"Time per iteration: {c.network}", caption
    )
