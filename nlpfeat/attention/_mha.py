"""Multi-head (and grouped-/multi-query) attention with an explicit backward pass."""
from dataclasses import dataclass
from typing import Any

import numpy as np

from nlpfeat.attention._functional import (
    attention_dropout,
    attention_dropout_backward,
    causal_mask,
    mask_to_additive,
    masked_softmax,
    masked_softmax_backward,
    sinkhorn,
    sinkhorn_backward,
)
from nlpfeat.attention._init import check_rng, init_array, uniform_fan_in
from nlpfeat.attention._kv_cache import (
    KeyValueCache,
    check_past_key_value,
    extend_cache,
)
from nlpfeat.attention._layers import Layer, check_input
from nlpfeat.attention._positional import apply_rope, apply_rope_backward, rope_cos_sin
from nlpfeat.attention._scores import (
    additive_score,
    additive_score_backward,
    multidim_score,
    multidim_score_backward,
)

__all__ = ["MultiHeadAttention"]


def _divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


def _check_heads(d_model, n_heads, n_kv_heads, qk_head_dim, v_head_dim):
    """ValueError unless the head counts and widths fit; -> (qk_head_dim, v_head_dim)."""
    if d_model < 1 or n_heads < 1:
        raise ValueError(f"d_model and n_heads must be positive, got {d_model} and {n_heads}.")
    if (qk_head_dim is None or v_head_dim is None) and d_model % n_heads:
        raise ValueError(f"n_heads={n_heads} does not divide d_model={d_model}; choose n_heads "
                         f"among {_divisors(d_model)}, or give qk_head_dim and v_head_dim.")
    if n_kv_heads is not None and (n_kv_heads < 1 or n_heads % n_kv_heads):
        raise ValueError(f"n_kv_heads={n_kv_heads} does not divide n_heads={n_heads}; choose "
                         f"n_kv_heads among {_divisors(n_heads)}.")
    widths = []
    for name, width in (("qk_head_dim", qk_head_dim), ("v_head_dim", v_head_dim)):
        width = d_model // n_heads if width is None else int(width)
        if width < 1:
            raise ValueError(f"{name} must be a positive int, got {width}.")
        widths.append(width)
    return tuple(widths)


_SCORE_FUNCS = ("scaled_dot", "additive", "multidim")
_NORMALIZATIONS = ("softmax", "sinkhorn", "query_softmax")


def _check_options(score_func, normalization, dropout):
    if score_func not in _SCORE_FUNCS:
        raise ValueError(f"score_func must be one of {_SCORE_FUNCS}, got {score_func!r}.")
    if normalization not in _NORMALIZATIONS:
        raise ValueError(
            f"normalization must be one of {_NORMALIZATIONS}, got {normalization!r}.")
    if not 0.0 <= float(dropout) < 1.0:
        raise ValueError(f"dropout must be in [0, 1), got {dropout!r}.")


#: How each parameter is initialised, by name (PyTorch's defaults): in-projection weights
#: xavier_uniform; in-projection and output biases zero; the output projection and the
#: q/k/v ``Linear`` layers (grouped heads or own head widths) as ``nn.Linear`` (weights
#: uniform in +-1/sqrt(fan_in), biases the same with the input dimension of their
#: projection); the additive and multi-dimensional scores' parameters uniform in
#: +-1/sqrt(qk_head_dim).
_INIT = {
    "in_proj_weight": "xavier_uniform", "q_proj_weight": "xavier_uniform",
    "k_proj_weight": "xavier_uniform", "v_proj_weight": "xavier_uniform",
    "in_proj_bias": "zeros", "out_proj.bias": "zeros",
    "out_proj.weight": "linear", "q_proj.weight": "linear", "k_proj.weight": "linear",
    "v_proj.weight": "linear",
    "q_proj.bias": "linear_bias_q", "k_proj.bias": "linear_bias_k", "v_proj.bias": "linear_bias_v",
    "additive.w_q": "score", "additive.w_k": "score", "additive.v": "score",
    "multidim.w_q": "score", "multidim.w_k": "score",
}


@dataclass
class _ForwardCache:
    """What :meth:`MultiHeadAttention.forward` keeps for :meth:`~MultiHeadAttention.backward`.

    One object per forward pass (batched shapes: B batch, H query heads, G key/value heads,
    F features of the multi-dimensional score (= v_head_dim), L queries, S keys including
    the ``n_past`` cached ones, dq/dv query-key and value head widths).
    """

    inputs: tuple          # (q_in, k_in, v_in), each (B, n, dim)
    unbatched: bool        # the caller passed 2-D arrays
    fused_self_attn: bool  # one array, fused in-projection: one product for q, k and v
    q: np.ndarray          # (B, H, L, dq), after rotary embeddings
    k: np.ndarray          # (B, G, S, dq)
    v: np.ndarray          # (B, G, S, dv)
    w: np.ndarray          # (B, H, L, S), (B, H, F, L, S) for "multidim": before dropout
    wd: np.ndarray         # the same after dropout
    ctx: np.ndarray        # (B * L, H * dv) concatenated head outputs
    keep: Any              # dropout keep mask (None without dropout)
    score_cache: Any       # the additive/multidim score's cache, or the scaled queries
    norm_cache: Any = None  # Sinkhorn's cache
    rope_q: Any = None     # (cos, sin) of the queries' positions
    rope_k: Any = None     # (cos, sin) of the new keys' positions
    n_past: int = 0        # cached keys in front of the new ones: constants for backward


class MultiHeadAttention(Layer):
    """Multi-head attention as ``torch.nn.MultiheadAttention(batch_first=True)``, in numpy.

    Parameters
    ----------
    d_model : int
        Model (query) dimension, torch's ``embed_dim``.
    n_heads : int
        Number of query heads; must divide ``d_model`` unless both head widths are given.
    n_kv_heads : int, default=None
        Number of key/value heads: ``None`` (= ``n_heads``) is standard multi-head attention,
        1 multi-query and ``1 < n_kv_heads < n_heads`` grouped-query attention (query head
        ``h`` uses key/value head ``h // (n_heads // n_kv_heads)``).
    kdim, vdim : int, default=None
        Key and value input dimensions (default ``d_model``).
    qk_head_dim, v_head_dim : int, default=None
        Width of each head's query/key space and of its value space (default
        ``d_model // n_heads`` both, torch's layout). Matching needs few dimensions while
        the values carry the content, so the query/key space may be narrower; the output
        projection then maps ``n_heads * v_head_dim`` features back to ``d_model``.
    bias : bool, default=True
    causal : bool, default=False
        Always apply a causal mask.
    dropout : float, default=0.0
        Dropout on the attention weights (training mode only).
    score_func : {"scaled_dot", "additive", "multidim"}, default="scaled_dot"
        ``"additive"`` scores each head by ``v^T tanh(W_q q + W_k k)`` with parameters
        ``additive.w_q``, ``additive.w_k`` (n_heads, qk_head_dim, qk_head_dim) and
        ``additive.v``. ``"multidim"`` drops ``v``: ``tanh(W_q q + W_k k)`` gives one score
        per value feature (``multidim.w_q``, ``multidim.w_k`` of shape (n_heads,
        v_head_dim, qk_head_dim)), each normalised on its own, and each output feature is
        the weighted sum of that feature of the values (DiSAN's multi-dimensional
        attention; its scores lie in (-1, 1)).
    normalization : {"softmax", "sinkhorn", "query_softmax"}, default="softmax"
        ``"softmax"`` over the keys (each query's weights sum to one); ``"query_softmax"``
        over the queries (each key distributes its attention over the queries, as capsule
        routing does: columns sum to one, a key that every query masks gets zeros);
        ``"sinkhorn"`` alternates the two, ending on rows (see
        :func:`~nlpfeat.attention.functional.sinkhorn`: under a causal mask it can only
        tend to the identity, never to a doubly stochastic matrix with other weights).
    rope : bool, default=False
        Rotate each head's queries and keys by rotary position embeddings.
    sinkhorn_iters : int, default=3
    rope_base : float, default=10000.0
    rng : None, int or numpy.random.Generator, default=None
        Initialisation and attention dropout.
    dtype : {np.float64, np.float32}, default=np.float64

    Attributes
    ----------
    params, grads : dict
        PyTorch names: ``in_proj_weight``, ``in_proj_bias``, ``out_proj.weight``,
        ``out_proj.bias``; ``q_proj_weight``/``k_proj_weight``/``v_proj_weight`` when
        ``kdim``/``vdim`` differ from ``d_model``; ``q_proj.weight``, ``k_proj.weight``,
        ``v_proj.weight`` (and ``.bias``) for grouped/multi-query attention or own head
        widths.
    attn_weights : ndarray of shape (batch, n_heads, L, S)
        Per-head weights of the last forward (before attention dropout); ``"multidim"``
        adds a features axis: (batch, n_heads, v_head_dim, L, S).

    Notes
    -----
    A row whose keys are all masked gets zero weights (torch returns NaN there). In torch
    ``is_causal`` is only a hint that needs ``attn_mask``; here ``is_causal=True`` without
    ``attn_mask`` builds the causal mask.

    Incremental decoding (``use_cache=True``, ``past_key_value``) has no counterpart in
    ``torch.nn.MultiheadAttention``; the cache follows the layout of Hugging Face's
    ``past_key_values`` (see :class:`~nlpfeat.attention.layers.KeyValueCache`).

    Examples
    --------
    >>> from nlpfeat.attention.layers import MultiHeadAttention
    >>> mha = MultiHeadAttention(8, 2, rng=0)
    >>> x = np.random.default_rng(0).normal(size=(3, 5, 8))
    >>> out, w = mha.forward(x, x, x)
    >>> out.shape, w.shape, mha.attn_weights.shape
    ((3, 5, 8), (3, 5, 5), (3, 2, 5, 5))
    >>> d_x, _, _ = mha.backward(np.ones_like(out))  # self-attention: the summed gradient
    >>> d_x.shape, mha.grads["in_proj_weight"].shape
    ((3, 5, 8), (24, 8))

    Decoding token by token with the cache gives the full causal forward:

    >>> dec = MultiHeadAttention(8, 2, causal=True, rope=True, rng=0)
    >>> full, _ = dec.forward(x, x, x)
    >>> cache, steps = None, []
    >>> for t in range(5):
    ...     token = x[:, t:t + 1]
    ...     out, _, cache = dec.forward(token, token, token, past_key_value=cache,
    ...                                 use_cache=True)
    ...     steps.append(out)
    >>> bool(np.allclose(np.concatenate(steps, axis=1), full, rtol=1e-12, atol=1e-12))
    True
    """

    def __init__(self, d_model, n_heads, n_kv_heads=None, *, kdim=None, vdim=None,
                 qk_head_dim=None, v_head_dim=None, bias=True, causal=False, dropout=0.0,
                 score_func="scaled_dot", normalization="softmax", rope=False,
                 sinkhorn_iters=3, rope_base=10000.0, rng=None, dtype=np.float64):
        super().__init__(dtype)
        self.qk_head_dim, self.v_head_dim = _check_heads(
            int(d_model), int(n_heads), n_kv_heads, qk_head_dim, v_head_dim)
        _check_options(score_func, normalization, dropout)
        self.d_model, self.n_heads = int(d_model), int(n_heads)
        self.n_kv_heads = self.n_heads if n_kv_heads is None else int(n_kv_heads)
        if rope and self.qk_head_dim % 2:
            raise ValueError(f"rope=True needs an even head_dim for queries and keys, got "
                             f"qk_head_dim = {self.qk_head_dim}.")
        self.kdim = self.d_model if kdim is None else int(kdim)
        self.vdim = self.d_model if vdim is None else int(vdim)
        self.bias, self.causal, self.dropout = bias, causal, float(dropout)
        self.score_func, self.normalization, self.rope = score_func, normalization, rope
        self.sinkhorn_iters, self.rope_base = int(sinkhorn_iters), float(rope_base)
        self.rng = check_rng(rng)
        self._layout = self._choose_layout()
        self._make_params()
        self.reset_parameters(self.rng)
        self.attn_weights = None
        self._cache = None

    def _choose_layout(self):
        """torch's fused or separate in-projection where it fits, else q/k/v ``Linear``s."""
        torch_widths = self.qk_head_dim == self.v_head_dim == self.d_model // self.n_heads
        if self.n_kv_heads != self.n_heads or not torch_widths or \
                self.d_model % self.n_heads:
            return "linear"
        return "fused" if self.kdim == self.vdim == self.d_model else "separate"

    def _make_params(self):
        E, H, G, dt, p = self.d_model, self.n_heads, self.n_kv_heads, self.dtype, self._params
        dq, dv = self.qk_head_dim, self.v_head_dim
        if self._layout == "fused":
            p["in_proj_weight"] = np.empty((3 * E, E), dt)
        elif self._layout == "separate":
            p["q_proj_weight"] = np.empty((E, E), dt)
            p["k_proj_weight"] = np.empty((E, self.kdim), dt)
            p["v_proj_weight"] = np.empty((E, self.vdim), dt)
        if self._layout != "linear" and self.bias:
            p["in_proj_bias"] = np.empty(3 * E, dt)
        if self._layout == "linear":
            for name, shape in (("q", (H * dq, E)), ("k", (G * dq, self.kdim)),
                                ("v", (G * dv, self.vdim))):
                p[f"{name}_proj.weight"] = np.empty(shape, dt)
                if self.bias:
                    p[f"{name}_proj.bias"] = np.empty(shape[0], dt)
        p["out_proj.weight"] = np.empty((E, H * dv), dt)
        if self.bias:
            p["out_proj.bias"] = np.empty(E, dt)
        if self.score_func == "additive":
            p["additive.w_q"] = np.empty((H, dq, dq), dt)
            p["additive.w_k"] = np.empty((H, dq, dq), dt)
            p["additive.v"] = np.empty((H, dq), dt)
        elif self.score_func == "multidim":
            p["multidim.w_q"] = np.empty((H, dv, dq), dt)
            p["multidim.w_k"] = np.empty((H, dv, dq), dt)

    def reset_parameters(self, rng=None):
        """PyTorch's defaults: xavier_uniform in-projections (Linear default for the q/k/v
        ``Linear`` layers), zero in-projection and output biases, Linear default output
        weight."""
        rng = check_rng(rng)
        in_dim = {"q": self.d_model, "k": self.kdim, "v": self.vdim}
        for name, value in self._params.items():
            scheme = _INIT[name]
            if scheme == "xavier_uniform":
                value[...] = init_array(value.shape, "xavier_uniform", rng, dtype=self.dtype)
            elif scheme == "zeros":
                value[...] = 0.0
            elif scheme == "linear":
                value[...] = uniform_fan_in(value.shape, rng, self.dtype)
            elif scheme.startswith("linear_bias_"):
                bound = 1.0 / np.sqrt(in_dim[scheme[-1]])
                value[...] = rng.uniform(-bound, bound, value.shape)
            else:  # "score"
                value[...] = rng.uniform(-1.0, 1.0, value.shape) / np.sqrt(self.qk_head_dim)

    def _weights(self):
        """(W_q, W_k, W_v, b_q, b_k, b_v) views whatever the parameter layout."""
        p, E = self._params, self.d_model
        if self._layout == "linear":
            return tuple(p[f"{n}_proj.weight"] for n in "qkv") + tuple(
                p.get(f"{n}_proj.bias") for n in "qkv")
        if self._layout == "fused":
            w = p["in_proj_weight"]
            ws = (w[:E], w[E:2 * E], w[2 * E:])
        else:
            ws = tuple(p[f"{n}_proj_weight"] for n in "qkv")
        b = p.get("in_proj_bias")
        return ws + ((None,) * 3 if b is None else (b[:E], b[E:2 * E], b[2 * E:]))

    def _set_proj_grads(self, dws, dbs):
        g = self._grads
        if self._layout == "linear":
            for n, dw, db in zip("qkv", dws, dbs):
                g[f"{n}_proj.weight"] = dw
                if self.bias:
                    g[f"{n}_proj.bias"] = db
            return
        if self._layout == "fused":
            g["in_proj_weight"] = np.concatenate(dws)
        else:
            for n, dw in zip("qkv", dws):
                g[f"{n}_proj_weight"] = dw
        if self.bias:
            g["in_proj_bias"] = np.concatenate(dbs)

    # ------------------------------------------------------------------ forward
    def _validated_inputs(self, query, key, value):
        """-> (q, k, v, unbatched): checked arrays (the same object when one was passed)."""
        dt, unbatched = self.dtype, np.ndim(query) == 2
        nd = (2,) if unbatched else (3,)
        doc = "(seq_len, {})" if unbatched else "(batch, seq_len, {})"
        q = check_input(query, "query", self.d_model, dt, nd, doc.format("d_model"))
        if key is query and value is query and self.kdim == self.vdim == self.d_model:
            return q, q, q, unbatched
        k = check_input(key, "key", self.kdim, dt, nd, doc.format("kdim"))
        v = check_input(value, "value", self.vdim, dt, nd, doc.format("vdim"))
        if k.shape[:-1] != v.shape[:-1] or (not unbatched and k.shape[0] != q.shape[0]):
            raise ValueError(f"key {k.shape} and value {v.shape} must share batch and "
                             f"seq_len, with the batch of query {q.shape}.")
        return q, k, v, unbatched

    def _fused_self_attention(self, q_in, k_in, v_in):
        """Whether one product with the fused in-projection gives q, k and v."""
        return self._layout == "fused" and q_in is k_in and q_in is v_in

    def _projections(self, q_in, k_in, v_in):
        """-> q (B,H,L,dq), k (B,G,S,dq) and v (B,G,S,dv)."""
        B, L, _ = q_in.shape
        S, H, G = k_in.shape[1], self.n_heads, self.n_kv_heads
        if self._fused_self_attention(q_in, k_in, v_in):
            qkv = q_in.reshape(B * L, -1) @ self._params["in_proj_weight"].T
            if self.bias:
                qkv += self._params["in_proj_bias"]
            qkv = qkv.reshape(B, L, 3, H, self.qk_head_dim)
            return tuple(qkv[:, :, i].transpose(0, 2, 1, 3) for i in range(3))
        w_q, w_k, w_v, b_q, b_k, b_v = self._weights()
        out = []
        for x, w, b, n, h in ((q_in, w_q, b_q, L, H), (k_in, w_k, b_k, S, G),
                              (v_in, w_v, b_v, S, G)):
            y = x.reshape(B * n, -1) @ w.T
            if b is not None:
                y += b
            out.append(y.reshape(B, n, h, -1).transpose(0, 2, 1, 3))
        return out

    def _rotate(self, q, k, n_past):
        """Rotary embeddings at positions ``n_past, n_past + 1, ...`` -> (q, k, tables)."""
        if not self.rope:
            return q, k, None, None
        tables = [rope_cos_sin(n, self.qk_head_dim, self.rope_base, self.dtype, offset=n_past)
                  for n in (q.shape[2], k.shape[2])]
        return apply_rope(q, *tables[0]), apply_rope(k, *tables[1]), tables[0], tables[1]

    def _mask(self, B, L, S, key_padding_mask, attn_mask, is_causal, n_past=0):
        """One additive mask broadcastable to (B, H, L, S), or None."""
        dt, H, bias = self.dtype, self.n_heads, None
        if attn_mask is not None:
            am = mask_to_additive(attn_mask, dt)
            if am.shape == (L, S):
                bias = am
            elif am.shape == (B * H, L, S):
                bias = am.reshape(B, H, L, S)
            else:
                raise ValueError(f"attn_mask must have shape (L, S) = {(L, S)} or "
                                 f"(batch * n_heads, L, S) = {(B * H, L, S)}; got {am.shape}"
                                 f" (S counts the cached keys too).")
        if key_padding_mask is not None:
            kpm = mask_to_additive(key_padding_mask, dt)
            if kpm.shape != (B, S):
                raise ValueError(f"key_padding_mask must have shape (batch, S) = {(B, S)}; "
                                 f"got {kpm.shape} (S counts the cached keys too).")
            kpm = kpm[:, None, None, :]
            bias = kpm if bias is None else bias + kpm
        # key j is hidden from query i when j > i + n_past; none is when S <= n_past + 1
        # (one new token after its cache), so decoding steps skip building the mask
        if (self.causal or (is_causal and attn_mask is None)) and S > n_past + 1:
            cm = mask_to_additive(causal_mask(L, S, offset=n_past), dt)
            bias = cm if bias is None else bias + cm
        return bias

    def _scores(self, q, k):
        """-> (scores (B,H,L,S) or (B,H,F,L,S), cache): the additive or multi-dimensional
        score's cache, or the scaled queries."""
        B, H, L, dq = q.shape
        G, S = k.shape[1], k.shape[2]
        p = self._params
        if self.score_func != "scaled_dot":
            k_rep = np.repeat(k, H // G, axis=1) if G != H else k
            if self.score_func == "multidim":
                return multidim_score(q, k_rep, p["multidim.w_q"], p["multidim.w_k"])
            return additive_score(q, k_rep, p["additive.w_q"], p["additive.w_k"],
                                  p["additive.v"])
        qs = (q * float(1.0 / np.sqrt(dq))).reshape(B, G, (H // G) * L, dq)
        return (qs @ k.swapaxes(-1, -2)).reshape(B, H, L, S), qs

    def _normalize(self, scores, mask):
        """-> (weights, Sinkhorn's cache or None) over the last two axes of the scores."""
        if mask is not None and scores.ndim == 5 and mask.ndim == 4:
            mask = mask[:, :, None]  # one mask for every feature of "multidim"
        if self.normalization == "sinkhorn":
            return sinkhorn(scores, mask, self.sinkhorn_iters)
        axis = -2 if self.normalization == "query_softmax" else -1
        return masked_softmax(scores if mask is None else scores + mask, axis=axis), None

    def _pool(self, wd, v):
        """Weighted values: weights (B,H,L,S) or (B,H,F,L,S), v (B,G,S,dv) -> (B*L, H*dv)."""
        B, G, S, dv = v.shape
        H = self.n_heads
        r = H // G
        if wd.ndim == 5:  # feature f of every head: its own weights over the keys
            L = wd.shape[3]
            vt = v.swapaxes(-1, -2)[:, :, None, :, :, None]  # (B, G, 1, F, S, 1)
            ctx = (wd.reshape(B, G, r, dv, L, S) @ vt)[..., 0]  # (B, G, r, F, L)
            ctx = ctx.reshape(B, H, dv, L).transpose(0, 3, 1, 2)
        else:
            L = wd.shape[2]
            ctx = (wd.reshape(B, G, r * L, S) @ v).reshape(B, H, L, dv).transpose(0, 2, 1, 3)
        return ctx.reshape(B * L, H * dv)

    def forward(self, query, key, value, key_padding_mask=None, attn_mask=None,
                is_causal=False, need_weights=True, average_attn_weights=True,
                past_key_value=None, use_cache=False):
        """Attend from ``query`` (batch, L, d_model) to ``key`` (batch, S, kdim) / ``value``
        (batch, S, vdim); unbatched 2-D inputs are accepted as in torch.

        Parameters
        ----------
        query, key, value : ndarray
        key_padding_mask, attn_mask, is_causal, need_weights, average_attn_weights :
            As ``torch.nn.MultiheadAttention.forward``. With a cache, the masks cover the
            cached keys and the new ones (``S = past + new``).
        past_key_value : KeyValueCache or (key, value) tuple, default=None
            The cache a previous call returned (self-attention decoding): this call's keys
            and values are appended to its own, and the queries and new keys sit at
            positions ``past, past + 1, ...`` (rotary angles and the causal mask are
            offset by the cache length). Only ``normalization="softmax"`` decodes: the
            other two normalise over queries a step cannot see.
        use_cache : bool, default=False
            Also return the cache holding the past and the new keys and values.

        Returns
        -------
        output : ndarray of shape (batch, L, d_model)
        weights : ndarray (batch, L, S) averaged over heads (and features), (batch,
            n_heads, L, S) with ``average_attn_weights=False`` (after attention dropout, as
            torch; ``"multidim"``: (batch, n_heads, v_head_dim, L, S)), or None when
            ``need_weights=False``.
        cache : KeyValueCache
            Only with ``use_cache=True``.
        """
        q_in, k_in, v_in, unbatched = self._validated_inputs(query, key, value)
        if unbatched:
            same = q_in is k_in and q_in is v_in
            q_in = q_in[None]
            k_in, v_in = (q_in, q_in) if same else (k_in[None], v_in[None])
            key_padding_mask = None if key_padding_mask is None else np.asarray(
                key_padding_mask)[None]
        B, L, _ = q_in.shape
        past = self._checked_past(past_key_value, B, unbatched)
        n_past = 0 if past is None else past[0].shape[2]
        q, k, v = self._projections(q_in, k_in, v_in)
        q, k, rope_q, rope_k = self._rotate(q, k, n_past)
        store = None
        if past is not None or use_cache:
            k, v, store = extend_cache(past_key_value, past, k, v)
        mask = self._mask(B, L, k.shape[2], key_padding_mask, attn_mask, is_causal, n_past)
        out, parts = self._attend(q, k, v, mask)
        self._cache = _ForwardCache(
            inputs=(q_in, k_in, v_in), unbatched=unbatched,
            fused_self_attn=self._fused_self_attention(q_in, k_in, v_in), q=q, k=k, v=v,
            rope_q=rope_q, rope_k=rope_k, n_past=n_past, **parts)
        self.attn_weights = parts["w"]
        weights = self._returned_weights(need_weights, average_attn_weights, unbatched)
        out = out.reshape(B, L, self.d_model)
        out = out[0] if unbatched else out
        if not use_cache:
            return out, weights
        return out, weights, KeyValueCache(k[0], v[0], store) if unbatched else \
            KeyValueCache(k, v, store)

    def _checked_past(self, past_key_value, batch, unbatched):
        """The cache as batched (key, value) arrays, or None; errors say what fits."""
        past = check_past_key_value(past_key_value, batch, self.n_kv_heads,
                                    self.qk_head_dim, self.v_head_dim, self.dtype, unbatched)
        if past is not None and self.normalization != "softmax":
            raise ValueError(
                f"normalization={self.normalization!r} normalises over the queries too, and "
                f"a decoding step cannot see the later ones: past_key_value would give "
                f"other weights than the full forward. Decode with normalization='softmax'.")
        return past

    def _attend(self, q, k, v, mask):
        """Scores, normalisation, dropout, pooling and output projection -> (output
        (B*L, d_model), the intermediate arrays backward needs)."""
        scores, score_cache = self._scores(q, k)
        w, norm_cache = self._normalize(scores, mask)
        wd, keep = attention_dropout(w, self.dropout if self.training else 0.0, self.rng)
        ctx = self._pool(wd, v)
        out = ctx @ self._params["out_proj.weight"].T
        if self.bias:
            out += self._params["out_proj.bias"]
        return out, {"w": w, "wd": wd, "ctx": ctx, "keep": keep, "score_cache": score_cache,
                     "norm_cache": norm_cache}

    def _returned_weights(self, need_weights, average, unbatched):
        if not need_weights:
            return None
        wd = self._cache.wd
        weights = wd.mean(axis=tuple(range(1, wd.ndim - 2))) if average else wd
        return weights[0] if unbatched else weights

    # ----------------------------------------------------------------- backward
    def backward(self, d_output):
        """Gradients ``(d_query, d_key, d_value)``; fills ``grads``.

        When ``forward`` got the same array as query, key and value (self-attention),
        ``d_query`` is the total gradient with respect to that array and ``d_key`` and
        ``d_value`` are None. Keys and values that came from ``past_key_value`` are
        constants: only this call's inputs get gradients.
        """
        cache = self._cache
        if cache is None:
            raise RuntimeError("backward() needs a forward() first.")
        B, _, L, _ = cache.q.shape
        d2 = np.asarray(d_output, dtype=self.dtype).reshape(B * L, self.d_model)
        self._grads["out_proj.weight"] = d2.T @ cache.ctx
        if self.bias:
            self._grads["out_proj.bias"] = d2.sum(axis=0)
        d_w, d_v = self._pool_backward(d2 @ self._params["out_proj.weight"], cache.wd, cache.v)
        d_w = attention_dropout_backward(d_w, cache.keep)
        if self.normalization == "sinkhorn":
            d_s = sinkhorn_backward(d_w, cache.norm_cache)
        else:
            axis = -2 if self.normalization == "query_softmax" else -1
            d_s = masked_softmax_backward(d_w, cache.w, axis=axis)
        d_q, d_k = self._scores_backward(d_s, cache)
        d_k, d_v = d_k[:, :, cache.n_past:], d_v[:, :, cache.n_past:]
        if self.rope:
            d_q = apply_rope_backward(d_q, *cache.rope_q)
            d_k = apply_rope_backward(d_k, *cache.rope_k)
        d_in = self._projections_backward(d_q, d_k, d_v, cache)
        return tuple(None if d is None else (d[0] if cache.unbatched else d) for d in d_in)

    def _pool_backward(self, d_ctx, wd, v):
        """d_ctx (B*L, H*dv) -> (d_weights shaped as ``wd``, d_v (B,G,S,dv))."""
        B, G, S, dv = v.shape
        H = self.n_heads
        r = H // G
        L = d_ctx.shape[0] // B
        d = d_ctx.reshape(B, L, H, dv)
        if wd.ndim == 5:
            d = d.transpose(0, 2, 3, 1).reshape(B, G, r, dv, L)[..., None]  # (B,G,r,F,L,1)
            d_w = d * v.swapaxes(-1, -2)[:, :, None, :, None, :]            # (B,G,r,F,L,S)
            d_v = (wd.reshape(B, G, r, dv, L, S).swapaxes(-1, -2) @ d)[..., 0].sum(axis=2)
            return d_w.reshape(wd.shape), d_v.swapaxes(-1, -2)
        d = d.transpose(0, 2, 1, 3).reshape(B, G, r * L, dv)
        d_v = wd.reshape(B, G, r * L, S).swapaxes(-1, -2) @ d
        return (d @ v.swapaxes(-1, -2)).reshape(B, H, L, S), d_v

    def _scores_backward(self, d_s, cache):
        """-> (d_q, d_k); the additive/multidim score's parameter gradients go into
        ``grads``."""
        B, H, L, dq = cache.q.shape
        G, S = cache.k.shape[1], cache.k.shape[2]
        if self.score_func == "scaled_dot":
            d_s = d_s.reshape(B, G, (H // G) * L, S)
            d_q = (d_s @ cache.k).reshape(B, H, L, dq) * float(1.0 / np.sqrt(dq))
            return d_q, d_s.swapaxes(-1, -2) @ cache.score_cache
        if self.score_func == "multidim":
            d_q, d_k, dwq, dwk = multidim_score_backward(d_s, cache.score_cache)
            names = ("multidim.w_q", "multidim.w_k")
            grads = (dwq, dwk)
        else:
            d_q, d_k, dwq, dwk, dv = additive_score_backward(d_s, cache.score_cache)
            names = ("additive.w_q", "additive.w_k", "additive.v")
            grads = (dwq, dwk, dv)
        self._grads.update(zip(names, grads))
        return d_q, d_k.reshape(B, G, H // G, S, dq).sum(axis=2)

    def _projections_backward(self, d_q, d_k, d_v, cache):
        """-> gradients of the three inputs; the projections' gradients go into ``grads``."""
        q_in, k_in, v_in = cache.inputs
        B, L, E = q_in.shape
        S = k_in.shape[1]
        if cache.fused_self_attn:
            d_qkv = np.empty((B, L, 3, self.n_heads, self.qk_head_dim), self.dtype)
            for i, d in enumerate((d_q, d_k, d_v)):
                d_qkv[:, :, i] = d.transpose(0, 2, 1, 3)
            d_qkv = d_qkv.reshape(B * L, 3 * E)
            self._grads["in_proj_weight"] = d_qkv.T @ q_in.reshape(B * L, E)
            if self.bias:
                self._grads["in_proj_bias"] = d_qkv.sum(axis=0)
            return (d_qkv @ self._params["in_proj_weight"]).reshape(B, L, E), None, None
        w_q, w_k, w_v = self._weights()[:3]
        dws, dbs, d_in = [], [], []
        for d, x, w, n in ((d_q, q_in, w_q, L), (d_k, k_in, w_k, S), (d_v, v_in, w_v, S)):
            d2 = d.transpose(0, 2, 1, 3).reshape(B * n, -1)
            dws.append(d2.T @ x.reshape(B * n, -1))
            dbs.append(d2.sum(axis=0))
            d_in.append((d2 @ w).reshape(B, n, -1))
        self._set_proj_grads(dws, dbs)
        if q_in is k_in and q_in is v_in:  # one array attended to itself: its total gradient
            return d_in[0] + d_in[1] + d_in[2], None, None
        return tuple(d_in)
