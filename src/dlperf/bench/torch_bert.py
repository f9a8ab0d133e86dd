"""The BERT encoder with its masked-LM head in PyTorch, as :mod:`.archs` describes it."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional

from .archs import TransformerSpec


class EncoderLayer(nn.Module):
    """Self-attention and feed-forward, each followed by residual add and LayerNorm (post-LN)."""

    def __init__(self, spec: TransformerSpec) -> None:
        super().__init__()
        hidden = spec.hidden
        self.heads = spec.heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.attention_out = nn.Linear(hidden, hidden)
        self.attention_norm = nn.LayerNorm(hidden, eps=spec.layer_norm_eps)
        self.intermediate = nn.Linear(hidden, spec.intermediate)
        self.output = nn.Linear(spec.intermediate, hidden)
        self.output_norm = nn.LayerNorm(hidden, eps=spec.layer_norm_eps)

    def _split(self, x: torch.Tensor) -> torch.Tensor:
        batch, tokens, hidden = x.shape
        return x.view(batch, tokens, self.heads, hidden // self.heads).transpose(1, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, tokens, hidden = x.shape
        context = functional.scaled_dot_product_attention(
            self._split(self.query(x)), self._split(self.key(x)), self._split(self.value(x))
        )
        context = context.transpose(1, 2).reshape(batch, tokens, hidden)
        x = self.attention_norm(x + self.attention_out(context))
        y = self.output(functional.gelu(self.intermediate(x)))
        return self.output_norm(x + y)


class MaskedLM(nn.Module):
    """Token ids (batch, seq_len) -> vocabulary logits (batch, seq_len, vocab)."""

    def __init__(self, spec: TransformerSpec) -> None:
        super().__init__()
        self.words = nn.Embedding(spec.vocab, spec.hidden)
        self.positions = nn.Embedding(spec.max_positions, spec.hidden)
        self.token_types = nn.Embedding(spec.type_vocab, spec.hidden)
        self.embedding_norm = nn.LayerNorm(spec.hidden, eps=spec.layer_norm_eps)
        self.layers = nn.ModuleList(EncoderLayer(spec) for _ in range(spec.layers))
        self.transform = nn.Linear(spec.hidden, spec.hidden)
        self.transform_norm = nn.LayerNorm(spec.hidden, eps=spec.layer_norm_eps)
        # The decoder's weight is the word embedding (tied, as BERT's); only its bias is new.
        self.decoder_bias = nn.Parameter(torch.zeros(spec.vocab))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        seq_len = tokens.shape[1]
        # One segment: every token has type 0.
        x = self.words(tokens) + self.positions.weight[:seq_len] + self.token_types.weight[0]
        x = self.embedding_norm(x)
        for layer in self.layers:
            x = layer(x)
        x = self.transform_norm(functional.gelu(self.transform(x)))
        return functional.linear(x, self.words.weight, self.decoder_bias)
