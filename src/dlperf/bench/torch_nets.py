"""The benchmark networks in PyTorch (torch.nn), layer for layer as described in :mod:`.spec`."""

from __future__ import annotations

from torch import nn

from . import archs
from .archs import RESNETS, ResNetSpec
from .torch_bert import MaskedLM


def conv_bn(inputs: int, out: int, kernel: int, stride: int = 1) -> list[nn.Module]:
    # No conv bias before BatchNorm: BN's beta does that job (as in every framework here).
    return [
        nn.Conv2d(inputs, out, kernel, stride, padding=kernel // 2, bias=False),
        nn.BatchNorm2d(out),
    ]


class Residual(nn.Module):
    """relu(body(x) + shortcut(x)); the shortcut is a 1x1 conv + BN when the shape changes."""

    def __init__(self, body: list[nn.Module], inputs: int, out: int, stride: int) -> None:
        super().__init__()
        self.body = nn.Sequential(*body)
        needs_projection = stride != 1 or inputs != out
        self.shortcut = (
            nn.Sequential(*conv_bn(inputs, out, 1, stride)) if needs_projection else nn.Identity()
        )
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(self.body(x) + self.shortcut(x))


def basic_block(inputs: int, width: int, stride: int) -> nn.Module:
    body = [*conv_bn(inputs, width, 3, stride), nn.ReLU(), *conv_bn(width, width, 3)]
    return Residual(body, inputs, width, stride)


def bottleneck(inputs: int, width: int, stride: int) -> nn.Module:
    out = width * archs.BOTTLENECK_EXPANSION
    body = [
        *conv_bn(inputs, width, 1),
        nn.ReLU(),
        *conv_bn(width, width, 3, stride),
        nn.ReLU(),
        *conv_bn(width, out, 1),
    ]
    return Residual(body, inputs, out, stride)


def stem(image_size: int) -> list[nn.Module]:
    width = archs.RESNET_WIDTHS[0]
    if archs.imagenet_stem(image_size):
        return [*conv_bn(3, width, 7, 2), nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
    return [*conv_bn(3, width, 3), nn.ReLU()]


def resnet(spec: ResNetSpec, image_size: int) -> nn.Module:
    layers: list[nn.Module] = stem(image_size)
    channels = archs.RESNET_WIDTHS[0]
    block = bottleneck if spec.bottleneck else basic_block
    for width, stride in spec.residual_blocks():
        layers.append(block(channels, width, stride))
        channels = width * spec.expansion
    classes = archs.num_classes(image_size)
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(channels, classes)]
    return nn.Sequential(*layers)


def build_network(name: str, image_size: int = 32) -> nn.Module:
    if name in archs.TRANSFORMERS:
        return MaskedLM(archs.TRANSFORMERS[name])
    if name in RESNETS:
        return resnet(RESNETS[name], image_size)
    channels, height, width = archs.input_shape(image_size)
    classes = archs.num_classes(image_size)
    if name == "mlp":
        return nn.Sequential(
            nn.Flatten(),
            nn.Linear(channels * height * width, 512),
            nn.ReLU(),
            nn.Linear(512, 256),
            nn.ReLU(),
            nn.Linear(256, classes),
        )
    if name == "lenet":
        return nn.Sequential(
            nn.Conv2d(channels, 32, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Linear(64 * (height // 4) * (width // 4), 256),
            nn.ReLU(),
            nn.Linear(256, classes),
        )
    raise ValueError(f"PyTorch has no network {name!r}")


def trainable_parameters(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters() if p.requires_grad)
