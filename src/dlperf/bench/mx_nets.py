"""The benchmark networks in MXNet Gluon (HybridBlocks), layer for layer as in :mod:`.spec`.

The convolutional networks take a ``layout``: NCHW (MXNet's own, the only one its CPU kernels
run) or NHWC (cuDNN's tensor-core layout: the reference's on a GPU).
"""

from __future__ import annotations

from mxnet.gluon import nn

from . import archs
from .archs import RESNETS, ResNetSpec
from .mx_bert import MaskedLM


def channel_axis(layout: str) -> int:
    return layout.index("C")


def conv_bn(
    seq: nn.HybridSequential, inputs: int, out: int, kernel: int, stride: int = 1, layout="NCHW"
) -> None:
    seq.add(
        nn.Conv2D(
            out,
            kernel,
            strides=stride,
            padding=kernel // 2,
            use_bias=False,
            in_channels=inputs,
            layout=layout,
        ),
        nn.BatchNorm(in_channels=out, axis=channel_axis(layout)),
    )


class Residual(nn.HybridBlock):
    """relu(body(x) + shortcut(x)); the shortcut is a 1x1 conv + BN when the shape changes."""

    def __init__(
        self, body: nn.HybridSequential, inputs: int, out: int, stride: int, layout: str
    ) -> None:
        super().__init__()
        with self.name_scope():
            self.body = body
            self.shortcut = None
            if stride != 1 or inputs != out:
                self.shortcut = nn.HybridSequential()
                conv_bn(self.shortcut, inputs, out, 1, stride, layout)

    def hybrid_forward(self, F, x):
        shortcut = x if self.shortcut is None else self.shortcut(x)
        return F.relu(self.body(x) + shortcut)


def basic_block(inputs: int, width: int, stride: int, layout: str) -> nn.HybridBlock:
    body = nn.HybridSequential()
    conv_bn(body, inputs, width, 3, stride, layout)
    body.add(nn.Activation("relu"))
    conv_bn(body, width, width, 3, layout=layout)
    return Residual(body, inputs, width, stride, layout)


def bottleneck(inputs: int, width: int, stride: int, layout: str) -> nn.HybridBlock:
    out = width * archs.BOTTLENECK_EXPANSION
    body = nn.HybridSequential()
    conv_bn(body, inputs, width, 1, layout=layout)
    body.add(nn.Activation("relu"))
    conv_bn(body, width, width, 3, stride, layout)
    body.add(nn.Activation("relu"))
    conv_bn(body, width, out, 1, layout=layout)
    return Residual(body, inputs, out, stride, layout)


def resnet(spec: ResNetSpec, image_size: int, layout: str = "NCHW") -> nn.HybridSequential:
    net = nn.HybridSequential()
    channels = archs.RESNET_WIDTHS[0]
    if archs.imagenet_stem(image_size):
        conv_bn(net, 3, channels, 7, 2, layout)
        net.add(nn.Activation("relu"), nn.MaxPool2D(3, 2, 1, layout=layout))
    else:
        conv_bn(net, 3, channels, 3, layout=layout)
        net.add(nn.Activation("relu"))
    block = bottleneck if spec.bottleneck else basic_block
    for width, stride in spec.residual_blocks():
        net.add(block(channels, width, stride, layout))
        channels = width * spec.expansion
    classes = archs.num_classes(image_size)
    net.add(nn.GlobalAvgPool2D(layout=layout), nn.Flatten(), nn.Dense(classes, in_units=channels))
    return net


def build_network(
    name: str, image_size: int = 32, seq_len: int = 128, layout: str = "NCHW"
) -> nn.HybridBlock:
    if name in archs.TRANSFORMERS:
        return MaskedLM(archs.TRANSFORMERS[name], seq_len)
    if name in RESNETS:
        return resnet(RESNETS[name], image_size, layout)
    channels, height, width = archs.input_shape(image_size)
    classes = archs.num_classes(image_size)
    if name == "mlp":
        net = nn.HybridSequential()
        net.add(
            nn.Flatten(),
            nn.Dense(512, activation="relu", in_units=channels * height * width),
            nn.Dense(256, activation="relu", in_units=512),
            nn.Dense(classes, in_units=256),
        )
        return net
    if name == "lenet":
        net = nn.HybridSequential()
        net.add(
            nn.Conv2D(32, 3, padding=1, activation="relu", in_channels=channels, layout=layout),
            nn.MaxPool2D(2, layout=layout),
            nn.Conv2D(64, 3, padding=1, activation="relu", in_channels=32, layout=layout),
            nn.MaxPool2D(2, layout=layout),
            nn.Flatten(),
            nn.Dense(256, activation="relu", in_units=64 * (height // 4) * (width // 4)),
            nn.Dense(classes, in_units=256),
        )
        return net
    raise ValueError(f"MXNet has no network {name!r}")


def trainable_parameters(net: nn.Block) -> int:
    # BatchNorm's running mean/var have grad_req 'null': not trainable, not counted.
    total = 0
    for param in net.collect_params().values():
        if param.grad_req != "null":
            size = 1
            for dim in param.shape:
                size *= dim
            total += size
    return total
