"""Shared fitting logic of the Nadaraya-Watson estimators (parameters, bandwidth, queries)."""
import contextlib
import dataclasses
import warnings
import weakref
from typing import Any

import numpy as np
from joblib import effective_n_jobs
from scipy import sparse

from nlpfeat._chunking import blas_threads
from nlpfeat._params import estimator_params
from nlpfeat._progress import progress_bar
from nlpfeat._validation import Integral, Interval, Real, StrOptions, check_is_fitted
from nlpfeat.kernels import _binned, _mixed
from nlpfeat.kernels._aic import select_aic
from nlpfeat.kernels._bandwidth import _N_ARD_GRID, _N_GRID, default_grid, rule_of_thumb
from nlpfeat.kernels._engine import (
    ENGINES,
    loo_ard,
    loo_grid,
    nw_index,
    nw_predict,
    nw_weights,
    resolve_engine,
)
from nlpfeat.kernels._kernels import Kernel, get_kernel
from nlpfeat.kernels._nadaraya_watson import NWIndex
from nlpfeat.kernels._pairwise import check_bandwidth

__all__ = ["EmptySupportWarning", "NadarayaWatsonMixin"]

#: ``algorithm="auto"`` uses the KD-tree for compact kernels from this many training rows,
TREE_MIN_SAMPLES = 5_000
#: up to this many features (trees lose to brute force in high dimension),
TREE_MAX_FEATURES = 3
#: and when the support box covers at most this fraction of the data's bounding box.
TREE_MAX_FRACTION = 0.05
#: ``algorithm="auto"`` bins (smooth kernel, at most 3 features) from this many rows.
BINNED_MIN_SAMPLES = 50_000
#: What the progress bars of the searches by an optimiser say (``verbose``).
_ARD_SEARCH = "bandwidth='loo-ard' (L-BFGS on the leave-one-out loss)"
_AIC_SEARCH = "bandwidth='aic' (Nelder-Mead on AIC_c)"


class EmptySupportWarning(UserWarning):
    """Some queries had no training point inside a compact kernel's support.

    Raised once per fit with ``on_empty="nearest"`` (the default), so that a bandwidth too
    small for the data is noticed; ``n_empty`` and ``n_queries`` say how many queries.

    Examples
    --------
    >>> import warnings
    >>> from nlpfeat.kernels import EmptySupportWarning, NadarayaWatsonRegressor
    >>> reg = NadarayaWatsonRegressor("epanechnikov", bandwidth=0.5)
    >>> reg = reg.fit([[0.0], [1.0], [2.0]], [0.0, 1.0, 2.0])
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     reg.predict([[1.1], [10.0]])     # 10 is far from every training point
    array([1., 2.])
    >>> caught[0].category is EmptySupportWarning, caught[0].message.n_empty
    (True, 1)
    """


@estimator_params
class NadarayaWatsonMixin:
    """Parameters and helpers shared by the regressor and the classifier."""

    _parameter_constraints = {
        "kernel": [str, callable, Kernel],
        "bandwidth": [Interval(Real, 0, None, closed="neither"),
                      StrOptions({"scott", "silverman", "loo", "loo-ard", "aic"}), "array-like"],
        "metric": [StrOptions({"euclidean", "product", "cosine"})],
        "bandwidth_grid": ["array-like", Interval(Integral, 2, None, closed="left"), None],
        "working_memory": [Interval(Real, 0, None, closed="neither"), None],
        "algorithm": [StrOptions({"auto", "tree", "brute", "binned"})],
        "bins": [Interval(Integral, 1, None, closed="left"), "array-like", None],
        "on_empty": [StrOptions({"nearest", "mean", "nan", "raise"})],
        "n_jobs": [Integral, None],
        "var_type": [str, None],
        "verbose": ["verbose"],
        "engine": [StrOptions(set(ENGINES))],
    }

    kernel: Any = dataclasses.field(default="gaussian", kw_only=False)
    bandwidth: Any = "loo"
    metric: Any = "euclidean"
    bandwidth_grid: Any = None
    working_memory: Any = None
    algorithm: Any = "auto"
    bins: Any = None
    on_empty: Any = "nearest"
    n_jobs: Any = None
    var_type: Any = None
    verbose: Any = 0
    engine: Any = "auto"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # sparse X: the local constant fit, by brute force (the tree needs dense points)
        tags.input_tags.sparse = (getattr(self, "reg_type", "lc") == "lc"
                                  and self.algorithm != "tree")
        return tags

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

        if self.algorithm == "binned":
            d = X.shape[1]
            if is_sparse or self.metric != "euclidean" or d > _binned.MAX_FEATURES:
                raise ValueError(
                    f"algorithm='binned' needs dense X (sparse input is not supported), "
                    f"metric='euclidean' and at most {_binned.MAX_FEATURES} continuous "
                    f"features; got {'sparse' if is_sparse else 'dense'} X with {d} "
                    f"features and metric={self.metric!r}. Use algorithm='auto' or "
                    f"'brute'.")
            if isinstance(self.bandwidth, str) and self.bandwidth in ("loo-ard", "aic"):
                why = ("its optimiser moves the bandwidths continuously while the grid "
                       "follows them, so the binned objective jumps" if self.bandwidth
                       == "loo-ard" else "AIC_c needs the trace of the smoother matrix")
                raise ValueError(
                    f"bandwidth={self.bandwidth!r} has no binned form ({why}; see the "
                    f"user guide, 'Binned Nadaraya-Watson'); use bandwidth='loo' or a "
                    f"fixed bandwidth with algorithm='binned', or algorithm='auto'.")
        _binned.check_bins(self.bins, X.shape[1])

    def _binned_chosen(self, X, kern):
        """Whether the sums run on the grid: ``algorithm="binned"``, or ``"auto"`` for a
        smooth kernel, dense X of at most 3 features (one for local linear fits) and
        ``BINNED_MIN_SAMPLES`` rows (grid sums are then far faster than exact ones at the
        error bound; a local linear fit's certificate in d >= 2 sends its queries to the
        exact path, so binning would only add its cost)."""
        if self.algorithm != "auto":
            return self.algorithm == "binned"
        bw = self.bandwidth
        max_features = 1 if getattr(self, "reg_type", "lc") == "ll" else _binned.MAX_FEATURES
        return (not sparse.issparse(X) and self.metric == "euclidean"
                and X.shape[1] <= max_features and X.shape[0] >= BINNED_MIN_SAMPLES
                and _binned.stencil_order(kern) > 1
                and not (isinstance(bw, str) and bw in ("loo-ard", "aic")))

    def _resolve_algorithm(self, X, kern):
        if self.algorithm != "auto":
            return self.algorithm
        if self._binned_chosen(X, kern):
            return "binned"
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
        var_type = _mixed.check_var_type(self.var_type, X.shape[1])
        self.aic_ = None
        if isinstance(self.bandwidth, str) and self.bandwidth == "aic" and loss != "squared":
            raise ValueError("bandwidth='aic' is a regression criterion (Hurvich's AIC_c); "
                             "use bandwidth='loo' or 'loo-ard' for the classifier.")
        self.engine_ = resolve_engine(self.engine)
        if _mixed.is_mixed(var_type):  # discrete features: numpy path, see _mixed
            self.engine_ = "numpy"
            return self._fit_mixed(X, Y, kern, var_type, reg_type, loss)
        self._check_combination(X, kern, reg_type)
        self.bandwidth_, self.loo_scores_, self.bandwidth_grid_ = self._select_bandwidth(
            X, Y, kern, reg_type, loss)
        self.algorithm_ = self._resolve_algorithm(X, kern)
        self._index = nw_index(X, Y, kern, self.bandwidth_, self.metric, reg_type,
                               tree=self.algorithm_ == "tree", engine=self.engine_,
                               binned=self.algorithm_ == "binned",
                               bins=_binned.check_bins(self.bins, X.shape[1]),
                               absolute=loss != "squared")
        self._y_mean = Y.mean(axis=0)
        return self

    @contextlib.contextmanager
    def _progress(self, what, total=None, unit="row"):
        """A tqdm bar's ``update`` with ``verbose`` (shown after 2 s of the search), else
        None: over the leave-one-out rows of a grid, or the evaluations of an optimiser's
        criterion (``total=None``: their number is not known in advance)."""
        if not self.verbose:
            yield None
            return
        with progress_bar(self.verbose, f"{type(self).__name__}: {what}", total=total,
                          unit=unit, delay=2.0) as bar:
            yield bar.update

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
        if bw == "aic":
            cont = "c" * np.size(h0)
            with self._blas_threads(), self._progress(_AIC_SEARCH, unit="fit") as progress:
                h, self.aic_, _ = select_aic(
                    lambda h: NWIndex(X, Y, kern, _squeeze(h), self.metric, reg_type), X, Y,
                    default_grid(h0, _N_ARD_GRID),
                    lambda h, h1: _mixed.to_theta(h, h1, cont),
                    lambda t, h1: _mixed.from_theta(t, h1, cont), _mixed.theta_bounds(cont),
                    working_memory=self.working_memory, progress=progress)
            return _squeeze(h), None, None
        grid = self._grid(h0, d) if bw == "loo" else default_grid(h0, _N_ARD_GRID)
        with self._blas_threads():
            with self._progress(f"leave-one-out over {len(grid)} bandwidths", n) as progress:
                binned = self._binned_chosen(X, kern)
                losses = loo_grid(X, Y, kern, self.metric, grid, reg_type=reg_type,
                                  loss=loss, working_memory=self.working_memory,
                                  engine=self.engine_, n_jobs=self.n_jobs,
                                  progress=None if binned else progress,
                                  binned=binned, bins=_binned.check_bins(self.bins, d))
            best = grid[int(np.argmin(losses))]
            if bw == "loo-ard":
                with self._progress(_ARD_SEARCH, unit="evaluation") as progress:
                    best, _ = loo_ard(X, Y, kern, self.metric, best, loss=loss,
                                      reg_type=reg_type, working_memory=self.working_memory,
                                      engine=self.engine_, n_jobs=self.n_jobs,
                                      progress=progress)
        return _squeeze(best), losses, grid

    def _fit_mixed(self, X, Y, kern, var_type, reg_type, loss):
        """Bandwidth and index for features with discrete codes (numpy path)."""
        if sparse.issparse(X) or self.metric == "cosine" or self.algorithm in ("tree", "binned"):
            raise ValueError(
                f"var_type={var_type!r} (discrete features) needs dense X, metric "
                f"'euclidean' or 'product' (the product kernel is used) and algorithm "
                f"'auto' or 'brute' (algorithm={self.algorithm!r} bins or builds a tree "
                f"for continuous features only); densify X with X.toarray() or mark every "
                f"feature 'c'.")
        _mixed.check_integer_codes(X, var_type, "X")
        n, d = X.shape
        bw, scores, grid = self.bandwidth, None, None
        if not isinstance(bw, str):
            h = _mixed.check_mixed_bandwidth(bw, var_type)
        elif bw in ("scott", "silverman"):
            raise ValueError(f"bandwidth={bw!r} is a rule for continuous features, but "
                             f"var_type={var_type!r} has discrete ones; use 'loo-ard', "
                             f"'loo', 'aic' (regressor) or one bandwidth per feature.")
        else:
            if n < 3:
                raise ValueError(f"bandwidth={bw!r} needs at least 3 samples; got n_samples "
                                 f"= {n}. Pass one bandwidth per feature for tiny data sets.")
            cont = np.array([code == "c" for code in var_type])
            h0 = np.ones(d)
            if cont.any():
                h0[cont] = rule_of_thumb(X[:, cont], "scott")
            with self._blas_threads(), self._progress(f"bandwidth={bw!r} search",
                                                      unit="step") as progress:
                h, scores, grid = self._select_mixed(X, Y, kern, var_type, reg_type, loss, h0,
                                                     progress)
        self.bandwidth_ = _squeeze(h)
        self.loo_scores_, self.bandwidth_grid_ = scores, grid
        self.algorithm_ = "brute"
        self._index = _mixed.MixedIndex(X, Y, kern, h, var_type, reg_type)
        self._y_mean = Y.mean(axis=0)
        return self

    def _select_mixed(self, X, Y, kern, var_type, reg_type, loss, h0, progress=None):
        bw, wm = self.bandwidth, self.working_memory
        if bw == "aic":
            h, self.aic_, _ = select_aic(
                lambda h: _mixed.MixedIndex(X, Y, kern, h, var_type, reg_type), X, Y,
                _mixed.mixed_start_grid(h0, var_type, _N_ARD_GRID),
                lambda h, h1: _mixed.to_theta(h, h1, var_type),
                lambda t, h1: _mixed.from_theta(t, h1, var_type),
                _mixed.theta_bounds(var_type), working_memory=wm, progress=progress)
            return h, None, None
        grid = self.bandwidth_grid
        if bw == "loo-ard" or grid is None or isinstance(grid, Integral):
            size = _N_ARD_GRID if bw == "loo-ard" else (_N_GRID if grid is None else int(grid))
            grid = _mixed.mixed_start_grid(h0, var_type, size)
        else:
            grid = np.asarray(grid, dtype=np.float64)
            if grid.ndim != 2 or grid.shape[1] != len(var_type) or grid.shape[0] < 1:
                raise ValueError(f"with var_type={var_type!r}, bandwidth_grid must be an int or "
                                 f"an array of shape (n_grid, {len(var_type)}); got shape "
                                 f"{grid.shape}.")
            grid = np.array([_mixed.check_mixed_bandwidth(h, var_type) for h in grid])
        scores = _mixed.mixed_loo_grid(X, Y, kern, var_type, grid, reg_type=reg_type,
                                       loss=loss, working_memory=wm, progress=progress)
        h = grid[int(np.argmin(scores))]
        if bw == "loo-ard":
            h, _ = _mixed.mixed_loo_ard(X, Y, kern, var_type, h, reg_type=reg_type, loss=loss,
                                        working_memory=wm, progress=progress)
        return h, scores, grid

    def _grid(self, h0, d):
        grid = self.bandwidth_grid
        if grid is None or isinstance(grid, Integral):
            return default_grid(h0, _N_GRID if grid is None else int(grid))
        arr = np.asarray(grid, dtype=np.float64)
        width = 1 if self.metric == "cosine" else d
        if arr.ndim == 1:  # one shared (scalar) bandwidth per grid point
            arr, width = arr[:, None], 1
        if arr.ndim != 2 or arr.shape[1] != width or arr.shape[0] < 1:
            raise ValueError(f"bandwidth_grid must be an int, a 1-D array of bandwidths or an "
                             f"array of shape (n_grid, {width}); got shape {arr.shape}.")
        bad = ~np.isfinite(arr) | ~(arr > 0)
        if bad.any():
            raise ValueError(
                f"bandwidth_grid must hold strictly positive finite bandwidths; got "
                f"{int(bad.sum())} invalid value(s), e.g. {float(arr[bad][0])!r} at grid row "
                f"{int(np.argwhere(bad)[0, 0])}. Remove them or pass an int for a default grid.")
        return arr

    def _query(self, X, *, weights=False):
        """Predictions (or weights) for validated X, with the ``on_empty`` policy applied."""
        check_is_fitted(self)
        check = getattr(self._index, "check_query", None)
        if check is not None:  # discrete features: integer codes, known categories
            check(X)
        func = nw_weights if weights else nw_predict
        with self._blas_threads():       # chunk threads take one BLAS thread each
            out, empty = func(X, self._index, algorithm=self.algorithm_,
                              working_memory=self.working_memory, n_jobs=self.n_jobs)
        n_empty = int(empty.sum())
        if not n_empty:
            return out
        kern = self._index.kern
        if self.on_empty == "raise":
            raise ValueError(
                f"{n_empty} of {X.shape[0]} queries have no training point within the "
                f"support of the {kern.name!r} kernel ({_describe(self.bandwidth_)}); use a "
                f"larger bandwidth, or set on_empty to 'nearest', 'mean' or 'nan'.")
        if self.on_empty == "nearest":
            # Once per fit (however many predictions meet it), one short line; the
            # counts ride on the warning object.
            if self._index in _WARNED:
                return out
            _WARNED.add(self._index)
            warning = EmptySupportWarning(
                f"some queries have no training point within the support of the "
                f"{kern.name!r} kernel ({_describe(self.bandwidth_)}) and get their nearest "
                f"training point. A larger bandwidth, bandwidth='loo' or a kernel without "
                f"compact support (e.g. 'gaussian') avoids it; to silence it, "
                f"warnings.filterwarnings('ignore', category=EmptySupportWarning).")
            warning.n_empty, warning.n_queries = n_empty, X.shape[0]
            warnings.warn(warning, stacklevel=3)
            return out
        return _fill_empty(out, empty, self.on_empty, self._y_mean, weights)


#: Fitted indexes whose predictions already warned of an empty support (once per fit).
_WARNED = weakref.WeakSet()


def _describe(bandwidth):
    """A short description of a fitted bandwidth for messages (no long arrays)."""
    arr = np.asarray(bandwidth, dtype=np.float64)
    if arr.ndim == 0 or arr.size == 1:
        return f"bandwidth {float(arr.ravel()[0]):.3g}"
    return f"per-feature bandwidths {float(arr.min()):.3g} to {float(arr.max()):.3g}"


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
