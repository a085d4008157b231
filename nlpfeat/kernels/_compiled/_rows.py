"""Compiled building blocks: family codes, threads, scalar kernels and tiles of one row.

Every compiled task (:mod:`._predict`, :mod:`._loo`, :mod:`._ard`, :mod:`._segments`) is
built from these ``@njit`` functions:

- the kernels are selected by a family code taken from :attr:`Kernel.family` (never by
  name); a user's kernel has no family and stays on the numpy path (:func:`supports`);
- scalar kernels of the scaled distance ``u`` or its square (``_k_u``, ``_k_u2``), their
  logs (``_logk_u``, ``_logk_u2``, for rows redone in log space) and ``d log K / du``;
- tiles of training points that stay in L1: squared scaled distances (training data are
  stored feature-major, so the loop over training points vectorises), the kernel in
  linear space (the vectorised ``exp`` of :mod:`._fastexp`, flushed to zero below
  ``exp(-708)``) and the sums; a row whose weight sum underflows (below ``_TINY``) or is
  zero is recomputed in log space with a max shift (:func:`_log_row`), so it degrades to
  nearest-neighbour weights, exactly as the numpy path does;
- :func:`_run`: ``n_jobs`` threads split the rows (``prange`` over blocks); every row is
  computed by the same code whatever the thread count, so results do not depend on
  ``n_jobs``.
"""
import math

import numba
import numpy as np
from joblib import effective_n_jobs
from numba import njit
from scipy import sparse

from nlpfeat.kernels._compiled._fastexp import fexp_ftz as fexp
from nlpfeat.kernels._compiled._fastexp import wide_vectors
from nlpfeat.kernels._pairwise import UNDERFLOW_LOG, tie_tolerance

__all__ = ["GAUSSIAN", "family_code", "supports"]

(GAUSSIAN, EPANECHNIKOV, BIWEIGHT, TRIWEIGHT, TRICUBE, TRIANGULAR, TOPHAT, COSINE,
 LAPLACIAN, LOGISTIC, SIGMOID) = range(11)
_FAMILIES = {"gaussian": GAUSSIAN, "epanechnikov": EPANECHNIKOV, "biweight": BIWEIGHT,
             "triweight": TRIWEIGHT, "tricube": TRICUBE, "triangular": TRIANGULAR,
             "tophat": TOPHAT, "cosine": COSINE, "laplacian": LAPLACIAN,
             "logistic": LOGISTIC, "sigmoid": SIGMOID}
_TILE = 256          # training points per tile: a few KiB of buffers, in L1
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


def _run_chunk(start, serial, parallel, n_rows, n_jobs, *args):
    """:func:`_run` over the rows ``start .. start + n_rows`` of a chunk: ``serial`` and
    ``parallel`` also take ``start``, where their output arrays begin (output row 0)."""
    _run(lambda _, m, *a: serial(start, start + m, start, *a),
         lambda m, b, *a: parallel(m, b, start, *a), n_rows, n_jobs, *args)



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
def _logk_point(fam, prod, dif, r):
    """Log kernel of one training point from its differences ``dif`` (d,) to the query,
    each scaled by ``r`` (d,): a product of one-dimensional kernels, or radial."""
    l = 0.0
    if prod and fam != GAUSSIAN:
        for f in range(dif.size):
            l += _logk_u(fam, abs(dif[f]) * r[f])
        return l
    for f in range(dif.size):
        l += dif[f] * dif[f] * r[f] * r[f]
    return _logk_u2(fam, l)


_tie_tolerance = njit(cache=True)(tie_tolerance)   # the numpy paths' rule, compiled


@njit(cache=True)
def _share_nearest(D2, skip, zscale, d, w):
    """``w`` = equal weights on the nearest entries of ``D2`` (accurate squared scaled
    distances), ties within :func:`~nlpfeat.kernels._pairwise.tie_tolerance` of
    ``zscale`` (``max |z_q| + max |z_i|``), as :func:`~nlpfeat.kernels._pairwise.nearest_mask`.

    ``skip`` (-1 for none) gets no weight (leave-one-out). ``w`` may be ``D2`` itself.
    """
    n = D2.size
    near = np.inf
    for i in range(n):
        if i != skip:
            near = min(near, D2[i])
    cut = math.sqrt(near) + _tie_tolerance(zscale, d)
    total = 0.0
    for i in range(n):
        w[i] = 1.0 if (i != skip and math.sqrt(D2[i]) <= cut) else 0.0
        total += w[i]
    for i in range(n):
        w[i] /= total


@njit(cache=True)
def _abs_max(x):
    s = 0.0
    for i in range(x.size):
        s = max(s, abs(x[i]))
    return s


@njit(cache=True)
def _log_row(zq, Zt, zmax, fam, prod, skip, w):
    """Normalised weights of one row in log space into ``w``; returns True when empty.

    Max shift, then ``exp``; a row with no training point in the support (all
    ``-inf``) shares its weight equally among its nearest training point(s)
    (:func:`_share_nearest`; ``zmax`` is ``max |z_i|`` of the training rows), and in a row
    whose weights underflow the tied nearest points get the largest log weight, as
    :func:`~nlpfeat.kernels._pairwise.tie_log_weights`. ``skip`` (-1 for none) is left
    out (leave-one-out).
    """
    n, d = Zt.shape[1], Zt.shape[0]
    dif, ones = np.empty(d), np.ones(d)
    top = -np.inf
    for i in range(n):
        if i == skip:
            w[i] = -np.inf
            continue
        for f in range(d):
            dif[f] = zq[f] - Zt[f, i]
        w[i] = _logk_point(fam, prod, dif, ones)
        top = max(top, w[i])
    if top == -np.inf or top < UNDERFLOW_LOG:
        near = np.empty(n)
        for i in range(n):
            u2 = 0.0
            for f in range(d):
                diff = zq[f] - Zt[f, i]
                u2 += diff * diff
            near[i] = u2
        _share_nearest(near, skip, _abs_max(zq) + zmax, d, near)
        if top == -np.inf:
            w[:] = near
            return True
        for i in range(n):   # underflowing weights: the tied nearest points share exactly
            if near[i] > 0.0:
                w[i] = top
    total = 0.0
    for i in range(n):
        w[i] = fexp(w[i] - top)
        total += w[i]
    for i in range(n):
        w[i] /= total
    return False


@njit(cache=True, fastmath=_FMA)
def _times(w, x, m, out):
    for i in range(m):
        out[i] = w[i] * x[i]
