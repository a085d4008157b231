"""Compiled (numba) loops over the upper triangle of symmetric counts.

Used by :mod:`nlpfeat.text._counting._pair_merge` (writing ``U + U.T``) and
:mod:`nlpfeat.text._semantics._ppmi_operator` (PPMI products), which import this module on first
use only: importing :mod:`nlpfeat.text` does not import numba. Compiled on first call and
cached on disk (``cache=True``).
"""
import math

import numpy as np
from numba import njit

__all__ = ["fill_symmetric", "ppmi_product", "row_sums", "symmetric_row_nnz"]


@njit(cache=True)
def symmetric_row_nnz(indptr, indices):
    """Entries per row of ``U + U.T``."""
    n = len(indptr) - 1
    counts = np.zeros(n, np.int64)
    for i in range(n):
        for k in range(indptr[i], indptr[i + 1]):
            counts[i] += 1
            if indices[k] != i:
                counts[indices[k]] += 1
    return counts


@njit(cache=True)
def fill_symmetric(indptr, indices, data, first_row, fill, out_indices, out_data):
    """Write rows ``first_row ..`` of ``U`` (CSR ``indptr`` from 0) and their mirror
    images into the CSR arrays of ``U + U.T``; ``fill[r]`` is the next free position of
    row ``r``, advanced here.

    Rows are visited in order (blocks of rows in order too), so row ``j`` receives its
    entries below the diagonal (mirrored from rows ``i < j``) in increasing column order
    before its own upper entries: the columns of every row come out sorted.
    """
    for local in range(len(indptr) - 1):
        i = first_row + local
        for k in range(indptr[local], indptr[local + 1]):
            j = indices[k]
            v = data[k]
            at = fill[i]
            out_indices[at] = j
            if j == i:
                out_data[at] = 2 * v
            else:
                out_data[at] = v
                mirror = fill[j]
                out_indices[mirror] = i
                out_data[mirror] = v
                fill[j] += 1
            fill[i] += 1


@njit(cache=True)
def row_sums(indptr, indices, data):
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
def ppmi_product(indptr, indices, data, log_table, a, b, X, Y, transpose):
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
