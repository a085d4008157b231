"""Compiled (numba) Nadaraya-Watson core: fused loops, no n_query x n_train intermediate.

The numpy implementation (:mod:`nlpfeat.kernels._nadaraya_watson`,
:mod:`nlpfeat.kernels._bandwidth`) is the reference; this module computes the same
quantities with the same log-space semantics:

- one pass per query row, in tiles of training points that stay in L1: scaled
  distances (the loop over training points vectorises; training data are stored
  feature-major), the kernel in linear space (the vectorised ``exp`` of
  :mod:`nlpfeat.kernels._fastexp`, flushed to zero below ``exp(-708)``, for the
  exponential kernels; polynomials for the compact ones, which are zero outside their
  support), and the weighted sums, all fused (for one output and the Gaussian kernel,
  the most common case, weights, their sum and the weighted sum in a single loop that
  stores nothing); on AVX-512 CPUs the loops use 512-bit vectors
  (:func:`nlpfeat.kernels._fastexp.wide_vectors`);
- a row whose weight sum underflows (below ``1e-150``: a query far from every training
  point, a tiny bandwidth) or is zero (no training point in a compact kernel's support)
  is recomputed in log space with a max shift, so it degrades to nearest-neighbour
  weights, exactly as the numpy path does;
- the kernels are selected by a family code taken from :attr:`Kernel.family`
  (never by name); a user's kernel has no family and stays on the numpy path;
- one generic compiled function per task (predict, weights, leave-one-out grid,
  ``loo-ard`` objective), parametrised by the family and metric codes, so few
  specialisations are compiled; all are cached on disk (``cache=True``) and compiled
  on first use, never at import;
- ``n_jobs`` threads split the query rows (``prange`` over blocks of rows); every row
  is computed by the same code whatever the thread count, so results do not depend on
  ``n_jobs``.

Local linear fits accumulate the normal equations in the compiled loop and solve them
with ``np.linalg.pinv`` as the numpy path does.
"""
import math

import numba
import numpy as np
from joblib import effective_n_jobs
from numba import njit, prange
from scipy import sparse

from nlpfeat._chunking import gen_row_chunks
from nlpfeat.kernels._fastexp import fexp_ftz as fexp
from nlpfeat.kernels._fastexp import _avx512, wide_vectors
from nlpfeat.kernels._pairwise import PairwiseScaled

__all__ = ["CompiledNW", "ard_objective", "family_code", "loo_grid", "supports"]

(GAUSSIAN, EPANECHNIKOV, BIWEIGHT, TRIWEIGHT, TRICUBE, TRIANGULAR, TOPHAT, COSINE,
 LAPLACIAN, LOGISTIC, SIGMOID) = range(11)
_FAMILIES = {"gaussian": GAUSSIAN, "epanechnikov": EPANECHNIKOV, "biweight": BIWEIGHT,
             "triweight": TRIWEIGHT, "tricube": TRICUBE, "triangular": TRIANGULAR,
             "tophat": TOPHAT, "cosine": COSINE, "laplacian": LAPLACIAN,
             "logistic": LOGISTIC, "sigmoid": SIGMOID}
_TILE = 256          # training points per tile: a few KiB of buffers, in L1
_LC_TILE = 512 if _avx512() else 256   # the same for local constant predictions
                     # (measured: 512 is 10-15% faster with AVX-512, 25% slower on AVX2)
_QBLOCK = 32         # query rows sharing each tile of training points
_TINY = 1e-150       # a weight sum below this is redone in log space (as in numpy): the
                     # weights times targets as small as 1e-100 then stay normal numbers
_HALF_PI = 0.5 * math.pi
_FAST = {"reassoc", "contract", "nsz"}   # reductions may be reordered (vectorised)
_FMA = {"contract"}                      # multiply-adds may fuse, nothing reordered


def family_code(kern):
    """The compiled family code of a built-in kernel, or None (a user's kernel)."""
    return _FAMILIES.get(kern.family) if kern.family is not None else None


def supports(kern, X, metric):
    """Whether the compiled engine handles this kernel, input and metric."""
    return (family_code(kern) is not None and not sparse.issparse(X)
            and metric in ("euclidean", "product"))


def _threads(n_jobs):
    """Threads for ``n_jobs`` (None: 1), capped by numba's pool (joblib workers lower it)."""
    n = 1 if n_jobs is None else effective_n_jobs(n_jobs)
    return max(1, min(int(n), numba.config.NUMBA_NUM_THREADS))


def _run(serial, parallel, n_rows, n_jobs, *args):
    """``serial(0, n_rows, *args)``, or ``parallel`` over blocks of rows in threads."""
    threads = min(_threads(n_jobs), max(n_rows, 1))
    if threads <= 1:
        serial(0, n_rows, *args)
        return
    previous = numba.get_num_threads()
    numba.set_num_threads(threads)   # thread-local in numba
    try:
        parallel(n_rows, min(n_rows, 4 * threads), *args)
    finally:
        numba.set_num_threads(previous)


# ---------------------------------------------------------------- kernels (scalars)

@njit(cache=True, fastmath=_FMA)
def _k_u(fam, u):
    """Unnormalised kernel of the scaled distance ``u >= 0`` (``K(0) <= 1``; 0 outside)."""
    if fam == GAUSSIAN:
        return fexp(-0.5 * u * u)
    if fam == EPANECHNIKOV or fam == BIWEIGHT or fam == TRIWEIGHT:
        b = max(1.0 - u * u, 0.0)
        return b if fam == EPANECHNIKOV else (b * b if fam == BIWEIGHT else b * b * b)
    if fam == TRICUBE:
        m = min(u, 1.0)
        c = 1.0 - m * m * m
        return c * c * c
    if fam == TRIANGULAR:
        return max(1.0 - u, 0.0)
    if fam == TOPHAT:
        return 1.0 if u <= 1.0 else 0.0
    if fam == COSINE:
        return math.cos(_HALF_PI * u) if u < 1.0 else 0.0
    t = fexp(-u)
    if fam == LAPLACIAN:
        return t
    if fam == LOGISTIC:
        return t / ((1.0 + t) * (1.0 + t))
    return t / (1.0 + t * t)            # sigmoid


@njit(cache=True, fastmath=_FMA)
def _k_u2(fam, u2):
    """Unnormalised kernel of the squared scaled distance (polynomials need no sqrt)."""
    if fam == GAUSSIAN:
        return fexp(-0.5 * u2)
    if fam == EPANECHNIKOV or fam == BIWEIGHT or fam == TRIWEIGHT:
        b = max(1.0 - u2, 0.0)
        return b if fam == EPANECHNIKOV else (b * b if fam == BIWEIGHT else b * b * b)
    if fam == TOPHAT:
        return 1.0 if u2 <= 1.0 else 0.0
    return _k_u(fam, math.sqrt(u2))


@njit(cache=True)
def _logk_u(fam, u):
    """Log of :func:`_k_u` (``-inf`` outside a compact support), for the log-space path."""
    if fam == GAUSSIAN:
        return -0.5 * u * u
    if fam == TOPHAT:
        return 0.0 if u <= 1.0 else -np.inf
    if fam == LAPLACIAN:
        return -u
    if fam == LOGISTIC:
        return -u - 2.0 * math.log1p(math.exp(-u))
    if fam == SIGMOID:
        return -u - math.log1p(math.exp(-2.0 * u))
    if u >= 1.0:
        return -np.inf
    if fam == EPANECHNIKOV:
        return math.log1p(-u * u)
    if fam == BIWEIGHT:
        return 2.0 * math.log1p(-u * u)
    if fam == TRIWEIGHT:
        return 3.0 * math.log1p(-u * u)
    if fam == TRICUBE:
        return 3.0 * math.log1p(-u * u * u)
    if fam == TRIANGULAR:
        return math.log1p(-u)
    return math.log(math.cos(_HALF_PI * u))   # cosine


@njit(cache=True)
def _logk_u2(fam, u2):
    if fam == GAUSSIAN:
        return -0.5 * u2
    if fam == TOPHAT:
        return 0.0 if u2 <= 1.0 else -np.inf
    if fam == EPANECHNIKOV or fam == BIWEIGHT or fam == TRIWEIGHT:
        if u2 >= 1.0:
            return -np.inf
        p = 1.0 if fam == EPANECHNIKOV else (2.0 if fam == BIWEIGHT else 3.0)
        return p * math.log1p(-u2)
    return _logk_u(fam, math.sqrt(u2))


@njit(cache=True)
def _dlogk_u(fam, u):
    """``d log K / du`` inside the support, 0 outside or where it is not finite."""
    if fam == GAUSSIAN:
        return -u
    if fam == LAPLACIAN:
        return -1.0
    if fam == LOGISTIC:
        return -math.tanh(0.5 * u)
    if fam == SIGMOID:
        return -math.tanh(u)
    if u >= 1.0:
        return 0.0
    if fam == EPANECHNIKOV or fam == BIWEIGHT or fam == TRIWEIGHT:
        p = 1.0 if fam == EPANECHNIKOV else (2.0 if fam == BIWEIGHT else 3.0)
        return p * (-2.0 * u) / (1.0 - u * u)
    if fam == TRICUBE:
        return 3.0 * (-3.0 * u * u) / (1.0 - u * u * u)
    if fam == TRIANGULAR:
        return -1.0 / (1.0 - u)
    if fam == COSINE:
        return -_HALF_PI * math.tan(_HALF_PI * u)
    return 0.0


# ---------------------------------------------------------------- tiles of one row

@njit(cache=True, fastmath=_FAST)
def _apply_u2(fam, buf, m):
    """``buf[:m] = K(u2)`` in place, returning the sum; a plain loop per family, so that
    each vectorises (the sum may be reordered; ``fexp`` keeps its own exact flags)."""
    wide_vectors()
    s = 0.0
    if fam == GAUSSIAN:
        for i in range(m):
            w = fexp(-0.5 * buf[i])
            buf[i] = w
            s += w
    elif fam == EPANECHNIKOV:
        for i in range(m):
            w = max(1.0 - buf[i], 0.0)
            buf[i] = w
            s += w
    elif fam == BIWEIGHT:
        for i in range(m):
            b = max(1.0 - buf[i], 0.0)
            buf[i] = b * b
            s += b * b
    elif fam == TRIWEIGHT:
        for i in range(m):
            b = max(1.0 - buf[i], 0.0)
            buf[i] = b * b * b
            s += buf[i]
    elif fam == TOPHAT:
        for i in range(m):
            w = 1.0 if buf[i] <= 1.0 else 0.0
            buf[i] = w
            s += w
    elif fam == LAPLACIAN:
        for i in range(m):
            w = fexp(-math.sqrt(buf[i]))
            buf[i] = w
            s += w
    else:
        for i in range(m):
            w = _k_u2(fam, buf[i])
            buf[i] = w
            s += w
    return s


@njit(cache=True, fastmath=_FMA)
def _sq_dist(zq, Zt, t0, m, buf):
    """``buf[:m]`` = squared distances from ``zq`` to training points ``t0 .. t0 + m``.

    Features are taken four (then two, then one) at a time, so that ``buf`` is read
    and written once per group, not once per feature.
    """
    wide_vectors()
    d = zq.size
    for i in range(m):
        buf[i] = 0.0
    f = 0
    while f + 4 <= d:
        q0, q1, q2, q3 = zq[f], zq[f + 1], zq[f + 2], zq[f + 3]
        x0, x1 = Zt[f, t0:t0 + m], Zt[f + 1, t0:t0 + m]
        x2, x3 = Zt[f + 2, t0:t0 + m], Zt[f + 3, t0:t0 + m]
        for i in range(m):
            a, b, c, e = q0 - x0[i], q1 - x1[i], q2 - x2[i], q3 - x3[i]
            buf[i] += (a * a + b * b) + (c * c + e * e)
        f += 4
    if f + 2 <= d:
        q0, q1 = zq[f], zq[f + 1]
        x0, x1 = Zt[f, t0:t0 + m], Zt[f + 1, t0:t0 + m]
        for i in range(m):
            a, b = q0 - x0[i], q1 - x1[i]
            buf[i] += a * a + b * b
        f += 2
    if f < d:
        q0 = zq[f]
        x0 = Zt[f, t0:t0 + m]
        for i in range(m):
            a = q0 - x0[i]
            buf[i] += a * a


@njit(cache=True, fastmath=_FMA)
def _tile_weights(zq, Zt, t0, m, fam, prod, buf):
    """Unnormalised linear-space weights of one tile of training points into ``buf``.

    Returns their sum.
    """
    wide_vectors()
    if not prod or fam == GAUSSIAN:   # radial (the Gaussian product kernel is radial)
        _sq_dist(zq, Zt, t0, m, buf)
        return _apply_u2(fam, buf, m)
    if fam == LAPLACIAN:              # prod exp(-|d_f|) = exp(-sum |d_f|): one exp
        for i in range(m):
            buf[i] = 0.0
        for f in range(zq.size):
            q = zq[f]
            row = Zt[f, t0:t0 + m]
            for i in range(m):
                buf[i] += abs(q - row[i])
        for i in range(m):
            buf[i] = fexp(-buf[i])
        return _sum(buf, m)
    for i in range(m):
        buf[i] = 1.0
    for f in range(zq.size):
        q = zq[f]
        row = Zt[f, t0:t0 + m]
        for i in range(m):
            buf[i] *= _k_u(fam, abs(q - row[i]))
    return _sum(buf, m)


@njit(cache=True, fastmath=_FAST)
def _dot(w, y, m):
    wide_vectors()
    s = 0.0
    for i in range(m):
        s += w[i] * y[i]
    return s


@njit(cache=True, fastmath={"nnan", "nsz", "reassoc"})   # no NaN here; vectorises
def _min(x, m):
    s = np.inf
    for i in range(m):
        s = min(s, x[i])
    return s


@njit(cache=True, fastmath=_FAST)
def _sum(w, m):
    wide_vectors()
    s = 0.0
    for i in range(m):
        s += w[i]
    return s


@njit(cache=True)
def _log_row(zq, Zt, fam, prod, skip, w):
    """Normalised weights of one row in log space into ``w``; returns True when empty.

    Max shift, then ``exp``; a row with no training point in the support (all
    ``-inf``) shares its weight equally among its nearest training point(s) (squared
    scaled Euclidean distance). ``skip`` (-1 for none) is left out (leave-one-out).
    """
    n, d = Zt.shape[1], Zt.shape[0]
    top = -np.inf
    for i in range(n):
        if i == skip:
            w[i] = -np.inf
            continue
        if prod and fam != GAUSSIAN:
            l = 0.0
            for f in range(d):
                l += _logk_u(fam, abs(zq[f] - Zt[f, i]))
        else:
            u2 = 0.0
            for f in range(d):
                diff = zq[f] - Zt[f, i]
                u2 += diff * diff
            l = _logk_u2(fam, u2)
        w[i] = l
        top = max(top, l)
    if top == -np.inf:
        near = np.inf
        for i in range(n):
            if i != skip:
                u2 = 0.0
                for f in range(d):
                    diff = zq[f] - Zt[f, i]
                    u2 += diff * diff
                w[i] = u2
                near = min(near, u2)
        total = 0.0
        for i in range(n):
            w[i] = 1.0 if (i != skip and w[i] <= near) else 0.0
            total += w[i]
        for i in range(n):
            w[i] /= total
        return True
    total = 0.0
    for i in range(n):
        w[i] = fexp(w[i] - top)
        total += w[i]
    for i in range(n):
        w[i] /= total
    return False


@njit(cache=True)
def _acc_ll(w, m, t0, Ct, cq, Yt, wa, dif, M, V):
    """Add one tile to the local linear normal equations ``M``, ``V`` (weights ``w``)."""
    d, k = cq.size, Yt.shape[0]
    for i in range(m):
        wa[0, i] = w[i]
    for f in range(d):
        row = Ct[f, t0:t0 + m]
        for i in range(m):
            dif[f, i] = row[i] - cq[f]
            wa[f + 1, i] = w[i] * dif[f, i]
    for a in range(d + 1):
        M[a, 0] += _sum(wa[a], m)
        for b in range(a if a > 0 else 1, d + 1):
            M[a, b] += _dot(wa[a], dif[b - 1], m)
        for c in range(k):
            V[a, c] += _dot(wa[a], Yt[c, t0:t0 + m], m)


@njit(cache=True)
def _finish_ll(M, V, s):
    d1 = M.shape[0]
    for a in range(d1):
        for b in range(a, d1):
            M[a, b] /= s
            M[b, a] = M[a, b]
        for c in range(V.shape[1]):
            V[a, c] /= s


# ---------------------------------------------------------------- predict

@njit(cache=True)
def _predict_rows(r0, r1, Zq, Zt, Y1t, fam, prod, ll, Ct, h, out, empty, M_out, V_out):
    """Predictions (lc) or normal equations (ll) of the query rows ``r0 .. r1``.

    Queries go in blocks of ``_QBLOCK``: each tile of training points (in L1) serves the
    whole block before the next tile is read, so a large training set streams from
    memory once per block, not once per query. Each row's sums still run over the tiles
    in order, so its result does not depend on the blocks (nor on ``n_jobs``).
    """
    d, n = Zt.shape
    k1 = Y1t.shape[0]
    buf = np.empty(_TILE)
    wrow = np.empty(n)
    accs = np.empty((_QBLOCK, k1))    # per row: weighted sums; last column the weight sum
    cqs = np.empty((_QBLOCK, d))
    wa = np.empty((d + 1, _TILE))
    dif = np.empty((d, _TILE))
    Yt = Y1t[:k1 - 1]
    for b0 in range(r0, r1, _QBLOCK):
        b1 = min(b0 + _QBLOCK, r1)
        accs[:] = 0.0
        if ll:
            for r in range(b0, b1):
                for f in range(d):
                    cqs[r - b0, f] = Zq[r, f] * h[f]
                M_out[r] = 0.0
                V_out[r] = 0.0
        for t0 in range(0, n, _TILE):
            m = min(_TILE, n - t0)
            for r in range(b0, b1):
                acc = accs[r - b0]
                acc[k1 - 1] += _tile_weights(Zq[r], Zt, t0, m, fam, prod, buf)
                if ll:
                    _acc_ll(buf, m, t0, Ct, cqs[r - b0], Yt, wa, dif, M_out[r], V_out[r])
                else:
                    for c in range(k1 - 1):
                        acc[c] += _dot(buf, Y1t[c, t0:t0 + m], m)
        for r in range(b0, b1):
            acc = accs[r - b0]
            s = acc[k1 - 1]
            if not s > _TINY:   # underflow or nothing in the support: log space
                empty[r] = _log_row(Zq[r], Zt, fam, prod, -1, wrow)
                acc[:] = 0.0
                if ll:
                    M_out[r] = 0.0
                    V_out[r] = 0.0
                for t0 in range(0, n, _TILE):
                    m = min(_TILE, n - t0)
                    w = wrow[t0:t0 + m]
                    if ll:
                        _acc_ll(w, m, t0, Ct, cqs[r - b0], Yt, wa, dif, M_out[r], V_out[r])
                    else:
                        for c in range(k1):
                            acc[c] += _dot(w, Y1t[c, t0:t0 + m], m)
                s = 1.0 if ll else acc[k1 - 1]
            if ll:
                _finish_ll(M_out[r], V_out[r], s)
            else:
                for c in range(k1 - 1):
                    out[r, c] = acc[c] / s


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
def _lc_rows(r0, r1, Zq, Zt, Y1t, fam, prod, out, empty):
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
                empty[r] = _log_row(Zq[r], Zt, fam, prod, -1, wrow)
                for c in range(k1):
                    acc[c] = _dot(wrow, Y1t[c], n)
            for c in range(k1 - 1):
                out[r, c] = acc[c] / acc[k1 - 1]


@njit(cache=True, parallel=True)
def _lc_parallel(n_rows, n_blocks, *args):
    for b in prange(n_blocks):
        _lc_rows(b * n_rows // n_blocks, (b + 1) * n_rows // n_blocks, *args)


@njit(cache=True, parallel=True)
def _predict_parallel(n_rows, n_blocks, *args):
    for b in prange(n_blocks):
        _predict_rows(b * n_rows // n_blocks, (b + 1) * n_rows // n_blocks, *args)


@njit(cache=True)
def _weights_rows(r0, r1, Zq, Zt, fam, prod, out, empty):
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
            empty[r] = _log_row(zq, Zt, fam, prod, -1, w)


@njit(cache=True, parallel=True)
def _weights_parallel(n_rows, n_blocks, *args):
    for b in prange(n_blocks):
        _weights_rows(b * n_rows // n_blocks, (b + 1) * n_rows // n_blocks, *args)


def _pinv_intercepts(M, V):
    """``beta_0`` of ``M beta = V`` by ``np.linalg.pinv``, as the numpy path solves it."""
    return (np.linalg.pinv(M) @ V)[:, 0, :]


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
        self.h = np.empty(d)
        self.h[:] = pair.bandwidth          # a scalar or one per feature
        self.Y1t = index.Y1t              # (n_outputs + 1, n_train), C-ordered
        self.ll = index.reg_type == "ll"
        self.Ct = self.Zt * self.h[:, None] if self.ll else np.zeros((0, 0))

    def predict(self, X, *, working_memory=None, n_jobs=None):
        """Predictions (n_q, n_outputs) and the empty-row mask for raw query rows ``X``."""
        Zq = np.ascontiguousarray(self.pair.query(X))
        n_q, d = Zq.shape
        k = self.Y1t.shape[0] - 1
        out = np.empty((n_q, k))
        empty = np.zeros(n_q, dtype=bool)
        if not self.ll:
            _run(_lc_rows, _lc_parallel, n_q, n_jobs, Zq, self.Zt, self.Y1t, self.fam,
                 self.prod, out, empty)
            return out, empty
        row_bytes = 8 * (d + 1) * (d + 1 + k)
        for rows in gen_row_chunks(n_q, row_bytes, working_memory):
            c = rows.stop - rows.start
            M, V = np.empty((c, d + 1, d + 1)), np.empty((c, d + 1, k))
            _run(_predict_rows, _predict_parallel, c, n_jobs, Zq[rows], self.Zt, self.Y1t,
                 self.fam, self.prod, True, self.Ct, self.h, out[rows], empty[rows], M, V)
            out[rows] = _pinv_intercepts(M, V)
        return out, empty

    def weights(self, X, *, working_memory=None, n_jobs=None):
        """Normalised weights (dense; CSR for a compact kernel) and the empty-row mask."""
        Zq = np.ascontiguousarray(self.pair.query(X))
        n_q, n = Zq.shape[0], self.Zt.shape[1]
        empty = np.zeros(n_q, dtype=bool)
        if not self.compact:
            out = np.empty((n_q, n))
            _run(_weights_rows, _weights_parallel, n_q, n_jobs, Zq, self.Zt, self.fam,
                 self.prod, out, empty)
            return out, empty
        blocks = []
        for rows in gen_row_chunks(n_q, 8 * n, working_memory):
            W = np.empty((rows.stop - rows.start, n))
            _run(_weights_rows, _weights_parallel, W.shape[0], n_jobs, Zq[rows], self.Zt,
                 self.fam, self.prod, W, empty[rows])
            blocks.append(sparse.csr_matrix(W))
        return sparse.vstack(blocks, format="csr"), empty


# ---------------------------------------------------------------- leave-one-out grid

@njit(cache=True)
def _loo_row_weights(i, g, fam, prod, shift, ray, D2, Dmin, Dif, R, inv_s2, w):
    """Unnormalised LOO weights of training row ``i`` at grid point ``g`` into ``w``.

    ``shift``: Gaussian on a ray grid, ``exp(-(D2 - min D2) / (2 s^2))`` (never
    underflows: the nearest other point has weight 1). Otherwise the kernel of the
    distances rescaled from the base bandwidth (``R[g]`` = base / h per feature).
    A sum that underflows is redone in log space (max shift; a row with no point in
    the support gets its nearest other point(s) by the base-bandwidth distance).
    Returns the weight sum and whether the row had no point in the support.
    """
    d, n = Dif.shape
    if shift:
        a = -0.5 * inv_s2[g]
        for j in range(n):
            w[j] = fexp((D2[j] - Dmin) * a)
    elif ray and (not prod or fam == GAUSSIAN):
        for j in range(n):
            w[j] = D2[j] * inv_s2[g]
        _apply_u2(fam, w, n)
    elif not prod or fam == GAUSSIAN:
        for j in range(n):
            w[j] = 0.0
        for f in range(d):
            r2 = R[g, f] * R[g, f]
            for j in range(n):
                w[j] += Dif[f, j] * Dif[f, j] * r2
        _apply_u2(fam, w, n)
    else:
        for j in range(n):
            w[j] = 1.0
        for f in range(d):
            r = R[g, f]
            for j in range(n):
                w[j] *= _k_u(fam, abs(Dif[f, j]) * r)
    w[i] = 0.0
    s = _sum(w, n)
    if shift or s > _TINY:
        return s, False
    # log space, distances rescaled as above; the base-bandwidth D2 picks the nearest
    top = -np.inf
    for j in range(n):
        if j == i:
            w[j] = -np.inf
            continue
        if prod and fam != GAUSSIAN:
            l = 0.0
            for f in range(d):
                l += _logk_u(fam, abs(Dif[f, j]) * R[g, f])
        elif ray:
            l = _logk_u2(fam, D2[j] * inv_s2[g])
        else:
            u2 = 0.0
            for f in range(d):
                u2 += Dif[f, j] * Dif[f, j] * R[g, f] * R[g, f]
            l = _logk_u2(fam, u2)
        w[j] = l
        top = max(top, l)
    for j in range(n):
        if top == -np.inf:
            w[j] = 1.0 if D2[j] <= Dmin else 0.0
        else:
            w[j] = fexp(w[j] - top)
    return _sum(w, n), top == -np.inf


@njit(cache=True)
def _loo_distances(i, Z, Zt, D2, Dif):
    """Differences ``Dif[f, j] = z_if - z_jf`` and ``D2`` (``inf`` at ``j = i``) of row ``i``.

    Returns the smallest squared distance to another row.
    """
    d, n = Zt.shape
    for j in range(n):
        D2[j] = 0.0
    for f in range(d):
        q = Z[i, f]
        for j in range(n):
            Dif[f, j] = q - Zt[f, j]
            D2[j] += Dif[f, j] * Dif[f, j]
    D2[i] = np.inf
    return _min(D2, n)


@njit(cache=True)
def _loo_rows(r0, r1, base, Z, Zt, Y1t, fam, prod, shift, ray, R, inv_s2, ll, Ct, P, M_out,
              V_out):
    """LOO predictions (lc: ``P[r - base, g]``) or normal equations (ll), rows ``r0 .. r1``.

    The distances of a row are computed once and reused for every grid point.
    """
    d, n = Zt.shape
    k1, G = Y1t.shape[0], R.shape[0]
    Yt = Y1t[:k1 - 1]
    D2 = np.empty(n)
    Dif = np.empty((d, n))
    w = np.empty(n)
    cq = np.empty(d)
    wa = np.empty((d + 1, _TILE))
    dif = np.empty((d, _TILE))
    for r in range(r0, r1):
        i = r
        Dmin = _loo_distances(i, Z, Zt, D2, Dif)
        if ll:
            for f in range(d):
                cq[f] = Ct[f, i]
        for g in range(G):
            s = _loo_row_weights(i, g, fam, prod, shift, ray, D2, Dmin, Dif, R, inv_s2, w)[0]
            if ll:
                M, V = M_out[r - base, g], V_out[r - base, g]
                M[:] = 0.0
                V[:] = 0.0
                for t0 in range(0, n, _TILE):
                    m = min(_TILE, n - t0)
                    _acc_ll(w[t0:t0 + m], m, t0, Ct, cq, Yt, wa, dif, M, V)
                _finish_ll(M, V, s)
            else:
                for c in range(k1 - 1):
                    P[r - base, g, c] = _dot(w, Yt[c], n) / s


@njit(cache=True, parallel=True)
def _loo_parallel(n_rows, n_blocks, base, *args):
    for b in prange(n_blocks):
        _loo_rows(base + b * n_rows // n_blocks, base + (b + 1) * n_rows // n_blocks, base,
                  *args)


def loo_grid(X, Y, kern, metric, grid, *, reg_type="lc", loss="squared", working_memory=None,
             n_jobs=None, progress=None):
    """:func:`nlpfeat.kernels._bandwidth.loo_grid` on the compiled engine (same arguments)."""
    from nlpfeat.kernels._bandwidth import _finish_loss, _loss_grad, _ray_scales

    n, k = Y.shape
    scales = _ray_scales(grid)
    base = grid[0]
    pair = PairwiseScaled(X, base if base.size > 1 else base[0], metric)
    Z = np.ascontiguousarray(pair.Z)
    d = Z.shape[1]
    Zt = np.ascontiguousarray(Z.T)
    fam, prod = family_code(kern), metric == "product"
    R = np.ascontiguousarray(np.broadcast_to(base / grid, (len(grid), d)))
    ray = scales is not None
    inv_s2 = 1.0 / scales**2 if ray else np.ones(len(grid))
    shift = ray and fam == GAUSSIAN
    ll = reg_type == "ll"
    h = np.broadcast_to(pair.bandwidth, (d,))
    Ct = Zt * h[:, None] if ll else np.zeros((0, 0))
    Y1t = np.ascontiguousarray(np.vstack([Y.T, np.ones((1, n))]))
    G = len(grid)
    row_bytes = 8 * G * (k + ((d + 1) * (d + 1 + k) if ll else 0))
    totals = np.zeros(G)
    for rows in gen_row_chunks(n, row_bytes, working_memory):
        c = rows.stop - rows.start
        P = np.empty((c, G, k))
        M = np.empty((c, G, d + 1, d + 1) if ll else (0, 0, 1, 1))
        V = np.empty((c, G, d + 1, k) if ll else (0, 0, 1, 1))
        _run(lambda _, m, *a: _loo_rows(rows.start, rows.start + m, rows.start, *a),
             lambda m, b, *a: _loo_parallel(m, b, rows.start, *a), c, n_jobs,
             Z, Zt, Y1t, fam, prod, shift, ray, R, inv_s2, ll, Ct, P, M, V)
        for g in range(G):
            Pg = _pinv_intercepts(M[:, g], V[:, g]) if ll else P[:, g]
            totals[g] += _loss_grad(Pg, Y[rows], loss)[0]
        if progress is not None:
            progress(c)
    return _finish_loss(totals, n, k, loss)


# ---------------------------------------------------------------- loo-ard objective

@njit(cache=True, fastmath=_FAST)
def _ard_b(w, a, P, Yt):
    """``w_j <- w_j (a . y_j - a . P)`` in place (``B`` of the ``loo-ard`` gradient)."""
    k, n = Yt.shape
    aP = 0.0
    for c in range(k):
        aP += a[c] * P[c]
    if k == 1:
        a0, y0 = a[0], Yt[0]
        for j in range(n):
            w[j] *= a0 * y0[j] - aP
        return
    for j in range(n):
        ay = 0.0
        for c in range(k):
            ay += a[c] * Yt[c, j]
        w[j] *= ay - aP


@njit(cache=True, fastmath=_FAST)
def _dot_sq(w, x, m):
    s = 0.0
    for i in range(m):
        s += w[i] * x[i] * x[i]
    return s


@njit(cache=True)
def _ard_rows(r0, r1, Z, Zt, Yt, fam, prod, shared, log_loss, loss_out, grad_out):
    """LOO loss and its gradient in ``log h`` of the training rows ``r0 .. r1``.

    Same formulas as :func:`nlpfeat.kernels._bandwidth._ard_objective`: normalised LOO
    weights ``w``, ``P = w Y``, ``a = dLoss/dP``, ``B_j = w_j (a . y_j - a . P)`` (0 for
    a row with no point in the support) and ``dl_j / dlog h_f``.
    """
    d, n = Zt.shape
    k = Yt.shape[0]
    D2, Dif, w = np.empty(n), np.empty((d, n)), np.empty(n)
    P, a = np.empty(k), np.empty(k)
    R, inv_s2 = np.ones((1, d)), np.ones(1)
    eps = np.finfo(np.float64).eps
    for i in range(r0, r1):
        Dmin = _loo_distances(i, Z, Zt, D2, Dif)
        s, empty = _loo_row_weights(i, 0, fam, prod, fam == GAUSSIAN, True, D2, Dmin, Dif,
                                    R, inv_s2, w)
        for j in range(n):
            w[j] /= s
        for c in range(k):
            P[c] = _dot(w, Yt[c], n)
        if log_loss:
            py = 0.0
            for c in range(k):
                py += P[c] * Yt[c, i]
            p = max(py, eps)
            loss_out[i] = -math.log(p)
            for c in range(k):
                a[c] = -Yt[c, i] / p if py > eps else 0.0
        else:
            total = 0.0
            for c in range(k):
                diff = P[c] - Yt[c, i]
                total += diff * diff
                a[c] = 2.0 * diff
            loss_out[i] = total
        grad_out[i] = 0.0
        if empty:
            continue
        D2[i] = 0.0          # w_i = 0: row i adds nothing below (and no 0 * inf)
        _ard_b(w, a, P, Yt)  # w becomes B
        if prod and fam != GAUSSIAN:
            for f in range(d):
                acc = 0.0
                for j in range(n):
                    if j != i:
                        u = abs(Dif[f, j])
                        acc += w[j] * -u * _dlogk_u(fam, u)
                grad_out[i, f] = acc
            continue
        if fam != GAUSSIAN:   # C_j = B_j * -(dlog K/du) / u; the Gaussian's factor is 1
            for j in range(n):
                u = math.sqrt(D2[j]) if j != i else 0.0
                w[j] = w[j] * -_dlogk_u(fam, u) / u if u > 0.0 else 0.0
        if shared:
            grad_out[i, 0] = _dot(w, D2, n)
        else:
            for f in range(d):
                grad_out[i, f] = _dot_sq(w, Dif[f], n)


@njit(cache=True, parallel=True)
def _ard_parallel(n_rows, n_blocks, *args):
    for b in prange(n_blocks):
        _ard_rows(b * n_rows // n_blocks, (b + 1) * n_rows // n_blocks, *args)


def ard_objective(n_jobs=None):
    """The ``loo-ard`` objective of :func:`nlpfeat.kernels._bandwidth.loo_ard`, compiled.

    Returns a function of ``(theta, X, Y, kern, metric, loss, working_memory)`` giving
    the mean LOO loss and its gradient in ``theta = log h``, as ``_ard_objective`` does;
    the compiled loop keeps two rows of ``n`` (and ``n_features``) values per thread,
    so ``working_memory`` is not needed.
    """
    def objective(theta, X, Y, kern, metric, loss, working_memory):
        n, k = Y.shape
        h = np.exp(theta)
        pair = PairwiseScaled(X, h if h.size > 1 else h[0], metric)
        Z = np.ascontiguousarray(pair.Z)
        loss_rows = np.empty(n)
        grad_rows = np.empty((n, Z.shape[1]))
        _run(_ard_rows, _ard_parallel, n, n_jobs, Z, np.ascontiguousarray(Z.T),
             np.ascontiguousarray(Y.T), family_code(kern), metric == "product", h.size == 1,
             loss == "log_loss", loss_rows, grad_rows)
        scale = n if loss == "log_loss" else n * k
        grad = grad_rows[:, :theta.size].sum(axis=0)
        return loss_rows.sum() / scale, grad / scale

    return objective
