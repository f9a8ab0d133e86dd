"""The benchmark networks in TensorFlow (Keras 3), layer for layer as in :mod:`.spec`.

TensorFlow's native layout is channels-last (NHWC): its CPU kernels do not
support NCHW convolutions, and on GPUs cuDNN handles NHWC well.
"""

from __future__ import annotations

import math

import keras
from keras import layers

from .archs import (
    BOTTLENECK_EXPANSION,
    RESNET18_BLOCKS,
    RESNET50_BLOCKS,
    RESNET_WIDTHS,
    TRANSFORMERS,
    imagenet_stem,
    input_shape,
    num_classes,
    stage_strides,
)
from .tf_bert import build_masked_lm


def input_nhwc(image_size: int) -> tuple[int, int, int]:
    channels, height, width = input_shape(image_size)
    return (height, width, channels)


def logits(x, classes: int):
    # float32 logits under a mixed-precision policy: the loss is computed in full precision.
    return layers.Dense(classes, dtype="float32")(x)


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


def stem(inputs, image_size: int):
    if not imagenet_stem(image_size):
        return layers.ReLU()(conv_bn(inputs, RESNET_WIDTHS[0], 3))
    x = layers.ReLU()(conv_bn(inputs, RESNET_WIDTHS[0], 7, 2))
    # Zero padding before the max pool equals PyTorch's -inf padding: the inputs are >= 0 (ReLU).
    return layers.MaxPooling2D(3, strides=2)(layers.ZeroPadding2D(1)(x))


def resnet(name: str, blocks: tuple[int, ...], block, image_size: int) -> keras.Model:
    inputs = keras.Input(input_nhwc(image_size))
    x = stem(inputs, image_size)
    for index, (count, width) in enumerate(zip(blocks, RESNET_WIDTHS, strict=True)):
        for i in range(count):
            x = block(x, width, stage_strides(index) if i == 0 else 1)
    x = layers.GlobalAveragePooling2D()(x)
    return keras.Model(inputs, logits(x, num_classes(image_size)), name=name)


def build_network(name: str, image_size: int = 32) -> keras.Model:
    if name in TRANSFORMERS:
        return build_masked_lm(name, TRANSFORMERS[name])
    shape, classes = input_nhwc(image_size), num_classes(image_size)
    if name == "mlp":
        return keras.Sequential(
            [
                keras.Input(shape),
                layers.Flatten(),
                layers.Dense(512, activation="relu"),
                layers.Dense(256, activation="relu"),
                layers.Dense(classes, dtype="float32"),
            ],
            name=name,
        )
    if name == "lenet":
        return keras.Sequential(
            [
                keras.Input(shape),
                layers.Conv2D(32, 3, padding="same", activation="relu"),
                layers.MaxPooling2D(2),
                layers.Conv2D(64, 3, padding="same", activation="relu"),
                layers.MaxPooling2D(2),
                layers.Flatten(),
                layers.Dense(256, activation="relu"),
                layers.Dense(classes, dtype="float32"),
            ],
            name=name,
        )
    if name == "resnet18":
        return resnet(name, RESNET18_BLOCKS, basic_block, image_size)
    if name == "resnet50":
        return resnet(name, RESNET50_BLOCKS, bottleneck, image_size)
    raise ValueError(f"TensorFlow has no network {name!r}")


def trainable_parameters(model: keras.Model) -> int:
    # BatchNormalization's moving mean/variance are non-trainable weights: not counted.
    return sum(math.prod(int(dim) for dim in w.shape) for w in model.trainable_weights)
