"""Seeded k-fold splits, shared by the model's inner cross-validation and the validation stage."""

from __future__ import annotations

import numpy as np


def kfold_indices(n: int, k: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Shuffled k-fold (train, test) index pairs; k is capped at n."""
    k = max(2, min(k, n))
    order = np.random.default_rng(seed).permutation(n)
    folds = np.array_split(order, k)
    return [
        (np.sort(np.concatenate([f for j, f in enumerate(folds) if j != i])), np.sort(test))
        for i, test in enumerate(folds)
    ]
