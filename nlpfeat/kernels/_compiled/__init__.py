"""Compiled (numba) Nadaraya-Watson core: fused loops, no n_query x n_train intermediate.

The numpy implementation (:mod:`nlpfeat.kernels._nadaraya_watson`,
:mod:`nlpfeat.kernels._bandwidth`) is the reference; this module computes the same
quantities with the same log-space semantics:

- one pass per query row, in tiles of training points that stay in L1: scaled
  distances (the loop over training points vectorises; training data are stored
  feature-major), the kernel in linear space (the vectorised ``exp`` of
  :mod:`nlpfeat.kernels._compiled._fastexp`, flushed to zero below ``exp(-708)``, for the
  exponential kernels; polynomials for the compact ones, which are zero outside their
  support), and the weighted sums, all fused (for one output and the Gaussian kernel,
  the most common case, weights, their sum and the weighted sum in a single loop that
  stores nothing); on AVX-512 CPUs the loops use 512-bit vectors
  (:func:`nlpfeat.kernels._compiled._fastexp.wide_vectors`);
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

Local linear fits (``reg_type="ll"``) compute in the compiled loop exactly the moments the
numpy path computes (:func:`nlpfeat.kernels._nadaraya_watson.local_linear`: a row's
weights, then the weighted means of the offsets from the query and of the targets, then
the centred second moments, in a second pass over the stored weights), and solve the
small ``d x d`` systems of a batch of rows with the same ``np.linalg.pinv`` rule
(:func:`nlpfeat.kernels._nadaraya_watson.centred_intercepts`). ``loo-ard``'s local linear
gradient follows :mod:`nlpfeat.kernels._ll_grad` the same way: the uncentred normal
equations in the loop, ``pinv`` in numpy, the weight sensitivities in a second loop.
"""
import math

import numba
import numpy as np
from joblib import effective_n_jobs
from numba import njit, prange
from scipy import sparse

from nlpfeat._chunking import gen_row_chunks
from nlpfeat.kernels._compiled._fastexp import _avx512, wide_vectors
from nlpfeat.kernels._compiled._fastexp import fexp as fexp_subnormal
from nlpfeat.kernels._compiled._fastexp import fexp_ftz as fexp
from nlpfeat.kernels._nadaraya_watson import centred_intercepts
from nlpfeat.kernels._pairwise import PairwiseScaled

__all__ = ["CompiledNW", "ard_objective", "family_code", "loo_grid", "position_weights",
           "segment_attention", "supports"]

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


@njit(cache=True, fastmath=_FMA)
def _offsets(zq, Zt, t0, m, centre, dif):
    """``dif[f, :m] = (z_{t0 + i, f} - zq_f) - centre_f``, rounded as numpy rounds it.

    No reassociation here: a training point at the query gives an exact 0 offset, and
    one distinct point with weight gives exact 0 centred offsets (then ``S = 0``).
    """
    for f in range(zq.size):
        q, c = zq[f], centre[f]
        row = Zt[f, t0:t0 + m]
        out = dif[f]
        for i in range(m):
            out[i] = (row[i] - q) - c


@njit(cache=True, fastmath=_FMA)
def _times(w, x, m, out):
    for i in range(m):
        out[i] = w[i] * x[i]


@njit(cache=True)
def _ll_moments(w, zq, Zt, Yt, dif, wdif, zero, m_out, ybar_out, S_out, T_out):
    """Centred local linear moments of one query row with weights ``w`` (n_train,).

    As :func:`nlpfeat.kernels._nadaraya_watson.local_linear`: ``sw = sum w``, the weighted
    means ``m`` of the offsets ``z_i - z_q`` and ``y_bar`` of the targets, then (second
    pass) ``S = sum w (D - m)(D - m)^T / sw`` and ``T = sum w (D - m) y^T / sw``.
    ``dif``, ``wdif`` (d, _TILE) are scratch; ``zero`` is a (d,) array of zeros.
    """
    d, n = Zt.shape
    k = Yt.shape[0]
    sw = _sum(w, n)
    for f in range(d):
        m_out[f] = 0.0
    for t0 in range(0, n, _TILE):
        mm = min(_TILE, n - t0)
        _offsets(zq, Zt, t0, mm, zero, dif)
        for f in range(d):
            m_out[f] += _dot(w[t0:t0 + mm], dif[f], mm)
    for f in range(d):
        m_out[f] /= sw
    for c in range(k):
        ybar_out[c] = _dot(w, Yt[c], n) / sw
    S_out[:] = 0.0
    T_out[:] = 0.0
    for t0 in range(0, n, _TILE):
        mm = min(_TILE, n - t0)
        _offsets(zq, Zt, t0, mm, m_out, dif)
        wt = w[t0:t0 + mm]
        for a in range(d):
            _times(wt, dif[a], mm, wdif[a])
            for b in range(a, d):
                S_out[a, b] += _dot(wdif[a], dif[b], mm)
            for c in range(k):
                T_out[a, c] += _dot(wdif[a], Yt[c, t0:t0 + mm], mm)
    for a in range(d):
        for b in range(a, d):
            S_out[a, b] /= sw
            S_out[b, a] = S_out[a, b]
        for c in range(k):
            T_out[a, c] /= sw


@njit(cache=True)
def _predict_ll_rows(r0, r1, Zq, Zt, Yt, fam, prod, empty, m_out, ybar_out, S_out, T_out):
    """Centred local linear moments of the query rows ``r0 .. r1`` (row ``r`` into ``[r]``).

    A row's weights are computed once into a buffer (normalised by their sum, or in log
    space where the sum underflows, as :func:`_weights_rows`), then read twice.
    """
    d, n = Zt.shape
    w = np.empty(n)
    dif, wdif, zero = np.empty((d, _TILE)), np.empty((d, _TILE)), np.zeros(d)
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
            empty[r] = _log_row(zq, Zt, fam, prod, -1, w)
        _ll_moments(w, zq, Zt, Yt, dif, wdif, zero, m_out[r], ybar_out[r], S_out[r], T_out[r])


@njit(cache=True, parallel=True)
def _predict_ll_parallel(n_rows, n_blocks, *args):
    for b in prange(n_blocks):
        _predict_ll_rows(b * n_rows // n_blocks, (b + 1) * n_rows // n_blocks, *args)


def _ll_buffers(c, d, k, lead=()):
    """Empty ``m``, ``y_bar``, ``S``, ``T`` for ``c`` rows (and ``lead`` axes after them)."""
    shape = (c,) + tuple(lead)
    return (np.empty(shape + (d,)), np.empty(shape + (k,)), np.empty(shape + (d, d)),
            np.empty(shape + (d, k)))


def _ll_bytes(d, k):
    return 8 * (d + k + d * d + d * k)


# ---------------------------------------------------------------- predict

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
        Yt = np.ascontiguousarray(self.Y1t[:k])
        for rows in gen_row_chunks(n_q, _ll_bytes(d, k), working_memory):
            moments = _ll_buffers(rows.stop - rows.start, d, k)
            _run(_predict_ll_rows, _predict_ll_parallel, rows.stop - rows.start, n_jobs,
                 Zq[rows], self.Zt, Yt, self.fam, self.prod, empty[rows], *moments)
            out[rows] = centred_intercepts(*moments)
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
def _loo_rows(r0, r1, base, Z, Zt, Y1t, fam, prod, shift, ray, R, inv_s2, ll, P, m_out,
              ybar_out, S_out, T_out):
    """LOO predictions (lc: ``P[r - base, g]``) or centred local linear moments (ll:
    ``[r - base, g]`` of the four outputs, see :func:`_ll_moments`), rows ``r0 .. r1``.

    The distances of a row are computed once and reused for every grid point.
    """
    d, n = Zt.shape
    k1, G = Y1t.shape[0], R.shape[0]
    Yt = Y1t[:k1 - 1]
    D2 = np.empty(n)
    Dif = np.empty((d, n))
    w = np.empty(n)
    dif, wdif, zero = np.empty((d, _TILE)), np.empty((d, _TILE)), np.zeros(d)
    for r in range(r0, r1):
        i = r
        Dmin = _loo_distances(i, Z, Zt, D2, Dif)
        for g in range(G):
            s = _loo_row_weights(i, g, fam, prod, shift, ray, D2, Dmin, Dif, R, inv_s2, w)[0]
            if ll:   # the coordinates are those of the grid's first bandwidth, as in numpy
                q = r - base
                _ll_moments(w, Z[i], Zt, Yt, dif, wdif, zero, m_out[q, g], ybar_out[q, g],
                            S_out[q, g], T_out[q, g])
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
    Y1t = np.ascontiguousarray(np.vstack([Y.T, np.ones((1, n))]))
    G = len(grid)
    row_bytes = 8 * G * k + (G * _ll_bytes(d, k) if ll else 0)
    totals = np.zeros(G)
    for rows in gen_row_chunks(n, row_bytes, working_memory):
        c = rows.stop - rows.start
        P = np.empty((c, G, k))
        moments = _ll_buffers(c, d, k, (G,)) if ll else _ll_buffers(0, 0, 0, (0,))
        _run(lambda _, m, *a: _loo_rows(rows.start, rows.start + m, rows.start, *a),
             lambda m, b, *a: _loo_parallel(m, b, rows.start, *a), c, n_jobs,
             Z, Zt, Y1t, fam, prod, shift, ray, R, inv_s2, ll, P, *moments)
        for g in range(G):
            Pg = centred_intercepts(*(a[:, g] for a in moments)) if ll else P[:, g]
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
        _ard_b(w, a, P, Yt)  # w becomes B
        _ard_grad_row(i, w, D2, Dif, fam, prod, shared, grad_out[i])


@njit(cache=True)
def _ard_grad_row(i, B, D2, Dif, fam, prod, shared, grad_row):
    """``grad_row[f] = sum_j B_j dl_ij / dlog h_f`` (:func:`_bandwidth._ard_grad_chunk`).

    ``B`` is overwritten; ``D2[i]`` is set to 0 (``B_i = 0``: no ``0 * inf``).
    """
    d, n = Dif.shape
    D2[i] = 0.0
    if prod and fam != GAUSSIAN:
        for f in range(d):
            acc = 0.0
            for j in range(n):
                if j != i:
                    u = abs(Dif[f, j])
                    acc += B[j] * -u * _dlogk_u(fam, u)
            grad_row[f] = acc
        return
    if fam != GAUSSIAN:   # C_j = B_j * -(dlog K/du) / u; the Gaussian's factor is 1
        for j in range(n):
            u = math.sqrt(D2[j]) if j != i else 0.0
            B[j] = B[j] * -_dlogk_u(fam, u) / u if u > 0.0 else 0.0
    if shared:
        grad_row[0] = _dot(B, D2, n)
    else:
        for f in range(d):
            grad_row[f] = _dot_sq(B, Dif[f], n)


@njit(cache=True, parallel=True)
def _ard_parallel(n_rows, n_blocks, *args):
    for b in prange(n_blocks):
        _ard_rows(b * n_rows // n_blocks, (b + 1) * n_rows // n_blocks, *args)


@njit(cache=True)
def _ard_ll_weights(i, Z, Zt, fam, prod, D2, Dif, Xo, w):
    """Normalised LOO weights of row ``i`` into ``w`` and offsets ``Xo = z_j - z_i``.

    Returns whether the row had no point in the support (as :func:`_ard_rows`).
    """
    d, n = Zt.shape
    Dmin = _loo_distances(i, Z, Zt, D2, Dif)
    s, empty = _loo_row_weights(i, 0, fam, prod, fam == GAUSSIAN, True, D2, Dmin, Dif,
                                np.ones((1, d)), np.ones(1), w)
    for j in range(n):
        w[j] /= s
    for f in range(d):
        for j in range(n):
            Xo[f, j] = -Dif[f, j]    # z_j - z_i, exactly
    return empty


@njit(cache=True)
def _ard_ll_rows(r0, r1, base, Z, Zt, Yt, fam, prod, M_out, V_out, empty_out):
    """Local linear ``loo-ard``, first pass: the normal equations of rows ``r0 .. r1``.

    As :func:`nlpfeat.kernels._ll_grad.ll_loo_terms`: with ``x~_j = [1, z_j - z_i]``,
    ``M = sum_j w_j x~_j x~_j^T`` and ``V = sum_j w_j x~_j y_j^T`` (normalised LOO
    weights), into ``[r - base]``.
    """
    d, n = Zt.shape
    k = Yt.shape[0]
    D2, Dif, w = np.empty(n), np.empty((d, n)), np.empty(n)
    Xo, wX = np.empty((d, n)), np.empty((d, n))
    for i in range(r0, r1):
        q = i - base
        empty_out[q] = _ard_ll_weights(i, Z, Zt, fam, prod, D2, Dif, Xo, w)
        M, V = M_out[q], V_out[q]
        M[0, 0] = _sum(w, n)
        for c in range(k):
            V[0, c] = _dot(w, Yt[c], n)
        for a in range(d):
            _times(w, Xo[a], n, wX[a])
            M[0, a + 1] = _sum(wX[a], n)
            for b in range(a, d):
                M[a + 1, b + 1] = _dot(wX[a], Xo[b], n)
            for c in range(k):
                V[a + 1, c] = _dot(wX[a], Yt[c], n)
        for a in range(d + 1):
            for b in range(a + 1, d + 1):
                M[b, a] = M[a, b]


@njit(cache=True, parallel=True)
def _ard_ll_parallel(n_rows, n_blocks, base, *args):
    for b in prange(n_blocks):
        _ard_ll_rows(base + b * n_rows // n_blocks, base + (b + 1) * n_rows // n_blocks, base,
                     *args)


@njit(cache=True)
def _ard_ll_grad_rows(r0, r1, base, Z, Zt, Yt, fam, prod, shared, G0, beta, A, empty,
                      grad_out):
    """Local linear ``loo-ard``, second pass: gradient rows ``[r - base]``.

    ``G0 = M^+ e_1`` (d + 1,), ``beta`` (d + 1, k) and ``A = dLoss/dP`` (k,) per row, from
    numpy; ``B_j = w_j g_j (A . r_j)`` with ``g_j = x~_j . G0`` and the residuals
    ``r_j = y_j - beta^T x~_j`` (:func:`nlpfeat.kernels._ll_grad.ll_loo_terms`), then
    :func:`_ard_grad_row`.
    """
    d, n = Zt.shape
    k = Yt.shape[0]
    D2, Dif, w = np.empty(n), np.empty((d, n)), np.empty(n)
    Xo, g, e = np.empty((d, n)), np.empty(n), np.empty(n)
    for i in range(r0, r1):
        q = i - base
        grad_out[q] = 0.0
        _ard_ll_weights(i, Z, Zt, fam, prod, D2, Dif, Xo, w)
        if empty[q]:
            continue
        for j in range(n):
            g[j] = G0[q, 0]
            e[j] = 0.0
        for a in range(d):
            ga = G0[q, a + 1]
            xa = Xo[a]
            for j in range(n):
                g[j] += xa[j] * ga
        for c in range(k):
            ac = A[q, c]
            b0 = beta[q, 0, c]
            yc = Yt[c]
            for j in range(n):
                fit = b0
                for a in range(d):
                    fit += Xo[a, j] * beta[q, a + 1, c]
                e[j] += (yc[j] - fit) * ac
        for j in range(n):
            w[j] = w[j] * g[j] * e[j]
        _ard_grad_row(i, w, D2, Dif, fam, prod, shared, grad_out[q])


@njit(cache=True, parallel=True)
def _ard_ll_grad_parallel(n_rows, n_blocks, base, *args):
    for b in prange(n_blocks):
        _ard_ll_grad_rows(base + b * n_rows // n_blocks, base + (b + 1) * n_rows // n_blocks,
                          base, *args)


def _ard_ll_objective(theta, X, Y, kern, metric, loss, working_memory, n_jobs):
    """Mean LOO loss of local linear fits and its gradient in ``log h`` (compiled)."""
    from nlpfeat.kernels._bandwidth import _loss_grad

    n, k = Y.shape
    h = np.exp(theta)
    pair = PairwiseScaled(X, h if h.size > 1 else h[0], metric)
    Z = np.ascontiguousarray(pair.Z)
    d = Z.shape[1]
    Zt, Yt = np.ascontiguousarray(Z.T), np.ascontiguousarray(Y.T)
    fam, prod = family_code(kern), metric == "product"
    grad, total = np.zeros(d), 0.0
    row_bytes = 8 * (2 * (d + 1) * (d + 1 + k) + d + 2)
    for rows in gen_row_chunks(n, row_bytes, working_memory):
        c, r0 = rows.stop - rows.start, rows.start
        M, V = np.empty((c, d + 1, d + 1)), np.empty((c, d + 1, k))
        empty = np.zeros(c, dtype=bool)
        _run(lambda _, m, *a: _ard_ll_rows(r0, r0 + m, r0, *a),
             lambda m, b, *a: _ard_ll_parallel(m, b, r0, *a), c, n_jobs,
             Z, Zt, Yt, fam, prod, M, V, empty)
        M_inv = np.linalg.pinv(M, hermitian=True)              # as ll_loo_terms
        beta = M_inv @ V
        chunk_loss, A = _loss_grad(beta[:, 0, :], Y[rows], loss)
        total += chunk_loss
        grad_rows = np.empty((c, d))
        _run(lambda _, m, *a: _ard_ll_grad_rows(r0, r0 + m, r0, *a),
             lambda m, b, *a: _ard_ll_grad_parallel(m, b, r0, *a), c, n_jobs,
             Z, Zt, Yt, fam, prod, h.size == 1, np.ascontiguousarray(M_inv[:, :, 0]),
             np.ascontiguousarray(beta), np.ascontiguousarray(A), empty, grad_rows)
        grad += grad_rows.sum(axis=0)
    scale = n if loss == "log_loss" else n * k
    return total / scale, grad[:theta.size] / scale


def ard_objective(n_jobs=None):
    """The ``loo-ard`` objective of :func:`nlpfeat.kernels._bandwidth.loo_ard`, compiled.

    Returns a function of ``(theta, X, Y, kern, metric, loss, working_memory,
    reg_type="lc")`` giving the mean LOO loss and its gradient in ``theta = log h``, as
    ``_ard_objective`` does. Local constant fits: the compiled loop keeps two rows of
    ``n`` (and ``n_features``) values per thread, so ``working_memory`` is not needed;
    local linear fits: rows in chunks under ``working_memory`` (their normal equations
    go through numpy's ``pinv`` between two compiled passes).
    """
    def objective(theta, X, Y, kern, metric, loss, working_memory, reg_type="lc"):
        if reg_type == "ll":
            return _ard_ll_objective(theta, X, Y, kern, metric, loss, working_memory, n_jobs)
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


# ---------------------------------------------------------------- segments (text features)

@njit(cache=True)
def _segment_attention_rows(s0, s1, V, bounds, fam, linear, Q, TW, scale, h, tie_rtol,
                            pooled, W, dist, dist_only):
    """Attention pooling of segments ``s0 .. s1`` (tokens ``bounds[s] .. bounds[s + 1]``).

    As :func:`nlpfeat.text._kernel_features._pooling.attention_pool`, step for step: the query (``Q`` if
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
            q[:] = 0.0
            tsum = 0.0
            for t in range(a, b):
                tsum += TW[t]
                for f in range(d):
                    q[f] += TW[t] * V[t, f]
            for f in range(d):
                q[f] /= tsum
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

    The compiled :func:`nlpfeat.text._kernel_features._pooling.attention_pool` (same arguments and results;
    ``tie_rtol`` is the text side's tie tolerance of the nearest-token fallback): one pass
    per document over its tokens (query, distances, log kernel, normalisation, weighted
    sum), no ``(n_tokens, d)`` temporary. ``kern`` must be a built-in kernel.
    ``distances_only``: return the distances of the tokens to their document's query
    instead (:func:`nlpfeat.text._kernel_features._pooling.query_distances`; ``kern`` is then unused and
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

    The compiled :func:`nlpfeat.text._kernel_features._lowbow.lowbow_weights` (same arguments and result;
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
