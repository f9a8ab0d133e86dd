"""The data a benchmark trains on, as NumPy arrays (NCHW float32 images, int64 labels).

``synthetic``: random batches made once per rank and cycled, so no input
pipeline is timed. For token networks a batch is (tokens, labels, weights), all
(batch, seq_len): random token ids with a fixed share masked, the original ids as
labels and each sample's masked positions weighted 1/masked (others 0), so a sample's
loss is the mean over its masked tokens (masked-token training). ``digits``:
scikit-learn's bundled 8x8 handwritten digits,
upscaled and padded to 3x32x32; the driver (analysis environment, which has
scikit-learn) exports them to ``.npy`` files in the run's work directory and the
workers read those with NumPy, so framework environments need no scikit-learn.
Each worker's framework-native input pipeline then serves its shard.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .archs import MASK_FRACTION, MASK_TOKEN, TRANSFORMERS, input_shape, num_classes
from .spec import INPUT_SHAPE, RunConfig

# Synthetic batches are made once and cycled, so no data pipeline is timed.
SYNTHETIC_POOL = 4
DIGITS_IMAGES = "digits_images.npy"
DIGITS_LABELS = "digits_labels.npy"
DIGITS_SCALE = 3  # 8x8 -> 24x24, then 4 pixels of zero padding on every side -> 32x32


def synthetic_batches(config: RunConfig, rank: int) -> list[tuple[np.ndarray, ...]]:
    """Random batches, different on every rank (as a sharded dataset would be)."""
    rng = np.random.default_rng([config.seed, rank])
    make = masked_tokens if config.inputs == "tokens" else random_images
    return [make(rng, config) for _ in range(SYNTHETIC_POOL)]


def random_images(rng: np.random.Generator, config: RunConfig) -> tuple[np.ndarray, np.ndarray]:
    shape = (config.batch_size, *input_shape(config.image_size))
    images = rng.standard_normal(shape, dtype=np.float32)
    labels = rng.integers(0, num_classes(config.image_size), size=config.batch_size, dtype=np.int64)
    return images, labels


def masked_count(seq_len: int) -> int:
    return max(1, round(MASK_FRACTION * seq_len))


def masked_tokens(rng: np.random.Generator, config: RunConfig) -> tuple[np.ndarray, ...]:
    """(tokens, labels, weights): a fixed number of positions per sample masked."""
    shape = (config.batch_size, config.seq_len)
    labels = rng.integers(1000, TRANSFORMERS[config.network].vocab, size=shape, dtype=np.int64)
    masked = masked_count(config.seq_len)
    order = rng.random(shape).argsort(axis=1)[:, :masked]
    weights = np.zeros(shape, dtype=np.float32)
    np.put_along_axis(weights, order, 1.0 / masked, axis=1)
    tokens = np.where(weights > 0, MASK_TOKEN, labels)
    return tokens, labels, weights


def nchw_to_nhwc(images: np.ndarray) -> np.ndarray:
    """Images (N, C, H, W) -> (N, H, W, C), contiguous: the layout TensorFlow (and MXNet's
    cuDNN kernels, on a GPU) train in."""
    return np.ascontiguousarray(images.transpose(0, 2, 3, 1))


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
