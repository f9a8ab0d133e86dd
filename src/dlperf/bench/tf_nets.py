"""The benchmark networks in TensorFlow (Keras 3), layer for layer as in :mod:`.spec`.

TensorFlow's native layout is channels-last (NHWC): its CPU kernels do not
support NCHW convolutions, and on GPUs cuDNN handles NHWC well.
"""

from __future__ import annotations

import math

import keras
from keras import layers

from . import archs
from .archs import RESNETS, ResNetSpec
from .tf_bert import build_masked_lm


def input_nhwc(image_size: int) -> tuple[int, int, int]:
    channels, height, width = archs.input_shape(image_size)
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
    out = width * archs.BOTTLENECK_EXPANSION
    y = layers.ReLU()(conv_bn(x, width, 1))
    y = layers.ReLU()(conv_bn(y, width, 3, stride))
    return residual(x, conv_bn(y, out, 1), out, stride)


def stem(inputs, image_size: int):
    width = archs.RESNET_WIDTHS[0]
    if not archs.imagenet_stem(image_size):
        return layers.ReLU()(conv_bn(inputs, width, 3))
    x = layers.ReLU()(conv_bn(inputs, width, 7, 2))
    # Zero padding before the max pool equals PyTorch's -inf padding: the inputs are >= 0 (ReLU).
    return layers.MaxPooling2D(3, strides=2)(layers.ZeroPadding2D(1)(x))


def resnet(name: str, spec: ResNetSpec, image_size: int) -> keras.Model:
    inputs = keras.Input(input_nhwc(image_size))
    x = stem(inputs, image_size)
    block = bottleneck if spec.bottleneck else basic_block
    for width, stride in spec.residual_blocks():
        x = block(x, width, stride)
    x = layers.GlobalAveragePooling2D()(x)
    return keras.Model(inputs, logits(x, archs.num_classes(image_size)), name=name)


def build_network(name: str, image_size: int = 32) -> keras.Model:
    if name in archs.TRANSFORMERS:
        return build_masked_lm(name, archs.TRANSFORMERS[name])
    if name in RESNETS:
        return resnet(name, RESNETS[name], image_size)
    shape, classes = input_nhwc(image_size), archs.num_classes(image_size)
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
    raise ValueError(f"TensorFlow has no network {name!r}")


def trainable_parameters(model: keras.Model) -> int:
    # BatchNormalization's moving mean/variance are non-trainable weights: not counted.
    return sum(math.prod(int(dim) for dim in w.shape) for w in model.trainable_weights)
