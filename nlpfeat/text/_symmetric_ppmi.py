"""Products with the (shifted) PPMI matrix of symmetric counts, computed on the fly.

The PPMI matrix of symmetric counts ``S = U + U.T`` (:class:`~nlpfeat.text._pair_merge.
UpperCounts`) is not symmetric (the contexts are smoothed, the words not), but both of
its entries at ``(i, j)`` and ``(j, i)`` come from the one stored count ``U[i, j]``:

.. math:: A_{ij} = \\max(\\log S_{ij} - \\log s_i - \\alpha \\log s_j + \\log Z
          - \\log k, 0), \\quad Z = \\sum_c s_c^\\alpha / \\max_c s_c^\\alpha

with ``s`` the row sums of ``S`` (equal to its column sums), exactly what
:func:`nlpfeat.text.pmi` computes from the full count matrix. The compiled kernels
(:func:`ppmi_product`) compute ``A X`` or ``A^T X`` in one pass over the upper triangle,
each PPMI value made when it is used: the matrix is never materialised, transposed or
converted, so the randomized SVD needs the counts (8 bytes per stored pair) and the dense
blocks, nothing more.
"""
import math

import numpy as np
from numba import njit
from scipy.special import logsumexp

__all__ = ["PPMIOperator"]

_LOG_TABLE = 1 << 16        # log of small integer counts by table look-up


@njit(cache=True)
def _row_sums(indptr, indices, data):
    """Row sums of ``U + U.T`` from the upper triangle ``U``."""
    n = len(indptr) - 1
    sums = np.zeros(n)
    for i in range(n):
        for k in range(indptr[i], indptr[i + 1]):
            j = indices[k]
            v = float(data[k])
            if i == j:
                sums[i] += 2.0 * v
            else:
                sums[i] += v
                sums[j] += v
    return sums


@njit(cache=True, fastmath={"contract"})
def _product(indptr, indices, data, log_table, a, b, X, Y, transpose):
    """``Y += A X`` (``A^T X`` when ``transpose``) with ``A[i, j] = max(log S_ij + a_i +
    b_j, 0)``, from the upper triangle of ``S`` (a diagonal count is doubled)."""
    n_table = len(log_table)
    m = X.shape[1]
    log2 = math.log(2.0)
    cast = np.empty_like(Y[:1, 0])       # p in Y's dtype: float32 products stay float32
    for i in range(len(indptr) - 1):
        ai = a[i]
        bi = b[i]
        Yi = Y[i]
        Xi = X[i]
        for k in range(indptr[i], indptr[i + 1]):
            j = indices[k]
            v = data[k]
            if v < n_table:
                log_v = log_table[int(v)]
            else:
                log_v = math.log(v)
            if i == j:
                p = max(log_v + log2 + ai + bi, 0.0)
                if p > 0.0:
                    cast[0] = p
                    pc = cast[0]
                    for c in range(m):
                        Yi[c] += pc * Xi[c]
                continue
            p_ij = max(log_v + ai + b[j], 0.0)          # A[i, j]
            p_ji = max(log_v + a[j] + bi, 0.0)          # A[j, i]
            if transpose:
                p_ij, p_ji = p_ji, p_ij
            Xj = X[j]
            Yj = Y[j]
            if p_ij > 0.0:
                cast[0] = p_ij
                pc = cast[0]
                for c in range(m):
                    Yi[c] += pc * Xj[c]
            if p_ji > 0.0:
                cast[0] = p_ji
                pc = cast[0]
                for c in range(m):
                    Yj[c] += pc * Xi[c]


class PPMIOperator:
    """The (shifted) PPMI matrix of symmetric counts, as products ``A @ X``, ``A.T @ X``.

    Parameters
    ----------
    counts : UpperCounts
    alpha : float
        Context-distribution smoothing.
    shift : float
        Shifted PPMI ``max(PMI - log shift, 0)``; 1 is plain PPMI.

    Raises
    ------
    ValueError
        If the PMI values overflow float64 (as :func:`nlpfeat.text.pmi` does).
    """

    def __init__(self, counts, alpha, shift=1):
        self.counts = counts
        n = counts.n_terms
        self.shape = (n, n)
        if counts.nnz == 0:
            raise ValueError("counts is all zero: there is no co-occurrence to measure. "
                             "Count a larger corpus or a wider window.")
        sums = _row_sums(counts.indptr, counts.indices, counts.data)
        seen = sums > 0
        log_sums = np.zeros(n)
        log_sums[seen] = np.log(sums[seen])
        top = log_sums[seen].max()
        # A[i, j] = log S_ij + a_i + b_j: a_i = -log s_i + log Z - log k,
        # b_j = alpha (max log s - log s_j)   (pmi's formula, arranged per row and column)
        with np.errstate(over="ignore", invalid="ignore"):
            log_norm = logsumexp(alpha * (log_sums[seen] - top))
            b = np.where(seen, alpha * (top - log_sums), 0.0)
            a = np.where(seen, -log_sums + log_norm - np.log(shift), 0.0)
        if not (np.isfinite(a).all() and np.isfinite(b).all()):
            raise ValueError(
                f"PMI overflows float64 with alpha={alpha}: the smoothed context "
                f"probabilities n_c^alpha / sum n_c'^alpha underflow to 0. Use a moderate "
                f"alpha (0.75, the word2vec value, or 1 for plain PMI).")
        self._a, self._b = a, b
        integer = counts.data.dtype.kind in "iu"
        with np.errstate(divide="ignore"):
            self._log_table = (np.log(np.arange(_LOG_TABLE, dtype=np.float64)) if integer
                               else np.empty(0))

    def _apply(self, X, transpose):
        X = np.ascontiguousarray(X)
        Y = np.zeros(X.shape, dtype=X.dtype)
        c = self.counts
        _product(c.indptr, c.indices, c.data, self._log_table, self._a, self._b, X, Y,
                 transpose)
        return Y

    def matmul(self, X):
        """``A @ X`` for a dense ``X`` of shape (n, m), in ``X``'s dtype."""
        return self._apply(X, False)

    def rmatmul(self, X):
        """``A.T @ X``."""
        return self._apply(X, True)

    def toarray(self):
        """The dense PPMI matrix (for tests and small vocabularies)."""
        return self.matmul(np.eye(self.shape[0]))
