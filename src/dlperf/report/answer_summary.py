"""The Summary's answer (docs/report.md): per framework and network, the answer at the target
with its interval, how far beyond the measured range it is, which models make it and why, and
whether any model comes near the measurements' own noise. The figure shows its band widening
beyond the measured worker counts. The answer is the one ``dlperf predict`` and ``dlperf plan``
give by default (:mod:`dlperf.models.answer`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from dlperf import figures as rendering
from dlperf.models.answer import ANSWER
from dlperf.models.answer_explained import answer_warnings
from dlperf.models.artifact import node_capacity
from dlperf.models.prediction import extrapolation_warnings, prediction_table

from . import figure_data
from .findings import INTERVAL_LEVEL, Belief

# A model "comes near the measurements" when its k-fold MAPE is within this factor of the noise
# floor (the spread of repetitions, noise_ape); otherwise the Summary names none to believe.
NOISE_FACTOR = 3.0
# Without a planning target, the Summary asks the answer at this multiple of the largest
# measured worker count, and the figure draws it that far.
DEFAULT_REACH = 4


@dataclass(frozen=True)
class AnswerAt:
    row: dict  # nodes, procs, batch_size, data_size asked
    predicted_s: float
    lo_s: float
    hi_s: float
    ratio: float  # how far beyond the measured range (1 inside)
    models: str  # the models and weights, as text
    why: str
    warnings: list[str]


def answer_at(artifact: dict, network: str, row: dict) -> AnswerAt:
    """The answer at one configuration (ValueError when no model predicts there)."""
    frame = pd.DataFrame([{k: row[k] for k in ("nodes", "procs", "batch_size", "data_size")}])
    out = prediction_table(artifact, network, ANSWER, frame, INTERVAL_LEVEL).iloc[0]
    info = artifact["networks"][network]
    layout = _layout(int(frame.iloc[0]["procs"]), int(frame.iloc[0]["nodes"]))
    leaves = [f"At {layout}, {w}." for w in extrapolation_warnings(artifact, network, frame)]
    return AnswerAt(
        {k: int(frame.iloc[0][k]) for k in frame.columns},
        float(out["epoch_time_s"]),
        float(out["epoch_time_lo_s"]),
        float(out["epoch_time_hi_s"]),
        float(out["ratio"]),
        str(out["models"]),
        (info.get("answer") or {}).get("why", ""),
        leaves + answer_warnings(artifact, network, frame),
    )


def _layout(procs: int, nodes: int) -> str:
    return f"{procs} worker{'s' if procs > 1 else ''} on {nodes} node{'s' if nodes > 1 else ''}"


def target_row(points: pd.DataFrame, reference: pd.Series, plan_row: dict | None) -> dict:
    """Where the Summary asks the answer: the planned layout when a target is set, else
    :data:`DEFAULT_REACH` times the largest measured worker count, on the largest measured node
    count while its nodes hold them (no more workers on a node than a measured node holds: its
    GPUs or cores, :func:`dlperf.models.artifact.node_capacity`), else on as many nodes as they
    need (no default answer on nodes the study never measured when they are not needed, e.g. 4
    nodes for a one-node study of 8 GPUs)."""
    if plan_row is not None:
        return {k: int(plan_row[k]) for k in ("nodes", "procs", "batch_size", "data_size")}
    reach = DEFAULT_REACH * int(points["procs"].max())
    nodes = max(1, int(points["nodes"].max()), math.ceil(reach / node_capacity(points)))
    procs = nodes * math.ceil(reach / nodes)
    return {
        "nodes": nodes,
        "procs": procs,
        "batch_size": int(reference["batch_size"]),
        "data_size": int(reference["data_size"]),
    }


def answer_line(
    found: AnswerAt | None, belief: Belief | None, error: str = "", caveat: str = ""
) -> tuple[str, str]:
    """The answer in one plain sentence (after ``caveat``, the mark of runs mostly disturbed),
    and the statistics behind it (the models and their weights, why these, the best validated
    model against the noise) to fold beneath."""
    if found is None:
        return (f"no answer: {error}" if error else "no answer: no model could be fitted."), ""
    row = found.row
    where = (
        "inside the measured range"
        if found.ratio <= 1
        else f"{found.ratio:.3g}× beyond the largest measured worker or node count"
    )
    plain = (
        f"{caveat}at {_layout(row['procs'], row['nodes'])} (b={row['batch_size']}, "
        f"d={row['data_size']}; {where}) an epoch takes {found.predicted_s:.3g} s, "
        f"{INTERVAL_LEVEL:.0%} interval {found.lo_s:.3g}–{found.hi_s:.3g} s."
    )
    detail = f"From {found.models}. Why these: {found.why}. " + noise_check(belief)
    return plain, detail


def noise_check(belief: Belief | None) -> str:
    """Whether the best validated model comes within :data:`NOISE_FACTOR` of the noise floor."""
    if belief is None:
        return "No model was validated (see Model accuracy)."
    if belief.noise_ape is None or not np.isfinite(belief.noise_ape):
        return (
            f"Best validated: {belief.model}, {belief.protocol} MAPE {belief.mape:.3g}% (no "
            "repetitions, so no noise floor to compare with)."
        )
    if belief.mape > NOISE_FACTOR * max(belief.noise_ape, 1e-9):
        return (
            f"No model comes within {NOISE_FACTOR:g}× the measurements' noise "
            f"({belief.noise_ape:.3g}%): the best, {belief.model}, has {belief.protocol} MAPE "
            f"{belief.mape:.3g}%, so no model is to be believed closely; read the interval."
        )
    return (
        f"Best validated: {belief.model}, {belief.protocol} MAPE {belief.mape:.3g}% against the "
        f"measurements' noise of {belief.noise_ape:.3g}%."
    )


@rendering.styled
def answer_figure(
    framework: str, network: str, points: pd.DataFrame, artifact: dict, target: dict
) -> Figure:
    """Epoch time against workers at the largest measured data size and the target's batch (the
    largest measured when it was not measured): the measured points, the answer and its band
    from 1 worker to the target (at least :data:`DEFAULT_REACH` times the measured workers)."""
    data = int(points["data_size"].max())
    batch = int(target["batch_size"])
    if batch not in set(points["batch_size"].astype(int)):
        batch = int(points["batch_size"].max())
    top = int(points["procs"].max())
    reach = max(int(target["procs"]), DEFAULT_REACH * top)
    grid = figure_data.prediction_grid(points, batch, data)
    more = np.unique(np.geomspace(max(top, 1), reach, 12).round().astype(int))
    per_node = max(1, node_capacity(points))
    extra = pd.DataFrame(
        {"nodes": np.ceil(more / per_node).astype(int), "procs": more, "batch_size": batch}
    )
    extra["data_size"] = data
    grid = pd.concat([grid[["nodes", "procs", "batch_size", "data_size"]], extra])
    grid = grid.drop_duplicates("procs").sort_values("procs").reset_index(drop=True)
    table = prediction_table(artifact, network, ANSWER, grid, INTERVAL_LEVEL)
    fig, axes = rendering.canvas(1, 1, 4.6, 3.0)
    ax = axes[0, 0]
    ax.fill_between(
        grid["procs"],
        table["epoch_time_lo_s"],
        table["epoch_time_hi_s"],
        alpha=0.25,
        color="tab:blue",
        lw=0,
        label=f"{INTERVAL_LEVEL:.0%} interval",
    )
    ax.plot(grid["procs"], table["epoch_time_s"], "-", color="tab:blue", lw=1.2, label="answer")
    measured = points[(points["batch_size"] == batch) & (points["data_size"] == data)]
    ax.plot(measured["procs"], measured["epoch_time_s"], "o", ms=5, color="k", label="measured")
    ax.axvline(top, color="grey", lw=0.8, ls=":")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ticks = [2**k for k in range(int(math.log2(reach)) + 1)]
    ax.set_xticks(ticks, [str(t) for t in ticks])
    rendering.plain_log_ticks(ax.yaxis)
    ax.set_xlabel("workers p")
    ax.set_ylabel("epoch time [s]")
    ax.set_title(f"{framework} / {network}: the answer, b={batch}, d={data}", fontsize=8)
    ax.legend(loc="best")
    return rendering.render(
        fig,
        framework,
        "answer",
        network,
        f"Answer: {framework} / {network}",
        f"Epoch time of {data} samples at batch {batch} per worker: measured (dots) and the "
        f"answer (line) with its {INTERVAL_LEVEL:.0%} interval (band) from 1 to {reach} "
        "workers; right of the dotted line the workers were not measured and the band widens "
        "with the distance, as chosen on published tables left out (docs/model.md).",
    )
