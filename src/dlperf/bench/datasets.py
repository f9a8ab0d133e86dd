"""The data a benchmark trains on, as NumPy arrays (NCHW float32 images, int64 labels).

``synthetic``: random batches made once per rank and cycled, so no input
pipeline is timed. ``digits``: scikit-learn's bundled 8x8 handwritten digits,
upscaled and padded to 3x32x32; the driver (analysis environment, which has
scikit-learn) exports them to ``.npy`` files in the run's work directory and the
workers read those with NumPy, so framework environments need no scikit-learn.
Each worker's framework-native input pipeline then serves its shard.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .spec import INPUT_SHAPE, NUM_CLASSES, RunConfig

# Synthetic batches are made once and cycled, so no data pipeline is timed.
SYNTHETIC_POOL = 4
DIGITS_IMAGES = "digits_images.npy"
DIGITS_LABELS = "digits_labels.npy"
DIGITS_SCALE = 3  # 8x8 -> 24x24, then 4 pixels of zero padding on every side -> 32x32


def synthetic_batches(config: RunConfig, rank: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Random images and labels, different on every rank (as a sharded dataset would be)."""
    rng = np.random.default_rng([config.seed, rank])
    batches = []
    for _ in range(SYNTHETIC_POOL):
        images = rng.standard_normal((config.batch_size, *INPUT_SHAPE), dtype=np.float32)
        labels = rng.integers(0, NUM_CLASSES, size=config.batch_size, dtype=np.int64)
        batches.append((images, labels))
    return batches


def digits_to_cifar_shape(images_8x8: np.ndarray) -> np.ndarray:
    """(N, 64) digit images with values 0..16 -> (N, 3, 32, 32) float32, standardised."""
    channels, height, width = INPUT_SHAPE
    images = images_8x8.reshape(-1, 8, 8).astype(np.float32) / 16.0
    images = images.repeat(DIGITS_SCALE, axis=1).repeat(DIGITS_SCALE, axis=2)
    pad_h = (height - images.shape[1]) // 2
    pad_w = (width - images.shape[2]) // 2
    images = np.pad(
        images,
        (
            (0, 0),
            (pad_h, height - images.shape[1] - pad_h),
            (pad_w, width - images.shape[2] - pad_w),
        ),
    )
    images = (images - images.mean()) / images.std()
    return np.ascontiguousarray(np.repeat(images[:, None], channels, axis=1), dtype=np.float32)


def load_digits_export(directory: str | Path) -> tuple[np.ndarray, np.ndarray]:
    directory = Path(directory)
    try:
        return np.load(directory / DIGITS_IMAGES), np.load(directory / DIGITS_LABELS)
    except FileNotFoundError as exc:
        raise FileNotFoundError(
            f"the digits dataset was not exported to {directory} ({exc.filename} is missing); "
            "the driver (`dlperf bench --dataset digits`) writes it before starting the workers"
        ) from None


def shard(images: np.ndarray, labels: np.ndarray, rank: int, world: int, batch_size: int):
    """Rank ``rank``'s share (every ``world``-th sample), repeated until it fills one batch."""
    images, labels = images[rank::world], labels[rank::world]
    if len(images) < batch_size:
        reps = -(-batch_size // len(images))
        images = np.concatenate([images] * reps)
        labels = np.concatenate([labels] * reps)
    return np.ascontiguousarray(images), np.ascontiguousarray(labels.astype(np.int64))
