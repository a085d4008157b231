"""Compiled Nadaraya-Watson predictions and weights: one fused pass per query row.

Scaled distances, kernel and weighted sums in tiles of training points, no
``n_query x n_train`` intermediate (for one output and the Gaussian kernel, the most
common case, weights, their sum and the weighted sum in a single loop that stores
nothing). Local linear fits (``reg_type="ll"``) accumulate the centred moments the numpy
path computes (:func:`nlpfeat.kernels._nadaraya_watson.local_linear`) and solve them with
the same ``pinv`` rule (:func:`nlpfeat.kernels._loss.centred_intercepts`).
"""
import numpy as np
from numba import njit, prange
from scipy import sparse

from nlpfeat._chunking import gen_row_chunks
from nlpfeat.kernels._compiled._fastexp import _avx512, wide_vectors
from nlpfeat.kernels._compiled._fastexp import fexp_ftz as fexp
from nlpfeat.kernels._compiled._moments import _ll_buffers, _ll_bytes, _ll_moments
from nlpfeat.kernels._compiled._rows import (
    _FAST,
    _TILE,
    _TINY,
    GAUSSIAN,
    _dot,
    _log_row,
    _run,
    _sq_dist,
    _tile_weights,
    family_code,
)
from nlpfeat.kernels._loss import centred_intercepts, spread_tolerance

__all__ = ["CompiledNW"]

_LC_TILE = 512 if _avx512() else 256   # training points per tile of local constant
                                       # predictions (wider vectors, larger tiles)
_QBLOCK = 32         # query rows sharing each tile of training points


@njit(cache=True)
def _predict_ll_rows(r0, r1, Zq, Zt, zmax, cs, Yt, fam, prod, empty, m_out, ybar_out, S_out,
                     T_out):
    """Centred local linear moments of the query rows ``r0 .. r1`` (row ``r`` into ``[r]``).

    A row's weights are computed once into a buffer (normalised by their sum, or in log
    space where the sum underflows, as :func:`_weights_rows`), then read twice.
    """
    d, n = Zt.shape
    w = np.empty(n)
    dif, wdif, zero = np.empty((d, _TILE)), np.empty((d, _TILE)), np.zeros(d)
    mc = np.empty(d)   # scratch: the centroid offset from the anchor
    for r in range(r0, r1):
        zq = Zq[r]
        s = 0.0
        for t0 in range(0, n, _TILE):
            m = min(_TILE, n - t0)
            s += _tile_weights(zq, Zt, t0, m, fam, prod, w[t0:t0 + m])
        if s > _TINY:
            for i in range(n):
                w[i] /= s
        else:
            empty[r] = _log_row(zq, Zt, zmax, fam, prod, -1, w)
        _ll_moments(w, zq, Zt, cs, Yt, dif, wdif, zero, mc, m_out[r], ybar_out[r], S_out[r],
                    T_out[r])


@njit(cache=True, parallel=True)
def _predict_ll_parallel(n_rows, n_blocks, *args):
    for b in prange(n_blocks):
        _predict_ll_rows(b * n_rows // n_blocks, (b + 1) * n_rows // n_blocks, *args)



@njit(cache=True, fastmath=_FAST)
def _gauss_sum_dot(buf, y, m):
    """Gaussian weights of the squared distances ``buf[:m]``: their sum and their dot
    product with ``y``, in one pass (nothing stored)."""
    wide_vectors()
    s = a = 0.0
    for i in range(m):
        w = fexp(-0.5 * buf[i])
        s += w
        a += w * y[i]
    return s, a


@njit(cache=True)
def _lc_rows(r0, r1, Zq, Zt, zmax, Y1t, fam, prod, out, empty):
    """Local constant predictions of the query rows ``r0 .. r1`` into ``out``.

    Queries go in blocks of ``_QBLOCK``: each tile of training points (in L1) serves the
    whole block before the next tile is read, so a large training set streams from
    memory once per block, not once per query. Each row's sums run over the tiles in
    order, so its result does not depend on the blocks (nor on ``n_jobs``); a row whose
    weight sum underflows (or is empty) is redone in log space.
    """
    wide_vectors()
    n, k1 = Zt.shape[1], Y1t.shape[0]
    buf, wrow = np.empty(_LC_TILE), np.empty(n)
    accs = np.empty((_QBLOCK, k1))    # per row: weighted sums; last column the weight sum
    fused = fam == GAUSSIAN and k1 == 2   # one output: weights, sum and dot in one pass
    for b0 in range(r0, r1, _QBLOCK):
        b1 = min(b0 + _QBLOCK, r1)
        accs[:] = 0.0
        for t0 in range(0, n, _LC_TILE):
            m = min(_LC_TILE, n - t0)
            if fused:
                y = Y1t[0, t0:t0 + m]
                for r in range(b0, b1):
                    _sq_dist(Zq[r], Zt, t0, m, buf)
                    s, a = _gauss_sum_dot(buf, y, m)
                    accs[r - b0, 0] += a
                    accs[r - b0, 1] += s
                continue
            for r in range(b0, b1):
                accs[r - b0, k1 - 1] += _tile_weights(Zq[r], Zt, t0, m, fam, prod, buf)
                for c in range(k1 - 1):
                    accs[r - b0, c] += _dot(buf, Y1t[c, t0:t0 + m], m)
        for r in range(b0, b1):
            acc = accs[r - b0]
            if not acc[k1 - 1] > _TINY:   # underflow or nothing in the support
                empty[r] = _log_row(Zq[r], Zt, zmax, fam, prod, -1, wrow)
                for c in range(k1):
                    acc[c] = _dot(wrow, Y1t[c], n)
            for c in range(k1 - 1):
                out[r, c] = acc[c] / acc[k1 - 1]


@njit(cache=True, parallel=True)
def _lc_parallel(n_rows, n_blocks, *args):
    for b in prange(n_blocks):
        _lc_rows(b * n_rows // n_blocks, (b + 1) * n_rows // n_blocks, *args)


@njit(cache=True)
def _weights_rows(r0, r1, Zq, Zt, zmax, fam, prod, out, empty):
    """Normalised weights of the query rows ``r0 .. r1`` into ``out`` (n_q, n_train)."""
    n = Zt.shape[1]
    for r in range(r0, r1):
        zq, w = Zq[r], out[r]
        s = 0.0
        for t0 in range(0, n, _TILE):
            m = min(_TILE, n - t0)
            s += _tile_weights(zq, Zt, t0, m, fam, prod, w[t0:t0 + m])
        if s > _TINY:
            inv = 1.0 / s
            for i in range(n):
                w[i] *= inv
        else:
            empty[r] = _log_row(zq, Zt, zmax, fam, prod, -1, w)


@njit(cache=True, parallel=True)
def _weights_parallel(n_rows, n_blocks, *args):
    for b in prange(n_blocks):
        _weights_rows(b * n_rows // n_blocks, (b + 1) * n_rows // n_blocks, *args)


class CompiledNW:
    """The compiled side of an :class:`~nlpfeat.kernels._nadaraya_watson.NWIndex`.

    Parameters
    ----------
    index : NWIndex
        Dense training data, a built-in kernel, metric "euclidean" or "product".
    """

    def __init__(self, index):
        pair = index.pair
        d = pair.Z.shape[1]
        self.pair = pair
        self.fam = family_code(index.kern)
        self.prod = pair.metric == "product"
        self.compact = index.kern.compact
        self.Zt = np.ascontiguousarray(pair.Z.T)
        self.zmax = float(np.abs(pair.Z).max(initial=0.0))   # the scale of the tie rule
        self.h = np.empty(d)
        self.h[:] = pair.bandwidth          # a scalar or one per feature
        self.Y1t = index.Y1t              # (n_outputs + 1, n_train), C-ordered
        self.ll = index.reg_type == "ll"
        self.cs = 2.0 ** -index.ll_exp2   # local linear coordinates: index.C = Z * cs
        self.spread_tol = spread_tolerance(index.C) if self.ll else 0.0

    def __setstate__(self, state):
        # The compiled loops index without bounds checks: a saved state (a file could hold
        # anything) must have the shapes and layout that __init__ gives.
        Zt, Y1t, Z = state["Zt"], state["Y1t"], getattr(state["pair"], "Z", None)
        arrays = (Zt, Y1t, state["h"])
        if not (all(isinstance(a, np.ndarray) and a.dtype == np.float64
                    and a.flags.c_contiguous for a in arrays)
                and Zt.ndim == Y1t.ndim == 2 and Zt.shape[1] == Y1t.shape[1]
                and Y1t.shape[0] >= 2 and state["h"].shape == (Zt.shape[0],)
                and getattr(Z, "shape", None) == Zt.shape[::-1]):
            raise ValueError("inconsistent saved state of a Nadaraya-Watson model (array "
                             "shapes or types that fitting never gives): not loaded.")
        vars(self).update(state)

    def predict(self, X, *, working_memory=None, n_jobs=None):
        """Predictions (n_q, n_outputs) and the empty-row mask for raw query rows ``X``."""
        Zq = np.ascontiguousarray(self.pair.query(X))
        n_q, d = Zq.shape
        k = self.Y1t.shape[0] - 1
        out = np.empty((n_q, k))
        empty = np.zeros(n_q, dtype=bool)
        if not self.ll:
            _run(_lc_rows, _lc_parallel, n_q, n_jobs, Zq, self.Zt, self.zmax, self.Y1t, self.fam,
                 self.prod, out, empty)
            return out, empty
        Yt = np.ascontiguousarray(self.Y1t[:k])
        for rows in gen_row_chunks(n_q, _ll_bytes(d, k), working_memory):
            moments = _ll_buffers(rows.stop - rows.start, d, k)
            _run(_predict_ll_rows, _predict_ll_parallel, rows.stop - rows.start, n_jobs,
                 Zq[rows], self.Zt, self.zmax, self.cs, Yt, self.fam, self.prod, empty[rows], *moments)
            out[rows] = centred_intercepts(*moments, self.spread_tol)
        return out, empty

    def weights(self, X, *, working_memory=None, n_jobs=None):
        """Normalised weights (dense; CSR for a compact kernel) and the empty-row mask."""
        Zq = np.ascontiguousarray(self.pair.query(X))
        n_q, n = Zq.shape[0], self.Zt.shape[1]
        empty = np.zeros(n_q, dtype=bool)
        if not self.compact:
            out = np.empty((n_q, n))
            _run(_weights_rows, _weights_parallel, n_q, n_jobs, Zq, self.Zt, self.zmax, self.fam,
                 self.prod, out, empty)
            return out, empty
        blocks = []
        for rows in gen_row_chunks(n_q, 8 * n, working_memory):
            W = np.empty((rows.stop - rows.start, n))
            _run(_weights_rows, _weights_parallel, W.shape[0], n_jobs, Zq[rows], self.Zt,
                 self.zmax, self.fam, self.prod, W, empty[rows])
            blocks.append(sparse.csr_matrix(W))
        return sparse.vstack(blocks, format="csr"), empty
