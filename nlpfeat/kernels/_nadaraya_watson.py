"""Numeric core of Nadaraya-Watson regression: chunked weights and predictions.

Free functions that the estimators wrap. Query rows are processed in chunks sized by
``working_memory`` (MiB, see :mod:`nlpfeat._chunking`), never one sample at a time.

The Gaussian hot path fuses the passes. With training rows centred and scaled by the
bandwidth (``z = (x - mean) / h``) and the augmented matrices
``Q' = [z_q, -|z_q|^2 / 2, 1]`` and ``X' = [z_i, 1, -|z_i|^2 / 2]``, one GEMM gives
``Q' X'^T = -|z_q - z_i|^2 / 2``, the exact log kernel; one in-place ``exp``; one GEMM
with ``[y, 1]`` gives numerator and denominator together. Rows whose denominator
underflows (a query far from every training point, or a tiny bandwidth) are recomputed
in log space with a max shift, so they degrade to nearest-neighbour weights, never 0/0.
The polynomial compact kernels (Epanechnikov, biweight, triweight) take the same path
with ``1 - |z_q - z_i|^2`` from the GEMM, clipped at 0 and raised to their power.
"""
import threading

import numpy as np
from scipy import sparse
from sklearn.neighbors import KDTree

from nlpfeat._chunking import gen_row_chunks, map_chunks
from nlpfeat.kernels._loss import centred_intercepts, ll_exponent, spread_tolerance
from nlpfeat.kernels._pairwise import (
    UNDERFLOW_LOG,
    PairwiseScaled,
    _share,
    softmax_rows,
    tie_log_weights,
)

__all__ = ["NWIndex", "centred_moments", "local_linear", "nw_predict", "nw_weights"]

# A row whose unnormalised Gaussian weights sum below this is recomputed in log space.
_TINY = 1e-250


class NWIndex:
    """Training data prepared once for repeated chunked queries.

    Parameters
    ----------
    X_fit : ndarray or sparse matrix of shape (n_train, n_features)
    Y : ndarray of shape (n_train, n_outputs)
        Values (targets, or one-hot classes).
    kern : Kernel
    bandwidth : float or ndarray of shape (n_features,)
    metric : {"euclidean", "product", "cosine"}
    reg_type : {"lc", "ll"}
    tree : bool
        Build a KD-tree for radius queries (compact kernels, dense input only).
    compiled : callable or None, default=None
        ``compiled(index)``: the compiled side of the index (``CompiledNW``, chosen by
        :func:`nlpfeat.kernels._engine.nw_index`), which brute-force queries use; not
        when the coordinates are stored rescaled (the numpy path handles those extreme
        bandwidths). ``self.compiled`` is None otherwise.
    """

    def __init__(self, X_fit, Y, kern, bandwidth, metric, reg_type="lc", tree=False,
                 compiled=None):
        self.pair = PairwiseScaled(X_fit, bandwidth, metric)
        self.kern, self.reg_type, self.n_out = kern, reg_type, Y.shape[1]
        # Fused path: kernels of u^2 = |z_q - z_i|^2 with a cheap form, dense input.
        # Gaussian: exp(-u^2 / 2); polynomial kernels: max(1 - u^2, 0) ** power.
        radial = metric == "euclidean" or (metric == "product" and kern.family == "gaussian")
        self.poly = kern._poly_power if radial and kern.compact else None
        # (not when the coordinates are stored rescaled: a tiny bandwidth, see PairwiseScaled)
        self.fast = (radial and not sparse.issparse(X_fit) and self.pair.exp2 == 0
                     and (kern.family == "gaussian" or self.poly is not None))
        Z = self.pair.Z
        self.Y = Y
        # (n_train, n_outputs + 1): the last column of ones gives the normaliser.
        self.Y1 = np.hstack([Y, np.ones((Y.shape[0], 1))])
        # rows of Y1^T: numerators and denominator of the fused path as matrix-vector
        # products, faster than one GEMM with so few columns (see _times_columns)
        self.Y1t = np.ascontiguousarray(self.Y1.T)
        # Local linear fits use the scaled coordinates (dimensionless, so the fit does
        # not depend on the units of X; see local_linear), brought to magnitude 1 by a
        # power of two (exact: see ll_exponent).
        self.ll_exp2 = ll_exponent(Z) if reg_type == "ll" else 0
        self.C = np.ldexp(Z, -self.ll_exp2) if reg_type == "ll" else None
        self.tree = None
        if tree:
            tree_metric = "chebyshev" if metric == "product" else "euclidean"
            self.tree = KDTree(Z, metric=tree_metric)
            self.tree_radius = float(np.ldexp(kern.radius, -self.pair.exp2))
        self.compiled = compiled(self) if compiled is not None and self.pair.exp2 == 0 else None
        # A = a u^2 + b from one GEMM of augmented matrices (brute queries on numpy only)
        if self.fast and self.compiled is None:
            self._a, self._b = (-1.0, 1.0) if self.poly else (-0.5, 0.0)
            self.X_aug = np.hstack([Z, np.ones((Z.shape[0], 1)),
                                    self._a * self.pair.sqn[:, None] + self._b])

    def row_bytes(self):
        """Bytes of temporaries per query row on the brute path."""
        if self.fast and self.reg_type == "lc":
            per = 2 if (self.poly or 1) > 1 else 1   # powers > 1 keep a copy of the base
        else:
            per = 3
        if self.pair.metric == "product" and not self.fast:
            per += 1
        if self.reg_type == "ll":
            per += 2 * (self.pair.Z.shape[1] + 1)
        return 8 * self.pair.n_train * per

    def fused_weights(self, Zq, out=None):
        """Unnormalised weights: one GEMM, then one exp (Gaussian) or clip + powers.

        ``out`` (n_q, n_train), if given, is reused (no fresh pages for every chunk).
        """
        a = self._a
        sq = np.einsum("ij,ij->i", Zq, Zq)
        Q_aug = np.hstack([-2.0 * a * Zq, a * sq[:, None], np.ones((Zq.shape[0], 1))])
        A = np.matmul(Q_aug, self.X_aug.T, out=out)  # (n_q, n_train): a |z_q - z_i|^2 + b
        if self.poly is None:             # <= 0 up to round-off; see _bad_rows
            with np.errstate(over="ignore"):
                return np.exp(A, out=A)
        np.maximum(A, 0.0, out=A)
        base = A.copy() if self.poly > 1 else A
        for _ in range(self.poly - 1):
            A *= base
        return A

    def log_weights(self, Zq):
        """Normalised weights in a dense (n_q, n_train) matrix and the empty-row mask.

        A row with no positive weight (no training point in a compact support, or
        ``u^2`` overflowing for a tiny bandwidth) gets its nearest training point(s),
        ties sharing the weight equally (:meth:`PairwiseScaled.nearest`); in a row whose
        weights underflow, the tied nearest points get equal log weights
        (:func:`~nlpfeat.kernels._pairwise.tie_log_weights`).
        """
        kern = self.kern
        if not (kern.compact and kern._k_sq is not None) or (
                self.pair.metric == "product" and kern.family != "gaussian"):
            W, empty = softmax_rows(self._tied(self._log_kernel(Zq), Zq))
        else:
            W = kern.k_sq(self.pair.sq_dist(Zq))  # bounded polynomial weights: no log
            s = W.sum(axis=1)
            empty = ~(s > 0)
            W /= np.where(empty, 1.0, s)[:, None]
        if empty.any():
            W[empty] = _share(self.pair.nearest(Zq[empty]))
            # A kernel without compact support has every point in it: its nearest-point
            # weights are the tiny-bandwidth limit, not an empty support.
            empty &= kern.compact
        return W, empty

    def _log_kernel(self, Zq):
        if self.pair.metric == "product" and self.kern.family != "gaussian":
            return self.pair.log_kernel(Zq, self.kern)
        return self.kern.log_k_sq(self.pair.sq_dist(Zq))

    def _tied(self, L, Zq):
        """``L`` with :func:`tie_log_weights` applied to its underflowing rows."""
        top = L.max(axis=1)
        rows = np.flatnonzero(np.isfinite(top) & (top < UNDERFLOW_LOG))
        if rows.size:
            L[rows] = tie_log_weights(L[rows], self.pair.nearest(Zq[rows]))
        return L

    def weights(self, Zq):
        """Normalised dense weights (n_q, n_train) and the empty-row mask."""
        if not self.fast:
            return self.log_weights(Zq)
        A = self.fused_weights(Zq)
        s = A.sum(axis=1)
        bad = self._bad_rows(s)
        empty = np.zeros(Zq.shape[0], dtype=bool)
        if bad.any():
            A[bad], empty[bad] = self.log_weights(Zq[bad])
            s[bad] = 1.0
        A /= s[:, None]
        return A, empty

    def _bad_rows(self, denom):
        """Rows to redo in log space: underflow, no point in the support, or round-off.

        Every exact weight is <= 1, so a denominator above ``2 n_train`` means the
        GEMM's cancellation error (huge ``|z|^2`` from a tiny bandwidth) reached the
        exponent; the log path's max shift then gives nearest-neighbour weights.
        """
        with np.errstate(invalid="ignore"):
            return ~((denom > _TINY) & (denom <= 2.0 * self.pair.n_train))

    def brute_chunk(self, Zq, buf=None):
        """Predictions for one chunk of scaled queries, and the empty-row mask."""
        if self.fast and self.reg_type == "lc":
            out = None if buf is None else buf[:Zq.shape[0]]
            R = _times_columns(self.fused_weights(Zq, out), self.Y1, self.Y1t)
            bad = self._bad_rows(R[:, -1])
            empty = np.zeros(Zq.shape[0], dtype=bool)
            if bad.any():  # underflow (Gaussian) or no point in the support (compact)
                W, empty[bad] = self.log_weights(Zq[bad])
                R[bad] = W @ self.Y1
            return R[:, :-1] / R[:, -1:], empty
        W, empty = self.weights(Zq)
        return self.from_weights(W, Zq), empty

    def tree_weights(self, Zq):
        """Sparse normalised weights from radius queries, and the empty-row mask."""
        ind, dist = self.tree.query_radius(Zq, r=self.tree_radius, return_distance=True)
        counts = np.frompyfunc(len, 1, 1)(ind).astype(np.intp)
        cols = np.concatenate(ind).astype(np.intp) if counts.sum() else np.zeros(0, np.intp)
        rows = np.repeat(np.arange(Zq.shape[0]), counts)
        e = self.pair.exp2
        with np.errstate(over="ignore"):
            if self.pair.metric == "product":
                logk = self.kern.log_k(np.ldexp(Zq[rows] - self.pair.Z[cols], e)).sum(axis=1)
            else:
                logk = self.kern.log_k(np.ldexp(np.concatenate(dist), e) if counts.sum()
                                       else np.zeros(0))
        W = sparse.csr_matrix((np.exp(logk), (rows, cols)), shape=(Zq.shape[0], self.pair.n_train))
        W.eliminate_zeros()
        s = np.asarray(W.sum(axis=1)).ravel()
        empty = ~(s > 0)
        if empty.any():  # the nearest point(s), ties sharing the weight as on the brute path
            near_rows, near_cols = np.nonzero(self.pair.nearest(Zq[empty]))
            fill = sparse.csr_matrix((np.ones(near_rows.size),
                                      (np.flatnonzero(empty)[near_rows], near_cols)),
                                     shape=W.shape)
            W = W + fill
            s[empty] = np.bincount(near_rows, minlength=int(empty.sum()))
        return sparse.diags(1.0 / s) @ W, empty

    def from_weights(self, W, Zq):
        """Predictions from (possibly unnormalised) weights, dense or sparse."""
        if self.reg_type == "lc":
            R = np.asarray(W @ self.Y1)
            return R[:, :-1] / R[:, -1:]
        return local_linear(W, np.ldexp(np.asarray(Zq), -self.ll_exp2), self.C, self.Y)


def _times_columns(W, Y, Yt):
    """``W @ Y`` for a dense ``W`` and a ``Y`` of few columns (``Yt`` is ``Y.T``, C-ordered).

    A matrix-vector product per column streams ``W`` at memory speed, which BLAS's GEMM
    with 2 to 4 columns does not (figures in ``benchmarks/RESULTS.md``).
    """
    if Y.shape[1] > 4:
        return W @ Y
    R = np.empty((W.shape[0], Y.shape[1]))
    for k in range(Y.shape[1]):
        np.matmul(W, Yt[k], out=R[:, k])
    return R


def local_linear(W, Cq, C, Y):
    """Local linear intercepts: weighted least squares of ``y_i`` on ``[1, x_i - x_q]``.

    Solved in centred form: with the weighted means ``m`` of the inputs and ``y_bar``
    of the targets, the slopes are ``b = S^+ T`` with ``S = sum_i w_i (x_i - m)
    (x_i - m)^T`` and ``T = sum_i w_i (x_i - m) y_i^T``, and the intercept is
    ``y_bar + b^T (x_q - m)``. Where the normal equations are regular this is their
    solution (statsmodels' ``KernelReg`` solves them with ``np.linalg.pinv``); where the
    local design is degenerate (one point with weight, e.g. a tiny bandwidth, or all
    weighted rows at one point: repeated x, a constant feature) the slopes of the
    directions without spread are 0 (:func:`~nlpfeat.kernels._loss.centred_intercepts`),
    so the fit degrades to the local constant one instead of extrapolating rounding
    noise. ``W`` (n_q, n_train) may be dense or scipy sparse and need not be normalised;
    ``C`` and ``Cq`` are the scaled coordinates.

    The offsets are taken from each row's anchor, its heaviest training point, not from
    the query: rows at the anchor's position have exact zero offsets, so all weighted
    rows at one point give ``S = 0`` exactly, and the rounding of the centred offsets
    is relative to the local spread, not to the distance from the query (which would
    swamp a weakly weighted direction, e.g. Gaussian weights of 1e-14 and 1e-27).
    """
    c, d = Cq.shape
    if sparse.issparse(W):
        W = W.tocsr()
        anchor = C[np.asarray(W.argmax(axis=1)).ravel()]                  # (c, d)
        W = W.tocoo()
        rows, cols, w = W.row, W.col, W.data
        S1 = sparse.csr_matrix((w, (rows, np.arange(w.size))), shape=(c, w.size))
        sw = np.asarray(S1.sum(axis=1))                                  # (c, 1)
        D = C[cols] - anchor[rows]                                       # (nnz, d)
        m = (S1 @ D) / sw                                                # (c, d)
        y_bar = (S1 @ Y[cols]) / sw                                      # (c, k)
        D -= m[rows]
        S = (S1 @ (D[:, :, None] * D[:, None, :]).reshape(w.size, -1)).reshape(c, d, d)
        T = (S1 @ (D[:, :, None] * Y[cols][:, None, :]).reshape(w.size, -1)).reshape(c, d, -1)
        m = (anchor - Cq) + m
        S, T = S / sw[:, :, None], T / sw[:, :, None]
    else:
        m, y_bar, S, T, _, _ = centred_moments(W, Cq, C, Y)
    return centred_intercepts(m, y_bar, S, T, spread_tolerance(C))


def centred_moments(W, Cq, C, Y):
    """The centred moments of dense local designs (see :func:`local_linear`).

    Returns the offset ``m`` (c, d) of each row's weighted centroid from its query, the
    weighted mean ``y_bar`` (c, k), ``S`` (c, d, d) and ``T`` (c, d, k) divided by the
    weight sum, the centred offsets (c, n, d) of the training rows and the weight sums
    (c, 1). Offsets are taken from each row's anchor, its first heaviest training point.
    """
    sw = W.sum(axis=1, keepdims=True)
    anchor = C[W.argmax(axis=1)]                                         # (c, d)
    D = C[None] - anchor[:, None]                                        # (c, n, d)
    m, y_bar = np.einsum("cn,cnd->cd", W, D) / sw, (W @ Y) / sw
    D -= m[:, None]
    WD = (W[:, :, None] * D).transpose(0, 2, 1)                          # (c, d, n)
    S, T = (WD @ D) / sw[:, :, None], (WD @ Y) / sw[:, :, None]
    return (anchor - Cq) + m, y_bar, S, T, D, sw


def _query_chunks(index, n_q, working_memory, algorithm):
    row_bytes = 8 * 64 * (index.pair.Z.shape[1] + 2) if algorithm == "tree" else index.row_bytes()
    return gen_row_chunks(n_q, row_bytes, working_memory)


def nw_predict(X, index, *, algorithm="brute", working_memory=None, n_jobs=None):
    """Nadaraya-Watson predictions for the query rows X.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_queries, n_features)
    index : NWIndex
    algorithm : {"brute", "tree"}
    working_memory : float, default=None
        MiB per chunk of temporaries; None -> ``nlpfeat._chunking.DEFAULT_WORKING_MEMORY``.
    n_jobs : int, default=None
        Threads working on query chunks at once (see :func:`nlpfeat._chunking.map_chunks`);
        each thread has its own ``working_memory`` budget.

    Returns
    -------
    y_pred : ndarray of shape (n_queries, n_outputs)
    empty : ndarray of bool, shape (n_queries,)
        Queries with no training point inside a compact kernel's support (they got
        nearest-neighbour weights).
    """
    n_q = X.shape[0]
    y_pred = np.empty((n_q, index.n_out))
    empty = np.zeros(n_q, dtype=bool)
    chunks = list(_query_chunks(index, n_q, working_memory, algorithm))
    reuse = algorithm != "tree" and index.fast and index.reg_type == "lc" and len(chunks) > 1
    local = threading.local()       # one reusable weight buffer per thread

    def predict_chunk(rows):
        Zq = index.pair.query(X[rows])
        if algorithm == "tree":
            W, empty[rows] = index.tree_weights(Zq)
            y_pred[rows] = index.from_weights(W, Zq)
            return
        buf = None
        if reuse:
            buf = getattr(local, "buf", None)
            if buf is None:
                buf = local.buf = np.empty((chunks[0].stop - chunks[0].start, index.pair.n_train))
        y_pred[rows], empty[rows] = index.brute_chunk(Zq, buf)

    map_chunks(predict_chunk, chunks, n_jobs)
    return y_pred, empty


def nw_weights(X, index, *, algorithm="brute", working_memory=None, n_jobs=None):
    """Normalised attention weights (n_queries, n_train) and the empty-row mask.

    Dense for non-compact kernels; scipy CSR for compact ones (built chunk by chunk).
    ``n_jobs`` as in :func:`nw_predict`.
    """
    def weights_chunk(rows):
        Zq = index.pair.query(X[rows])
        if algorithm == "tree":
            return index.tree_weights(Zq)
        W, e = index.weights(Zq)
        return (sparse.csr_matrix(W) if index.kern.compact else W), e

    parts = map_chunks(weights_chunk,
                       _query_chunks(index, X.shape[0], working_memory, algorithm), n_jobs)
    empty = np.concatenate([e for _, e in parts])
    blocks = [W for W, _ in parts]
    if index.kern.compact:
        return sparse.vstack(blocks, format="csr"), empty
    return np.vstack(blocks), empty
