"""The network behind :class:`~nlpfeat.attention.SequenceAttentionRegressor`.

``Linear(n_token_features, d_model)`` -> positional encoding -> ``n_layers`` x
:class:`~nlpfeat.attention.layers.TransformerEncoderLayer` -> final ``LayerNorm`` (pre-norm
only, as GPT-style stacks do) -> pooling over positions (``"sequence"``: none, ``"mean"``,
``"last"``) -> ``Linear(d_model, n_outputs)``. Built from the layers of
:mod:`nlpfeat.attention.layers`; forward and backward chain theirs.
"""
import numpy as np

from nlpfeat.attention._encoder import TransformerEncoderLayer
from nlpfeat.attention._init import init_params
from nlpfeat.attention._layers import Layer, LayerNorm, Linear
from nlpfeat.attention._positional import (
    LearnedPositionalEncoding,
    SinusoidalPositionalEncoding,
)

__all__ = ["SequenceNetwork"]


class SequenceNetwork(Layer):
    """Transformer encoder regressor on (batch, L, n_token_features) inputs.

    Parameter names: ``input.*``, ``positional.weight`` (learned), ``layers.<i>.*``,
    ``norm.*`` (pre-norm), ``output.*``.
    """

    def __init__(self, n_in, n_out, seq_len, *, n_layers, d_model, n_heads, n_kv_heads,
                 dim_feedforward, dropout, activation, causal, positional, norm_first,
                 output, init, rng, dtype):
        super().__init__(dtype)
        self.output_mode, self.seq_len = output, seq_len
        children = {"input": Linear(n_in, d_model, rng=rng, dtype=dtype)}
        if positional == "sinusoidal":
            children["positional"] = SinusoidalPositionalEncoding(d_model, seq_len, dtype=dtype)
        elif positional == "learned":
            children["positional"] = LearnedPositionalEncoding(seq_len, d_model, rng=rng,
                                                               dtype=dtype)
        self.layers = [TransformerEncoderLayer(
            d_model, n_heads, dim_feedforward, dropout, activation, norm_first=norm_first,
            n_kv_heads=n_kv_heads, causal=causal, rope=positional == "rope", rng=rng,
            dtype=dtype) for _ in range(n_layers)]
        children.update({f"layers.{i}": layer for i, layer in enumerate(self.layers)})
        if norm_first:
            children["norm"] = LayerNorm(d_model, dtype=dtype)
        children["output"] = Linear(d_model, n_out, rng=rng, dtype=dtype)
        self._children = children
        self._body = [m for k, m in children.items() if k != "output"]
        if init != "default":
            init_params(self, init, rng=rng)

    def forward(self, x):
        """x: (batch, L, n_in) -> (batch, L, n_out) for ``"sequence"``, else (batch, n_out)."""
        h = x
        for module in self._body:
            h = module.forward(h)
        if self.output_mode == "mean":
            h = h.mean(axis=1)
        elif self.output_mode == "last":
            h = h[:, -1]
        return self._children["output"].forward(h)

    def backward(self, d_output):
        """Gradient with respect to x; fills ``grads``."""
        d = self._children["output"].backward(d_output)
        L = self.seq_len
        if self.output_mode == "mean":
            d = np.repeat(d[:, None, :] / L, L, axis=1)
        elif self.output_mode == "last":
            full = np.zeros((d.shape[0], L, d.shape[1]), dtype=d.dtype)
            full[:, -1] = d
            d = full
        for module in reversed(self._body):
            d = module.backward(d)
        return d

    def attention_weights(self):
        """Per-layer, per-head weights of the last forward: (n_layers, batch, H, L, L)."""
        return np.stack([layer.attn_weights for layer in self.layers])
