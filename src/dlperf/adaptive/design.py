"""Where configurations lie, and a space-filling initial design over them.

Configurations are compared in normalised log coordinates: workers, nodes, batch size and
iterations per epoch scale multiplicatively, so 1 -> 2 workers is as far as 8 -> 16. Iterations
(data size over the global batch) stand for the data size: an external table without data sizes
has the same iterations at every row, so its data size (derived from the batch) adds no axis of
its own. Each axis is scaled to [0, 1] over the candidate grid (an axis with one level contributes
nothing).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

AXES = ("nodes", "procs", "batch_size", "data_size")
# The axes of the distance: data size enters as iterations per epoch, ceil(d / (p b)).
DISTANCE_AXES = ("nodes", "procs", "batch_size", "iterations")
# The columns that name one scaling series: a model is fitted per series.
SERIES = ("framework", "network", "device")


def series_keys(frame: pd.DataFrame) -> list[str]:
    return [c for c in SERIES if c in frame.columns]


def coordinates(candidates: pd.DataFrame) -> np.ndarray:
    """(rows, axes) normalised log2 coordinates of every candidate configuration."""
    values = candidates[["nodes", "procs", "batch_size"]].to_numpy(float)
    iterations = np.ceil(candidates["data_size"].to_numpy(float) / (values[:, 1] * values[:, 2]))
    logs = np.log2(np.column_stack([values, iterations]))
    low, high = logs.min(axis=0), logs.max(axis=0)
    span = np.where(high > low, high - low, 1.0)
    return (logs - low) / span


def nearest_distance(coords: np.ndarray, chosen: np.ndarray) -> np.ndarray:
    """Distance from every row to the nearest chosen row (inf when none is chosen)."""
    if not chosen.any():
        return np.full(len(coords), np.inf)
    diff = coords[:, None, :] - coords[chosen][None, :, :]
    return np.sqrt((diff**2).sum(axis=-1)).min(axis=1)


def maximin(coords: np.ndarray, k: int, levels: np.ndarray | None = None) -> list[int]:
    """Greedy maximin design: k rows, each as far as possible from every row chosen before.

    The first is the smallest configuration (the sum of coordinates is least: one worker, smallest
    batch and data size), the anchor every scaling curve starts from. ``levels`` (rows, columns:
    e.g. nodes and workers) adds one unit of distance per column whose level is not chosen yet, so
    every worker and node count is measured before any is measured twice: a scaling term is pinned
    by its levels, and the inter-node cost by no single-node point. Ties go to the lower row, so
    the design is deterministic."""
    taken = np.zeros(len(coords), bool)
    picks: list[int] = []
    for _ in range(min(k, len(coords))):
        if not taken.any():
            pick = int(np.argmin(coords.sum(axis=1)))
        else:
            gain = nearest_distance(coords, taken)
            if levels is not None:
                for column in levels.T:
                    gain = gain + ~np.isin(column, column[taken])
            pick = int(np.argmax(np.where(taken, -np.inf, gain)))
        taken[pick] = True
        picks.append(pick)
    return picks


def coverage_levels(candidates: pd.DataFrame) -> np.ndarray:
    """The columns whose every level the initial design covers first: nodes and workers."""
    return candidates[["nodes", "procs"]].to_numpy()
