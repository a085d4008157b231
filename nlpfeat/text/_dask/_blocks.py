"""CSR row blocks of the ``dask.array`` that ``transform`` of a Dask bag returns.

``.compute()`` of such an array stacks its blocks with dask's ``concatenate_lookup`` for
the blocks' type. For ``scipy.sparse`` matrices dask calls ``scipy.sparse.hstack`` on
every block (a copy of each, for an array of one column of blocks) and then
``scipy.sparse.vstack``, on one worker while the others wait. The blocks are therefore
:class:`CsrBlock` (a ``csr_matrix`` in every other respect), for which the stacking is
registered here: one block is returned as it is, and rows are stacked by concatenating the
three CSR arrays (a copy of the data, nothing else). The stacked result is a plain
``csr_matrix``.

This module registers the stacking with dask when it is imported, which happens only
where blocks are made or unpickled (the workers, and the driver of a bag's
``transform``): importing ``nlpfeat.text`` never imports dask.
"""
import numpy as np
import scipy.sparse as sp

from nlpfeat.text._counting._pair_tables import INT32_MAX

__all__ = ["CsrBlock", "stack_blocks"]


class CsrBlock(sp.csr_matrix):
    """A block of rows of a document-feature matrix computed on a Dask worker.

    A ``scipy.sparse.csr_matrix`` sharing the arrays it is made from; only the way dask
    stacks blocks of this type differs (see :func:`stack_blocks`).

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from nlpfeat.text._dask._blocks import CsrBlock, stack_blocks
    >>> a = CsrBlock(sp.csr_matrix([[1, 0], [0, 2]]))
    >>> b = CsrBlock(sp.csr_matrix([[3, 4]]))
    >>> X = stack_blocks([a, b])
    >>> type(X).__name__, X.toarray().tolist()
    ('csr_matrix', [[1, 0], [0, 2], [3, 4]])
    """


def stack_blocks(blocks, axis=0):
    """Stack CSR blocks along ``axis`` (dask's concatenation of :class:`CsrBlock`).

    Rows (``axis=0``) of blocks of the same width are stacked by concatenating ``data``,
    ``indices`` and the shifted ``indptr``; a single block is returned unchanged; other
    cases go to ``scipy.sparse``. The result is a plain ``csr_matrix`` (a single block
    stays what it is).
    """
    blocks = list(blocks)
    if len(blocks) == 1:
        return blocks[0]
    widths = {block.shape[1] for block in blocks}
    if axis != 0 or len(widths) != 1 or not all(sp.isspmatrix_csr(b) for b in blocks):
        stack = sp.vstack if axis == 0 else sp.hstack
        return sp.csr_matrix(stack(blocks, format="csr"))
    n_cols = widths.pop()
    nnz = np.array([block.nnz for block in blocks], dtype=np.int64)
    index = np.int32 if max(int(nnz.sum()), n_cols) <= INT32_MAX else np.int64
    data = np.concatenate([block.data for block in blocks])
    indices = np.concatenate([block.indices for block in blocks]).astype(index, copy=False)
    offsets = np.concatenate(([0], np.cumsum(nnz)[:-1]))
    indptr = np.concatenate([[0]] + [block.indptr[1:].astype(np.int64) + offset
                                     for block, offset in zip(blocks, offsets)])
    X = sp.csr_matrix((data, indices, indptr.astype(index, copy=False)),
                      shape=(int(indptr.size - 1), n_cols), copy=False)
    X.has_sorted_indices = all(block.has_sorted_indices for block in blocks)
    return X


try:
    from dask.array.dispatch import concatenate_lookup
except ImportError:  # pragma: no cover - blocks are made only where dask is installed
    pass
else:
    concatenate_lookup.register(CsrBlock, stack_blocks)
