"""Single-head self-attention and a wrapper that stacks heads, as a textbook builds them.

Raschka's *Build a Large Language Model (From Scratch)*, chapter 3, writes one head with
three ``nn.Linear`` projections ``W_query``, ``W_key``, ``W_value`` (``d_in -> d_out``) and
then multi-head attention as several such heads side by side, their outputs concatenated.
:class:`~nlpfeat.attention.MultiHeadAttention` splits one set of projections into heads
instead; with the same weights the two compute the same thing (the tests check it).
"""
import numpy as np

from nlpfeat.attention._functional import (
    attention_dropout,
    attention_dropout_backward,
    causal_mask,
    masked_softmax,
    masked_softmax_backward,
)
from nlpfeat.attention._init import check_rng
from nlpfeat.attention._layers import Layer, Linear, check_input

__all__ = ["MultiHeadAttentionWrapper", "SelfAttention"]


class SelfAttention(Layer):
    """One head of scaled dot-product self-attention, ``d_in -> d_out``.

    Parameters
    ----------
    d_in : int
        Input (token) dimension.
    d_out : int
        Width of the queries, keys, values and of the output; it may differ from ``d_in``.
    causal : bool, default=False
        Mask the future: token ``i`` attends to tokens ``j <= i`` only.
    dropout : float, default=0.0
        Dropout on the attention weights (training mode only).
    qkv_bias : bool, default=False
        Biases in the three projections (the book's default has none).
    rng : None, int or numpy.random.Generator, default=None
        Initialisation (``nn.Linear``'s default) and attention dropout.
    dtype : {np.float64, np.float32}, default=np.float64

    Attributes
    ----------
    params, grads : dict
        ``W_query.weight``, ``W_key.weight``, ``W_value.weight`` (d_out, d_in), and their
        ``.bias`` with ``qkv_bias``: the book's module names.
    attn_weights : ndarray of shape (..., n_tokens, n_tokens)
        The weights of the last forward (before dropout).

    See Also
    --------
    MultiHeadAttentionWrapper : several heads side by side.
    MultiHeadAttention : the same heads from one split projection.

    Notes
    -----
    ``softmax(Q K^T / sqrt(d_out)) V`` with ``Q = x W_query^T`` and so on.

    References
    ----------
    Raschka, S. (2024). Build a Large Language Model (From Scratch), chapter 3. Manning.

    Examples
    --------
    >>> from nlpfeat.attention.layers import SelfAttention
    >>> head = SelfAttention(3, 2, causal=True, rng=0)
    >>> x = np.random.default_rng(0).normal(size=(1, 4, 3))
    >>> out = head.forward(x)
    >>> out.shape, head.attn_weights[0].round(2)[1]
    ((1, 4, 2), array([0.5, 0.5, 0. , 0. ]))
    >>> head.backward(np.ones_like(out)).shape, head.grads["W_query.weight"].shape
    ((1, 4, 3), (2, 3))
    """

    def __init__(self, d_in, d_out, *, causal=False, dropout=0.0, qkv_bias=False, rng=None,
                 dtype=np.float64):
        super().__init__(dtype)
        if not 0.0 <= float(dropout) < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {dropout!r}.")
        self.d_in, self.d_out, self.causal = int(d_in), int(d_out), causal
        self.dropout, self.qkv_bias, self.rng = float(dropout), qkv_bias, check_rng(rng)
        self.W_query, self.W_key, self.W_value = (
            Linear(d_in, d_out, qkv_bias, rng=self.rng, dtype=dtype) for _ in range(3))
        self._children = {"W_query": self.W_query, "W_key": self.W_key,
                          "W_value": self.W_value}
        self.attn_weights = None
        self._cache = None

    def forward(self, x):
        """x: (batch, n_tokens, d_in) or (n_tokens, d_in) -> (..., n_tokens, d_out)."""
        x = check_input(x, "x", self.d_in, self.dtype, (2, 3), "(batch, n_tokens, d_in)")
        q, k, v = self.W_query.forward(x), self.W_key.forward(x), self.W_value.forward(x)
        scale = float(1.0 / np.sqrt(self.d_out))
        mask = causal_mask(x.shape[-2]) if self.causal else None
        w = masked_softmax((q * scale) @ k.swapaxes(-1, -2), mask)
        wd, keep = attention_dropout(w, self.dropout if self.training else 0.0, self.rng)
        self._cache = (q, k, v, w, wd, keep, scale)
        self.attn_weights = w
        return wd @ v

    def backward(self, d_output):
        """d_output: (..., n_tokens, d_out) -> d_x (..., n_tokens, d_in); fills ``grads``."""
        if self._cache is None:
            raise RuntimeError("backward() needs a forward() first.")
        q, k, v, w, wd, keep, scale = self._cache
        d = np.asarray(d_output, dtype=self.dtype)
        d_v = wd.swapaxes(-1, -2) @ d
        d_w = attention_dropout_backward(d @ v.swapaxes(-1, -2), keep)
        d_s = masked_softmax_backward(d_w, w) * scale
        d_q, d_k = d_s @ k, d_s.swapaxes(-1, -2) @ q
        return (self.W_query.backward(d_q) + self.W_key.backward(d_k)
                + self.W_value.backward(d_v))


class MultiHeadAttentionWrapper(Layer):
    """``n_heads`` :class:`SelfAttention` heads side by side, outputs concatenated.

    Parameters
    ----------
    d_in : int
    d_out : int
        Output width of each head: the result has ``n_heads * d_out`` features.
    n_heads : int
    causal, dropout, qkv_bias, rng, dtype :
        Passed to every :class:`SelfAttention` head (one generator draws them in turn).

    Attributes
    ----------
    heads : list of SelfAttention
    params, grads : dict
        ``heads.<i>.W_query.weight`` and so on: the names of the book's ``nn.ModuleList``.

    See Also
    --------
    MultiHeadAttention : the weight-split form. With ``qk_head_dim = v_head_dim = d_out``,
        ``q_proj.weight`` the heads' ``W_query.weight`` stacked (likewise keys, values and
        biases) and zero output bias, ``MultiHeadAttention`` returns this wrapper's output
        times ``out_proj.weight`` transposed.

    Examples
    --------
    >>> from nlpfeat.attention.layers import MultiHeadAttentionWrapper
    >>> mha = MultiHeadAttentionWrapper(3, 2, n_heads=2, causal=True, rng=0)
    >>> x = np.random.default_rng(0).normal(size=(1, 4, 3))
    >>> out = mha.forward(x)
    >>> out.shape, sorted(mha.params)[:2]
    ((1, 4, 4), ['heads.0.W_key.weight', 'heads.0.W_query.weight'])
    >>> mha.backward(np.ones_like(out)).shape
    (1, 4, 3)
    """

    def __init__(self, d_in, d_out, n_heads, *, causal=False, dropout=0.0, qkv_bias=False,
                 rng=None, dtype=np.float64):
        super().__init__(dtype)
        if int(n_heads) < 1:
            raise ValueError(f"n_heads must be a positive int, got {n_heads!r}.")
        rng = check_rng(rng)
        self.d_in, self.d_out, self.n_heads = int(d_in), int(d_out), int(n_heads)
        self.heads = [SelfAttention(d_in, d_out, causal=causal, dropout=dropout,
                                    qkv_bias=qkv_bias, rng=rng, dtype=dtype)
                      for _ in range(self.n_heads)]
        self._children = {f"heads.{i}": head for i, head in enumerate(self.heads)}

    def forward(self, x):
        """x: (batch, n_tokens, d_in) -> (batch, n_tokens, n_heads * d_out)."""
        return np.concatenate([head.forward(x) for head in self.heads], axis=-1)

    def backward(self, d_output):
        """Each head's slice of ``d_output``; the input gradient is their sum."""
        d = np.asarray(d_output, dtype=self.dtype)
        parts = np.split(d, self.n_heads, axis=-1)
        return sum(head.backward(part) for head, part in zip(self.heads, parts))
