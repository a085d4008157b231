"""Working-memory budget -> row batches, for every query-by-train computation.

``working_memory`` has scikit-learn's meaning: the number of MiB that one chunk of
temporary arrays may take. ``None`` follows scikit-learn's configuration
(``sklearn.set_config(working_memory=...)`` or ``sklearn.config_context``) when the user
has changed it from scikit-learn's own default (1024 MiB); otherwise it means nlpfeat's
default, :data:`DEFAULT_WORKING_MEMORY`, chosen by measurement (see
``benchmarks/RESULTS.md``): chunks that stay in the CPU cache run faster than large ones.
"""
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from joblib import effective_n_jobs
from threadpoolctl import ThreadpoolController

__all__ = ["DEFAULT_WORKING_MEMORY", "blas_threads", "chunk_n_rows", "gen_row_chunks",
           "map_chunks", "resolve_working_memory"]

_CONTROLLER = []     # one ThreadpoolController, made on first use (inspecting costs ~3 ms)

#: MiB per chunk when the estimator's ``working_memory`` is None and scikit-learn's
#: configuration is at its default.
DEFAULT_WORKING_MEMORY = 4.0
#: scikit-learn's own default ``working_memory`` (MiB): a configuration still at this value
#: is taken as unset.
SKLEARN_DEFAULT_WORKING_MEMORY = 1024


def resolve_working_memory(working_memory=None):
    """MiB per chunk: the estimator's value, else scikit-learn's configuration if the user
    set one, else :data:`DEFAULT_WORKING_MEMORY`.

    Examples
    --------
    >>> import sklearn
    >>> resolve_working_memory(16), resolve_working_memory(None)
    (16, 4.0)
    >>> with sklearn.config_context(working_memory=64):
    ...     resolve_working_memory(None)
    64
    """
    if working_memory is not None:
        return working_memory
    from sklearn import get_config

    configured = get_config().get("working_memory", SKLEARN_DEFAULT_WORKING_MEMORY)
    if configured is not None and configured != SKLEARN_DEFAULT_WORKING_MEMORY:
        return configured
    return DEFAULT_WORKING_MEMORY


def chunk_n_rows(row_bytes, n_rows, working_memory=None):
    """How many rows of ``row_bytes`` bytes each fit in ``working_memory`` MiB.

    Always at least 1 and at most ``n_rows`` (so a huge row still gets processed, one
    at a time, as in ``sklearn.utils.get_chunk_n_rows``).

    Examples
    --------
    >>> chunk_n_rows(row_bytes=8 * 1000, n_rows=10_000, working_memory=1)
    131
    """
    working_memory = resolve_working_memory(working_memory)
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
