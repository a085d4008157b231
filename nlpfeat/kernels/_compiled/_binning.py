"""Compiled spreading onto and gathering from the binned grids (d <= 3).

The same Lagrange stencil as :meth:`nlpfeat.kernels._binned._Grid.stencil` (the numpy
reference): a row at node coordinate ``z`` (per axis) gets the weights of Lagrange
interpolation of order ``order`` on the nodes ``floor(z) - (order - 1) / 2 ... floor(z) +
(order + 1) / 2``; a grid holds its axes in C order. One pass over the rows, no
``(n, (order + 1)^d)`` index or weight arrays.
"""
import numpy as np
from numba import njit


@njit(cache=True)
def _axis_weights(z, order, shape, margin, base, W):
    """Stencil of one row: first nodes ``base`` (d,) and weights ``W`` (d, order + 1);
    False when the stencil leaves the grid (less ``margin`` nodes on each side)."""
    off = (order - 1) // 2
    P = order + 1
    for j in range(z.size):
        f = np.floor(z[j])
        b = int(f) - off
        if b < margin[j] or b + order >= shape[j] - margin[j]:
            return False
        base[j] = b
        t = z[j] - f
        for a in range(P):
            num, den = 1.0, 1.0
            for m in range(P):
                if m != a:
                    num *= t - (m - off)
                    den *= a - m
            W[j, a] = num / den
    return True


@njit(cache=True)
def _strides(shape):
    d = shape.size
    st = np.ones(d, dtype=np.int64)
    for j in range(d - 2, -1, -1):
        st[j] = st[j + 1] * shape[j + 1]
    return st


@njit(cache=True)
def spread(Z, A, V, order, shape):
    """Grids (ca + cs, prod(shape)): the columns of ``A`` (n, ca) spread with the
    absolute stencil weights, then those of ``V`` (n, cs) with the signed ones. Rows
    whose stencil leaves the grid are not spread (the caller's grid holds its rows)."""
    n, d = Z.shape
    ca, cs = A.shape[1], V.shape[1]
    P = order + 1
    size = 1
    for j in range(d):
        size *= shape[j]
    out = np.zeros((ca + cs, size))
    st = _strides(shape)
    margin = np.zeros(d, dtype=np.int64)
    base = np.empty(d, dtype=np.int64)
    W = np.empty((d, P))
    n_st = P ** d
    for i in range(n):
        if not _axis_weights(Z[i], order, shape, margin, base, W):
            continue
        for c in range(n_st):
            rem, idx, w = c, 0, 1.0
            for j in range(d - 1, -1, -1):
                a = rem % P
                rem //= P
                idx += (base[j] + a) * st[j]
                w *= W[j, a]
            aw = abs(w)
            for k in range(ca):
                out[k, idx] += aw * A[i, k]
            for k in range(cs):
                out[ca + k, idx] += w * V[i, k]
    return out


@njit(cache=True)
def gather(G, E, Z, order, shape, margin):
    """Interpolated values at rows ``Z`` (m, d): of grids ``G`` (c, size) with the signed
    stencil weights, of ``E`` (ce, size) with the absolute ones; and the mask of rows
    whose stencil lies inside the grid less ``margin`` (others get zeros)."""
    m, d = Z.shape
    c, ce = G.shape[0], E.shape[0]
    P = order + 1
    S = np.zeros((m, c))
    B = np.zeros((m, ce))
    inside = np.zeros(m, dtype=np.bool_)
    st = _strides(shape)
    base = np.empty(d, dtype=np.int64)
    W = np.empty((d, P))
    n_st = P ** d
    for i in range(m):
        if not _axis_weights(Z[i], order, shape, margin, base, W):
            continue
        inside[i] = True
        for s in range(n_st):
            rem, idx, w = s, 0, 1.0
            for j in range(d - 1, -1, -1):
                a = rem % P
                rem //= P
                idx += (base[j] + a) * st[j]
                w *= W[j, a]
            aw = abs(w)
            for k in range(c):
                S[i, k] += w * G[k, idx]
            for k in range(ce):
                B[i, k] += aw * E[k, idx]
    return S, B, inside
