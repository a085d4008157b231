"""Products with the (shifted) PPMI matrix of symmetric counts, computed on the fly.

The PPMI matrix of symmetric counts ``S = U + U.T`` (:class:`~nlpfeat.text._counting._pair_merge.
UpperCounts`) is not symmetric (the contexts are smoothed, the words not), but both of
its entries at ``(i, j)`` and ``(j, i)`` come from the one stored count ``U[i, j]``:

.. math:: A_{ij} = \\max(\\log S_{ij} - \\log s_i - \\alpha \\log s_j + \\log Z
          - \\log k, 0), \\quad Z = \\sum_c s_c^\\alpha / \\max_c s_c^\\alpha

with ``s`` the row sums of ``S`` (equal to its column sums), exactly what
:func:`nlpfeat.text.pmi` computes from the full count matrix. A compiled kernel
(:func:`nlpfeat.text._counting._pair_loops.ppmi_product`) computes ``A X`` or ``A^T X`` in one
pass over the upper triangle, each PPMI value made when it is used: the matrix is never
materialised, transposed or converted, so the randomized SVD needs the counts (8 bytes
per stored pair) and the dense blocks, nothing more.
"""
import numpy as np
from scipy.special import logsumexp

__all__ = ["PPMIOperator"]

_LOG_TABLE = 1 << 16        # log of small integer counts by table look-up


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
        from nlpfeat.text._counting._pair_loops import row_sums

        sums = row_sums(counts.indptr, counts.indices, counts.data)
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
        from nlpfeat.text._counting._pair_loops import ppmi_product

        c = self.counts
        ppmi_product(c.indptr, c.indices, c.data, self._log_table, self._a, self._b, X, Y,
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
