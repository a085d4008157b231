"""Queries held in a ``dask.array``: Nadaraya-Watson predictions block by block on Dask.

``predict``, ``predict_proba`` and ``attention_weights`` of a fitted
:class:`~nlpfeat.kernels.NadarayaWatsonRegressor` / ``Classifier`` accept a 2-D
``dask.array`` of queries chunked by rows. Each row block is computed by the in-memory
method on a worker, so the result equals the in-memory one block for block (the row
chunks only decide which queries share a call, as ``working_memory`` does). The fitted
model enters the graph once, as one named ``dask.delayed`` object that every block
task depends on: with ``distributed`` it is sent to the scheduler once and fetched once
by each worker that runs a block, never serialised per block.

The result is lazy: a ``dask.array`` with the queries' row chunks, of ndarray blocks, or
of ``scipy.sparse`` CSR blocks where the in-memory ``attention_weights`` is sparse
(compact kernels). A block split along the feature axis is rechunked to whole rows
first, since a query's weights need all its features. Warnings raised on a worker (an
``EmptySupportWarning``) stay in that worker's log; ``on_empty="raise"`` raises at
``compute`` time.

dask is an optional dependency (``pip install "nlpfeat[dask]"``); this module imports it
only when a dask array is passed.
"""
import uuid

import numpy as np

__all__ = ["is_dask_array", "query_dask_array"]


def is_dask_array(X):
    """Whether ``X`` is a ``dask.array.Array`` (checked without importing dask)."""
    return type(X).__module__.startswith("dask.array") and hasattr(X, "to_delayed")


def _apply(estimator, method, block):
    return getattr(estimator, method)(block)


def _output_meta(estimator, method):
    """``(shape of one row, dtype, meta)`` of the method's output, from the fitted model."""
    import scipy.sparse as sp

    if method == "attention_weights":
        n_train = estimator._index.Y.shape[0]
        if estimator._index.kern.compact:
            return (n_train,), np.float64, sp.csr_matrix((0, n_train), dtype=np.float64)
        return (n_train,), np.float64, np.empty((0, n_train))
    if method == "predict_proba":
        k = len(estimator.classes_)
        return (k,), np.float64, np.empty((0, k))
    if hasattr(estimator, "classes_"):          # the classifier's predict: labels
        return (), estimator.classes_.dtype, np.empty((0,), dtype=estimator.classes_.dtype)
    if estimator._y_ndim == 1:
        return (), np.float64, np.empty((0,))
    k = estimator._y_mean.size
    return (k,), np.float64, np.empty((0, k))


def query_dask_array(estimator, X, method):
    """``estimator.<method>`` of every row block of the dask array ``X``, as a dask array.

    Parameters
    ----------
    estimator : fitted NadarayaWatsonRegressor or NadarayaWatsonClassifier
    X : dask.array.Array of shape (n_queries, n_features)
        Row blocks of dense (or scipy sparse) queries.
    method : {"predict", "predict_proba", "attention_weights"}

    Returns
    -------
    dask.array.Array
        Lazy; ``.compute()`` gives what the method returns for ``X.compute()``.
    """
    import dask
    import dask.array as da

    from nlpfeat._validation import check_is_fitted

    check_is_fitted(estimator)
    if X.ndim != 2:
        raise ValueError(
            f"Expected a 2-D dask array of queries (n_queries, n_features); got {X.ndim} "
            f"dimension(s). Reshape it, e.g. X.reshape(-1, 1) for a single feature.")
    n_features = X.shape[1]
    if not np.isnan(n_features) and n_features != estimator.n_features_in_:
        raise ValueError(
            f"X has {n_features} features, but {type(estimator).__name__} is expecting "
            f"{estimator.n_features_in_} features as input.")
    if len(X.chunks[1]) > 1:        # blocks split along the features: whole rows per block
        X = X.rechunk({1: -1})
    row_shape, dtype, meta = _output_meta(estimator, method)
    # One named key for the model: tokenizing (hashing) the training data would cost more
    # than it saves, and every block task refers to this one key.
    fitted = dask.delayed(estimator, name=f"nlpfeat-nw-{uuid.uuid4().hex}", traverse=False)
    apply = dask.delayed(_apply, pure=True)
    blocks = [
        da.from_delayed(apply(fitted, method, block), shape=(n_rows,) + row_shape,
                        dtype=dtype, meta=meta)
        for block, n_rows in zip(X.to_delayed()[:, 0], X.chunks[0])
    ]
    if not blocks:
        return da.from_array(meta, chunks=meta.shape, asarray=False)
    return da.concatenate(blocks, axis=0) if len(blocks) > 1 else blocks[0]
