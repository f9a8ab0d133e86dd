"""The BERT encoder with its masked-LM head in MXNet Gluon (HybridBlocks), as :mod:`.archs`
describes it. MXNet 1.x has no attention layer: it is written with batched matrix products."""

from __future__ import annotations

import math

from mxnet import init
from mxnet.gluon import nn

from .archs import TransformerSpec


def dense(units: int, inputs: int) -> nn.Dense:
    # flatten=False: applied to every token of (batch, seq_len, inputs) alike.
    return nn.Dense(units, flatten=False, in_units=inputs)


class EncoderLayer(nn.HybridBlock):
    """Self-attention and feed-forward, each followed by residual add and LayerNorm (post-LN)."""

    def __init__(self, spec: TransformerSpec) -> None:
        super().__init__()
        hidden = spec.hidden
        self.heads = spec.heads
        self.scale = 1.0 / math.sqrt(spec.head_dim)
        with self.name_scope():
            self.query = dense(hidden, hidden)
            self.key = dense(hidden, hidden)
            self.value = dense(hidden, hidden)
            self.attention_out = dense(hidden, hidden)
            self.attention_norm = nn.LayerNorm(epsilon=spec.layer_norm_eps, in_channels=hidden)
            self.intermediate = dense(spec.intermediate, hidden)
            self.gelu = nn.GELU()
            self.output = dense(hidden, spec.intermediate)
            self.output_norm = nn.LayerNorm(epsilon=spec.layer_norm_eps, in_channels=hidden)

    def _split(self, F, x):
        # (batch, tokens, hidden) -> (batch * heads, tokens, head_dim)
        x = F.transpose(F.reshape(x, shape=(0, 0, self.heads, -1)), axes=(0, 2, 1, 3))
        return F.reshape(x, shape=(-3, 0, 0))

    def hybrid_forward(self, F, x):
        query = self._split(F, self.query(x))
        key = self._split(F, self.key(x))
        value = self._split(F, self.value(x))
        scores = F.batch_dot(query, key, transpose_b=True) * self.scale
        context = F.batch_dot(F.softmax(scores, axis=-1), value)
        # (batch * heads, tokens, head_dim) -> (batch, tokens, hidden)
        context = F.reshape(context, shape=(-4, -1, self.heads, 0, 0))
        context = F.reshape(F.transpose(context, axes=(0, 2, 1, 3)), shape=(0, 0, -3))
        x = self.attention_norm(x + self.attention_out(context))
        y = self.output(self.gelu(self.intermediate(x)))
        return self.output_norm(x + y)


class MaskedLM(nn.HybridBlock):
    """Token ids (batch, seq_len) -> vocabulary logits (batch, seq_len, vocab). The embeddings
    and the tied decoder share one weight, so both live in this block."""

    def __init__(self, spec: TransformerSpec, seq_len: int) -> None:
        super().__init__()
        self.spec = spec
        self.seq_len = seq_len
        weights = init.Normal(0.02)
        with self.name_scope():
            self.words = self.params.get("words", shape=(spec.vocab, spec.hidden), init=weights)
            self.positions = self.params.get(
                "positions", shape=(spec.max_positions, spec.hidden), init=weights
            )
            self.token_types = self.params.get(
                "token_types", shape=(spec.type_vocab, spec.hidden), init=weights
            )
            self.decoder_bias = self.params.get("decoder_bias", shape=(spec.vocab,), init="zeros")
            self.embedding_norm = nn.LayerNorm(epsilon=spec.layer_norm_eps, in_channels=spec.hidden)
            self.layers = nn.HybridSequential()
            for _ in range(spec.layers):
                self.layers.add(EncoderLayer(spec))
            self.transform = dense(spec.hidden, spec.hidden)
            self.gelu = nn.GELU()
            self.transform_norm = nn.LayerNorm(epsilon=spec.layer_norm_eps, in_channels=spec.hidden)

    def hybrid_forward(self, F, tokens, words, positions, token_types, decoder_bias):
        spec = self.spec
        x = F.Embedding(tokens, words, input_dim=spec.vocab, output_dim=spec.hidden)
        position = F.slice_axis(positions, axis=0, begin=0, end=self.seq_len)
        token_type = F.slice_axis(token_types, axis=0, begin=0, end=1)  # one segment: type 0
        x = F.broadcast_add(F.broadcast_add(x, F.expand_dims(position, 0)), token_type)
        x = self.layers(self.embedding_norm(x))
        x = self.transform_norm(self.gelu(self.transform(x)))
        return F.FullyConnected(x, words, decoder_bias, num_hidden=spec.vocab, flatten=False)
