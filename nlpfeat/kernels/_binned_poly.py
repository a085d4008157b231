"""Exact binned sums for the polynomial kernels: epanechnikov, biweight, triweight.

These kernels are ``(1 - |u|^2)^p`` on their support (up to a constant that cancels), a
polynomial in the query's and the training row's coordinates. The rows are sorted into
strips of the first d - 1 axes and, within a strip, along the last axis, with running
moments (the rows' columns times the monomials of their position, up to degree ``2p``,
``2p + 2`` for local linear fits) per segment of a strip
(:mod:`nlpfeat.kernels._compiled._polysums`). A query sums the rows of a strip that lie
wholly inside its support through two running moments per segment, the few rows near
the support's boundary one by one: no interpolation, so the sums equal the exact
path's up to rounding, and each query's rounding is bounded and certified as the
interpolated sums of :mod:`nlpfeat.kernels._binned` are (a query the bound cannot
certify, such as one with no row in its support, goes to the exact path). The tophat
(discontinuous at the support's edge, where a row's side depends on the last bit of
its distance), tricube, triangular and cosine kernels are not polynomials of
``|u|^2``: they keep the interpolated grid.
"""
import functools

import numpy as np

__all__ = ["PolySums", "poly_power"]

#: Polynomial kernels by family: the power ``p`` of ``(1 - u^2)``.
_POWER = {"epanechnikov": 1, "biweight": 2, "triweight": 3}
#: Strips per bandwidth (radius of the support) in each of the first d - 1 axes.
STRIPS_PER_BANDWIDTH = 8
#: Length (in bandwidths) of the segments of a strip with their own moments' frame.
SEGMENT = 2.0
#: Most strips of a grid (wider strips beyond: exact still, more rows one by one).
MAX_STRIPS = 2 ** 22
#: Most bytes of the running moments (a larger problem keeps the interpolated grid).
MAX_BYTES = 2 ** 29


def poly_power(kern):
    """The power ``p`` of a polynomial kernel of the registry, or None."""
    return _POWER.get(kern.family)


def _mul(a, b):
    out = {}
    for ea, ca in a.items():
        for eb, cb in b.items():
            e = tuple(x + y for x, y in zip(ea, eb))
            out[e] = out.get(e, 0.0) + ca * cb
    return {e: c for e, c in out.items() if c != 0.0}


def kernel_moments(d, reg_type):
    """Exponents (nk, d) of ``t = x - q`` multiplying the kernel in each sum: ``K``, and
    for "ll" ``t_j K`` then ``t_j t_k K`` (j <= k), the order of the grid's kernels."""
    rows = [[0] * d]
    if reg_type == "ll":
        rows += [[int(i == j) for i in range(d)] for j in range(d)]
        rows += [[int(i == j) + int(i == k) for i in range(d)]
                 for j in range(d) for k in range(j, d)]
    return np.array(rows, dtype=np.int64)


@functools.lru_cache(maxsize=32)
def _tables(d, p, reg_type):
    """The sums' polynomial in the row's position ``x`` and the query's ``v`` (both in a
    segment's frame): monomials of ``x`` (M, d) and terms (sum, monomial, coefficient,
    exponents of ``v``)."""
    var = lambda j, c=1.0: {tuple(int(i == j) for i in range(2 * d)): c}   # noqa: E731
    one = {(0,) * (2 * d): 1.0}
    t = [{**var(j), **var(d + j, -1.0)} for j in range(d)]                # x_j - v_j
    base = dict(one)                                                      # 1 - |t|^2
    for j in range(d):
        for e, c in _mul(t[j], t[j]).items():
            base[e] = base.get(e, 0.0) - c
    K = one
    for _ in range(p):
        K = _mul(K, base)
    polys = []
    for g in kernel_moments(d, reg_type):
        f = K
        for j in range(d):
            for _ in range(g[j]):
                f = _mul(f, t[j])
        polys.append(f)
    monos = sorted({e[:d] for f in polys for e in f})
    index = {m: i for i, m in enumerate(monos)}
    terms = [(kk, index[e[:d]], c, e[d:]) for kk, f in enumerate(polys)
             for e, c in sorted(f.items())]
    return (np.array(monos, dtype=np.int64).reshape(-1, d),
            np.array([x[0] for x in terms], dtype=np.int64),
            np.array([x[1] for x in terms], dtype=np.int64),
            np.array([x[2] for x in terms], dtype=np.float64),
            np.array([x[3] for x in terms], dtype=np.int64).reshape(-1, d))


def fits(kern, n, d, k, reg_type):
    """Whether the exact polynomial sums apply: a polynomial kernel whose running
    moments stay under ``MAX_BYTES``."""
    p = poly_power(kern)
    if p is None:
        return False
    mono = _tables(d, p, reg_type)[0]
    return 8 * n * (k + 1) * mono.shape[0] <= MAX_BYTES


class PolySums:
    """Exact kernel sums of training rows X (values V, centred) for a polynomial kernel,
    with :class:`~nlpfeat.kernels._binned.BinnedSums`' ``gather`` and ``loo_gather``.

    ``bins``: strips per feature across the data's range in the first d - 1 axes (None:
    ``STRIPS_PER_BANDWIDTH`` per bandwidth); the last axis is never binned.
    """

    def __init__(self, X, V, kern, h, bins, reg_type, scale, lo=None, span=None):
        from nlpfeat.kernels._compiled._polysums import build

        n, d = X.shape
        self.reg_type, self.p = reg_type, poly_power(kern)
        self.h = np.broadcast_to(np.asarray(h, dtype=np.float64), (d,)).copy()
        self.lo = X.min(axis=0) if lo is None else lo
        span = np.ptp(X, axis=0) if span is None else span
        Z = self._scaled(X)
        zspan = span[:-1] / self.h[:-1]
        c = (np.full(d - 1, 1.0 / STRIPS_PER_BANDWIDTH) if bins is None
             else np.maximum(zspan, 1e-300) / np.asarray(bins[:-1], dtype=np.float64))
        while np.prod(np.floor(zspan / c) + 1) > MAX_STRIPS:
            c = c * 2.0
        self.c = c
        self.ns = (np.floor(zspan / c) + 1).astype(np.int64)
        self.bins = np.concatenate([self.ns, [1]]) if bins is None else np.asarray(bins)
        self.mono, *self.terms = _tables(d, self.p, reg_type)
        self.kk_g = kernel_moments(d, reg_type)
        cols = np.hstack([np.ones((n, 1)), V])
        self.colmax = np.abs(cols).max(axis=0)
        self.scale = scale
        self.zmax = float(np.abs(Z).max(initial=0.0))
        (_, self.start, self.R, self.seg_lo, self.seg_hi, self.ctr, self.P,
         self.xb) = build(Z, cols, self.c, self.ns, SEGMENT, self.mono)
        self.zl = np.ascontiguousarray(self.R[:, d - 1])

    def _scaled(self, X):
        return np.ascontiguousarray((X - self.lo) / self.h)

    def _sums(self, Q):
        from nlpfeat.kernels._compiled._polysums import query

        Z = self._scaled(Q)
        # the queries in the rows' order (by strip, then along the last axis): neighbours
        # then read the same strips and moments from the caches
        keys = (Z[:, -1],) + tuple(np.floor(Z[:, j] / self.c[j]) for j in range(Z.shape[1] - 2,
                                                                                 -1, -1))
        order = np.lexsort(keys)
        S, E = query(Z[order], self.R, self.zl, self.start, self.seg_lo, self.seg_hi,
                     self.ctr, self.P, self.xb, self.c, self.ns, self.p, self.kk_g,
                     self.mono, *self.terms, self.colmax,
                     max(self.zmax, float(np.abs(Z).max(initial=0.0))))
        inv = np.empty_like(order)
        inv[order] = np.arange(order.size)
        return S[inv], E[inv]

    def _bounds(self, E):
        """(m, 2): the weight sums' bound (the largest over the sums) and the value sums'
        in units of ``scale``."""
        dev = (E[:, :, 1:] / self.scale).max(axis=(1, 2), initial=0.0)
        return np.column_stack([E[:, :, 0].max(axis=1), dev])

    def _shape(self, S):
        return S[:, 0, :] if self.reg_type == "lc" else S

    def gather(self, Q):
        """Sums at Q, their error bounds (m, 2) and the mask of Q inside (all)."""
        S, E = self._sums(Q)
        return self._shape(S), self._bounds(E), np.ones(Q.shape[0], dtype=bool)

    def loo_gather(self, X, V):
        """Sums at the training rows X (values V) less each row's own term, ``K(0) = 1``
        times its columns in the kernel's own sum, and their bounds."""
        S, E = self._sums(X)
        cols = np.hstack([np.ones((X.shape[0], 1)), V])
        S[:, 0, :] -= cols
        E[:, 0, :] += 2.0 ** -52 * (np.abs(S[:, 0, :]) + np.abs(cols))
        return self._shape(S), self._bounds(E)
