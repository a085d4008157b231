"""Working-memory budget -> row batches, for every query-by-train computation.

``working_memory`` has scikit-learn's meaning: the number of MiB that one chunk of
temporary arrays may take. ``None`` means nlpfeat's own default,
:data:`DEFAULT_WORKING_MEMORY`, chosen by measurement (see ``benchmarks/RESULTS.md``):
chunks that stay in the CPU cache run faster than large ones.
"""
import numpy as np

__all__ = ["DEFAULT_WORKING_MEMORY", "chunk_n_rows", "gen_row_chunks"]

#: MiB per chunk when the estimator's ``working_memory`` is None.
DEFAULT_WORKING_MEMORY = 4.0


def chunk_n_rows(row_bytes, n_rows, working_memory=None):
    """How many rows of ``row_bytes`` bytes each fit in ``working_memory`` MiB.

    Always at least 1 and at most ``n_rows`` (so a huge row still gets processed, one
    at a time, as in ``sklearn.utils.get_chunk_n_rows``).

    Examples
    --------
    >>> chunk_n_rows(row_bytes=8 * 1000, n_rows=10_000, working_memory=1)
    131
    """
    if working_memory is None:
        working_memory = DEFAULT_WORKING_MEMORY
    if not np.isfinite(working_memory) or working_memory <= 0:
        raise ValueError(
            f"working_memory must be a positive number of MiB; got {working_memory!r}."
        )
    rows = int(working_memory * 2**20 // max(int(row_bytes), 1))
    return max(1, min(rows, max(int(n_rows), 1)))


def gen_row_chunks(n_rows, row_bytes, working_memory=None):
    """Yield slices covering ``range(n_rows)`` in chunks that fit the budget.

    Examples
    --------
    >>> list(gen_row_chunks(5, row_bytes=2**20, working_memory=2))
    [slice(0, 2, None), slice(2, 4, None), slice(4, 5, None)]
    """
    step = chunk_n_rows(row_bytes, n_rows, working_memory)
    for start in range(0, n_rows, step):
        yield slice(start, min(start + step, n_rows))
