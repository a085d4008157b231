"""Transformer encoder layer (post-norm and pre-norm) with an explicit backward pass."""
import numpy as np

from nlpfeat.attention._init import check_rng
from nlpfeat.attention._layers import GELU, Dropout, Layer, LayerNorm, Linear, ReLU, check_input
from nlpfeat.attention._mha import MultiHeadAttention

__all__ = ["TransformerEncoderLayer"]


def _activation(activation):
    if isinstance(activation, Layer):
        return activation
    if activation == "relu":
        return ReLU()
    if activation == "gelu":
        return GELU()
    raise ValueError(f"activation must be 'relu', 'gelu' or a Layer, got {activation!r}.")


class TransformerEncoderLayer(Layer):
    """Self-attention + feed-forward block, as ``torch.nn.TransformerEncoderLayer``.

    Batch first (torch's ``batch_first=True``); the parameters carry torch's names.

    Parameters
    ----------
    d_model : int
    n_heads : int
    dim_feedforward : int, default=2048
    dropout : float, default=0.1
        On the attention weights, after the activation, and on both residual branches.
    activation : {"relu", "gelu"} or Layer, default="relu"
    norm_first : bool, default=False
        False: post-norm ``x = norm1(x + sa(x)); x = norm2(x + ff(x))`` (the original
        transformer); True: pre-norm ``x = x + sa(norm1(x)); x = x + ff(norm2(x))``.
    layer_norm_eps : float, default=1e-5
    bias : bool, default=True
    n_kv_heads, qk_head_dim, v_head_dim, causal, score_func, normalization, rope :
        Passed to :class:`MultiHeadAttention`.
    rng : None, int or numpy.random.Generator, default=None
        Initialisation and every dropout.
    dtype : {np.float64, np.float32}, default=np.float64

    Attributes
    ----------
    params, grads : dict
        ``self_attn.*``, ``linear1.*``, ``linear2.*``, ``norm1.*``, ``norm2.*`` (torch names).
    attn_weights : ndarray of shape (batch, n_heads, L, L)
        The self-attention weights of the last forward pass.

    Examples
    --------
    >>> from nlpfeat.attention.layers import TransformerEncoderLayer
    >>> layer = TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, rng=0)
    >>> x = np.random.default_rng(0).normal(size=(2, 5, 8))
    >>> y = layer.forward(x)
    >>> y.shape, layer.backward(np.ones_like(y)).shape, layer.attn_weights.shape
    ((2, 5, 8), (2, 5, 8), (2, 2, 5, 5))
    """

    def __init__(self, d_model, n_heads, dim_feedforward=2048, dropout=0.1, activation="relu",
                 *, norm_first=False, layer_norm_eps=1e-5, bias=True, n_kv_heads=None,
                 qk_head_dim=None, v_head_dim=None, causal=False, score_func="scaled_dot",
                 normalization="softmax", rope=False, rng=None, dtype=np.float64):
        super().__init__(dtype)
        rng = check_rng(rng)
        self.d_model, self.n_heads, self.norm_first = int(d_model), int(n_heads), norm_first
        self.self_attn = MultiHeadAttention(
            d_model, n_heads, n_kv_heads, qk_head_dim=qk_head_dim, v_head_dim=v_head_dim,
            bias=bias, causal=causal, dropout=dropout, score_func=score_func,
            normalization=normalization, rope=rope, rng=rng, dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias, rng=rng, dtype=dtype)
        self.linear2 = Linear(dim_feedforward, d_model, bias, rng=rng, dtype=dtype)
        self.norm1 = LayerNorm(d_model, layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, layer_norm_eps, bias=bias, dtype=dtype)
        self.activation = _activation(activation)
        self.dropout, self.dropout1, self.dropout2 = (Dropout(dropout, rng=rng) for _ in range(3))
        self._children = {name: getattr(self, name) for name in (
            "self_attn", "linear1", "linear2", "norm1", "norm2", "activation",
            "dropout", "dropout1", "dropout2")}

    @property
    def attn_weights(self):
        return self.self_attn.attn_weights

    def _sa(self, x, src_mask, src_key_padding_mask, is_causal, past_key_value, use_cache):
        out = self.self_attn.forward(x, x, x, key_padding_mask=src_key_padding_mask,
                                     attn_mask=src_mask, is_causal=is_causal,
                                     need_weights=False, past_key_value=past_key_value,
                                     use_cache=use_cache)
        return self.dropout1.forward(out[0]), (out[2] if use_cache else None)

    def _sa_backward(self, d):
        d_x, d_k, d_v = self.self_attn.backward(self.dropout1.backward(d))
        return d_x if d_k is None else d_x + d_k + d_v

    def _ff(self, x):
        h = self.dropout.forward(self.activation.forward(self.linear1.forward(x)))
        return self.dropout2.forward(self.linear2.forward(h))

    def _ff_backward(self, d):
        d = self.linear2.backward(self.dropout2.backward(d))
        return self.linear1.backward(self.activation.backward(self.dropout.backward(d)))

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False,
                past_key_value=None, use_cache=False):
        """src: (batch, L, d_model) -> (batch, L, d_model); masks as torch's ``forward``.

        ``past_key_value`` and ``use_cache`` decode incrementally, as in
        :meth:`MultiHeadAttention.forward`: with ``use_cache=True`` the result is
        ``(output, cache)``, the self-attention's
        :class:`~nlpfeat.attention.layers.KeyValueCache`. Each position
        of the feed-forward block and the norms is computed on its own, so decoding token
        by token with a causal layer equals the full forward.
        """
        x = check_input(src, "src", self.d_model, self.dtype, (3,), "(batch, seq_len, d_model)")
        sa = (src_mask, src_key_padding_mask, is_causal, past_key_value, use_cache)
        if self.norm_first:
            h, cache = self._sa(self.norm1.forward(x), *sa)
            x = x + h
            out = x + self._ff(self.norm2.forward(x))
        else:
            h, cache = self._sa(x, *sa)
            x = self.norm1.forward(x + h)
            out = self.norm2.forward(x + self._ff(x))
        return (out, cache) if use_cache else out

    def backward(self, d_output):
        """d_output: (batch, L, d_model) -> d_src; fills ``grads``."""
        d = np.asarray(d_output, dtype=self.dtype)
        if self.norm_first:
            d = d + self.norm2.backward(self._ff_backward(d))
            return d + self.norm1.backward(self._sa_backward(d))
        d = self.norm2.backward(d)
        d = self.norm1.backward(d + self._ff_backward(d))
        return d + self._sa_backward(d)
