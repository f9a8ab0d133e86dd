"""The benchmark networks in TensorFlow (Keras 3), layer for layer as in :mod:`.spec`.

TensorFlow's native layout is channels-last (NHWC): its CPU kernels do not
support NCHW convolutions, and on GPUs cuDNN handles NHWC well.
"""

from __future__ import annotations

import math

import keras
from keras import layers

from .spec import (
    BOTTLENECK_EXPANSION,
    INPUT_SHAPE,
    NUM_CLASSES,
    RESNET18_BLOCKS,
    RESNET50_BLOCKS,
    RESNET_WIDTHS,
    stage_strides,
)

CHANNELS, HEIGHT, WIDTH = INPUT_SHAPE
INPUT_NHWC = (HEIGHT, WIDTH, CHANNELS)


def conv(x, out: int, kernel: int, stride: int = 1, bias: bool = False):
    """A convolution padded like PyTorch's (kernel // 2 on every side).

    Keras' "same" padding is asymmetric when the stride is 2; explicit zero
    padding keeps the arithmetic identical to the other frameworks.
    """
    if stride == 1:
        return layers.Conv2D(out, kernel, padding="same", use_bias=bias)(x)
    if kernel // 2:
        x = layers.ZeroPadding2D(kernel // 2)(x)
    return layers.Conv2D(out, kernel, strides=stride, padding="valid", use_bias=bias)(x)


def conv_bn(x, out: int, kernel: int, stride: int = 1):
    # Momentum 0.9 and epsilon 1e-5 are PyTorch's and MXNet's BatchNorm defaults.
    return layers.BatchNormalization(momentum=0.9, epsilon=1e-5)(conv(x, out, kernel, stride))


def residual(x, body, out: int, stride: int):
    shortcut = conv_bn(x, out, 1, stride) if stride != 1 or x.shape[-1] != out else x
    return layers.ReLU()(layers.Add()([body, shortcut]))


def basic_block(x, width: int, stride: int):
    y = layers.ReLU()(conv_bn(x, width, 3, stride))
    return residual(x, conv_bn(y, width, 3), width, stride)


def bottleneck(x, width: int, stride: int):
    out = width * BOTTLENECK_EXPANSION
    y = layers.ReLU()(conv_bn(x, width, 1))
    y = layers.ReLU()(conv_bn(y, width, 3, stride))
    return residual(x, conv_bn(y, out, 1), out, stride)


def resnet(name: str, blocks: tuple[int, ...], block) -> keras.Model:
    inputs = keras.Input(INPUT_NHWC)
    x = layers.ReLU()(conv_bn(inputs, RESNET_WIDTHS[0], 3))
    for index, (count, width) in enumerate(zip(blocks, RESNET_WIDTHS, strict=True)):
        for i in range(count):
            x = block(x, width, stage_strides(index) if i == 0 else 1)
    x = layers.GlobalAveragePooling2D()(x)
    return keras.Model(inputs, layers.Dense(NUM_CLASSES)(x), name=name)


def build_network(name: str) -> keras.Model:
    if name == "mlp":
        return keras.Sequential(
            [
                keras.Input(INPUT_NHWC),
                layers.Flatten(),
                layers.Dense(512, activation="relu"),
                layers.Dense(256, activation="relu"),
                layers.Dense(NUM_CLASSES),
            ],
            name=name,
        )
    if name == "lenet":
        return keras.Sequential(
            [
                keras.Input(INPUT_NHWC),
                layers.Conv2D(32, 3, padding="same", activation="relu"),
                layers.MaxPooling2D(2),
                layers.Conv2D(64, 3, padding="same", activation="relu"),
                layers.MaxPooling2D(2),
                layers.Flatten(),
                layers.Dense(256, activation="relu"),
                layers.Dense(NUM_CLASSES),
            ],
            name=name,
        )
    if name == "resnet18":
        return resnet(name, RESNET18_BLOCKS, basic_block)
    if name == "resnet50":
        return resnet(name, RESNET50_BLOCKS, bottleneck)
    raise ValueError(f"TensorFlow has no network {name!r}")


def trainable_parameters(model: keras.Model) -> int:
    # BatchNormalization's moving mean/variance are non-trainable weights: not counted.
    return sum(math.prod(int(dim) for dim in w.shape) for w in model.trainable_weights)
