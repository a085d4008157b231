"""Compiled segment loops of the text features: kernel attention pooling and lowbow weights.

Documents are segments of one concatenated token axis; each segment is one pass (query,
distances, log kernel, max shift, normalisation, weighted sum), with no
``(n_tokens, d)`` or ``(n_positions, n_tokens)`` temporaries besides the results. The
numpy twins are in :mod:`nlpfeat.kernels._segments`.
"""
import math

import numpy as np
from numba import njit, prange

from nlpfeat.kernels._compiled._fastexp import fexp as fexp_subnormal
from nlpfeat.kernels._compiled._rows import (
    GAUSSIAN,
    _k_u,
    _logk_u,
    _logk_u2,
    _run,
    family_code,
)

__all__ = ["position_weights", "segment_attention"]



@njit(cache=True)
def _mean_query(V, TW, a, b, q):
    """``q`` = the ``TW``-weighted mean of the token vectors ``V[a:b]`` (a segment's query)."""
    q[:] = 0.0
    tsum = 0.0
    for t in range(a, b):
        tsum += TW[t]
        for f in range(V.shape[1]):
            q[f] += TW[t] * V[t, f]
    for f in range(V.shape[1]):
        q[f] /= tsum


@njit(cache=True)
def _segment_attention_rows(s0, s1, V, bounds, fam, linear, Q, TW, scale, h, tie_rtol,
                            pooled, W, dist, dist_only):
    """Attention pooling of segments ``s0 .. s1`` (tokens ``bounds[s] .. bounds[s + 1]``).

    As :func:`nlpfeat.kernels._segments.attention_pool`, step for step: the query (``Q`` if
    it has ``d`` entries, else the segment's ``TW``-weighted mean), the distances of the
    differences times ``scale`` (empty: none), ``u = dist / h``, the log kernel of
    ``u^2``, a max shift (a segment with no token in the support: its nearest token(s)
    within a relative ``tie_rtol``), ``exp``, the division by the sum, the weighted sum.
    ``linear`` (a compact, bounded kernel): the kernel itself instead of its log, no max
    shift (the same normalised weights, without a log and an exp per token).
    ``dist_only``: the distances only (into ``dist``).
    """
    d = V.shape[1]
    q = np.empty(d)
    fixed, scaled = Q.size == d, scale.size == d
    for s in range(s0, s1):
        a, b = bounds[s], bounds[s + 1]
        if fixed:
            q[:] = Q
        else:
            _mean_query(V, TW, a, b, q)
        top, near = -np.inf, np.inf
        for t in range(a, b):
            acc = 0.0
            for f in range(d):
                diff = V[t, f] - q[f]
                if scaled:
                    diff *= scale[f]
                acc += diff * diff
            dist[t] = math.sqrt(acc)
            if dist_only:
                continue
            u = dist[t] / h
            W[t] = _k_u(fam, u) if linear else _logk_u2(fam, u * u)
            top = max(top, W[t])
            near = min(near, dist[t])
        if dist_only:
            continue
        ready = linear and top > 0.0     # linear weights, to divide by their sum below
        if ready:
            total = 0.0
            for t in range(a, b):
                total += W[t]
        elif linear or top == -np.inf:   # no token in the support: the nearest one(s) share
            for t in range(a, b):
                W[t] = 0.0 if dist[t] <= near * (1.0 + tie_rtol) else -np.inf
            top = 0.0
        if not ready:
            total = 0.0
            for t in range(a, b):   # subnormal weights kept, as numpy's exp keeps them
                W[t] = fexp_subnormal(W[t] - top)
                total += W[t]
        out = pooled[s]
        out[:] = 0.0
        for t in range(a, b):
            W[t] /= total
            for f in range(d):
                out[f] += W[t] * V[t, f]


@njit(cache=True, parallel=True)
def _segment_attention_parallel(n_rows, n_blocks, *args):
    for b in prange(n_blocks):
        _segment_attention_rows(b * n_rows // n_blocks, (b + 1) * n_rows // n_blocks, *args)


def segment_attention(vectors, starts, kern, bandwidth, *, query=None, token_weights=None,
                      tie_rtol=0.0, distances_only=False, n_jobs=None):
    """Kernel attention pooling of concatenated token vectors, one segment per document.

    The compiled :func:`nlpfeat.kernels._segments.attention_pool` (same arguments and results;
    ``tie_rtol``: the numpy twin's ``TIE_RTOL``, the ties of the nearest-token fallback): one pass
    per document over its tokens (query, distances, log kernel, normalisation, weighted
    sum), no ``(n_tokens, d)`` temporary. ``kern`` must be a built-in kernel.
    ``distances_only``: return the distances of the tokens to their document's query
    instead (:func:`nlpfeat.kernels._segments.query_distances`; ``kern`` is then unused and
    ``bandwidth`` only rescales the dimensions when it is an array).

    Returns
    -------
    pooled : ndarray of shape (n_documents, d)
    weights : ndarray of shape (n_tokens,)
    """
    V = np.ascontiguousarray(vectors, dtype=np.float64)
    n, d = V.shape
    bounds = np.append(np.asarray(starts, dtype=np.int64), n)
    h = np.asarray(bandwidth, dtype=np.float64)
    scale = h.min() / h if h.ndim else np.zeros(0)      # per dimension: h.min() / h
    Q = np.zeros(0) if query is None else np.ascontiguousarray(query, dtype=np.float64)
    TW = np.ones(n) if token_weights is None else np.ascontiguousarray(token_weights,
                                                                       dtype=np.float64)
    pooled, W, dist = np.empty((len(bounds) - 1, d)), np.empty(n), np.empty(n)
    fam = GAUSSIAN if distances_only else family_code(kern)
    _run(_segment_attention_rows, _segment_attention_parallel, len(bounds) - 1, n_jobs, V,
         bounds, fam, not distances_only and kern.compact, Q, TW, scale, float(h.min()),
         float(tie_rtol), pooled, W, dist, distances_only)
    return dist if distances_only else (pooled, W)


@njit(cache=True)
def _position_weight_rows(s0, s1, bounds, mu, fam, linear, h, tie_rtol, W):
    """Kernel weights over token positions of segments ``s0 .. s1`` (see
    :func:`position_weights`), normalised per segment and position point; ``linear`` as
    in :func:`_segment_attention_rows`."""
    for s in range(s0, s1):
        a, b = bounds[s], bounds[s + 1]
        length = b - a
        for j in range(mu.size):
            w = W[j]
            top, near = -np.inf, np.inf
            for t in range(a, b):
                dist = abs(mu[j] - ((t - a) + 0.5) / length)
                w[t] = _k_u(fam, dist / h) if linear else _logk_u(fam, dist / h)
                top = max(top, w[t])
                near = min(near, dist)
            if linear and top > 0.0:
                total = 0.0
                for t in range(a, b):
                    total += w[t]
                for t in range(a, b):
                    w[t] /= total
                continue
            if linear or top == -np.inf:   # no token in the support: the nearest one(s) share
                for t in range(a, b):
                    dist = abs(mu[j] - ((t - a) + 0.5) / length)
                    w[t] = 0.0 if dist <= near * (1.0 + tie_rtol) else -np.inf
                top = 0.0
            total = 0.0
            for t in range(a, b):   # subnormal weights kept: the same sparse entries
                w[t] = fexp_subnormal(w[t] - top)
                total += w[t]
            for t in range(a, b):
                w[t] /= total


@njit(cache=True, parallel=True)
def _position_weight_parallel(n_rows, n_blocks, *args):
    for b in prange(n_blocks):
        _position_weight_rows(b * n_rows // n_blocks, (b + 1) * n_rows // n_blocks, *args)


def position_weights(offsets, mu, kern, bandwidth, *, tie_rtol=0.0, n_jobs=None):
    """Kernel weight of every token at every position point, normalised per document.

    The compiled :func:`nlpfeat.kernels._segments.position_weights` (same arguments and result;
    ``tie_rtol`` as in :func:`segment_attention`): token ``t`` of a document of length
    ``L`` sits at ``(t + 0.5) / L``; its log weight at ``mu_j`` is the log kernel of
    ``|mu_j - (t + 0.5) / L| / bandwidth``, normalised with a max shift per document and
    point, in one pass with no ``(n_positions, n_tokens)`` temporaries besides the result.

    Returns
    -------
    weights : ndarray of shape (n_positions, n_tokens)
    """
    bounds = np.ascontiguousarray(offsets, dtype=np.int64)
    mu = np.ascontiguousarray(mu, dtype=np.float64)
    W = np.empty((mu.size, int(bounds[-1])))
    _run(_position_weight_rows, _position_weight_parallel, len(bounds) - 1, n_jobs, bounds,
         mu, family_code(kern), kern.compact, float(bandwidth), float(tie_rtol), W)
    return W
