"""The one ``working_memory`` rule: resolve it, check it once, turn it into chunk sizes.

``working_memory`` has scikit-learn's meaning: the number of MiB that one chunk of
temporary arrays may take. It resolves, everywhere in nlpfeat, to

1. the estimator's (or function's) value when it is not None, else
2. scikit-learn's configuration (``sklearn.set_config(working_memory=...)`` or
   ``sklearn.config_context``) when the user has changed it from scikit-learn's own
   default (1024 MiB), else
3. nlpfeat's default for the computation: :data:`DEFAULT_WORKING_MEMORY` (4 MiB: chunks
   that stay in the CPU cache run faster than large ones), or
   :data:`PAIR_COUNTING_WORKING_MEMORY` (64 MiB) for co-occurrence counting, a
   sort-and-merge whose per-chunk work larger chunks amortise (figures in
   ``benchmarks/RESULTS.md``).

The resolved value is checked by :func:`check_working_memory`, the one validator.
"""
from concurrent.futures import ThreadPoolExecutor
from numbers import Real

import numpy as np
from joblib import effective_n_jobs
from threadpoolctl import ThreadpoolController

__all__ = ["DEFAULT_WORKING_MEMORY", "PAIR_COUNTING_WORKING_MEMORY", "blas_threads",
           "check_working_memory", "chunk_n_rows", "gen_row_chunks", "map_chunks",
           "resolve_working_memory"]

_CONTROLLER = []     # one ThreadpoolController, made on first use (inspecting costs ~3 ms)

#: MiB per chunk when the estimator's ``working_memory`` is None and scikit-learn's
#: configuration is at its default.
DEFAULT_WORKING_MEMORY = 4.0
#: MiB per chunk of co-occurrence (pair) counting when neither its ``working_memory`` nor
#: scikit-learn's configuration sets one: counting sorts and merges each chunk's pairs, so
#: larger chunks amortise the per-chunk work instead of fitting a cache.
PAIR_COUNTING_WORKING_MEMORY = 64.0
#: scikit-learn's own default ``working_memory`` (MiB): a configuration still at this value
#: is taken as unset.
SKLEARN_DEFAULT_WORKING_MEMORY = 1024


def check_working_memory(working_memory):
    """Raise ValueError unless ``working_memory`` is None or a positive, finite number of MiB.

    Examples
    --------
    >>> check_working_memory(None), check_working_memory(0.5)
    (None, None)
    >>> check_working_memory(-1)
    Traceback (most recent call last):
    ...
    ValueError: working_memory must be a positive number of MiB or None; got -1.
    """
    if working_memory is None:
        return
    if (not isinstance(working_memory, Real) or isinstance(working_memory, bool)
            or not np.isfinite(working_memory) or working_memory <= 0):
        raise ValueError(
            f"working_memory must be a positive number of MiB or None; got {working_memory!r}."
        )


def resolve_working_memory(working_memory=None, default=DEFAULT_WORKING_MEMORY):
    """MiB per chunk: the estimator's value, else scikit-learn's configuration if the user
    set one, else ``default``; checked by :func:`check_working_memory`.

    Examples
    --------
    >>> import sklearn
    >>> resolve_working_memory(16), resolve_working_memory(None)
    (16, 4.0)
    >>> resolve_working_memory(None, default=PAIR_COUNTING_WORKING_MEMORY)
    64.0
    >>> with sklearn.config_context(working_memory=32):
    ...     resolve_working_memory(None), resolve_working_memory(None, default=64.0)
    (32, 32)
    """
    if working_memory is None:
        from sklearn import get_config

        configured = get_config().get("working_memory", SKLEARN_DEFAULT_WORKING_MEMORY)
        if configured is not None and configured != SKLEARN_DEFAULT_WORKING_MEMORY:
            working_memory = configured
        else:
            working_memory = default
    check_working_memory(working_memory)
    return working_memory


def chunk_n_rows(row_bytes, n_rows, working_memory=None, default=DEFAULT_WORKING_MEMORY):
    """How many rows of ``row_bytes`` bytes each fit in ``working_memory`` MiB.

    Always at least 1 and at most ``n_rows`` (so a huge row still gets processed, one
    at a time, as in ``sklearn.utils.get_chunk_n_rows``). ``working_memory`` resolves as
    :func:`resolve_working_memory` says, with ``default`` when nothing sets it.

    Examples
    --------
    >>> chunk_n_rows(row_bytes=8 * 1000, n_rows=10_000, working_memory=1)
    131
    """
    working_memory = resolve_working_memory(working_memory, default)
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


def map_chunks(func, chunks, n_jobs=None):
    """``[func(chunk) for chunk in chunks]``, in threads when ``n_jobs`` asks for several.

    numpy releases the GIL in its ufuncs and in BLAS, so chunks of array work run in
    parallel threads; each thread then gets one BLAS thread (no oversubscription).
    ``n_jobs`` follows joblib: None means 1, -1 all cores. ``func`` must only write to
    its own chunk's outputs.

    Examples
    --------
    >>> map_chunks(lambda rows: rows.stop - rows.start, [slice(0, 2), slice(2, 5)], n_jobs=2)
    [2, 3]
    """
    chunks = list(chunks)
    workers = min(effective_n_jobs(n_jobs), len(chunks))
    if workers <= 1:
        return [func(chunk) for chunk in chunks]
    with blas_threads(1), ThreadPoolExecutor(workers) as pool:
        return list(pool.map(func, chunks))


def blas_threads(limits):
    """Context manager: at most ``limits`` BLAS threads inside (threadpoolctl).

    The BLAS libraries are found once per process, not at every call as
    ``threadpoolctl.threadpool_limits`` does (about 3 ms each time).
    """
    if not _CONTROLLER:
        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0].limit(limits=limits, user_api="blas")
