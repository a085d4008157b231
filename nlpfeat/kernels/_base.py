"""Shared fitting logic of the Nadaraya-Watson estimators (parameters, bandwidth, queries)."""
import contextlib
import warnings

import numpy as np
from joblib import effective_n_jobs
from scipy import sparse

from nlpfeat._chunking import blas_threads
from nlpfeat._validation import HasMethods, Integral, Interval, Real, StrOptions, check_is_fitted
from nlpfeat.kernels._bandwidth import default_grid, loo_ard, loo_grid, rule_of_thumb
from nlpfeat.kernels._engine import resolve_engine
from nlpfeat.kernels._kernels import get_kernel
from nlpfeat.kernels._nadaraya_watson import NWIndex, nw_predict, nw_weights
from nlpfeat.kernels._pairwise import check_bandwidth

__all__ = ["EmptySupportWarning", "NadarayaWatsonMixin"]

#: ``algorithm="auto"`` uses the KD-tree for compact kernels from this many training rows,
TREE_MIN_SAMPLES = 5_000
#: up to this many features (trees lose to brute force in high dimension),
TREE_MAX_FEATURES = 3
#: and when the support box covers at most this fraction of the data's bounding box.
TREE_MAX_FRACTION = 0.05


class EmptySupportWarning(UserWarning):
    """Some queries had no training point inside a compact kernel's support."""


class NadarayaWatsonMixin:
    """Parameters and helpers shared by the regressor and the classifier."""

    _parameter_constraints = {
        "kernel": [str, callable, HasMethods(["log_k", "k"])],
        "bandwidth": [Interval(Real, 0, None, closed="neither"),
                      StrOptions({"scott", "silverman", "loo", "loo-ard"}), "array-like"],
        "metric": [StrOptions({"euclidean", "product", "cosine"})],
        "bandwidth_grid": ["array-like", Interval(Integral, 2, None, closed="left"), None],
        "working_memory": [Interval(Real, 0, None, closed="neither"), None],
        "algorithm": [StrOptions({"auto", "tree", "brute"})],
        "on_empty": [StrOptions({"nearest", "mean", "nan", "raise"})],
        "n_jobs": [Integral, None],
        "engine": [StrOptions({"auto", "numba", "numpy"})],
    }

    def _blas_threads(self):
        """Limit BLAS threads to ``n_jobs`` (None: leave them alone; -1: all cores)."""
        if self.n_jobs is None or self.n_jobs == -1:
            return contextlib.nullcontext()
        return blas_threads(max(1, effective_n_jobs(self.n_jobs)))

    def _check_combination(self, X, kern, reg_type):
        is_sparse = sparse.issparse(X)
        if reg_type == "ll" and (is_sparse or self.metric == "cosine"):
            raise ValueError("reg_type='ll' needs dense X (sparse input is not supported) and "
                             "metric 'euclidean' or 'product'; use reg_type='lc' for sparse "
                             "input or metric='cosine', or densify X with X.toarray().")
        if is_sparse and self.metric == "product" and kern.family != "gaussian":
            raise ValueError("metric='product' with a non-Gaussian kernel needs dense X; use "
                             "metric='euclidean' or 'cosine', or X.toarray().")
        if self.algorithm == "tree" and (not kern.compact or is_sparse or self.metric == "cosine"):
            raise ValueError(
                f"algorithm='tree' needs a compact kernel (got {kern.name!r}, compact="
                f"{kern.compact}), dense X (sparse input is not supported) and metric "
                f"'euclidean' or 'product'; use algorithm='brute' or 'auto'.")

    def _resolve_algorithm(self, X, kern):
        if self.algorithm != "auto":
            return self.algorithm
        use_tree = (kern.compact and not sparse.issparse(X) and self.metric != "cosine"
                    and X.shape[1] <= TREE_MAX_FEATURES and X.shape[0] >= TREE_MIN_SAMPLES)
        if use_tree:  # few neighbours per query: the support is small relative to the data
            span = np.ptp(X, axis=0)
            side = 2.0 * kern.radius * np.broadcast_to(self.bandwidth_, span.shape)
            use_tree = np.prod(np.minimum(1.0, side / np.where(span > 0, span, np.inf))) \
                <= TREE_MAX_FRACTION
        return "tree" if use_tree else "brute"

    def _fit_index(self, X, Y, *, reg_type, loss):
        """Select the bandwidth and build the query index; sets the fitted attributes."""
        kern = get_kernel(self.kernel)
        self._check_combination(X, kern, reg_type)
        self.engine_ = resolve_engine(self.engine)
        self.bandwidth_, self.loo_scores_, self.bandwidth_grid_ = self._select_bandwidth(
            X, Y, kern, reg_type, loss)
        self.algorithm_ = self._resolve_algorithm(X, kern)
        self._index = NWIndex(X, Y, kern, self.bandwidth_, self.metric, reg_type,
                              tree=self.algorithm_ == "tree", engine=self.engine_)
        self._y_mean = Y.mean(axis=0)
        return self

    def _select_bandwidth(self, X, Y, kern, reg_type, loss):
        n, d = X.shape
        bw = self.bandwidth
        if not isinstance(bw, str):
            return _squeeze(check_bandwidth(bw, d, self.metric)), None, None
        h0 = rule_of_thumb(X, "silverman" if bw == "silverman" else "scott", self.metric)
        if bw in ("scott", "silverman"):
            return _squeeze(h0), None, None
        if n < 3:
            raise ValueError(f"bandwidth={bw!r} needs at least 3 samples; got n_samples = {n}. "
                             f"Pass a numeric bandwidth or 'scott' for tiny data sets.")
        if bw == "loo-ard" and reg_type != "lc":
            raise ValueError("bandwidth='loo-ard' supports reg_type='lc' only; use "
                             "bandwidth='loo' with reg_type='ll'.")
        grid = self._grid(h0, d) if bw == "loo" else default_grid(h0, 10)
        with self._blas_threads():
            losses = loo_grid(X, Y, kern, self.metric, grid, reg_type=reg_type, loss=loss,
                              working_memory=self.working_memory, engine=self.engine_,
                              n_jobs=self.n_jobs)
            best = grid[int(np.argmin(losses))]
            if bw == "loo-ard":
                best, _ = loo_ard(X, Y, kern, self.metric, best, loss=loss,
                                  working_memory=self.working_memory, engine=self.engine_,
                                  n_jobs=self.n_jobs)
        return _squeeze(best), losses, grid

    def _grid(self, h0, d):
        grid = self.bandwidth_grid
        if grid is None or isinstance(grid, Integral):
            return default_grid(h0, 30 if grid is None else int(grid))
        arr = np.asarray(grid, dtype=np.float64)
        width = 1 if self.metric == "cosine" else d
        if arr.ndim == 1:  # one shared (scalar) bandwidth per grid point
            arr, width = arr[:, None], 1
        if arr.ndim != 2 or arr.shape[1] != width or arr.shape[0] < 1:
            raise ValueError(f"bandwidth_grid must be an int, a 1-D array of bandwidths or an "
                             f"array of shape (n_grid, {width}); got shape {arr.shape}.")
        if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
            raise ValueError("bandwidth_grid must hold strictly positive finite bandwidths; "
                             f"got min {np.nanmin(arr)!r}.")
        return arr

    def _query(self, X, *, weights=False):
        """Predictions (or weights) for validated X, with the ``on_empty`` policy applied."""
        check_is_fitted(self)
        func = nw_weights if weights else nw_predict
        with self._blas_threads():       # chunk threads take one BLAS thread each
            out, empty = func(X, self._index, algorithm=self.algorithm_,
                              working_memory=self.working_memory, n_jobs=self.n_jobs)
        n_empty = int(empty.sum())
        if not n_empty:
            return out
        kern = self._index.kern
        msg = (f"{n_empty} of {X.shape[0]} queries have no training point within the "
               f"support of the {kern.name!r} kernel (bandwidth={self.bandwidth_!r})")
        if self.on_empty == "raise":
            raise ValueError(msg + "; increase the bandwidth or set on_empty to 'nearest', "
                             "'mean' or 'nan'.")
        if self.on_empty == "nearest":
            warnings.warn(msg + "; they get their nearest training point. Increase the "
                          "bandwidth or set on_empty to silence this.", EmptySupportWarning,
                          stacklevel=3)
            return out
        return _fill_empty(out, empty, self.on_empty, self._y_mean, weights)


def _fill_empty(out, empty, policy, y_mean, weights):
    if weights:
        n = out.shape[1]
        fill = np.full((int(empty.sum()), n), 1.0 / n if policy == "mean" else np.nan)
        if sparse.issparse(out):
            if policy == "nan":
                return out  # a sparse row cannot hold NaN sensibly: it stays all zero
            out = out.tolil()
        out[np.flatnonzero(empty)] = fill
        return out.tocsr() if sparse.issparse(out) else out
    out[empty] = y_mean if policy == "mean" else np.nan
    return out


def _squeeze(h):
    h = np.asarray(h, dtype=np.float64)
    return float(h.reshape(())) if h.size == 1 else h
