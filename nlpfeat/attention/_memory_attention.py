"""Numeric core of :class:`~nlpfeat.attention.AttentionRegressor`: attention over a memory.

The queries are samples, the keys and values the memory (training inputs and standardised
targets). Per head ``h`` a score ``S_h[i, j] = a_h(x_i, m_j)`` is computed, normalised by a
masked softmax over the memory, and the head's output is the weighted mean of the memory's
targets; a linear value head mixes the heads. The multi-dimensional score gives one score
per target column instead, ``S_h[o, i, j]``, each normalised over the memory on its own:
output ``o`` of head ``h`` is then a weighted mean of column ``o`` of the targets with its
own weights. Every function here has its backward.

Shapes: queries ``Xq`` (B, d), memory ``Xm`` (M, d), targets ``Ym`` (M, o); parameters
are stacked over heads: ``W`` (H, d, d_k) for the Gaussian score; ``W_q``, ``W_k``
(H, d, d_k) and ``b_q`` (H, d_k) for the scaled dot product; ``W_q``, ``W_k`` (H, d_k, d)
(PyTorch's (out, in) layout, as :func:`~nlpfeat.attention.functional.additive_score`
takes them) and ``v`` (H, d_k) for the additive score; ``W_q``, ``W_k`` (H, o, d) for the
multi-dimensional score (one hidden unit per output); ``value_weight`` (H, o) and
``value_bias`` (o,) for the value head. The scores themselves are the functions of
:mod:`nlpfeat.attention.functional`.
"""
import numpy as np

from nlpfeat.attention._functional import (
    additive_score,
    additive_score_backward,
    gaussian_score,
    gaussian_score_backward,
    masked_softmax,
    masked_softmax_backward,
    multidim_score,
    multidim_score_backward,
    scaled_dot_score,
    scaled_dot_score_backward,
)

__all__ = ["MemoryAttention", "init_memory_params"]


def init_memory_params(score_func, n_features, n_outputs, n_heads, d_k, n_memory, rng, dtype):
    """Initial parameters (standardised inputs): a Gaussian starts at Scott's bandwidth.

    For ``"gaussian"`` the projection ``W`` is random with ``E|x W|^2 = |x|^2`` divided by
    Scott's factor ``n^(-1/(d+4))``, so the first predictions are a sensible
    Nadaraya-Watson fit; the others use PyTorch's ``Linear`` default
    ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``, biases zero.
    """
    H, d = n_heads, n_features
    params = {}
    if score_func == "gaussian":
        bandwidth = max(n_memory, 2) ** (-1.0 / (d + 4))
        params["W"] = rng.normal(size=(H, d, d_k)) / np.sqrt(d_k) / bandwidth
    elif score_func == "multidim":
        for name in ("W_q", "W_k"):
            params[name] = rng.uniform(-1, 1, size=(H, n_outputs, d)) / np.sqrt(d)
    else:
        shape = (H, d, d_k) if score_func == "scaled_dot" else (H, d_k, d)
        for name in ("W_q", "W_k"):
            params[name] = rng.uniform(-1, 1, size=shape) / np.sqrt(d)
        if score_func == "scaled_dot":
            params["b_q"] = np.zeros((H, d_k))   # a key bias would cancel in the softmax
        else:
            params["v"] = rng.uniform(-1, 1, size=(H, d_k)) / np.sqrt(d_k)
    params["value_weight"] = np.full((H, n_outputs), 1.0 / H)
    params["value_bias"] = np.zeros(n_outputs)
    return {k: v.astype(dtype) for k, v in params.items()}


def _scores(params, score_func, Xq, Xm):
    """Scores (H, B, M), (H, o, B, M) for "multidim", and the cache their backward needs."""
    if score_func == "gaussian":
        q, k = Xq @ params["W"], Xm @ params["W"]                       # (H, B|M, d_k)
        return gaussian_score(q, k), (q, k)
    if score_func == "scaled_dot":
        q = Xq @ params["W_q"] + params["b_q"][:, None, :]                # (H, B, d_k)
        k = Xm @ params["W_k"]                                            # (H, M, d_k)
        return scaled_dot_score(q, k), (q, k)
    if score_func == "multidim":
        return multidim_score(Xq, Xm, params["W_q"], params["W_k"])
    return additive_score(Xq, Xm, params["W_q"], params["W_k"], params["v"])


def _scores_backward(dS, cache, score_func, Xq, Xm):
    """Gradients of the score parameters given dS (shaped as the scores)."""
    if score_func == "multidim":
        _, _, d_w_q, d_w_k = multidim_score_backward(dS, cache)
        return {"W_q": d_w_q, "W_k": d_w_k}
    if score_func == "additive":
        _, _, d_w_q, d_w_k, d_v = additive_score_backward(dS, cache)
        return {"W_q": d_w_q, "W_k": d_w_k, "v": d_v}
    backward = gaussian_score_backward if score_func == "gaussian" else scaled_dot_score_backward
    dq, dk = backward(dS, *cache)[:2]
    if score_func == "gaussian":
        return {"W": Xq.T @ dq + Xm.T @ dk}
    return {"W_q": Xq.T @ dq, "b_q": dq.sum(1), "W_k": Xm.T @ dk}


def _pool(A, Ym):
    """Heads' outputs (H, B, o): weights (H, B, M) shared by the outputs, or (H, o, B, M)
    with one set per output (multi-dimensional)."""
    if A.ndim == 3:
        return A @ Ym
    return (A @ Ym.T[:, :, None])[..., 0].swapaxes(-1, -2)   # (H, o, B, 1) -> (H, B, o)


def _pool_backward(d_heads, A, Ym):
    """Gradient of :func:`_pool` with respect to the weights A."""
    if A.ndim == 3:
        return d_heads @ Ym.T
    return d_heads.swapaxes(-1, -2)[..., None] * Ym.T[:, None, :]   # (H, o, B, M)


class MemoryAttention:
    """Multi-head attention of queries over a memory of (input, target) pairs.

    ``step_loss(idx)`` / ``eval_loss(idx)`` follow the protocol of
    :func:`nlpfeat.attention._training.train`: ``idx`` indexes the training rows, which
    are also the memory, and each query's own memory slot is masked (leave-one-out).
    With more than ``max_memory`` training rows each step attends over a fresh random
    subset of ``max_memory`` of them.
    """

    def __init__(self, params, score_func, X, Y, memory_idx, max_memory, rng, *,
                 train_value_head=True):
        self.params, self.score_func = params, score_func
        self.X, self.Y, self.memory_idx = X, Y, memory_idx
        self.max_memory, self.rng = max_memory, rng
        self.train_value_head = train_value_head
        self.grads = {}

    def forward(self, Xq, Xm, Ym, mask=None):
        """Predictions (B, o) and the cache for :meth:`backward`."""
        S, score_cache = _scores(self.params, self.score_func, Xq, Xm)
        A = masked_softmax(S, None if mask is None else mask[None])   # (H, [o,] B, M)
        heads = _pool(A, Ym)                                           # (H, B, o)
        pred = np.einsum("hbo,ho->bo", heads, self.params["value_weight"])
        pred += self.params["value_bias"]
        return pred, (Xq, Xm, Ym, score_cache, A, heads)

    def backward(self, dpred, cache):
        """Fill ``self.grads`` from the loss gradient ``dpred`` (B, o)."""
        Xq, Xm, Ym, score_cache, A, heads = cache
        d_heads = dpred[None] * self.params["value_weight"][:, None, :]   # (H, B, o)
        dS = masked_softmax_backward(_pool_backward(d_heads, A, Ym), A)
        self.grads = _scores_backward(dS, score_cache, self.score_func, Xq, Xm)
        self.grads["value_weight"] = np.einsum("hbo,bo->ho", heads, dpred)
        self.grads["value_bias"] = dpred.sum(0)
        if not self.train_value_head:      # heads averaged with fixed weights 1/H
            self.grads["value_weight"][...] = 0.0
            self.grads["value_bias"][...] = 0.0

    def _memory_for(self, idx, training):
        mem = self.memory_idx
        if training and len(mem) > self.max_memory:
            mem = np.sort(self.rng.choice(mem, self.max_memory, replace=False))
        return mem, idx[:, None] == mem[None, :]                         # mask own slot

    def _loss(self, idx, training):
        mem, mask = self._memory_for(idx, training)
        pred, cache = self.forward(self.X[idx], self.X[mem], self.Y[mem], mask)
        diff = pred - self.Y[idx]
        return 0.5 * float(np.mean(diff * diff)), diff / diff.size, cache

    def step_loss(self, idx):
        """Loss 0.5*mean squared error on rows ``idx``; fills ``grads``."""
        loss, dpred, cache = self._loss(idx, training=True)
        self.backward(dpred, cache)
        return loss

    def eval_loss(self, idx):
        """Loss on rows ``idx`` against the whole memory (no subsampling)."""
        return self._loss(idx, training=False)[0]
