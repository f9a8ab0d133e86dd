"""Where configurations lie, and a space-filling initial design over them.

Configurations are compared in normalised log coordinates: workers, nodes, batch size and data size
scale multiplicatively, so 1 -> 2 workers is as far as 8 -> 16. Each axis is scaled to [0, 1]
over the candidate grid (an axis with one level contributes nothing).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

AXES = ("nodes", "procs", "batch_size", "data_size")
# The columns that name one scaling series: a model is fitted per series.
SERIES = ("framework", "network", "device")


def series_keys(frame: pd.DataFrame) -> list[str]:
    return [c for c in SERIES if c in frame.columns]


def coordinates(candidates: pd.DataFrame) -> np.ndarray:
    """(rows, axes) normalised log2 coordinates of every candidate configuration."""
    logs = np.log2(candidates[list(AXES)].to_numpy(float))
    low, high = logs.min(axis=0), logs.max(axis=0)
    span = np.where(high > low, high - low, 1.0)
    return (logs - low) / span


def nearest_distance(coords: np.ndarray, chosen: np.ndarray) -> np.ndarray:
    """Distance from every row to the nearest chosen row (inf when none is chosen)."""
    if not chosen.any():
        return np.full(len(coords), np.inf)
    diff = coords[:, None, :] - coords[chosen][None, :, :]
    return np.sqrt((diff**2).sum(axis=-1)).min(axis=1)


def maximin(coords: np.ndarray, k: int, chosen: np.ndarray | None = None) -> list[int]:
    """Greedy maximin design: k rows, each as far as possible from every row chosen before.

    Without earlier choices the first is the smallest configuration (the sum of coordinates is
    least: one worker, smallest batch and data size), the anchor every scaling curve starts from;
    ties go to the lower row, so the design is deterministic."""
    taken = np.zeros(len(coords), bool) if chosen is None else chosen.copy()
    picks: list[int] = []
    for _ in range(min(k, int((~taken).sum()))):
        if not taken.any():
            pick = int(np.argmin(coords.sum(axis=1)))
        else:
            distance = np.where(taken, -np.inf, nearest_distance(coords, taken))
            pick = int(np.argmax(distance))
        taken[pick] = True
        picks.append(pick)
    return picks
