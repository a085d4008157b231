"""Compiled spreading onto and gathering from the binned grids (d <= 3).

The same Lagrange stencil as :meth:`nlpfeat.kernels._binned._Grid.stencil` (the numpy
reference): a row at node coordinate ``z`` (per axis) gets the weights of Lagrange
interpolation of order ``order`` on the nodes ``floor(z) - (order - 1) / 2 ... floor(z) +
(order + 1) / 2``; a grid holds its axes in C order. One pass over the rows, no
``(n, (order + 1)^d)`` index or weight arrays.
"""
import numpy as np
from numba import njit

#: Grid values (float64) that stay in the caches when spreading.
_CACHED = 2 ** 18


@njit(cache=True)
def _inverse_denominators(order):
    """``1 / prod_{m != a} (a - m)`` of the Lagrange basis on ``order + 1`` nodes."""
    P = order + 1
    inv = np.empty(P)
    for a in range(P):
        den = 1.0
        for m in range(P):
            if m != a:
                den *= a - m
        inv[a] = 1.0 / den
    return inv


@njit(cache=True, inline="always")
def _axis_weights(z, order, shape, margin, inv, base, W):
    """Stencil of one row: first nodes ``base[:d]`` and weights ``W[:d]`` (order + 1 a
    row; products of all factors but one, from prefix and suffix products; ``inv`` from
    :func:`_inverse_denominators`); False when the stencil leaves the grid (less
    ``margin`` nodes on each side). Inlined: a call per row cost more than its work."""
    off = (order - 1) // 2
    P = order + 1
    for j in range(z.size):
        f = np.floor(z[j])
        b = int(f) - off
        if b < margin[j] or b + order >= shape[j] - margin[j]:
            return False
        base[j] = b
        t = z[j] - f + off          # position from the stencil's first node
        acc = 1.0
        for a in range(P):
            W[j, a] = acc
            acc *= t - a
        acc = 1.0
        for a in range(P - 1, -1, -1):
            W[j, a] *= acc * inv[a]
            acc *= t - a
    return True


@njit(cache=True)
def _strides3(shape):
    """C-order strides of ``shape`` padded to 3 axes (a padded axis has stride 0)."""
    st = np.zeros(3, dtype=np.int64)
    acc = 1
    for j in range(shape.size - 1, -1, -1):
        st[j] = acc
        acc *= shape[j]
    return st


@njit(cache=True)
def _block_order(Z, shape):
    """Row indices grouped by block of 8 nodes per axis (C order of the blocks)."""
    n, d = Z.shape
    nb = np.empty(d, dtype=np.int64)
    n_blocks = 1
    for j in range(d):
        nb[j] = shape[j] // 8 + 1
        n_blocks *= nb[j]
    cell = np.empty(n, dtype=np.int64)
    start = np.zeros(n_blocks + 1, dtype=np.int64)
    for i in range(n):
        acc = 0
        for j in range(d):
            acc = acc * nb[j] + min(max(int(Z[i, j]) // 8, 0), nb[j] - 1)
        cell[i] = acc
        start[acc + 1] += 1
    for b in range(n_blocks):
        start[b + 1] += start[b]
    order = np.empty(n, dtype=np.int64)
    for i in range(n):
        order[start[cell[i]]] = i
        start[cell[i]] += 1
    return order


@njit(cache=True)
def spread(Z, A, V, order, shape, pool):
    """Grids of rows ``Z`` (n, d): the columns of ``V`` (n, cs) spread with the signed
    stencil weights, (cs, prod(shape)); those of ``A`` (n, ca) with the absolute ones,
    summed over blocks of ``pool`` nodes per axis, (ca, prod(ceil(shape / pool))). Rows
    whose stencil leaves the grid are not spread (the caller's grid holds its rows)."""
    n, d = Z.shape
    ca, cs = A.shape[1], V.shape[1]
    P = order + 1
    size, csize = 1, 1
    cshape = np.empty(d, dtype=np.int64)
    for j in range(d):
        size *= shape[j]
        cshape[j] = (shape[j] + pool - 1) // pool
        csize *= cshape[j]
    out = np.zeros((size, cs))           # interleaved: a node's columns share a line
    coarse = np.zeros((csize, ca))
    # the axes padded at the front to 3 (stride 0, one node): the innermost loop walks
    # the last axis, whose nodes are neighbours in memory
    lead = 3 - d
    st = np.zeros(3, dtype=np.int64)
    cst = np.zeros(3, dtype=np.int64)
    acc, cacc = 1, 1
    for j in range(d - 1, -1, -1):
        st[lead + j] = acc
        cst[lead + j] = cacc
        acc *= shape[j]
        cacc *= cshape[j]
    Pj = np.ones(3, dtype=np.int64)
    Pj[lead:] = P
    margin = np.zeros(d, dtype=np.int64)
    base = np.empty(d, dtype=np.int64)
    W = np.empty((d, P))
    W3 = np.ones((3, P))
    C3 = np.zeros((3, P), dtype=np.int64)   # block offsets of the stencil's nodes
    inv = _inverse_denominators(order)
    # a grid beyond the caches: rows in the order of their blocks of 8^d nodes (a
    # counting sort), so neighbouring rows touch neighbouring nodes; a small grid keeps
    # the rows' order (sorted rows would chain their updates of one node)
    rows = _block_order(Z, shape) if size * cs > _CACHED else np.arange(n)
    p2, s2 = Pj[2], st[2]
    for i in rows:
        if not _axis_weights(Z[i], order, shape, margin, inv, base, W):
            continue
        i0 = 0
        for j in range(d):
            i0 += base[j] * st[lead + j]
            for a in range(P):
                W3[lead + j, a] = W[j, a]
                if ca > 0:
                    C3[lead + j, a] = (base[j] + a) // pool * cst[lead + j]
        for a0 in range(Pj[0]):
            for a1 in range(Pj[1]):
                w01 = W3[0, a0] * W3[1, a1]
                r = i0 + a0 * st[0] + a1 * st[1]
                if ca > 0:
                    c1 = C3[0, a0] + C3[1, a1]
                    for a2 in range(Pj[2]):
                        aw = abs(w01 * W3[2, a2])
                        cidx = c1 + C3[2, a2]
                        for k in range(ca):
                            coarse[cidx, k] += aw * A[i, k]
                for k in range(cs):         # locals: no reloads through aliasing
                    x = w01 * V[i, k]
                    for a2 in range(p2):
                        out[r + a2 * s2, k] += x * W3[2, a2]
    return out.T, coarse.T


@njit(cache=True)
def _gather_rows(G, E, Z, order, shape, margin, K):
    """:func:`gather_loo`'s work (``K`` with no kernels: :func:`gather`'s). One loop,
    the stencil of a row (its weights, the last axis fastest, and their nodes) once for
    its sums, its bounds and its own contribution."""
    m, d = Z.shape
    P = order + 1
    S = np.zeros((m, G.shape[0]))
    B = np.zeros((m, E.shape[0]))
    T = np.zeros((m, K.shape[0]))
    inside = np.zeros(m, dtype=np.bool_)
    st = _strides3(shape)
    P1 = P if d > 1 else 1
    P2 = P if d > 2 else 1
    base = np.zeros(3, dtype=np.int64)     # padded axes: node 0, weight 1
    W = np.ones((3, P))
    n_st = P ** d
    wrow = np.empty(n_st)
    irow = np.empty(n_st, dtype=np.int64)
    inv = _inverse_denominators(order)
    for i in range(m):
        if not _axis_weights(Z[i], order, shape, margin, inv, base, W):
            continue
        inside[i] = True
        i0 = base[0] * st[0] + base[1] * st[1] + base[2] * st[2]
        s = 0
        for a0 in range(P):
            for a1 in range(P1):
                w01 = W[0, a0] * W[1, a1]
                r = i0 + a0 * st[0] + a1 * st[1]
                for a2 in range(P2):
                    wrow[s] = w01 * W[2, a2]
                    irow[s] = r + a2 * st[2]
                    s += 1
        for k in range(G.shape[0]):      # one accumulator per sum (no stores in the loop)
            acc = 0.0
            for a in range(n_st):
                acc += wrow[a] * G[k, irow[a]]
            S[i, k] = acc
        for k in range(E.shape[0]):
            acc = 0.0
            for a in range(n_st):
                acc += abs(wrow[a]) * E[k, irow[a]]
            B[i, k] = acc
        for k in range(K.shape[0]):      # w^T K[k] w: the row's own contribution
            acc = 0.0
            for a in range(n_st):
                row = 0.0
                for b in range(n_st):
                    row += K[k, a, b] * wrow[b]
                acc += wrow[a] * row
            T[i, k] = acc
    return S, B, T, inside


@njit(cache=True)
def gather(G, E, Z, order, shape, margin):
    """Interpolated values at rows ``Z`` (m, d): of grids ``G`` (c, size) with the signed
    stencil weights, of ``E`` (ce, size) with the absolute ones; and the mask of rows
    whose stencil lies inside the grid less ``margin`` (others get zeros)."""
    S, B, _, inside = _gather_rows(G, E, Z, order, shape, margin,
                                   np.zeros((0, 0, 0)))
    return S, B, inside


@njit(cache=True)
def gather_loo(G, E, Z, order, shape, margin, K):
    """:func:`gather` at the training rows ``Z`` plus each row's own contribution to its
    binned sums, ``T`` (m, nk): ``w^T K[k] w`` with ``K`` (nk, P^d, P^d) the kernels
    between the nodes of one stencil (the weights ``w`` computed once for both)."""
    return _gather_rows(G, E, Z, order, shape, margin, K)


@njit(cache=True)
def stencil_weights(Z, order):
    """Stencil weights (m, (order + 1)^d) of rows ``Z`` (m, d), the last axis fastest (as
    the nodes of :func:`spread` and :func:`gather`)."""
    m, d = Z.shape
    P = order + 1
    n_st = P ** d
    out = np.empty((m, n_st))
    big = np.full(d, 2 ** 62, dtype=np.int64)
    margin = np.full(d, -2 ** 61, dtype=np.int64)
    base = np.empty(d, dtype=np.int64)
    W = np.empty((d, P))
    inv = _inverse_denominators(order)
    for i in range(m):
        _axis_weights(Z[i], order, big, margin, inv, base, W)
        for s in range(n_st):
            rem, w = s, 1.0
            for j in range(d - 1, -1, -1):
                w *= W[j, rem % P]
                rem //= P
            out[i, s] = w
    return out
