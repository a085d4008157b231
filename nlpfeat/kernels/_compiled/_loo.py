"""Compiled leave-one-out losses over a grid of bandwidths.

The distances of a training row to the others are computed once and reused for every
bandwidth of the grid; a Gaussian kernel on a ray grid (every bandwidth a multiple of the
first) shifts each row by its nearest other point, so its weights never underflow. The
same quantities as :func:`nlpfeat.kernels._bandwidth.loo_grid`.
"""
import numpy as np
from numba import njit, prange

from nlpfeat._chunking import gen_row_chunks
from nlpfeat.kernels._compiled._fastexp import fexp_ftz as fexp
from nlpfeat.kernels._compiled._moments import _ll_buffers, _ll_bytes, _ll_moments
from nlpfeat.kernels._compiled._rows import (
    _TILE,
    _TINY,
    GAUSSIAN,
    _abs_max,
    _apply_u2,
    _dot,
    _k_u,
    _logk_point,
    _logk_u2,
    _min,
    _run_chunk,
    _share_nearest,
    _sum,
    family_code,
)
from nlpfeat.kernels._loss import (
    centred_intercepts,
    ll_exponent,
    loss_grad,
    mean_loss,
    ray_scales,
    spread_tolerance,
)
from nlpfeat.kernels._pairwise import UNDERFLOW_LOG, PairwiseScaled

__all__ = ["loo_grid", "loo_pairs"]



@njit(cache=True)
def _loo_row_weights(i, g, fam, prod, shift, ray, D2, Dmin, Dif, R, inv_s2, zi, zmax, w):
    """Unnormalised LOO weights of training row ``i`` (coordinates ``zi``) at grid point
    ``g`` into ``w``.

    ``shift``: Gaussian on a ray grid, ``exp(-(D2 - min D2) / (2 s^2))`` (never
    underflows: the nearest other point has weight 1). Otherwise the kernel of the
    distances rescaled from the base bandwidth (``R[g]`` = base / h per feature).
    A sum that underflows is redone in log space (max shift; a row with no point in
    the support gets its nearest other point(s), :func:`_loo_nearest`, and in a row whose
    weights underflow the tied nearest points share exactly, as numpy's
    :func:`~nlpfeat.kernels._pairwise.tie_log_weights`).
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
    # log space, distances rescaled as above
    top = -np.inf
    for j in range(n):
        if j == i:
            w[j] = -np.inf
            continue
        if ray and (not prod or fam == GAUSSIAN):
            w[j] = _logk_u2(fam, D2[j] * inv_s2[g])
        else:
            w[j] = _logk_point(fam, prod, Dif[:, j], R[g])
        top = max(top, w[j])
    if top == -np.inf:
        _loo_nearest(i, g, ray, D2, Dif, R, zi, zmax, w)
        return 1.0, True
    if top < UNDERFLOW_LOG:   # underflowing weights: the tied nearest points share exactly
        near = np.empty(n)
        _loo_nearest(i, g, ray, D2, Dif, R, zi, zmax, near)
        for j in range(n):
            if near[j] > 0.0:
                w[j] = top
    for j in range(n):
        w[j] = fexp(w[j] - top)
    return _sum(w, n), False


@njit(cache=True)
def _loo_nearest(i, g, ray, D2, Dif, R, zi, zmax, w):
    """Equal weights on the nearest other point(s) of row ``i`` into ``w``, as the numpy
    twin (:func:`nlpfeat.kernels._bandwidth.loo_nearest`): on a ray grid by the base
    distances ``D2``, else in the coordinates of grid point ``g`` (``zmax[g]``: the
    largest ``|z|`` there)."""
    d, n = Dif.shape
    if ray:
        for j in range(n):
            w[j] = D2[j]
        _share_nearest(w, i, _abs_max(zi) + zmax[0], d, w)
        return
    zs = 0.0
    for f in range(d):
        zs = max(zs, abs(zi[f] * R[g, f]))
    for j in range(n):
        u2 = 0.0
        for f in range(d):
            x = Dif[f, j] * R[g, f]
            u2 += x * x
        w[j] = u2
    _share_nearest(w, i, zs + zmax[g], d, w)


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
def _loo_rows(r0, r1, base, rows, need, Z, Zt, Y1t, fam, prod, shift, ray, R, inv_s2, zmax,
              ll, cs, P, m_out, ybar_out, S_out, T_out):
    """LOO predictions (lc: ``P[r - base, g]``) or centred local linear moments (ll:
    ``[r - base, g]`` of the four outputs, see :func:`_ll_moments`) of the training rows
    ``rows[r0 .. r1]``, at the grid points ``g`` where ``need[r, g]`` (every grid point
    when ``need`` is empty: (0, 0)).

    The distances of a row are computed once and reused for every grid point.
    """
    d, n = Zt.shape
    k1, G = Y1t.shape[0], R.shape[0]
    Yt = Y1t[:k1 - 1]
    D2 = np.empty(n)
    Dif = np.empty((d, n))
    w = np.empty(n)
    dif, wdif, zero = np.empty((d, _TILE)), np.empty((d, _TILE)), np.zeros(d)
    mc = np.empty(d)   # scratch: the centroid offset from the anchor
    every = need.shape[0] == 0
    for r in range(r0, r1):
        i = rows[r]
        Dmin = _loo_distances(i, Z, Zt, D2, Dif)
        for g in range(G):
            if not every and not need[r, g]:
                continue
            s = _loo_row_weights(i, g, fam, prod, shift, ray, D2, Dmin, Dif, R, inv_s2, Z[i],
                                 zmax, w)[0]
            if ll:   # the coordinates are those of the grid's first bandwidth, as in numpy
                q = r - base
                for j in range(n):   # normalised, as numpy's: one point with weight 1
                    w[j] /= s
                _ll_moments(w, Z[i], Zt, cs, Yt, dif, wdif, zero, mc, m_out[q, g],
                            ybar_out[q, g], S_out[q, g], T_out[q, g])
            else:
                for c in range(k1 - 1):
                    P[r - base, g, c] = _dot(w, Yt[c], n) / s


@njit(cache=True, parallel=True)
def _loo_parallel(n_rows, n_blocks, base, *args):
    for b in prange(n_blocks):
        _loo_rows(base + b * n_rows // n_blocks, base + (b + 1) * n_rows // n_blocks, base,
                  *args)


def _loo_chunks(X, Y, kern, metric, grid, rows, need, reg_type, working_memory, n_jobs):
    """Chunks ``(chunk, P)`` of LOO predictions ``P`` (c, G, k) of the training rows
    ``rows[chunk]`` at the grid points where ``need[chunk]`` (all: ``need`` of shape
    (0, 0); elsewhere ``P`` is undefined)."""
    n, k = Y.shape
    scales = ray_scales(grid)
    base = grid[0]
    pair = PairwiseScaled(X, base if base.size > 1 else base[0], metric)
    Z = np.ascontiguousarray(pair.Z)
    d = Z.shape[1]
    Zt = np.ascontiguousarray(Z.T)
    fam, prod = family_code(kern), metric == "product"
    # a writable copy: a broadcast view is read-only, a second specialisation of each loop
    R = np.array(np.broadcast_to(base / grid, (len(grid), d)), order="C")
    ray = scales is not None
    inv_s2 = 1.0 / scales**2 if ray else np.ones(len(grid))
    shift = ray and fam == GAUSSIAN
    # the largest |z| in the coordinates that pick the nearest points (tie rule)
    zmax = (np.array([np.abs(Z).max(initial=0.0)]) if ray else
            np.array([np.abs(Z * R[g]).max(initial=0.0) for g in range(len(grid))]))
    ll = reg_type == "ll"
    e = ll_exponent(Z) if ll else 0
    cs, tol = 2.0**-e, spread_tolerance(np.ldexp(Z, -e))   # as numpy's NWIndex.C
    Y1t = np.ascontiguousarray(np.vstack([Y.T, np.ones((1, n))]))
    G = len(grid)
    row_bytes = 8 * G * k + (G * _ll_bytes(d, k) if ll else 0)
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    for chunk in gen_row_chunks(len(rows), row_bytes, working_memory):
        c = chunk.stop - chunk.start
        P = np.empty((c, G, k))
        moments = _ll_buffers(c, d, k, (G,)) if ll else _ll_buffers(0, 0, 0, (0,))
        _run_chunk(chunk.start, _loo_rows, _loo_parallel, c, n_jobs, rows, need, Z, Zt, Y1t,
                   fam, prod, shift, ray, R, inv_s2, zmax, ll, cs, P, *moments)
        for g in range(G) if ll else ():
            sel = slice(None) if need.shape[0] == 0 else need[chunk, g]
            P[sel, g] = centred_intercepts(*(a[sel, g] for a in moments), tol)
        yield chunk, P


def loo_grid(X, Y, kern, metric, grid, *, reg_type="lc", loss="squared", working_memory=None,
             n_jobs=None, progress=None):
    """:func:`nlpfeat.kernels._bandwidth.loo_grid` on the compiled engine (same arguments)."""
    n, k = Y.shape
    totals = np.zeros(len(grid))
    for chunk, P in _loo_chunks(X, Y, kern, metric, grid, np.arange(n), np.zeros((0, 0), bool),
                                reg_type, working_memory, n_jobs):
        for g in range(len(grid)):
            totals[g] += loss_grad(P[:, g], Y[chunk], loss)[0]
        if progress is not None:
            progress(chunk.stop - chunk.start)
    return mean_loss(totals, n, k, loss)


def loo_pairs(X, Y, kern, metric, grid, rows, need, *, reg_type="lc", working_memory=None,
              n_jobs=None):
    """Exact LOO predictions (len(rows), G, k) of the training rows ``rows`` at the grid
    points where ``need`` (len(rows), G) is set, in one pass (each row's distances once
    for all its grid points); undefined elsewhere. The rows the binned search cannot
    certify are scored here."""
    P = np.empty((len(rows), len(grid), Y.shape[1]))
    for chunk, Pc in _loo_chunks(X, Y, kern, metric, grid, rows, np.ascontiguousarray(need),
                                 reg_type, working_memory, n_jobs):
        P[chunk] = Pc
    return P
