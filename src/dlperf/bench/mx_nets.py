"""The benchmark networks in MXNet Gluon (HybridBlocks), layer for layer as in :mod:`.spec`."""

from __future__ import annotations

from mxnet.gluon import nn

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
from .mx_bert import MaskedLM


def conv_bn(seq: nn.HybridSequential, inputs: int, out: int, kernel: int, stride: int = 1) -> None:
    seq.add(
        nn.Conv2D(
            out, kernel, strides=stride, padding=kernel // 2, use_bias=False, in_channels=inputs
        ),
        nn.BatchNorm(in_channels=out),
    )


class Residual(nn.HybridBlock):
    """relu(body(x) + shortcut(x)); the shortcut is a 1x1 conv + BN when the shape changes."""

    def __init__(self, body: nn.HybridSequential, inputs: int, out: int, stride: int) -> None:
        super().__init__()
        with self.name_scope():
            self.body = body
            self.shortcut = None
            if stride != 1 or inputs != out:
                self.shortcut = nn.HybridSequential()
                conv_bn(self.shortcut, inputs, out, 1, stride)

    def hybrid_forward(self, F, x):
        shortcut = x if self.shortcut is None else self.shortcut(x)
        return F.relu(self.body(x) + shortcut)


def basic_block(inputs: int, width: int, stride: int) -> nn.HybridBlock:
    body = nn.HybridSequential()
    conv_bn(body, inputs, width, 3, stride)
    body.add(nn.Activation("relu"))
    conv_bn(body, width, width, 3)
    return Residual(body, inputs, width, stride)


def bottleneck(inputs: int, width: int, stride: int) -> nn.HybridBlock:
    out = width * BOTTLENECK_EXPANSION
    body = nn.HybridSequential()
    conv_bn(body, inputs, width, 1)
    body.add(nn.Activation("relu"))
    conv_bn(body, width, width, 3, stride)
    body.add(nn.Activation("relu"))
    conv_bn(body, width, out, 1)
    return Residual(body, inputs, out, stride)


def resnet(blocks: tuple[int, ...], block, expansion: int, image_size: int) -> nn.HybridSequential:
    net = nn.HybridSequential()
    if imagenet_stem(image_size):
        conv_bn(net, 3, RESNET_WIDTHS[0], 7, 2)
        net.add(nn.Activation("relu"), nn.MaxPool2D(3, 2, 1))
    else:
        conv_bn(net, 3, RESNET_WIDTHS[0], 3)
        net.add(nn.Activation("relu"))
    channels = RESNET_WIDTHS[0]
    for index, (count, width) in enumerate(zip(blocks, RESNET_WIDTHS, strict=True)):
        for i in range(count):
            net.add(block(channels, width, stage_strides(index) if i == 0 else 1))
            channels = width * expansion
    net.add(
        nn.GlobalAvgPool2D(), nn.Flatten(), nn.Dense(num_classes(image_size), in_units=channels)
    )
    return net


def build_network(name: str, image_size: int = 32, seq_len: int = 128) -> nn.HybridBlock:
    if name in TRANSFORMERS:
        return MaskedLM(TRANSFORMERS[name], seq_len)
    channels, height, width = input_shape(image_size)
    classes = num_classes(image_size)
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
            nn.Conv2D(32, 3, padding=1, activation="relu", in_channels=channels),
            nn.MaxPool2D(2),
            nn.Conv2D(64, 3, padding=1, activation="relu", in_channels=32),
            nn.MaxPool2D(2),
            nn.Flatten(),
            nn.Dense(256, activation="relu", in_units=64 * (height // 4) * (width // 4)),
            nn.Dense(classes, in_units=256),
        )
        return net
    if name == "resnet18":
        return resnet(RESNET18_BLOCKS, basic_block, 1, image_size)
    if name == "resnet50":
        return resnet(RESNET50_BLOCKS, bottleneck, BOTTLENECK_EXPANSION, image_size)
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
