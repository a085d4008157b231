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
from nlpfeat.kernels._pairwise import PairwiseScaled, softmax_rows

__all__ = ["NWIndex", "nw_predict", "nw_weights"]

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
    engine : {"numpy", "numba"}
        "numba": brute-force queries run in the compiled loops of
        :mod:`nlpfeat.kernels._compiled` where they apply (built-in kernel, dense input,
        metric "euclidean" or "product"); ``compiled`` is None otherwise.
    """

    def __init__(self, X_fit, Y, kern, bandwidth, metric, reg_type="lc", tree=False,
                 engine="numpy"):
        self.pair = PairwiseScaled(X_fit, bandwidth, metric)
        self.kern, self.reg_type, self.n_out = kern, reg_type, Y.shape[1]
        # Fused path: kernels of u^2 = |z_q - z_i|^2 with a cheap form, dense input.
        # Gaussian: exp(-u^2 / 2); polynomial kernels: max(1 - u^2, 0) ** power.
        radial = metric == "euclidean" or (metric == "product" and kern.family == "gaussian")
        self.poly = kern._poly_power if radial and kern.compact else None
        self.fast = (radial and not sparse.issparse(X_fit)
                     and (kern.family == "gaussian" or self.poly is not None))
        Z = self.pair.Z
        self.Y = Y
        # (n_train, n_outputs + 1): the last column of ones gives the normaliser.
        self.Y1 = np.hstack([Y, np.ones((Y.shape[0], 1))])
        # rows of Y1^T: numerators and denominator of the fused path as matrix-vector
        # products, several times faster than one GEMM with so few columns
        self.Y1t = np.ascontiguousarray(self.Y1.T)
        # Local linear fits use centred, unscaled coordinates, so that the normal
        # equations equal statsmodels' up to a factor and np.linalg.pinv truncates the
        # same singular values even in near-singular cases.
        self.C = Z * self.pair.bandwidth if reg_type == "ll" else None
        if self.fast:  # A = a u^2 + b from one GEMM of augmented matrices
            self._a, self._b = (-1.0, 1.0) if self.poly else (-0.5, 0.0)
            self.X_aug = np.hstack([Z, np.ones((Z.shape[0], 1)),
                                    self._a * self.pair.sqn[:, None] + self._b])
        self.tree = None
        if tree:
            tree_metric = "chebyshev" if metric == "product" else "euclidean"
            self.tree = KDTree(Z, metric=tree_metric)
        self.compiled = None
        if engine == "numba":
            from nlpfeat.kernels import _compiled
            if _compiled.supports(kern, X_fit, metric):
                self.compiled = _compiled.CompiledNW(self)

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
        """Normalised weights in a dense (n_q, n_train) matrix and the empty-row mask."""
        kern = self.kern
        if self.pair.metric == "product" and kern.family != "gaussian":
            L = self.pair.log_kernel(Zq, kern)
            return softmax_rows(L, self.pair.sq_dist(Zq) if kern.compact else None)
        D2 = self.pair.sq_dist(Zq)   # one distance GEMM serves kernel and fallback
        if not (kern.compact and kern._k_sq is not None):
            return softmax_rows(kern.log_k_sq(D2), D2 if kern.compact else None)
        W = kern.k_sq(D2)            # bounded polynomial weights: no log, no max shift
        s = W.sum(axis=1)
        empty = ~(s > 0)
        if empty.any():
            d = D2[empty]
            W[empty] = d <= d.min(axis=1, keepdims=True)
            s[empty] = W[empty].sum(axis=1)
        W /= s[:, None]
        return W, empty

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
        ind, dist = self.tree.query_radius(Zq, r=self.kern.radius, return_distance=True)
        counts = np.frompyfunc(len, 1, 1)(ind).astype(np.intp)
        cols = np.concatenate(ind).astype(np.intp) if counts.sum() else np.zeros(0, np.intp)
        rows = np.repeat(np.arange(Zq.shape[0]), counts)
        if self.pair.metric == "product":
            logk = self.kern.log_k(Zq[rows] - self.pair.Z[cols]).sum(axis=1)
        else:
            logk = self.kern.log_k(np.concatenate(dist) if counts.sum() else np.zeros(0))
        W = sparse.csr_matrix((np.exp(logk), (rows, cols)), shape=(Zq.shape[0], self.pair.n_train))
        W.eliminate_zeros()
        s = np.asarray(W.sum(axis=1)).ravel()
        empty = ~(s > 0)
        if empty.any():
            near = self.tree.query(Zq[empty], k=1, return_distance=False)[:, 0]
            fill = sparse.csr_matrix((np.ones(near.size), (np.flatnonzero(empty), near)),
                                     shape=W.shape)
            W = W + fill
            s[empty] = 1.0
        return sparse.diags(1.0 / s) @ W, empty

    def from_weights(self, W, Zq):
        """Predictions from (possibly unnormalised) weights, dense or sparse."""
        if self.reg_type == "lc":
            R = np.asarray(W @ self.Y1)
            return R[:, :-1] / R[:, -1:]
        return local_linear(W, np.asarray(Zq) * self.pair.bandwidth, self.C, self.Y)


def _times_columns(W, Y, Yt):
    """``W @ Y`` for a dense ``W`` and a ``Y`` of few columns (``Yt`` is ``Y.T``, C-ordered).

    A matrix-vector product per column streams ``W`` at memory speed, while BLAS's GEMM
    with 2 to 4 columns ran about three times slower per element of ``W``.
    """
    if Y.shape[1] > 4:
        return W @ Y
    R = np.empty((W.shape[0], Y.shape[1]))
    for k in range(Y.shape[1]):
        np.matmul(W, Yt[k], out=R[:, k])
    return R


def local_linear(W, Cq, C, Y):
    """Local linear intercepts: weighted least squares of ``y_i`` on ``[1, x_i - x_q]``.

    Solves the normal equations ``M beta = V`` of every query with
    ``np.linalg.pinv`` (as statsmodels' ``KernelReg`` does) and returns ``beta_0``.
    ``W`` (n_q, n_train) may be dense or scipy sparse and need not be normalised.
    """
    c, d = Cq.shape
    if sparse.issparse(W):
        W = W.tocoo()
        rows, cols, w = W.row, W.col, W.data
        A = np.hstack([np.ones((w.size, 1)), C[cols] - Cq[rows]])       # (nnz, d + 1)
        S = sparse.csr_matrix((np.ones(w.size), (rows, np.arange(w.size))), shape=(c, w.size))
        WA = w[:, None] * A
        M = (S @ (WA[:, :, None] * A[:, None, :]).reshape(w.size, -1)).reshape(c, d + 1, d + 1)
        V = (S @ (WA[:, :, None] * Y[cols][:, None, :]).reshape(w.size, -1)).reshape(c, d + 1, -1)
    else:
        A = np.concatenate([np.ones((c, C.shape[0], 1)), C[None] - Cq[:, None]], axis=2)
        WA = (W[:, :, None] * A).transpose(0, 2, 1)                      # (c, d + 1, n)
        M, V = WA @ A, WA @ Y
    return (np.linalg.pinv(M) @ V)[:, 0, :]


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
    if index.compiled is not None and algorithm != "tree":
        return index.compiled.predict(X, working_memory=working_memory, n_jobs=n_jobs)
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
    if index.compiled is not None and algorithm != "tree":
        return index.compiled.weights(X, working_memory=working_memory, n_jobs=n_jobs)
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
