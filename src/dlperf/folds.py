"""Seeded k-fold splits, shared by the models' inner cross-validation and the validation stage.

The unit of validation is the configuration: points that differ only in data size (or in the
repetition) are near-copies (T ~ I * t_iter), so they always sit in the same fold. Splitting
points instead of configurations lets a model see a held-out point's twin and makes k-fold
errors optimistic (docs/report.md, "Protocols").
"""

from __future__ import annotations

import numpy as np
import pandas as pd

# The columns that make a configuration; a column a frame lacks is left out of the key.
CONFIGURATION = ("network", "gpu", "precision", "nodes", "procs", "batch_size")


def kfold_indices(n: int, k: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Shuffled k-fold (train, test) index pairs over n independent units; k is capped at n."""
    k = max(2, min(k, n))
    order = np.random.default_rng(seed).permutation(n)
    folds = np.array_split(order, k)
    return [
        (np.sort(np.concatenate([f for j, f in enumerate(folds) if j != i])), np.sort(test))
        for i, test in enumerate(folds)
    ]


def configuration_groups(frame: pd.DataFrame) -> np.ndarray:
    """Group number of each row: rows with the same configuration share one."""
    keys = [c for c in CONFIGURATION if c in frame.columns]
    return frame.groupby(keys, sort=True, dropna=False).ngroup().to_numpy()


def grouped_kfold(frame: pd.DataFrame, k: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Shuffled k-fold over configurations: (train, test) row positions, every configuration's
    rows in exactly one test fold. k is capped at the number of configurations."""
    groups = configuration_groups(frame)
    return [
        (np.flatnonzero(np.isin(groups, train)), np.flatnonzero(np.isin(groups, test)))
        for train, test in kfold_indices(int(groups.max()) + 1 if len(groups) else 0, k, seed)
    ]


def n_configurations(frame: pd.DataFrame) -> int:
    """How many distinct configurations the rows hold."""
    return int(configuration_groups(frame).max()) + 1 if len(frame) else 0
