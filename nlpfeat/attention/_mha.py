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
from nlpfeat.attention._layers import Layer, check_input
from nlpfeat.attention._positional import apply_rope, apply_rope_backward, rope_cos_sin
from nlpfeat.attention._scores import additive_score, additive_score_backward

__all__ = ["MultiHeadAttention"]


def _divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


def _check_heads(d_model, n_heads, n_kv_heads):
    if d_model < 1 or n_heads < 1:
        raise ValueError(f"d_model and n_heads must be positive, got {d_model} and {n_heads}.")
    if d_model % n_heads:
        raise ValueError(f"n_heads={n_heads} does not divide d_model={d_model}; choose n_heads "
                         f"among {_divisors(d_model)}.")
    if n_kv_heads is not None and (n_kv_heads < 1 or n_heads % n_kv_heads):
        raise ValueError(f"n_kv_heads={n_kv_heads} does not divide n_heads={n_heads}; choose "
                         f"n_kv_heads among {_divisors(n_heads)}.")


#: How each parameter is initialised, by name (PyTorch's defaults): in-projection weights
#: xavier_uniform; in-projection and output biases zero; the output projection and the
#: grouped layout's q/k/v ``Linear`` layers as ``nn.Linear`` (weights uniform in
#: +-1/sqrt(fan_in), biases the same with the input dimension of their projection); the
#: additive score's parameters uniform in +-1/sqrt(head_dim).
_INIT = {
    "in_proj_weight": "xavier_uniform", "q_proj_weight": "xavier_uniform",
    "k_proj_weight": "xavier_uniform", "v_proj_weight": "xavier_uniform",
    "in_proj_bias": "zeros", "out_proj.bias": "zeros",
    "out_proj.weight": "linear", "q_proj.weight": "linear", "k_proj.weight": "linear",
    "v_proj.weight": "linear",
    "q_proj.bias": "linear_bias_q", "k_proj.bias": "linear_bias_k", "v_proj.bias": "linear_bias_v",
    "additive.w_q": "additive", "additive.w_k": "additive", "additive.v": "additive",
}


@dataclass
class _ForwardCache:
    """What :meth:`MultiHeadAttention.forward` keeps for :meth:`~MultiHeadAttention.backward`.

    One object per forward pass (batched shapes: B batch, H query heads, G key/value heads,
    L queries, S keys, hd head width).
    """

    inputs: tuple          # (q_in, k_in, v_in), each (B, n, dim)
    unbatched: bool        # the caller passed 2-D arrays
    fused_self_attn: bool  # one array, fused in-projection: one product for q, k and v
    q: np.ndarray          # (B, H, L, hd), after rotary embeddings
    k: np.ndarray          # (B, G, S, hd)
    v: np.ndarray          # (B, G, S, hd)
    w: np.ndarray          # (B, H, L, S) weights before dropout
    wd: np.ndarray         # (B, H, L, S) weights after dropout
    ctx: np.ndarray        # (B * L, d_model) concatenated head outputs
    keep: Any              # dropout keep mask (None without dropout)
    score_cache: Any       # the additive score's cache, or the scaled queries (B, G, rL, hd)
    sinkhorn_cache: Any = None
    rope_q: Any = None     # (cos, sin) of the queries' positions
    rope_k: Any = None


class MultiHeadAttention(Layer):
    """Multi-head attention as ``torch.nn.MultiheadAttention(batch_first=True)``, in numpy.

    Parameters
    ----------
    d_model : int
        Model (query) dimension, torch's ``embed_dim``.
    n_heads : int
        Number of query heads; must divide ``d_model``.
    n_kv_heads : int, default=None
        Number of key/value heads: ``None`` (= ``n_heads``) is standard multi-head attention,
        1 multi-query and ``1 < n_kv_heads < n_heads`` grouped-query attention (query head
        ``h`` uses key/value head ``h // (n_heads // n_kv_heads)``).
    kdim, vdim : int, default=None
        Key and value input dimensions (default ``d_model``).
    bias : bool, default=True
    causal : bool, default=False
        Always apply a causal mask.
    dropout : float, default=0.0
        Dropout on the attention weights (training mode only).
    score_func : {"scaled_dot", "additive"}, default="scaled_dot"
        ``"additive"`` scores each head by ``v^T tanh(W_q q + W_k k)`` with parameters
        ``additive.w_q``, ``additive.w_k`` (n_heads, head_dim, head_dim) and ``additive.v``.
    normalization : {"softmax", "sinkhorn"}, default="softmax"
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
        ``v_proj.weight`` (and ``.bias``) for grouped/multi-query attention.
    attn_weights : ndarray of shape (batch, n_heads, L, S)
        Per-head weights of the last forward (before attention dropout).

    Notes
    -----
    A row whose keys are all masked gets zero weights (torch returns NaN there). In torch
    ``is_causal`` is only a hint that needs ``attn_mask``; here ``is_causal=True`` without
    ``attn_mask`` builds the causal mask.

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
    """

    def __init__(self, d_model, n_heads, n_kv_heads=None, *, kdim=None, vdim=None, bias=True,
                 causal=False, dropout=0.0, score_func="scaled_dot", normalization="softmax",
                 rope=False, sinkhorn_iters=3, rope_base=10000.0, rng=None, dtype=np.float64):
        super().__init__(dtype)
        _check_heads(int(d_model), int(n_heads), n_kv_heads)
        if score_func not in ("scaled_dot", "additive"):
            raise ValueError(f"score_func must be 'scaled_dot' or 'additive', got {score_func!r}.")
        if normalization not in ("softmax", "sinkhorn"):
            raise ValueError(
                f"normalization must be 'softmax' or 'sinkhorn', got {normalization!r}.")
        if not 0.0 <= float(dropout) < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {dropout!r}.")
        self.d_model, self.n_heads = int(d_model), int(n_heads)
        self.n_kv_heads = self.n_heads if n_kv_heads is None else int(n_kv_heads)
        self.head_dim = self.d_model // self.n_heads
        if rope and self.head_dim % 2:
            raise ValueError(f"rope=True needs an even head_dim, got d_model/n_heads = "
                             f"{self.head_dim}.")
        self.kdim = self.d_model if kdim is None else int(kdim)
        self.vdim = self.d_model if vdim is None else int(vdim)
        self.bias, self.causal, self.dropout = bias, causal, float(dropout)
        self.score_func, self.normalization, self.rope = score_func, normalization, rope
        self.sinkhorn_iters, self.rope_base = int(sinkhorn_iters), float(rope_base)
        self.rng = check_rng(rng)
        self._layout = ("grouped" if self.n_kv_heads != self.n_heads else
                        "fused" if self.kdim == self.vdim == self.d_model else "separate")
        self._make_params()
        self.reset_parameters(self.rng)
        self.attn_weights = None
        self._cache = None

    def _make_params(self):
        E, kv, dt, p = self.d_model, self.n_kv_heads * self.head_dim, self.dtype, self._params
        if self._layout == "fused":
            p["in_proj_weight"] = np.empty((3 * E, E), dt)
        elif self._layout == "separate":
            p["q_proj_weight"] = np.empty((E, E), dt)
            p["k_proj_weight"] = np.empty((E, self.kdim), dt)
            p["v_proj_weight"] = np.empty((E, self.vdim), dt)
        if self._layout != "grouped" and self.bias:
            p["in_proj_bias"] = np.empty(3 * E, dt)
        if self._layout == "grouped":
            for name, shape in (("q", (E, E)), ("k", (kv, self.kdim)), ("v", (kv, self.vdim))):
                p[f"{name}_proj.weight"] = np.empty(shape, dt)
                if self.bias:
                    p[f"{name}_proj.bias"] = np.empty(shape[0], dt)
        p["out_proj.weight"] = np.empty((E, E), dt)
        if self.bias:
            p["out_proj.bias"] = np.empty(E, dt)
        if self.score_func == "additive":
            hd = self.head_dim
            p["additive.w_q"] = np.empty((self.n_heads, hd, hd), dt)
            p["additive.w_k"] = np.empty((self.n_heads, hd, hd), dt)
            p["additive.v"] = np.empty((self.n_heads, hd), dt)

    def reset_parameters(self, rng=None):
        """PyTorch's defaults: xavier_uniform in-projections (Linear default for grouped
        q/k/v_proj), zero in-projection and output biases, Linear default output weight."""
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
            else:  # "additive"
                value[...] = rng.uniform(-1.0, 1.0, value.shape) / np.sqrt(self.head_dim)

    def _weights(self):
        """(W_q, W_k, W_v, b_q, b_k, b_v) views whatever the parameter layout."""
        p, E = self._params, self.d_model
        if self._layout == "grouped":
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
        if self._layout == "grouped":
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
        """-> q (B,H,L,hd), k and v (B,G,S,hd)."""
        B, L, _ = q_in.shape
        S, H, G, hd = k_in.shape[1], self.n_heads, self.n_kv_heads, self.head_dim
        if self._fused_self_attention(q_in, k_in, v_in):
            qkv = q_in.reshape(B * L, -1) @ self._params["in_proj_weight"].T
            if self.bias:
                qkv += self._params["in_proj_bias"]
            qkv = qkv.reshape(B, L, 3, H, hd)
            return tuple(qkv[:, :, i].transpose(0, 2, 1, 3) for i in range(3))
        w_q, w_k, w_v, b_q, b_k, b_v = self._weights()
        out = []
        for x, w, b, n, h in ((q_in, w_q, b_q, L, H), (k_in, w_k, b_k, S, G),
                              (v_in, w_v, b_v, S, G)):
            y = x.reshape(B * n, -1) @ w.T
            if b is not None:
                y += b
            out.append(y.reshape(B, n, h, hd).transpose(0, 2, 1, 3))
        return out

    def _mask(self, B, L, S, key_padding_mask, attn_mask, is_causal):
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
                                 f"(batch * n_heads, L, S) = {(B * H, L, S)}; got {am.shape}.")
        if key_padding_mask is not None:
            kpm = mask_to_additive(key_padding_mask, dt)
            if kpm.shape != (B, S):
                raise ValueError(f"key_padding_mask must have shape (batch, S) = {(B, S)}; "
                                 f"got {kpm.shape}.")
            kpm = kpm[:, None, None, :]
            bias = kpm if bias is None else bias + kpm
        if self.causal or (is_causal and attn_mask is None):
            cm = mask_to_additive(causal_mask(L, S), dt)
            bias = cm if bias is None else bias + cm
        return bias

    def _scores(self, q, k):
        """-> (scores (B,H,L,S), cache): the additive score's cache or the scaled queries."""
        B, H, L, hd = q.shape
        G, S = k.shape[1], k.shape[2]
        if self.score_func == "additive":
            k_rep = np.repeat(k, H // G, axis=1) if G != H else k
            p = self._params
            return additive_score(q, k_rep, p["additive.w_q"], p["additive.w_k"],
                                  p["additive.v"])
        qs = (q * float(1.0 / np.sqrt(hd))).reshape(B, G, (H // G) * L, hd)
        return (qs @ k.swapaxes(-1, -2)).reshape(B, H, L, S), qs

    def forward(self, query, key, value, key_padding_mask=None, attn_mask=None,
                is_causal=False, need_weights=True, average_attn_weights=True):
        """Attend from ``query`` (batch, L, d_model) to ``key`` (batch, S, kdim) / ``value``
        (batch, S, vdim); unbatched 2-D inputs are accepted as in torch.

        Returns
        -------
        output : ndarray of shape (batch, L, d_model)
        weights : ndarray (batch, L, S) averaged over heads, (batch, n_heads, L, S) with
            ``average_attn_weights=False`` (after attention dropout, as torch), or None when
            ``need_weights=False``.
        """
        q_in, k_in, v_in, unbatched = self._validated_inputs(query, key, value)
        if unbatched:
            same = q_in is k_in and q_in is v_in
            q_in = q_in[None]
            k_in, v_in = (q_in, q_in) if same else (k_in[None], v_in[None])
            key_padding_mask = None if key_padding_mask is None else np.asarray(
                key_padding_mask)[None]
        B, L, _ = q_in.shape
        S, H, G = k_in.shape[1], self.n_heads, self.n_kv_heads
        q, k, v = self._projections(q_in, k_in, v_in)
        rope_q = rope_k = None
        if self.rope:
            rope_q = rope_cos_sin(L, self.head_dim, self.rope_base, self.dtype)
            rope_k = rope_cos_sin(S, self.head_dim, self.rope_base, self.dtype)
            q, k = apply_rope(q, *rope_q), apply_rope(k, *rope_k)
        scores, score_cache = self._scores(q, k)
        mask = self._mask(B, L, S, key_padding_mask, attn_mask, is_causal)
        sinkhorn_cache = None
        if self.normalization == "sinkhorn":
            w, sinkhorn_cache = sinkhorn(scores, mask, self.sinkhorn_iters)
        else:
            w = masked_softmax(scores if mask is None else scores + mask)
        p = self.dropout if self.training else 0.0
        wd, keep = attention_dropout(w, p, self.rng)
        ctx = (wd.reshape(B, G, (H // G) * L, S) @ v).reshape(B, H, L, self.head_dim)
        ctx = ctx.transpose(0, 2, 1, 3).reshape(B * L, self.d_model)
        out = ctx @ self._params["out_proj.weight"].T
        if self.bias:
            out += self._params["out_proj.bias"]
        self._cache = _ForwardCache(
            inputs=(q_in, k_in, v_in), unbatched=unbatched,
            fused_self_attn=self._fused_self_attention(q_in, k_in, v_in), q=q, k=k, v=v, w=w,
            wd=wd, ctx=ctx, keep=keep, score_cache=score_cache, sinkhorn_cache=sinkhorn_cache,
            rope_q=rope_q, rope_k=rope_k)
        self.attn_weights = w
        weights = None
        if need_weights:
            weights = wd.mean(axis=1) if average_attn_weights else wd
            weights = weights[0] if unbatched else weights
        out = out.reshape(B, L, self.d_model)
        return (out[0] if unbatched else out), weights

    # ----------------------------------------------------------------- backward
    def backward(self, d_output):
        """Gradients ``(d_query, d_key, d_value)``; fills ``grads``.

        When ``forward`` got the same array as query, key and value (self-attention),
        ``d_query`` is the total gradient with respect to that array and ``d_key`` and
        ``d_value`` are None.
        """
        cache = self._cache
        if cache is None:
            raise RuntimeError("backward() needs a forward() first.")
        q, k, v, w, wd, ctx = cache.q, cache.k, cache.v, cache.w, cache.wd, cache.ctx
        B, H, L, hd = q.shape
        G, S, r = self.n_kv_heads, k.shape[2], self.n_heads // self.n_kv_heads
        d2 = np.asarray(d_output, dtype=self.dtype).reshape(B * L, self.d_model)
        self._grads["out_proj.weight"] = d2.T @ ctx
        if self.bias:
            self._grads["out_proj.bias"] = d2.sum(axis=0)
        d_ctx = (d2 @ self._params["out_proj.weight"]).reshape(B, L, H, hd).transpose(0, 2, 1, 3)
        d_ctx = d_ctx.reshape(B, G, r * L, hd)
        wd_g = wd.reshape(B, G, r * L, S)
        d_v = wd_g.swapaxes(-1, -2) @ d_ctx  # (B, G, S, hd)
        d_w = (d_ctx @ v.swapaxes(-1, -2)).reshape(B, H, L, S)
        d_w = attention_dropout_backward(d_w, cache.keep)
        if self.normalization == "sinkhorn":
            d_s = sinkhorn_backward(d_w, cache.sinkhorn_cache)
        else:
            d_s = masked_softmax_backward(d_w, w)
        d_q, d_k = self._scores_backward(d_s, cache)
        if self.rope:
            d_q = apply_rope_backward(d_q, *cache.rope_q)
            d_k = apply_rope_backward(d_k, *cache.rope_k)
        d_in = self._projections_backward(d_q, d_k, d_v, cache)
        return tuple(None if d is None else (d[0] if cache.unbatched else d) for d in d_in)

    def _scores_backward(self, d_s, cache):
        """-> (d_q, d_k); the additive score's parameter gradients go into ``grads``."""
        B, H, L, hd = cache.q.shape
        G, S = cache.k.shape[1], cache.k.shape[2]
        if self.score_func == "additive":
            d_q, d_k, dwq, dwk, dv = additive_score_backward(d_s, cache.score_cache)
            self._grads["additive.w_q"] = dwq
            self._grads["additive.w_k"] = dwk
            self._grads["additive.v"] = dv
            return d_q, d_k.reshape(B, G, H // G, S, hd).sum(axis=2)
        d_s = d_s.reshape(B, G, (H // G) * L, S)
        d_q = (d_s @ cache.k).reshape(B, H, L, hd) * float(1.0 / np.sqrt(hd))
        return d_q, d_s.swapaxes(-1, -2) @ cache.score_cache

    def _projections_backward(self, d_q, d_k, d_v, cache):
        """-> gradients of the three inputs; the projections' gradients go into ``grads``."""
        q_in, k_in, v_in = cache.inputs
        B, L, E = q_in.shape
        S = k_in.shape[1]
        if cache.fused_self_attn:
            d_qkv = np.empty((B, L, 3, self.n_heads, self.head_dim), self.dtype)
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
