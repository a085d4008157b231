"""The compiled ``loo-ard`` objective: the leave-one-out loss and its gradient in ``log h``.

The formulas of :func:`nlpfeat.kernels._bandwidth._ard_objective` (local constant) and
:mod:`nlpfeat.kernels._ll_grad` (local linear: the centred local moments in the loop,
:func:`~nlpfeat.kernels._loss.local_solve` in numpy, the weight sensitivities in a second
loop), row by row.
"""
import math

import numpy as np
from numba import njit, prange

from nlpfeat._chunking import gen_row_chunks
from nlpfeat.kernels._compiled._loo import _loo_distances, _loo_row_weights
from nlpfeat.kernels._compiled._moments import (
    _ll_buffers,
    _ll_bytes,
    _ll_moments,
    _offsets,
)
from nlpfeat.kernels._compiled._rows import (
    _FAST,
    _TILE,
    GAUSSIAN,
    _dlogk_u,
    _dot,
    _run,
    _run_chunk,
    _sum,
    family_code,
)
from nlpfeat.kernels._loss import (
    ll_exponent,
    local_solve,
    loss_grad,
    mean_loss,
    spread_tolerance,
)
from nlpfeat.kernels._pairwise import PairwiseScaled

__all__ = ["ard_objective"]



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
    zmax = np.array([np.abs(Z).max()])
    eps = np.finfo(np.float64).eps
    for i in range(r0, r1):
        Dmin = _loo_distances(i, Z, Zt, D2, Dif)
        s, empty = _loo_row_weights(i, 0, fam, prod, fam == GAUSSIAN, True, D2, Dmin, Dif,
                                    R, inv_s2, Z[i], zmax, w)
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
def _ard_ll_weights(i, Z, Zt, zmax, fam, prod, D2, Dif, w):
    """Normalised LOO weights of row ``i`` into ``w`` (``zmax``: ``[max |Z|]``, the scale
    of the tie rule). Returns whether the row had no point in the support (as
    :func:`_ard_rows`)."""
    d, n = Zt.shape
    Dmin = _loo_distances(i, Z, Zt, D2, Dif)
    s, empty = _loo_row_weights(i, 0, fam, prod, fam == GAUSSIAN, True, D2, Dmin, Dif,
                                np.ones((1, d)), np.ones(1), Z[i], zmax, w)
    for j in range(n):
        w[j] /= s
    return empty


@njit(cache=True)
def _ard_ll_rows(r0, r1, base, Z, Zt, cs, Yt, fam, prod, m_out, ybar_out, S_out, T_out,
                 mc_out, anchor_out, empty_out):
    """Local linear ``loo-ard``, first pass: the centred local moments of rows ``r0 ..
    r1`` (normalised LOO weights; :func:`._moments._ll_moments`, as the numpy twin
    :func:`nlpfeat.kernels._ll_grad.ll_loo_terms`), their anchors and centroids (offsets
    from the anchor), into ``[r - base]``."""
    d, n = Zt.shape
    D2, Dif, w = np.empty(n), np.empty((d, n)), np.empty(n)
    dif, wdif, zero = np.empty((d, _TILE)), np.empty((d, _TILE)), np.zeros(d)
    zmax = np.array([np.abs(Z).max()])
    for i in range(r0, r1):
        q = i - base
        empty_out[q] = _ard_ll_weights(i, Z, Zt, zmax, fam, prod, D2, Dif, w)
        anchor_out[q] = _ll_moments(w, Z[i], Zt, cs, Yt, dif, wdif, zero, mc_out[q], m_out[q],
                                    ybar_out[q], S_out[q], T_out[q])


@njit(cache=True, parallel=True)
def _ard_ll_parallel(n_rows, n_blocks, base, *args):
    for b in prange(n_blocks):
        _ard_ll_rows(base + b * n_rows // n_blocks, base + (b + 1) * n_rows // n_blocks, base,
                     *args)


@njit(cache=True)
def _ard_ll_grad_rows(r0, r1, base, Z, Zt, cs, Yt, fam, prod, shared, G, b, ybar, A, mc,
                      anchor, empty, grad_out):
    """Local linear ``loo-ard``, second pass: gradient rows ``[r - base]``.

    From numpy, per row: ``G = S^+ m`` (d,), the slopes ``b`` (d, k), ``ybar`` (k,) and
    ``A = dLoss/dP`` (k,); with the centred offsets ``c_j = (z_j - z_a) cs - mc``,
    ``B_j = w_j g_j (A . r_j)``, ``g_j = (1 - c_j . G) / sum w`` and the residuals
    ``r_j = y_j - ybar - b^T c_j`` (:func:`nlpfeat.kernels._ll_grad.ll_loo_terms`), then
    :func:`_ard_grad_row`.
    """
    d, n = Zt.shape
    k = Yt.shape[0]
    D2, Dif, w = np.empty(n), np.empty((d, n)), np.empty(n)
    Dc, g, e = np.empty((d, n)), np.empty(n), np.empty(n)
    zmax = np.array([np.abs(Z).max()])
    for i in range(r0, r1):
        q = i - base
        grad_out[q] = 0.0
        _ard_ll_weights(i, Z, Zt, zmax, fam, prod, D2, Dif, w)
        if empty[q]:
            continue
        _offsets(Zt[:, anchor[q]].copy(), Zt, 0, n, cs, mc[q], Dc)
        sw = _sum(w, n)
        for j in range(n):
            g[j] = 1.0
            e[j] = 0.0
        for a in range(d):
            ga = G[q, a]
            for j in range(n):
                g[j] -= Dc[a, j] * ga
        for c in range(k):
            ac = A[q, c]
            for j in range(n):
                r = Yt[c, j] - ybar[q, c]
                for a in range(d):
                    r -= Dc[a, j] * b[q, a, c]
                e[j] += r * ac
        for j in range(n):
            w[j] = w[j] * (g[j] / sw) * e[j]
        _ard_grad_row(i, w, D2, Dif, fam, prod, shared, grad_out[q])


@njit(cache=True, parallel=True)
def _ard_ll_grad_parallel(n_rows, n_blocks, base, *args):
    for b in prange(n_blocks):
        _ard_ll_grad_rows(base + b * n_rows // n_blocks, base + (b + 1) * n_rows // n_blocks,
                          base, *args)


def _ard_ll_objective(theta, X, Y, kern, metric, loss, working_memory, n_jobs):
    """Mean LOO loss of local linear fits and its gradient in ``log h`` (compiled)."""
    n, k = Y.shape
    h, Z = _scaled(theta, X, metric)
    d = Z.shape[1]
    Zt, Yt = np.ascontiguousarray(Z.T), np.ascontiguousarray(Y.T)
    e = ll_exponent(Z)
    cs, tol = 2.0**-e, spread_tolerance(np.ldexp(Z, -e))   # as ll_loo_terms
    fam, prod = family_code(kern), metric == "product"
    grad, total = np.zeros(d), 0.0
    row_bytes = 8 * (2 * _ll_bytes(d, k) + d * (k + 2) + 2)
    for rows in gen_row_chunks(n, row_bytes, working_memory):
        c, r0 = rows.stop - rows.start, rows.start
        m, ybar, S, T = _ll_buffers(c, d, k)
        mc, anchor = np.empty((c, d)), np.empty(c, dtype=np.int64)
        empty = np.zeros(c, dtype=bool)
        _run_chunk(r0, _ard_ll_rows, _ard_ll_parallel, c, n_jobs, Z, Zt, cs, Yt, fam, prod,
                   m, ybar, S, T, mc, anchor, empty)
        sol = local_solve(S, np.concatenate([T, m[:, :, None]], axis=2), tol)
        b, G = np.ascontiguousarray(sol[:, :, :k]), np.ascontiguousarray(sol[:, :, k])
        chunk_loss, A = loss_grad(ybar - np.einsum("qd,qdk->qk", m, b), Y[rows], loss)
        total += chunk_loss
        grad_rows = np.empty((c, d))
        _run_chunk(r0, _ard_ll_grad_rows, _ard_ll_grad_parallel, c, n_jobs, Z, Zt, cs, Yt, fam,
                   prod, h.size == 1, G, b, ybar, np.ascontiguousarray(A), mc, anchor, empty,
                   grad_rows)
        grad += grad_rows.sum(axis=0)
    return mean_loss(total, n, k, loss), mean_loss(grad[:theta.size], n, k, loss)


def _scaled(theta, X, metric):
    """The bandwidths ``h = exp(theta)`` and the rows of X scaled by them (C-ordered)."""
    h = np.exp(theta)
    return h, np.ascontiguousarray(PairwiseScaled(X, h if h.size > 1 else h[0], metric).Z)


def ard_objective(n_jobs=None):
    """The ``loo-ard`` objective of :func:`nlpfeat.kernels._bandwidth.loo_ard`, compiled.

    Returns a function of ``(theta, X, Y, kern, metric, loss, working_memory,
    reg_type="lc")`` giving the mean LOO loss and its gradient in ``theta = log h``, as
    ``_ard_objective`` does. Local constant fits: the compiled loop keeps two rows of
    ``n`` (and ``n_features``) values per thread, so ``working_memory`` is not needed;
    local linear fits: rows in chunks under ``working_memory`` (their centred moments go
    through :func:`nlpfeat.kernels._loss.local_solve` between two compiled passes).
    """
    def objective(theta, X, Y, kern, metric, loss, working_memory, reg_type="lc"):
        if reg_type == "ll":
            return _ard_ll_objective(theta, X, Y, kern, metric, loss, working_memory, n_jobs)
        n, k = Y.shape
        h, Z = _scaled(theta, X, metric)
        loss_rows = np.empty(n)
        grad_rows = np.empty((n, Z.shape[1]))
        _run(_ard_rows, _ard_parallel, n, n_jobs, Z, np.ascontiguousarray(Z.T),
             np.ascontiguousarray(Y.T), family_code(kern), metric == "product", h.size == 1,
             loss == "log_loss", loss_rows, grad_rows)
        grad = grad_rows[:, :theta.size].sum(axis=0)
        return mean_loss(loss_rows.sum(), n, k, loss), mean_loss(grad, n, k, loss)

    return objective
