"""Bandwidth selection: rules of thumb, leave-one-out grid search and learned (ARD) bandwidths.

Leave-one-out (LOO) is one chunked pass over the train-by-train matrix with its diagonal
masked (a point never predicts itself), not ``n`` refits. The train-by-train distances
are computed once per row chunk and reused for every bandwidth of the grid.

Every bandwidth returned is strictly positive: rules of thumb fall back to the
magnitude of a constant feature (1 for an all-zero one), and the learned bandwidths are
optimised in ``log h`` within bounds.
"""
import numpy as np
from scipy import sparse
from scipy.optimize import minimize

from nlpfeat._chunking import gen_row_chunks
from nlpfeat.kernels._ll_grad import ll_loo_terms
from nlpfeat.kernels._loss import EPS, loss_grad, mean_loss, ray_scales
from nlpfeat.kernels._nadaraya_watson import NWIndex
from nlpfeat.kernels._pairwise import (
    UNDERFLOW_LOG,
    PairwiseScaled,
    _share,
    nearest_mask,
    softmax_rows,
    tie_log_weights,
)

__all__ = ["default_grid", "loo_ard", "loo_grid", "loo_rows", "normal_reference",
           "rule_of_thumb"]

_N_GRID = 30        # default grid of bandwidth="loo"
_N_ARD_GRID = 10    # starting grid of bandwidth="loo-ard" (and "aic")


def rule_of_thumb(X, method="scott", metric="euclidean"):
    """Scott's or Silverman's normal-reference bandwidth.

    Dense input with metric "euclidean"/"product": one bandwidth per feature,
    ``h_f = c * sigma_f * n ** (-1 / (d + 4))`` with ``c = 1`` (Scott) or
    ``(4 / (d + 2)) ** (1 / (d + 4))`` (Silverman, 1.06 for d = 1, as statsmodels'
    ``normal_reference``). Sparse input or ``metric="cosine"``: a scalar, the median
    distance between (up to 500) rows times the same factor with d = 1.
    A constant feature (sigma = 0 up to rounding) gets its magnitude ``|x_f|`` instead of
    sigma (1.0 when it is 0), so every value is strictly positive and rescaling X
    rescales the bandwidths with it.
    """
    n, d = X.shape
    if sparse.issparse(X) or metric == "cosine":
        sub = X[: min(n, 500)]
        # distances in units of a power of two near the largest |x| (exact): squares of
        # x around 1e-300 or 1e300 would underflow or overflow
        e = 0 if metric == "cosine" else _exponent(abs(sub).max() if sub.size else 0.0)
        pair = PairwiseScaled(sub, np.ldexp(1.0, e), metric)
        D = np.ldexp(np.sqrt(pair.sq_dist(pair.query(sub))), e)
        D = D[np.triu_indices(D.shape[0], 1)]
        D = D[D > 0]
        sigma, d = (float(np.median(D)) if D.size else 1.0), 1
    else:
        size = np.abs(X).max(axis=0) if n else np.zeros(d)
        # the deviation of each column in units of a power of two near its largest |x|
        # (exact), so that squares of x around 1e-300 do not underflow to a zero spread
        e = np.array([_exponent(v) for v in size], dtype=int)
        sigma = np.ldexp(np.ldexp(X, -e).std(axis=0, ddof=1), e) if n > 1 else np.zeros(d)
        # A constant feature (no spread beyond rounding) gets its own magnitude, so that
        # the rule stays scale-equivariant; an all-zero one gets 1.
        sigma = np.where(sigma > 10 * EPS * size, sigma, np.where(size > 0, size, 1.0))
    return normal_reference(sigma, n, d, method)


def normal_reference(sigma, n, d, method="scott"):
    """Scott's (``method="scott"``) or Silverman's factor times ``sigma * n**(-1/(d+4))``
    (the rule of :func:`rule_of_thumb`, from a spread ``sigma`` computed elsewhere, e.g.
    over the partitions of a dask array)."""
    factor = 1.0 if method == "scott" else (4.0 / (d + 2)) ** (1.0 / (d + 4))
    return factor * sigma * max(n, 2) ** (-1.0 / (d + 4))


def _exponent(value):
    """The power of two of a non-negative float (``frexp``'s exponent; 0 for 0)."""
    return int(np.frexp(float(value))[1]) if value > 0 else 0


def default_grid(h0, n_points=_N_GRID):
    """``n_points`` log-spaced multiples (0.05 to 5) of the rule-of-thumb ``h0``."""
    scales = np.geomspace(0.05, 5.0, n_points)
    return scales[:, None] * np.atleast_1d(h0)[None, :]


def loo_grid(X, Y, kern, metric, grid, *, reg_type="lc", loss="squared", working_memory=None,
             progress=None):
    """Leave-one-out loss for every bandwidth of ``grid`` (shape (g, d) or (g, 1)).

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, n_features)
    Y : ndarray of shape (n, k)
        Targets (one-hot classes for ``loss="log_loss"``).
    kern : Kernel
    metric : {"euclidean", "product", "cosine"}
    grid : ndarray of shape (n_grid, n_features) or (n_grid, 1)
    reg_type : {"lc", "ll"}
    loss : {"squared", "log_loss"}
    working_memory : float, default=None
    progress : callable or None, default=None
        Called with the number of rows done after each chunk (a progress bar's update).

    Returns
    -------
    losses : ndarray of shape (n_grid,)
        Mean squared LOO error (mean over samples and outputs) or mean LOO log loss.
    """
    n, k = Y.shape
    scales = ray_scales(grid)
    per_feature = scales is None or (metric == "product" and kern.family != "gaussian")
    base = grid[0]
    index = NWIndex(X, Y, kern, base if base.size > 1 else base[0], metric, reg_type)
    Z = index.pair.Z
    totals = np.zeros(len(grid))
    row_bytes = 8 * n * (5 + (Z.shape[1] if per_feature else 0))
    pair = index.pair
    for rows in gen_row_chunks(n, row_bytes, working_memory):
        Zq = Z[rows]
        D2 = pair.sq_dist(Zq)
        diag = (np.arange(D2.shape[0]), np.arange(n)[rows])
        D2[diag] = np.inf
        delta = None
        if per_feature:  # (c, n, d) scaled per-feature distances
            with np.errstate(over="ignore"):
                delta = np.ldexp(np.abs(Zq[:, None, :] - Z[None]), pair.exp2)
        shifted = None
        if delta is None and kern.family == "gaussian":
            # Shift by the nearest other point, once: every row's largest weight is 1.
            shifted = _shifted_sq_dist(pair, Zq, D2, diag)
            buf = np.empty_like(D2)
        for g in range(len(grid)):
            if shifted is not None:  # two passes per bandwidth: scale, exp (diagonal: 0)
                W = np.exp(np.multiply(shifted, -0.5 / scales[g] ** 2, out=buf), out=buf)
            else:
                L = _loo_weights(kern, metric, D2, delta, base, grid[g],
                                 None if scales is None else scales[g])
                L[diag] = -np.inf
                r = 1.0 if scales is not None else base / grid[g]
                W, empty = softmax_rows(_loo_tied(pair, L, Zq, diag[1], r))
                if empty.any():
                    W[empty] = _share(loo_nearest(pair, Zq[empty], diag[1][empty], r))
            W[diag] = 0.0
            P = index.from_weights(W, Zq)
            totals[g] += loss_grad(P, Y[rows], loss)[0]
        if progress is not None:
            progress(rows.stop - rows.start)
    return mean_loss(totals, n, k, loss)


def _shifted_sq_dist(pair, Zq, D2, diag):
    """``D2`` minus each row's smallest entry (the Gaussian's max shift), finite even
    where ``u^2`` overflowed (a tiny bandwidth): then from the stored-unit distances."""
    if not (pair.exp2 or np.isposinf(D2).sum() > D2.shape[0]):
        return D2 - D2.min(axis=1, keepdims=True)
    near = pair.near_sq_dist(Zq)
    near[diag] = np.inf
    return pair.to_u2(near - near.min(axis=1, keepdims=True))


def loo_rows(X, Y, kern, h, metric, rows, *, reg_type="lc", working_memory=None):
    """Exact leave-one-out predictions (len(rows), k) of the training rows ``rows`` at one
    bandwidth ``h``, by the rules of :func:`loo_grid` (own point masked, underflow ties,
    nearest other point(s) for an empty support); the binned search scores here the rows
    its grid sums cannot certify."""
    index = NWIndex(X, Y, kern, h, metric, reg_type)
    pair = index.pair
    out = np.empty((len(rows), Y.shape[1]))
    for chunk in gen_row_chunks(len(rows), 8 * X.shape[0] * 4, working_memory):
        r = rows[chunk]
        Zq = pair.Z[r]
        L = index._log_kernel(Zq)
        diag = (np.arange(len(r)), r)
        L[diag] = -np.inf
        W, empty = softmax_rows(_loo_tied(pair, L, Zq, r))
        if empty.any():
            W[empty] = _share(loo_nearest(pair, Zq[empty], r[empty]))
        W[diag] = 0.0
        out[chunk] = index.from_weights(W, Zq)
    return out


def loo_nearest(pair, Zq, self_idx, r=1.0):
    """Nearest other training point(s) of leave-one-out rows ``Zq`` (training rows
    ``self_idx``), ties by :func:`~nlpfeat.kernels._pairwise.tie_tolerance`, in the
    coordinates of the bandwidth scored: ``r`` is base / h (1.0 on a ray grid, whose
    base coordinates order the points alike)."""
    blocked = np.zeros((Zq.shape[0], pair.n_train), dtype=bool)
    blocked[np.arange(Zq.shape[0]), self_idx] = True
    if np.ndim(r) == 0:
        return pair.nearest(Zq, blocked)
    return nearest_mask(Zq * r, pair.Z * r, blocked)


def _loo_tied(pair, L, Zq, self_idx, r=1.0):
    """LOO log weights ``L`` with :func:`~nlpfeat.kernels._pairwise.tie_log_weights`
    applied to their underflowing rows (ties by :func:`loo_nearest`)."""
    top = L.max(axis=1)
    rows = np.flatnonzero(np.isfinite(top) & (top < UNDERFLOW_LOG))
    if rows.size:
        L[rows] = tie_log_weights(L[rows], loo_nearest(pair, Zq[rows], self_idx[rows], r))
    return L


def _loo_weights(kern, metric, D2, delta, base, h, scale):
    """Unnormalised LOO log weights for one bandwidth (the caller masks the diagonal)."""
    with np.errstate(over="ignore"):
        if delta is None:
            return kern.log_k_sq(D2 / scale**2)
        if metric == "product":
            return kern.log_k(delta * (base / h)).sum(axis=2)
        return kern.log_k_sq(np.einsum("qnd,d->qn", delta**2, (base / h) ** 2))


def loo_ard(X, Y, kern, metric, h_start, *, loss="squared", reg_type="lc",
            working_memory=None, max_iter=100, objective=None, progress=None):
    """Per-feature bandwidths minimising the LOO loss by L-BFGS on ``log h``.

    The analytic gradient: with normalised weights ``w_ij``, predictions
    ``p_i = sum_j w_ij y_j`` and ``a_i = dLoss/dp_i``,
    ``dLoss/dl_ij = w_ij a_i . (y_j - p_i)`` for the log kernel ``l_ij``, and
    ``dl_ij/dlog h_f = -(dlog K/du) / u * (x_if - x_jf)^2 / h_f^2`` (radial kernels).
    For ``reg_type="ll"`` the first factor comes from the local linear fit instead
    (see :mod:`nlpfeat.kernels._ll_grad`).

    ``objective``: ``objective(log_h, X, Y, kern, metric, loss, working_memory, reg_type)``
    giving the mean LOO loss and its gradient in ``log h`` (the compiled engine's, from
    :func:`nlpfeat.kernels._engine.loo_ard`); None: the numpy :func:`_ard_objective`.
    ``progress``, if given, is called with 1 after each evaluation of the objective.

    Returns
    -------
    h : ndarray of shape (n_features,) (scalar array for metric="cosine")
    loss : float
        The LOO loss at ``h``.
    """
    kern.dlog_k_du(np.zeros(1))  # raises a clear ValueError for a kernel without gradient
    # Optimise t = log(h / h_start) from 0: the path does not depend on the units of X.
    h0 = np.atleast_1d(h_start).astype(np.float64)
    if objective is None:
        objective = _ard_objective
    else:
        compiled, log_h0 = objective, np.log(h0)

        def objective(t, h0, X, Y, kern, metric, loss, working_memory, reg_type):
            # log h = t + log h0: the gradient in t is the gradient in log h.
            return compiled(t + log_h0, X, Y, kern, metric, loss, working_memory, reg_type)
    if progress is not None:
        evaluate = objective

        def objective(*args):
            value = evaluate(*args)
            progress(1)
            return value
    res = minimize(objective, np.zeros_like(h0), jac=True, method="L-BFGS-B",
                   bounds=[(-12.0, 12.0)] * h0.size,
                   args=(h0, X, Y, kern, metric, loss, working_memory, reg_type),
                   options={"maxiter": max_iter})
    h = h0 * np.exp(res.x)
    h = np.maximum(h, np.finfo(np.float64).tiny)
    return (h if metric != "cosine" else h[0]), float(res.fun)


def loss_and_weight_sensitivity(W, empty, Zq, Z, Y, rows, loss, reg_type):
    """One chunk's leave-one-out loss and ``B = dLoss / dW * W`` for the ARD gradient.

    ``B[i, j]`` is what the log weight of training point j contributes to the loss of
    query row i; local linear fits take it from their own sensitivities. Rows with an
    empty support (``empty``) contribute nothing.
    """
    if reg_type == "ll":  # local linear: sensitivities from the local fits
        P, sensitivity = ll_loo_terms(W, Zq, Z, Y)
        chunk_loss, a = loss_grad(P, Y[rows], loss)
        B = sensitivity(a)
    else:
        P = W @ Y
        chunk_loss, a = loss_grad(P, Y[rows], loss)
        B = W * (a @ Y.T - (a * P).sum(axis=1, keepdims=True))
    B[empty] = 0.0
    return chunk_loss, B


def _ard_objective(theta, h0, X, Y, kern, metric, loss, working_memory, reg_type="lc"):
    n, k = Y.shape
    h = h0 * np.exp(theta)
    pair = PairwiseScaled(X, h if h.size > 1 else h[0], metric)
    if pair.exp2:  # unreachable from a data-based start (bounds: e^12 either side)
        raise ValueError("bandwidth='loo-ard' needs bandwidths above about 1e-144 times the "
                         "spread of X; start from bandwidth='loo' or rescale X.")
    Z = pair.Z
    total, grad = 0.0, np.zeros_like(theta)
    per_row = 8 * n * (5 + (3 * (Z.shape[1] + 1) if reg_type == "ll" else 0))
    for rows in gen_row_chunks(n, per_row, working_memory):
        Zq = Z[rows]
        D2 = pair.sq_dist(Zq)
        diag = (np.arange(D2.shape[0]), np.arange(n)[rows])
        D2[diag] = np.inf
        W, empty = _ard_weights(pair, kern, Zq, D2, diag)
        chunk_loss, B = loss_and_weight_sensitivity(W, empty, Zq, Z, Y, rows, loss, reg_type)
        total += chunk_loss
        grad += _ard_grad_chunk(pair, kern, Zq, D2, B)
    return mean_loss(total, n, k, loss), mean_loss(grad, n, k, loss)


def _ard_weights(pair, kern, Zq, D2, diag):
    """Normalised LOO weights (diagonal at distance inf) and the empty-row mask."""
    if kern.family == "gaussian":
        W = np.subtract(D2, D2.min(axis=1, keepdims=True))
        W *= -0.5
        np.exp(W, out=W)
        W /= W.sum(axis=1, keepdims=True)
        return W, np.zeros(W.shape[0], dtype=bool)
    if pair.metric == "product":
        L = pair.log_kernel(Zq, kern)
        L[diag] = -np.inf
    else:
        L = kern.log_k_sq(D2)
    W, empty = softmax_rows(_loo_tied(pair, L, Zq, diag[1]))
    if empty.any():
        W[empty] = _share(loo_nearest(pair, Zq[empty], diag[1][empty]))
    return W, empty


def _ard_grad_chunk(pair, kern, Zq, D2, B):
    """sum_ij B_ij dl_ij/dtheta for one row chunk (theta = log h)."""
    finite = np.isfinite(D2)
    u = np.sqrt(np.where(finite, D2, 0.0))
    if pair.metric == "cosine":
        return np.array([np.sum(B * -u * kern.dlog_k_du(u))])
    Z = pair.Z
    if pair.metric == "product" and kern.family != "gaussian":
        out = np.empty(Zq.shape[1])
        for f in range(Zq.shape[1]):  # loop over features
            uf = np.abs(Zq[:, f, None] - Z[None, :, f])
            out[f] = np.sum(B * -uf * kern.dlog_k_du(uf))
        return out
    if kern.family == "gaussian":  # -(dlogK/du) / u = 1
        C = B
    else:
        C = B * np.where(u > 0, -kern.dlog_k_du(u) / np.where(u > 0, u, 1.0), 0.0)
        C[~finite] = 0.0
    if pair.bandwidth.ndim == 0:  # one shared bandwidth: dl/dtheta = -(dlogK/du) u
        return np.array([np.sum(C * np.where(finite, D2, 0.0))])
    # sum_ij C_ij (zq_if - z_jf)^2 = zq^2 . C 1 + z^2 . C^T 1 - 2 zq . (C z)
    return (Zq**2 * C.sum(axis=1)[:, None]).sum(axis=0) \
        + (Z**2 * C.sum(axis=0)[:, None]).sum(axis=0) - 2.0 * (Zq * (C @ Z)).sum(axis=0)
