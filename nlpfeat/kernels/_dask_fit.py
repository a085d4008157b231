"""Fitting on a ``dask.array`` of training rows: binned grid sums added over partitions.

The grid needs the data's range and the bandwidth first: one pass of dask reductions
gives the range, the number of rows, the deviations of X (for ``"scott"`` /
``"silverman"``) and of the targets (for the error bound). Then every partition bins its
rows onto the common grid on a worker (:func:`nlpfeat.kernels._binned.bin_rows`) and the
grids are added pairwise on the workers (a tree reduction), so the driver receives one
grid: the training rows never leave the cluster and the fitted model holds grid memory
only. ``bandwidth="loo"`` needs each row's exact fallback and is not available on a dask
array; pass a number, ``"scott"`` or ``"silverman"``.

A model fitted so predicts from the grid sums alone: queries the grid cannot certify
(outside the data, sparse regions) get NaN with a
:class:`~nlpfeat.kernels._binned.BinnedRangeWarning`, and ``attention_weights`` is not
available (there are no training rows to weigh).
"""
import numpy as np

from nlpfeat.kernels import _binned
from nlpfeat.kernels._bandwidth import normal_reference
from nlpfeat.kernels._pairwise import check_bandwidth

__all__ = ["fit_dask"]


def _block_grid(X, y, grid, y_mean, classes, scale):
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    if classes is None:
        V = y.reshape(len(y), -1).astype(np.float64) - y_mean
    else:
        V = (np.searchsorted(classes, y)[:, None] == np.arange(len(classes))) - y_mean
    return _binned.bin_rows(grid, X, V, scale)


def _tree_sum(parts):
    import dask

    add = dask.delayed(np.add, pure=True)
    while len(parts) > 1:
        parts = [add(a, b) if b is not None else a
                 for a, b in zip(parts[::2], parts[1::2] + [None] * (len(parts) % 2))]
    return parts[0]


def fit_dask(estimator, X, y, kern, reg_type, *, classifier):
    """Set ``estimator``'s fitted attributes from dask arrays ``X`` (rows) and ``y``."""
    import dask
    import dask.array as da

    if X.ndim != 2 or np.isnan(X.shape[1]) or X.shape[1] > _binned.MAX_FEATURES:
        raise ValueError(
            f"fitting on a dask array bins the rows: X must be 2-D with known chunks and "
            f"at most {_binned.MAX_FEATURES} features; got shape {X.shape}.")
    if estimator.algorithm not in ("auto", "binned") or estimator.metric != "euclidean" \
            or estimator.var_type not in (None, "c" * X.shape[1]):
        raise ValueError(
            "fitting on a dask array needs algorithm 'auto' or 'binned', metric "
            "'euclidean' and continuous features (var_type None); compute the array "
            "(X.compute()) to use the other settings in memory.")
    bw = estimator.bandwidth
    if isinstance(bw, str) and bw not in ("scott", "silverman"):
        raise ValueError(
            f"bandwidth={bw!r} is not available when fitting on a dask array (its "
            f"leave-one-out fallback needs every training row); pass a number, 'scott' "
            f"or 'silverman', or select the bandwidth on an in-memory subsample.")
    X = X.rechunk({1: -1}).astype(np.float64)
    y = da.asarray(y)
    if y.ndim == 0 or y.shape[0] != X.shape[0]:
        raise ValueError(f"y must have one row per row of X ({X.shape[0]}); got shape "
                         f"{y.shape}.")
    y = y.rechunk({0: X.chunks[0]} | ({1: -1} if y.ndim == 2 else {}))
    d = X.shape[1]
    classes = None
    if classifier:
        if y.ndim != 1:
            raise ValueError("the classifier takes a 1-D y of class labels.")
        classes = np.unique(da.unique(y).compute())
        estimator.classes_ = classes
        counts = da.stack([(y == c).sum() for c in classes])
        lo, hi, n, sd, counts = dask.compute(X.min(0), X.max(0), X.shape[0], X.std(0, ddof=1),
                                             counts)
        y_mean = counts / n
        std, top = np.sqrt(y_mean * (1 - y_mean)), np.maximum(y_mean, 1 - y_mean)
    else:
        Y = y.reshape(y.shape[0], -1).astype(np.float64)
        lo, hi, n, sd, y_mean, std, ymin, ymax = dask.compute(
            X.min(0), X.max(0), X.shape[0], X.std(0, ddof=1), Y.mean(0), Y.std(0),
            Y.min(0), Y.max(0))
        top = np.maximum(ymax - y_mean, y_mean - ymin)
        estimator._y_ndim = y.ndim
    if not (np.isfinite(lo).all() and np.isfinite(hi).all()):
        raise ValueError("X contains NaN or infinity; clean the dask array first.")
    if isinstance(bw, str):
        size = np.maximum(np.abs(lo), np.abs(hi))
        sigma = np.where(sd > 0, sd, np.where(size > 0, size, 1.0))
        h = normal_reference(sigma, n, d, bw)
    else:
        h = check_bandwidth(bw, d, "euclidean")
    h = np.broadcast_to(np.asarray(h, dtype=np.float64), (d,)).copy()
    bins = _binned.check_bins(estimator.bins, d)
    span = hi - lo
    if bins is None:
        bins = _binned.default_bins(span, h, kern, reg_type)
        if bins is None:
            raise ValueError(
                f"the bandwidth ({h.min():.3g}) is so far below the data's range that no "
                f"grid of {_binned.MAX_GRID} nodes resolves it, and a fit on a dask array "
                f"keeps no rows for the exact path; pass a larger bandwidth.")
        auto = True
    else:
        auto = False
    grid = _binned._Grid(lo, span, h, bins, kern, reg_type)
    scale = np.ones(len(classes)) if classifier else np.where(std > 0, std, 1.0)
    block = dask.delayed(_block_grid, pure=True)
    parts = [block(xb, yb, grid, y_mean, classes, scale)
             for xb, yb in zip(X.to_delayed()[:, 0], y.to_delayed().ravel())]
    raw = _tree_sum(parts).compute()
    sums = _binned.BinnedSums.from_raw(raw, grid, reg_type)
    tau = _binned.tau_from(std, top) if auto else _binned.EXPLICIT_TAU
    estimator._index = _binned.BinnedIndex(None, None, kern, h, reg_type,
                                           None if auto else bins, None, sums=sums,
                                           y_mean=y_mean, tau=tau, top=top, scale=scale)
    estimator._y_mean = y_mean
    estimator.n_features_in_ = d
    estimator.bandwidth_ = float(h[0]) if d == 1 else h
    estimator.loo_scores_ = estimator.bandwidth_grid_ = estimator.aic_ = None
    estimator.algorithm_, estimator.engine_ = "binned", "numpy"
    return estimator
