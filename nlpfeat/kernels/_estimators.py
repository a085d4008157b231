"""Nadaraya-Watson regressor and classifier: attention pooling with a fixed kernel."""
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MultiOutputMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import column_or_1d

from nlpfeat._docstrings import fill_doc
from nlpfeat._params import estimator_params
from nlpfeat._validation import (StrOptions, check_2d, check_is_fitted, fit_context, validate_data,
                                 validate_float64)
from nlpfeat.kernels._base import NadarayaWatsonMixin
from nlpfeat.kernels._dask import is_dask_array, query_dask_array
from nlpfeat.kernels._dask_fit import fit_dask
from nlpfeat.kernels._kernels import get_kernel

__all__ = ["NadarayaWatsonClassifier", "NadarayaWatsonRegressor"]

_HEAD_PARAMS = """kernel : str, Kernel or callable, default="gaussian"
        A name from :func:`nlpfeat.kernels.available_kernels` ("gaussian",
        "epanechnikov", "tophat", "triangular", "biweight", "triweight", "tricube",
        "cosine", "laplacian", "logistic", "sigmoid", or one registered with
        :func:`~nlpfeat.kernels.register_kernel`), a :class:`~nlpfeat.kernels.Kernel`,
        or a vectorised callable ``k(u) >= 0`` of the scaled distance.
    bandwidth : float, array-like of shape (n_features,) or str, default="loo"
        A positive float, one positive float per feature, ``"scott"``, ``"silverman"``
        (normal-reference rules), ``"loo"`` (leave-one-out over ``bandwidth_grid``) or
        ``"loo-ard"`` (one bandwidth per feature, L-BFGS on the leave-one-out loss with
        an analytic gradient, started from the best point of a 10-point grid; local
        constant and local linear fits), or ``"aic"`` (regressor only: the corrected AIC
        of Hurvich, Simonoff and Tsai, as statsmodels' ``bw="aic"``, minimised by
        Nelder-Mead from the best point of a 10-point grid). Cost: the default
        ``"loo"`` evaluates every pair of training points once per grid bandwidth,
        ``n_samples**2 * n_grid`` kernel values (1.2e10 for n = 20,000 and 30
        bandwidths); pass a fixed bandwidth, a smaller ``bandwidth_grid``
        or a subsample for large data, and ``verbose=1`` to watch its progress.
    metric : {"euclidean", "product", "cosine"}, default="euclidean"
        ``"euclidean"``: radial kernel of ``||(x - x_i) / h||``; ``"product"``: product
        of one-dimensional kernels per feature (statsmodels' ``KernelReg``);
        ``"cosine"``: kernel of ``(1 - cos(x, x_i)) / h`` (dense or sparse input)."""

_TAIL_PARAMS = """bandwidth_grid : int or array-like, default=None
        Candidates for ``bandwidth="loo"``: None -> 30 log-spaced multiples (0.05 to 5)
        of the Scott bandwidth; an int -> that many; a 1-D array -> scalar bandwidths;
        an array of shape (n_grid, n_features) -> per-feature bandwidths.
    working_memory : float, default=None
        MiB that the temporaries of one query chunk may take (scikit-learn's meaning);
        None follows scikit-learn's ``working_memory`` configuration when set, else
        nlpfeat's measured default (4 MiB). It changes only how many
        query rows one BLAS call processes, which may change the order of its sums:
        predictions and ``loo_scores_`` move by rounding only (at most a few
        ``n_samples * 1e-16`` relative for ``reg_type="lc"``; for ``"ll"`` amplified by
        the condition number of each local fit, a lot for the scores of grid points far
        too small for the data), and the selected bandwidth changes only between grid
        points whose scores tie to that precision.
    algorithm : {"auto", "tree", "brute", "binned"}, default="auto"
        ``"tree"``: KD-tree radius queries (compact kernels, dense input); ``"brute"``:
        chunked dense computation; ``"binned"``: kernel sums on a grid (dense input, at
        most 3 continuous features, metric "euclidean"; see the user guide, "Binned
        Nadaraya-Watson"): the training points are binned, the grid convolved with the
        kernel by FFT and the query's sums interpolated; every query carries a bound of
        its error, and one whose bound does not certify the target (predictions within
        ``1e-6 * std(y)`` of the exact path, probabilities within 1e-6) runs on the
        exact path, as do ``attention_weights``. The polynomial kernels
        ("epanechnikov", "biweight", "triweight") need no grid: their sums are exact
        (running moments of sorted strips of the rows), equal to the exact path's up to
        rounding, which is bounded and certified alike. ``bandwidth="loo"`` is then
        scored on the grid too. ``"auto"``: binned for a smooth kernel ("gaussian", "logistic",
        "sigmoid") with at most 3 features, metric "euclidean", dense X and at least
        50 000 training rows (with ``bandwidth`` not "loo-ard" or "aic"), else the tree
        for a compact kernel with at most 3 features, at least 5 000 training rows and a
        support box covering at most 5% of the data's bounding box (few neighbours per
        query), else brute.
    bins : int, array-like of int or None, default=None
        Grid intervals per feature across the training range for
        ``algorithm="binned"``: None chooses them from the bandwidth (12 to 16 nodes per
        bandwidth for the smooth kernels, which certifies the 1e-6 target; 16 to 400 for
        the others, which rarely can: their queries then run exact; for the polynomial
        kernels, 8 strips per bandwidth, the last feature not binned) and certifies every
        query against the target; an explicit grid trades accuracy for speed: only the
        queries whose error bound exceeds 1e-3 of their weight sum run exact.
    on_empty : {"nearest", "mean", "nan", "raise"}, default="nearest"
        What a query with no training point inside a compact kernel's support gets:
        its nearest training point(s), ties (equal distances up to the rounding of the
        scaled coordinates) sharing the weight equally on every path and engine (one
        :class:`EmptySupportWarning` counting such queries), the training mean, NaN,
        or a ValueError. The classifier's ``"mean"`` is the class frequencies (so
        ``predict`` gives the most frequent class); with ``"nan"`` its
        ``predict_proba`` rows are NaN and ``predict`` raises a ValueError for such
        queries, since no class label can stand for "no prediction".
    n_jobs : int, default=None
        Threads for ``predict``, ``predict_proba`` and ``attention_weights``: chunks of
        queries are processed in parallel (numpy releases the GIL in ``exp`` and BLAS),
        each thread with one BLAS thread and its own ``working_memory`` budget; the
        results equal the one-thread results exactly. The bandwidth search gets ``n_jobs``
        BLAS threads. None (default): one chunk at a time, BLAS threads as configured;
        -1: all cores (joblib's convention). On the numba engine: threads of the
        compiled loops (one by default, never more than numba's pool, which joblib
        lowers inside its workers); results identical for any ``n_jobs``.
    var_type : str, default=None
        One code per feature, as statsmodels' ``KernelReg``: ``"c"`` continuous, ``"o"``
        ordered discrete (Wang-van Ryzin kernel), ``"u"`` unordered discrete
        (Aitchison-Aitken kernel over the categories seen in ``fit``); None: all
        continuous. With a discrete code the weights are the product of per-feature
        kernels (the continuous ones use ``kernel``, as ``metric="product"``); X must be
        dense with integer codes in the discrete columns; discrete bandwidths lie in
        ``[0, 1]`` (0: no smoothing across categories), so a numeric ``bandwidth`` gives
        one value per feature; ``"scott"`` / ``"silverman"`` are not available, and
        ``"loo-ard"`` optimises discrete bandwidths in logit space. Discrete features
        always run on the numpy path (brute force).
    verbose : int, default=0
        With 1 or more, a progress bar (tqdm, on stderr) over the training rows of the
        leave-one-out bandwidth search; it appears once the search has run 2 seconds.
    engine : {"auto", "numba", "numpy"}, default="auto"
        ``"numba"``: fused compiled loops (one pass per query row, no
        ``n_queries x n_train`` matrix; compiled on first use and cached on disk) for
        the built-in kernels with dense input and metric "euclidean" or "product", local
        constant and local linear fits: ``predict``, ``predict_proba``,
        ``attention_weights``, ``bandwidth="loo"`` and ``"loo-ard"`` (a user's kernel,
        sparse input, ``metric="cosine"``, discrete ``var_type`` features, extreme
        bandwidths and ``algorithm="tree"`` queries run on numpy); ``"numpy"``: the reference
        implementation; ``"auto"``: numba. numba is a required dependency, so ``"numpy"``
        is a reference switch, not a fallback. Both engines apply the same tie rule and
        degenerate-design rule and agree to 1e-9 relative in the tests, except where a
        fit rests on its own rounding (an ill-conditioned local linear fit, a direction
        held up by weights like 1e-17; weight ratios that a huge ``u^2`` leaves to
        rounding), where each is as accurate as the problem allows (figures:
        ``benchmarks/RESULTS.md``, "Engine agreement")."""

_COMMON_ATTRS = """bandwidth_ : float or ndarray of shape (n_features,)
        The bandwidth used (strictly positive).
    loo_scores_ : ndarray of shape (n_grid,) or None
        Leave-one-out loss (lower is better) at each row of ``bandwidth_grid_``, for
        ``bandwidth="loo"`` / ``"loo-ard"`` (the starting grid); None otherwise.
    bandwidth_grid_ : ndarray of shape (n_grid, n_features or 1) or None
        The candidate bandwidths scored.
    aic_ : float or None
        The corrected AIC at ``bandwidth_`` for ``bandwidth="aic"``; None otherwise.
    algorithm_ : str
        "tree", "brute" or "binned", as resolved from ``algorithm``.
    engine_ : str
        "numba" or "numpy", as resolved from ``engine``.
    n_features_in_ : int"""


@fill_doc
@estimator_params
class NadarayaWatsonRegressor(MultiOutputMixin, NadarayaWatsonMixin, RegressorMixin,
                              BaseEstimator):
    __doc__ = f"""Nadaraya-Watson kernel regression (softmax attention with a fixed kernel).

    The prediction at a query x is a weighted mean of the training targets, the
    weights being a normalised kernel of the scaled distance from x to each training
    input: attention pooling with queries x, keys x_i and values y_i.

    Parameters
    ----------
    {_HEAD_PARAMS}
    {_TAIL_PARAMS}
    reg_type : {{"lc", "ll"}}, default="lc"
        Local constant (classic Nadaraya-Watson) or local linear regression.

    Attributes
    ----------
    {_COMMON_ATTRS}

    See Also
    --------
    NadarayaWatsonClassifier : kernel-weighted class frequencies.
    nlpfeat.kernels.kernel_log_weights : the weight matrix as a free function.

    Notes
    -----
    .. math:: \\hat f(x) = \\sum_i \\frac{{K(\\lVert x - x_i \\rVert / h)}}
              {{\\sum_j K(\\lVert x - x_j \\rVert / h)}}\\, y_i

    With the Gaussian kernel the weights are ``softmax(-||x - x_i||^2 / (2 h^2))``,
    normalised in log space, so a tiny bandwidth gives nearest-neighbour weights (ties
    sharing the weight), not 0/0, at any bandwidth. ``reg_type="ll"`` fits a weighted
    least-squares line at every query (degrading to the local constant fit where the
    local design is degenerate: one point with weight, or all weighted rows at one
    point, as repeated x or a constant feature give; in directions where the weighted
    rows spread by less than the rounding of the scaled coordinates the slope is 0).
    A bandwidth about 1e308 times the spread of X or more, where ``x / h`` underflows,
    is a ValueError for ``reg_type="ll"``; below that a huge bandwidth gives the global
    linear fit.

    %(numerical_contract)s
    The leave-one-out criterion is :math:`CV(h) = n^{{-1}} \\sum_i (y_i - \\hat f_{{-i}}(x_i))^2`.

    References
    ----------
    E. A. Nadaraya, "On estimating regression", Theory Probab. Appl. 9 (1964).
    G. S. Watson, "Smooth regression analysis", Sankhya A 26 (1964).
    Q. Li and J. S. Racine, *Nonparametric Econometrics*, Princeton (2007).
    M.-C. Wang and J. van Ryzin, "A class of smooth estimators for discrete
    distributions", Biometrika 68 (1981).
    J. Aitchison and C. G. G. Aitken, "Multivariate binary discrimination by the kernel
    method", Biometrika 63 (1976).
    C. M. Hurvich, J. S. Simonoff and C.-L. Tsai, "Smoothing parameter selection in
    nonparametric regression using an improved Akaike information criterion", J. R.
    Stat. Soc. B 60 (1998).

    Examples
    --------
    >>> from nlpfeat.kernels import NadarayaWatsonRegressor
    >>> X, y = [[0.0], [1.0], [2.0], [3.0]], [0.0, 0.0, 1.0, 1.0]
    >>> NadarayaWatsonRegressor(bandwidth=0.5).fit(X, y).predict([[1.5]])
    array([0.5])

    A continuous and an unordered feature; bandwidth 0 keeps to the query's category:

    >>> X, y = [[0.0, 0], [1.0, 1], [2.0, 0], [3.0, 1]], [0.0, 1.0, 2.0, 3.0]
    >>> reg = NadarayaWatsonRegressor(bandwidth=[1.0, 0.0], var_type="cu").fit(X, y)
    >>> print(reg.attention_weights([[1.0, 1]]).round(3))
    [[0.    0.881 0.    0.119]]
    """

    _parameter_constraints = {
        **NadarayaWatsonMixin._parameter_constraints,
        "reg_type": [StrOptions({"lc", "ll"})],
    }
    reg_type: Any = "lc"

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Store the training data and select the bandwidth.

        Parameters
        ----------
        X : array-like, sparse matrix or dask array of shape (n_samples, n_features)
            A ``dask.array`` is binned partition by partition on the workers (fixed
            bandwidth, ``"scott"`` or ``"silverman"``; see ``algorithm="binned"``).
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)

        Returns
        -------
        self : NadarayaWatsonRegressor
        """
        if is_dask_array(X):
            return fit_dask(self, X, y, get_kernel(self.kernel), self.reg_type,
                            classifier=False)
        X, y = validate_float64(self, check_2d(X), y, accept_sparse="csr", multi_output=True,
                                y_numeric=True)
        self._y_ndim = y.ndim
        Y = y.reshape(len(y), -1).astype(np.float64)
        return self._fit_index(X, Y, reg_type=self.reg_type, loss="squared")

    def predict(self, X):
        """Kernel-weighted mean (or local linear fit) of the training targets.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_queries, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_queries,) or (n_queries, n_outputs)
            A lazy ``dask.array`` with X's row chunks when X is a dask array.
        """
        if is_dask_array(X):
            return query_dask_array(self, X, "predict")
        X = self._validate_query(X)
        y_pred = self._query(X)
        return y_pred[:, 0] if self._y_ndim == 1 else y_pred

    def attention_weights(self, X, *, per_head=False):
        """Normalised kernel weights of every query on every training point.

        nlpfeat's convention for every estimator: ``(n_queries, n_keys)``; ``per_head=True``
        adds a leading heads axis (here of length 1: one kernel is one head).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_queries, n_features)
        per_head : bool, default=False
            Return shape ``(1, n_queries, n_train)``, dense (a sparse matrix has two axes).

        Returns
        -------
        weights : ndarray or scipy CSR matrix of shape (n_queries, n_train)
            Non-negative, rows summing to 1; sparse for compact kernels (unless
            ``per_head``). A lazy ``dask.array`` (of CSR blocks for compact kernels
            without ``per_head``) when X is a dask array: row blocks are computed on the
            workers, the fitted model sent once.

        Examples
        --------
        >>> from nlpfeat.kernels import NadarayaWatsonRegressor
        >>> reg = NadarayaWatsonRegressor(bandwidth=1.0).fit([[0.0], [1.0], [3.0]], [0, 1, 2])
        >>> print(reg.attention_weights([[0.0]]).round(3))
        [[0.618 0.375 0.007]]
        >>> reg.attention_weights([[0.0]], per_head=True).shape
        (1, 1, 3)
        """
        return _attention_weights(self, X, per_head)

    def _validate_query(self, X):
        check_is_fitted(self)
        return validate_float64(self, check_2d(X), accept_sparse="csr", reset=False)


@fill_doc
@estimator_params
class NadarayaWatsonClassifier(NadarayaWatsonMixin, ClassifierMixin, BaseEstimator):
    __doc__ = f"""Nadaraya-Watson classifier: kernel-weighted class frequencies.

    ``predict_proba(x)[c] = sum_i w_i(x) [y_i = c]`` with the normalised kernel
    weights ``w_i(x)`` of :class:`NadarayaWatsonRegressor`; ``bandwidth="loo"``
    minimises the leave-one-out log loss. Works on dense and sparse input (e.g. TF-IDF
    rows with ``metric="cosine"``).

    Parameters
    ----------
    {_HEAD_PARAMS}
    {_TAIL_PARAMS}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    {_COMMON_ATTRS}

    See Also
    --------
    NadarayaWatsonRegressor

    Notes
    -----
    %(numerical_contract)s

    Examples
    --------
    >>> from nlpfeat.kernels import NadarayaWatsonClassifier
    >>> X, y = [[0.0], [0.2], [2.0], [2.2]], ["a", "a", "b", "b"]
    >>> clf = NadarayaWatsonClassifier(bandwidth=0.5).fit(X, y)
    >>> clf.predict([[0.1], [2.1]])
    array(['a', 'b'], dtype='<U1')
    >>> print(clf.predict_proba([[1.1]]).round(2))
    [[0.5 0.5]]
    """

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Store the training data and select the bandwidth (LOO log loss).

        Parameters
        ----------
        X : array-like, sparse matrix or dask array of shape (n_samples, n_features)
            A ``dask.array`` is binned on the workers, as for the regressor.
        y : array-like of shape (n_samples,)

        Returns
        -------
        self : NadarayaWatsonClassifier
        """
        if is_dask_array(X):
            return fit_dask(self, X, y, get_kernel(self.kernel), "lc", classifier=True)
        X, y = validate_data(self, check_2d(X), y, accept_sparse="csr", dtype=np.float64)
        _check_label_types(y)
        check_classification_targets(y)
        y = column_or_1d(y, warn=True)
        self.classes_, y_enc = np.unique(y, return_inverse=True)
        Y = np.zeros((len(y), len(self.classes_)))
        Y[np.arange(len(y)), y_enc] = 1.0
        return self._fit_index(X, Y, reg_type="lc", loss="log_loss")

    def predict_proba(self, X):
        """Kernel-weighted class frequencies, shape (n_queries, n_classes); rows sum to 1.

        A lazy ``dask.array`` with X's row chunks when X is a dask array.
        """
        if is_dask_array(X):
            return query_dask_array(self, X, "predict_proba")
        X = self._validate_query(X)
        return self._query(X)

    def predict(self, X):
        """The class of highest kernel-weighted frequency.

        Raises a ValueError when ``on_empty="nan"`` left some query without
        probabilities (no training point inside a compact kernel's support). A dask
        array of queries gives a lazy ``dask.array`` of labels (that error then comes at
        ``compute`` time).
        """
        if is_dask_array(X):
            return query_dask_array(self, X, "predict")
        proba = self.predict_proba(X)
        missing = np.isnan(proba).any(axis=1)
        if missing.any():
            raise ValueError(
                f"{int(missing.sum())} of {len(proba)} queries have no training point "
                f"within the kernel's support, so on_empty='nan' leaves them without a "
                f"class; use predict_proba (NaN rows), or set on_empty to 'nearest' or "
                f"'mean', or increase the bandwidth.")
        return self.classes_[np.argmax(proba, axis=1)]

    def attention_weights(self, X, *, per_head=False):
        """Normalised kernel weights (n_queries, n_train); sparse for compact kernels.
        ``per_head=True``: dense, of shape (1, n_queries, n_train), as
        :meth:`NadarayaWatsonRegressor.attention_weights`; a lazy ``dask.array`` when X
        is one."""
        return _attention_weights(self, X, per_head)

    _validate_query = NadarayaWatsonRegressor._validate_query


def _attention_weights(estimator, X, per_head):
    """Both estimators' ``attention_weights``: in memory, or lazily for a dask array."""
    if is_dask_array(X):
        W = query_dask_array(estimator, X, "attention_weights")
        if per_head:
            W = W.map_blocks(_dense, dtype=np.float64, meta=np.empty((0, 0)))[np.newaxis]
        return W
    return _head_axis(estimator._query(estimator._validate_query(X), weights=True), per_head)


def _dense(W):
    return W.toarray() if hasattr(W, "toarray") else W


def _head_axis(W, per_head):
    """``W``, or with ``per_head`` a dense array with a leading heads axis of length 1."""
    if not per_head:
        return W
    return _dense(W)[np.newaxis]


def _check_label_types(y):
    """Class labels must be of one kind (all strings or all numbers): they are sorted."""
    y = np.asarray(y)
    if y.dtype != object:
        return
    kinds = np.unique(np.frompyfunc(_label_kind, 1, 1)(y.ravel()).astype(str))
    if kinds.size > 1:
        raise TypeError(
            f"y mixes class labels of kinds {kinds.tolist()}; labels must be all strings or "
            f"all numbers, since classes_ is sorted. Convert them to one type, e.g. "
            f"np.asarray(y).astype(str).")


def _label_kind(value):
    if isinstance(value, str):
        return "str"
    if isinstance(value, (int, float, np.number, bool, np.bool_)):
        return "number"
    return type(value).__name__
