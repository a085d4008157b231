"""The one place that chooses the numeric engine, numba or numpy, for every kernel task.

numba is a required dependency: ``engine="auto"`` (the default of every estimator) means
the compiled loops of :mod:`nlpfeat.kernels._compiled`, and ``engine="numpy"`` is a
reference switch (the numpy modules the compiled engine is tested against), not a
fallback. Where the compiled loops do not apply (a user's kernel, sparse input, the cosine
metric, extreme bandwidths, tree queries) the numpy implementation runs whatever the
engine. Each task below has one function here; the estimators call these, and text
reaches them through :mod:`nlpfeat.kernels._shared`.

Importing this module imports neither numba nor the compiled package: the compiled
functions are compiled (or loaded from numba's on-disk cache) on first use.
"""
import functools

import numpy as np

from nlpfeat.kernels import _bandwidth, _binned, _nadaraya_watson, _segments
from nlpfeat.kernels._nadaraya_watson import NWIndex

__all__ = ["ENGINES", "attention_pool", "loo_ard", "loo_grid", "nw_index", "nw_predict",
           "nw_weights", "position_weights", "resolve_engine", "segment_distances"]

ENGINES = ("auto", "numba", "numpy")


def resolve_engine(engine):
    """``"numpy"`` -> ``"numpy"``; ``"auto"`` and ``"numba"`` -> ``"numba"`` (required)."""
    return "numpy" if engine == "numpy" else "numba"


def _compiled_for(engine, kern, X=None, metric="euclidean"):
    """The compiled package if ``engine`` is numba and its loops handle ``kern`` (and the
    input ``X`` with ``metric``, when given), else None (the numpy path)."""
    if resolve_engine(engine) != "numba" or kern.family is None:
        return None
    from nlpfeat.kernels import _compiled

    if X is not None and not _compiled.supports(kern, X, metric):
        return None
    return _compiled


# ---------------------------------------------------------------- Nadaraya-Watson

def nw_index(X, Y, kern, bandwidth, metric, reg_type="lc", *, tree=False, engine="numpy",
             binned=False, bins=None, absolute=False):
    """An :class:`NWIndex` of the training data, with its compiled side where it applies;
    with ``binned`` a :class:`~nlpfeat.kernels._binned.BinnedIndex` (grid sums, ``bins``
    intervals per feature or the default grid; ``absolute``: Y are class indicators,
    bounded in absolute terms) over it, the exact index serving the queries the grid
    cannot certify and ``attention_weights``."""
    compiled = _compiled_for(engine, kern, X, metric)
    index = NWIndex(X, Y, kern, bandwidth, metric, reg_type, tree=tree,
                    compiled=None if compiled is None else compiled.CompiledNW)
    if not binned:
        return index
    binned = _binned.BinnedIndex(X, Y, kern, bandwidth, reg_type, bins,
                                 functools.partial(nw_predict, index=index), absolute=absolute)
    binned.exact_index, binned.Y = index, Y
    return binned


def nw_predict(X, index, *, algorithm="brute", working_memory=None, n_jobs=None):
    """:func:`nlpfeat.kernels._nadaraya_watson.nw_predict` on the index's engine; the
    binned index's grid sums for ``algorithm="binned"``."""
    if algorithm == "binned":
        return index.predict(X, working_memory=working_memory, n_jobs=n_jobs)
    if index.compiled is not None and algorithm != "tree":
        return index.compiled.predict(X, working_memory=working_memory, n_jobs=n_jobs)
    return _nadaraya_watson.nw_predict(X, index, algorithm=algorithm,
                                       working_memory=working_memory, n_jobs=n_jobs)


def nw_weights(X, index, *, algorithm="brute", working_memory=None, n_jobs=None):
    """:func:`nlpfeat.kernels._nadaraya_watson.nw_weights` on the index's engine (the
    exact index of a binned one: weights of every pair)."""
    if algorithm == "binned":
        if index.exact_index is None:
            raise ValueError("attention_weights needs the training rows, which a model "
                             "fitted on a dask array does not keep (grid sums only); fit "
                             "in memory for attention weights.")
        index, algorithm = index.exact_index, "brute"
    if index.compiled is not None and algorithm != "tree":
        return index.compiled.weights(X, working_memory=working_memory, n_jobs=n_jobs)
    return _nadaraya_watson.nw_weights(X, index, algorithm=algorithm,
                                       working_memory=working_memory, n_jobs=n_jobs)


def loo_grid(X, Y, kern, metric, grid, *, engine="numpy", n_jobs=None, binned=False,
             bins=None, **options):
    """:func:`nlpfeat.kernels._bandwidth.loo_grid` (same ``options``) on ``engine``.

    ``n_jobs``: threads of the compiled loop (the numpy path ignores it). ``binned``: on
    the grid (:func:`nlpfeat.kernels._binned.binned_loo_grid`), the (row, bandwidth)
    pairs it cannot certify scored exactly on ``engine``, in one call.
    """
    if binned:
        reg_type, wm = options.get("reg_type", "lc"), options.get("working_memory")
        compiled = _compiled_for(engine, kern, X, metric)

        def exact_pairs(rows, need):
            if compiled is not None:
                return compiled.loo_pairs(X, Y, kern, metric, grid, rows, need,
                                          reg_type=reg_type, working_memory=wm, n_jobs=n_jobs)
            P = np.empty((len(rows), len(grid), Y.shape[1]))
            for g in np.flatnonzero(need.any(axis=0)):
                P[need[:, g], g] = _bandwidth.loo_rows(X, Y, kern, grid[g], metric,
                                                       rows[need[:, g]], reg_type=reg_type,
                                                       working_memory=wm)
            return P
        return _binned.binned_loo_grid(X, Y, kern, grid, reg_type=reg_type,
                                       loss=options.get("loss", "squared"), bins=bins,
                                       exact_pairs=exact_pairs)
    compiled = _compiled_for(engine, kern, X, metric)
    if compiled is None:
        return _bandwidth.loo_grid(X, Y, kern, metric, grid, **options)
    return compiled.loo_grid(X, Y, kern, metric, grid, n_jobs=n_jobs, **options)


def loo_ard(X, Y, kern, metric, h_start, *, engine="numpy", n_jobs=None, **options):
    """:func:`nlpfeat.kernels._bandwidth.loo_ard` (same ``options``), its objective on
    ``engine`` (``n_jobs`` as in :func:`loo_grid`)."""
    compiled = _compiled_for(engine, kern, X, metric)
    objective = None if compiled is None else compiled.ard_objective(n_jobs)
    return _bandwidth.loo_ard(X, Y, kern, metric, h_start, objective=objective, **options)


# ---------------------------------------------------------------- segments (text features)

def attention_pool(vectors, starts, kern, bandwidth, *, query=None, token_weights=None,
                   engine="numpy"):
    """:func:`nlpfeat.kernels._segments.attention_pool` (pooled, weights) on ``engine``."""
    compiled = _compiled_for(engine, kern)
    if compiled is None:
        return _segments.attention_pool(vectors, starts, kern, bandwidth, query=query,
                                        token_weights=token_weights)
    return compiled.segment_attention(vectors, starts, kern, bandwidth, query=query,
                                      token_weights=token_weights, tie_rtol=_segments.TIE_RTOL)


def segment_distances(vectors, starts, kern, *, query=None, token_weights=None,
                      engine="numpy"):
    """Distances of the tokens to their segment's query, exactly as :func:`attention_pool`
    on ``engine`` weighs them for ``kern`` (no per-dimension bandwidth)."""
    compiled = _compiled_for(engine, kern)
    if compiled is None:
        return _segments.query_distances(vectors, starts, query=query,
                                         token_weights=token_weights)
    return compiled.segment_attention(vectors, starts, None, 1.0, query=query,
                                      token_weights=token_weights, distances_only=True)


def position_weights(offsets, mu, kern, bandwidth, *, engine="numpy"):
    """:func:`nlpfeat.kernels._segments.position_weights` (n_positions, n_tokens) on
    ``engine``."""
    compiled = _compiled_for(engine, kern)
    if compiled is None:
        return _segments.position_weights(offsets, mu, kern, bandwidth)
    return compiled.position_weights(offsets, mu, kern, bandwidth, tie_rtol=_segments.TIE_RTOL)
