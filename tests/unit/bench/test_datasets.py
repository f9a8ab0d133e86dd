"""Datasets as NumPy arrays: synthetic batches, digits reshaping, sharding."""

from __future__ import annotations

import numpy as np
import pytest

from dlperf.bench.datasets import (
    digits_to_cifar_shape,
    load_digits_export,
    shard,
    synthetic_batches,
)
from dlperf.bench.spec import RunConfig


def test_synthetic_batches_differ_between_ranks():
    config = RunConfig("pytorch", "lenet", "cpu", 1, 2, 4, 16, 0)
    a, b = synthetic_batches(config, 0), synthetic_batches(config, 1)
    assert a[0][0].shape == (4, 3, 32, 32) and a[0][0].dtype == np.float32
    assert a[0][1].dtype == np.int64
    assert not np.array_equal(a[0][0], b[0][0])


def test_digits_are_upscaled_and_padded_to_cifar_shape():
    images = np.zeros((2, 64))
    images[0, 0] = 16  # top-left pixel of the 8x8 digit
    out = digits_to_cifar_shape(images)
    assert out.shape == (2, 3, 32, 32) and out.dtype == np.float32
    lit = out[0, 0] > out[0, 0].min()
    rows, cols = np.nonzero(lit)
    # 3x3 block just inside the 4-pixel border, the same in every channel
    assert (rows.min(), rows.max(), cols.min(), cols.max()) == (4, 6, 4, 6)
    assert np.array_equal(out[0, 0], out[0, 2])


def test_shard_splits_and_fills_a_batch():
    images = np.arange(10, dtype=np.float32)[:, None]
    labels = np.arange(10)
    x0, _ = shard(images, labels, 0, 2, 2)
    x1, _ = shard(images, labels, 1, 2, 2)
    assert x0[:, 0].tolist() == [0, 2, 4, 6, 8] and x1[:, 0].tolist() == [1, 3, 5, 7, 9]
    big, big_labels = shard(images, labels, 0, 2, 12)
    assert len(big) >= 12 and big_labels.dtype == np.int64


def test_missing_export_says_who_writes_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="--dataset digits"):
        load_digits_export(tmp_path)
