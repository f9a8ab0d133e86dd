"""Every benchmark network once more in plain Python, layer by layer, so its parameter count
and forward FLOPs per sample are known without a framework (the models use them as
intrinsic features; a test checks every framework's network against these numbers).

Conventions: a multiply-add is 2 FLOPs; bias, activations (ReLU, GELU), residual adds,
embedding sums and pooling cost 1 FLOP per element they touch; BatchNorm costs 2 per
element (scale and shift, statistics folded in), LayerNorm 5 (mean, variance, normalise,
scale, shift), softmax 3 (exponent, sum, divide). Parameters are the trainable ones:
BatchNorm's gamma and beta count, its running statistics do not.

Input sizes: images are ``3 x image_size x image_size``. At 32 (CIFAR) the ResNets have a
3x3 stem and 10 classes; at 224 (ImageNet) every network predicts 1000 classes and the
ResNets have the ImageNet stem (7x7/2 conv + BN + ReLU, 3x3/2 max pool), as torchvision's
resnet18/resnet50. Transformers see ``seq_len`` tokens of BERT's 30522-token vocabulary.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

IMAGE_SIZES = (32, 224)
CHANNELS = 3
RESNET_WIDTHS = (64, 128, 256, 512)  # of the four stages; the stem has the first
BOTTLENECK_EXPANSION = 4
# ImageNet-sized inputs use the ImageNet stem and classes (the networks every published table has).
IMAGENET_SIZE = 224


def num_classes(image_size: int) -> int:
    return 1000 if image_size == IMAGENET_SIZE else 10


def input_shape(image_size: int) -> tuple[int, int, int]:
    return (CHANNELS, image_size, image_size)


def imagenet_stem(image_size: int) -> bool:
    """Whether the ResNets start with the 7x7/2 conv and 3x3/2 max pool (ImageNet) or a 3x3 conv."""
    return image_size == IMAGENET_SIZE


@dataclass(frozen=True)
class ResNetSpec:
    """A ResNet: residual blocks per stage, two 3x3 convolutions each (basic) or 1x1-3x3-1x1
    with the output widened by :data:`BOTTLENECK_EXPANSION` (bottleneck)."""

    blocks: tuple[int, ...]
    bottleneck: bool

    @property
    def expansion(self) -> int:
        return BOTTLENECK_EXPANSION if self.bottleneck else 1

    def residual_blocks(self) -> Iterator[tuple[int, int]]:
        """(width, stride) of every residual block in order: the first stage keeps the
        resolution, the first block of each later one halves it."""
        for index, (count, width) in enumerate(zip(self.blocks, RESNET_WIDTHS, strict=True)):
            for i in range(count):
                yield width, 2 if index > 0 and i == 0 else 1


RESNETS = {
    "resnet18": ResNetSpec(blocks=(2, 2, 2, 2), bottleneck=False),
    "resnet50": ResNetSpec(blocks=(3, 4, 6, 3), bottleneck=True),
}


@dataclass(frozen=True)
class TransformerSpec:
    """A BERT encoder (post-LayerNorm, GELU) with the masked-language-model head whose
    decoder shares the token embedding (as BERT's). No pooler, no dropout."""

    layers: int
    hidden: int
    heads: int
    intermediate: int
    vocab: int = 30522
    max_positions: int = 512
    type_vocab: int = 2
    layer_norm_eps: float = 1e-12

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads


TRANSFORMERS = {
    "bert_base": TransformerSpec(layers=12, hidden=768, heads=12, intermediate=3072),
    # Google's BERT-Tiny (L=2, H=128): small enough for CPU tests and the default sweep.
    "bert_tiny": TransformerSpec(layers=2, hidden=128, heads=2, intermediate=512),
}
# Tokens of masked-token training: the share masked, and the id every masked token gets.
MASK_FRACTION = 0.15
MASK_TOKEN = 103


@dataclass(frozen=True)
class Layer:
    kind: str  # conv | bn | relu | maxpool | avgpool | flatten | dense | add | embed | ...
    out_shape: tuple[int, ...]
    params: int
    flops: int


def _size(shape: tuple[int, ...]) -> int:
    return math.prod(shape)


class _Tracer:
    """Follows tensor shapes through a network and records each layer's cost."""

    def __init__(self) -> None:
        self.layers: list[Layer] = []

    def _add(self, kind: str, shape: tuple[int, ...], params: int, flops: int) -> tuple[int, ...]:
        self.layers.append(Layer(kind, shape, params, flops))
        return shape

    def conv(self, x, out: int, kernel: int, stride: int = 1, bias: bool = False):
        channels, height, width = x
        pad = kernel // 2  # "same" padding for odd kernels
        shape = (
            out,
            (height + 2 * pad - kernel) // stride + 1,
            (width + 2 * pad - kernel) // stride + 1,
        )
        macs = kernel * kernel * channels * _size(shape)
        params = kernel * kernel * channels * out + (out if bias else 0)
        return self._add("conv", shape, params, 2 * macs + (_size(shape) if bias else 0))

    def bn(self, x):
        return self._add("bn", x, 2 * x[0], 2 * _size(x))

    def relu(self, x, kind: str = "relu"):
        return self._add(kind, x, 0, _size(x))

    def maxpool(self, x, size: int = 2, stride: int | None = None, pad: int = 0):
        stride = stride or size
        shape = (
            x[0],
            (x[1] + 2 * pad - size) // stride + 1,
            (x[2] + 2 * pad - size) // stride + 1,
        )
        return self._add("maxpool", shape, 0, size * size * _size(shape))

    def avgpool(self, x):
        return self._add("avgpool", (x[0],), 0, _size(x))

    def flatten(self, x):
        return self._add("flatten", (_size(x),), 0, 0)

    def dense(self, x, out: int, weights: bool = True):
        """A dense layer on the last axis (every token alike); ``weights=False``: the weight
        matrix is shared with an earlier layer (only the bias is new)."""
        *lead, inputs = x
        rows = _size(tuple(lead))
        params = (inputs * out if weights else 0) + out
        return self._add("dense", (*lead, out), params, rows * (2 * inputs * out + out))

    def add(self, x, shortcut):
        assert x == shortcut, (x, shortcut)
        return self._add("add", x, 0, _size(x))

    def embed(self, tokens: int, vocab: int, hidden: int):
        return self._add("embed", (tokens, hidden), vocab * hidden, 0)

    def layer_norm(self, x):
        return self._add("layernorm", x, 2 * x[-1], 5 * _size(x))

    def attention_core(self, x, heads: int):
        """softmax(Q K^T / sqrt(d)) V over the heads; the projections are dense layers."""
        tokens, hidden = x
        scores = heads * tokens * tokens
        # Q K^T and the product with V: 2 * T * T * H multiply-adds together; scaling + softmax.
        return self._add("attention", x, 0, 2 * 2 * tokens * tokens * hidden + 4 * scores)


def _basic_block(t: _Tracer, x, out: int, stride: int):
    y = t.relu(t.bn(t.conv(x, out, 3, stride)))
    y = t.bn(t.conv(y, out, 3))
    shortcut = t.bn(t.conv(x, out, 1, stride)) if stride != 1 or x[0] != out else x
    return t.relu(t.add(y, shortcut))


def _bottleneck(t: _Tracer, x, width: int, stride: int):
    out = width * BOTTLENECK_EXPANSION
    y = t.relu(t.bn(t.conv(x, width, 1)))
    y = t.relu(t.bn(t.conv(y, width, 3, stride)))
    y = t.bn(t.conv(y, out, 1))
    shortcut = t.bn(t.conv(x, out, 1, stride)) if stride != 1 or x[0] != out else x
    return t.relu(t.add(y, shortcut))


def _resnet(t: _Tracer, network: str, image_size: int) -> None:
    x = input_shape(image_size)
    if imagenet_stem(image_size):
        x = t.relu(t.bn(t.conv(x, RESNET_WIDTHS[0], 7, 2)))
        x = t.maxpool(x, 3, 2, 1)
    else:
        x = t.relu(t.bn(t.conv(x, RESNET_WIDTHS[0], 3)))
    spec = RESNETS[network]
    block = _bottleneck if spec.bottleneck else _basic_block
    for width, stride in spec.residual_blocks():
        x = block(t, x, width, stride)
    t.dense(t.avgpool(x), num_classes(image_size))


def _transformer(t: _Tracer, spec: TransformerSpec, seq_len: int) -> None:
    hidden = spec.hidden
    x = t.embed(seq_len, spec.vocab, hidden)
    t.embed(seq_len, spec.max_positions, hidden)
    t.embed(seq_len, spec.type_vocab, hidden)
    x = t.layer_norm(t._add("add", x, 0, 2 * _size(x)))  # token + position + type
    for _ in range(spec.layers):
        for _projection in "qkv":
            t.dense(x, hidden)
        y = t.dense(t.attention_core(x, spec.heads), hidden)
        x = t.layer_norm(t.add(x, y))
        y = t.dense(t.relu(t.dense(x, spec.intermediate), "gelu"), hidden)
        x = t.layer_norm(t.add(x, y))
    # Masked-LM head on every position: transform, then the decoder tied to the embedding.
    x = t.layer_norm(t.relu(t.dense(x, hidden), "gelu"))
    t.dense(x, spec.vocab, weights=False)


def layers(network: str, image_size: int = 32, seq_len: int = 128) -> list[Layer]:
    """The layer list of ``network`` with output shapes, parameters and forward FLOPs per
    sample (one image of ``image_size``, or one sequence of ``seq_len`` tokens)."""
    if network in TRANSFORMERS:
        t = _Tracer()
        _transformer(t, TRANSFORMERS[network], seq_len)
        return t.layers
    if image_size not in IMAGE_SIZES:
        raise ValueError(f"image_size {image_size} is not one of {IMAGE_SIZES}")
    t = _Tracer()
    x = input_shape(image_size)
    classes = num_classes(image_size)
    if network == "mlp":
        x = t.flatten(x)
        x = t.relu(t.dense(x, 512))
        x = t.relu(t.dense(x, 256))
        t.dense(x, classes)
    elif network == "lenet":
        x = t.maxpool(t.relu(t.conv(x, 32, 3, bias=True)))
        x = t.maxpool(t.relu(t.conv(x, 64, 3, bias=True)))
        x = t.relu(t.dense(t.flatten(x), 256))
        t.dense(x, classes)
    elif network in RESNETS:
        _resnet(t, network, image_size)
    else:
        known = ("mlp", "lenet", *RESNETS, *TRANSFORMERS)
        raise ValueError(f"network {network!r} is not one of {', '.join(known)}")
    return t.layers
