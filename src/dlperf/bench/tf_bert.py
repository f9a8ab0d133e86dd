"""The BERT encoder with its masked-LM head in Keras 3, as :mod:`.archs` describes it."""

from __future__ import annotations

import keras
from keras import layers, ops

from .archs import TransformerSpec


class Embeddings(layers.Layer):
    """Word + position + token-type (one segment: type 0) embeddings, then LayerNorm. Holds the
    word embedding the decoder shares."""

    def __init__(self, spec: TransformerSpec, **kwargs) -> None:
        super().__init__(**kwargs)
        self.spec = spec
        self.norm = layers.LayerNormalization(epsilon=spec.layer_norm_eps)

    def build(self, input_shape) -> None:
        spec = self.spec
        init = keras.initializers.TruncatedNormal(stddev=0.02)
        self.words = self.add_weight((spec.vocab, spec.hidden), init, name="words")
        self.positions = self.add_weight((spec.max_positions, spec.hidden), init, name="positions")
        self.token_types = self.add_weight((spec.type_vocab, spec.hidden), init, name="types")
        self.norm.build((*input_shape, spec.hidden))

    def call(self, tokens):
        seq_len = ops.shape(tokens)[1]
        dtype = self.compute_dtype
        x = ops.take(ops.cast(self.words, dtype), tokens, axis=0)
        x = x + ops.cast(self.positions[:seq_len], dtype) + ops.cast(self.token_types[0], dtype)
        return self.norm(x)


class TiedDecoder(layers.Layer):
    """Vocabulary logits from the word embedding's transpose plus a bias, in float32."""

    def __init__(self, embeddings: Embeddings, **kwargs) -> None:
        super().__init__(dtype="float32", **kwargs)
        self.embeddings = embeddings

    def build(self, input_shape) -> None:
        self.bias = self.add_weight((self.embeddings.spec.vocab,), "zeros", name="bias")

    def call(self, x):
        words = ops.cast(self.embeddings.words, x.dtype)
        return ops.cast(ops.matmul(x, ops.transpose(words)), "float32") + self.bias


def encoder_layer(x, spec: TransformerSpec):
    attention = layers.MultiHeadAttention(spec.heads, spec.head_dim)(x, x)
    x = layers.LayerNormalization(epsilon=spec.layer_norm_eps)(layers.Add()([x, attention]))
    y = layers.Dense(spec.intermediate, activation="gelu")(x)
    y = layers.Dense(spec.hidden)(y)
    return layers.LayerNormalization(epsilon=spec.layer_norm_eps)(layers.Add()([x, y]))


def build_masked_lm(name: str, spec: TransformerSpec) -> keras.Model:
    """Token ids (batch, seq_len) -> vocabulary logits (batch, seq_len, vocab)."""
    tokens = keras.Input((None,), dtype="int32")
    embeddings = Embeddings(spec)
    x = embeddings(tokens)
    for _ in range(spec.layers):
        x = encoder_layer(x, spec)
    x = layers.Dense(spec.hidden, activation="gelu")(x)
    x = layers.LayerNormalization(epsilon=spec.layer_norm_eps)(x)
    # The embedding layer is tracked once, by the model: the decoder only reads its weight.
    decoder = TiedDecoder(embeddings)
    return keras.Model(tokens, decoder(x), name=name)
