"""What physics allows a GPU's time to be, from the GPU types measured at the same configuration.

A training iteration's time is made of parts that each run at one of the GPU's figures (matrix
and vector peak rates, memory bandwidth, and the link where gradients are exchanged) and a part
the GPU does not speed up (the host); added, or overlapped as in a roofline, the time of another
GPU divided by this one's lies between the smallest and the largest of the parts' ratios. So a
GPU G at the configuration (precision, workers, nodes) where a GPU type H was measured takes,
per sample, between u_H min(1, min_f rho_f) and u_H max(1, max_f rho_f), rho_f = R_H,f / R_G,f.
A larger batch never costs more per sample nor less per iteration, which widens that by b_H / b_G
on one side. Each GPU type measured gives such an envelope; the envelope of a row is their
union (the least low and the most high), so that hosts that disagree with these assumptions
widen it rather than empty it. At a configuration no GPU type was measured at, only its lower
side holds, from fewer workers: more workers at the same batch per worker never shorten an
iteration. The answer across hardware holds each model's prediction to it
(:mod:`dlperf.models.hardware_answer`): a regression whose slopes few GPU types cannot tell
apart (three GPU types for four slopes) can otherwise predict a GPU thousands of times too slow
or too fast.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .base import TARGET, iterations
from .hardware_features import hardware_frame

KEYS = ("gpu", "precision", "procs", "nodes", "batch_size")
# The figures whose ratio bounds a part of the iteration; the link's only where gradients were
# exchanged (more than one worker).
COMPUTE = ["matrix_tflops", "vector_tflops", "memory_tbs"]
LINK = "link_gbs"


def per_sample(frame: pd.DataFrame) -> np.ndarray:
    """Each row's time per iteration over its batch (seconds per sample and worker)."""
    batch = frame["batch_size"].to_numpy(float)
    return frame[TARGET].to_numpy(float) / (iterations(frame) * batch)


def envelope_points(frame: pd.DataFrame) -> list[dict]:
    """Per GPU type, precision, configuration and batch measured: the least and most time per
    sample over its hosts (JSON, stored with the answer)."""
    keyed = pd.DataFrame({k: frame[k].to_numpy() for k in KEYS})
    grouped = pd.Series(per_sample(frame)).groupby([keyed[k] for k in KEYS], sort=True)
    least, most = grouped.min(), grouped.max()
    return [
        {
            "gpu": str(gpu),
            "precision": str(precision),
            "procs": int(procs),
            "nodes": int(nodes),
            "batch_size": int(batch),
            "per_sample_s": [float(least[key]), float(most[key])],
        }
        for key in least.index
        for gpu, precision, procs, nodes, batch in [key]
    ]


def envelope(
    points: list[dict], rows: pd.DataFrame, hardware: str | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``rows`` (a GPU, precision and configuration each): the least and most epoch
    time the envelope allows (module docstring). At a configuration no GPU type was measured
    at, only the least, from the configurations of as many workers and nodes or fewer: at the
    same batch per worker, more workers never make an iteration shorter (perfect scaling); 0
    and inf where there is none either."""
    low, high = np.zeros(len(rows)), np.full(len(rows), np.inf)
    if not points or rows.empty:
        return low, high
    measured = pd.DataFrame(points)
    seen = hardware_frame(measured, hardware)
    asked = hardware_frame(rows, hardware)
    scale = iterations(rows) * rows["batch_size"].to_numpy(float)
    least, most = np.array(measured["per_sample_s"].tolist()).T
    precisions = measured["precision"].to_numpy()
    procs_seen, nodes_seen = measured["procs"].to_numpy(), measured["nodes"].to_numpy()
    # The link's ratio counts where the measured iteration exchanged gradients.
    exchanged = procs_seen > 1
    for i, (precision, procs, nodes, batch) in enumerate(
        rows[["precision", "procs", "nodes", "batch_size"]].to_numpy()
    ):
        same = (precisions == precision) & (procs_seen == procs) & (nodes_seen == nodes)
        fewer = (precisions == precision) & (procs_seen <= procs) & (nodes_seen <= nodes)
        at = same if same.any() else fewer
        if not at.any():
            continue
        compute = seen.loc[at, COMPUTE].to_numpy() / asked.iloc[i][COMPUTE].to_numpy(float)
        link = seen.loc[at, LINK].to_numpy() / float(asked.iloc[i][LINK])
        smallest = np.where(
            exchanged[at], np.minimum(compute.min(axis=1), link), compute.min(axis=1)
        )
        largest = np.where(
            exchanged[at], np.maximum(compute.max(axis=1), link), compute.max(axis=1)
        )
        batches = measured.loc[at, "batch_size"].to_numpy(float) / float(batch)
        lows = least[at] * np.minimum(smallest, 1.0) * np.minimum(batches, 1.0)
        low[i] = lows.min() * scale[i]
        if same.any():
            highs = most[at] * np.maximum(largest, 1.0) * np.maximum(batches, 1.0)
            high[i] = highs.max() * scale[i]
    return low, high
