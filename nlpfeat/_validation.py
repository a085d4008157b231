"""Input and parameter validation: the one module that imports scikit-learn internals.

Everything nlpfeat needs from ``sklearn.utils._param_validation`` or ``sklearn.base`` is
re-exported from here, so that a scikit-learn release that moves a private helper touches
this file only. Shared checks that several estimators need (finite arrays, document
streams, optional dependencies) live here once.
"""
from numbers import Integral, Real

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import (
    HasMethods,
    Hidden,
    Interval,
    Options,
    RealNotInt,
    StrOptions,
    validate_params,
)
from sklearn.utils.validation import (
    _check_feature_names,
    _check_n_features,
    check_array,
    check_is_fitted,
    validate_data,
)

__all__ = [
    "HasMethods",
    "Hidden",
    "Integral",
    "Interval",
    "Options",
    "Real",
    "RealNotInt",
    "StrOptions",
    "check_2d",
    "check_array",
    "check_finite",
    "check_is_fitted",
    "fit_context",
    "import_optional",
    "validate_data",
    "validate_float64",
    "validate_params",
    "validate_parameters",
]


def fit_context(prefer_skip_nested_validation=True):
    """Decorate ``fit``: validate ``_parameter_constraints`` first (scikit-learn's ``_fit_context``)."""
    return _fit_context(prefer_skip_nested_validation=prefer_skip_nested_validation)


def validate_parameters(estimator):
    """Check ``estimator``'s parameters against its ``_parameter_constraints`` now, as
    ``fit_context`` does at ``fit`` (for methods that work unfitted)."""
    estimator._validate_params()


def validate_float64(estimator, X, y="no_validation", *, reset=True, **check_params):
    """``validate_data(estimator, X, y, dtype=np.float64, ...)``, minus the checks that
    input needing no conversion does not need.

    A finite float64 ndarray X of shape (n_samples >= 1, n_features >= 1), with (when
    given, and ``multi_output=True``) a finite 1-D or 2-D float64 ndarray y of as many
    rows, is what ``check_array`` / ``check_X_y`` return unchanged: for it only
    ``n_features_in_`` and the feature names are set or checked, by scikit-learn's own
    helpers (an ndarray has no feature names, so the latter only matter when the
    estimator has ``feature_names_in_``), which saves 0.1-0.2 ms per call. Anything else
    (lists, other dtypes, sparse matrices, NaN or infinity) takes the full path, with its
    conversions and its error messages.
    """
    no_y = isinstance(y, str) and y == "no_validation"
    if _plain_float64(X) and (no_y or (check_params.get("multi_output")
                                       and _plain_float64(y, ndims=(1, 2))
                                       and len(y) == len(X))):
        if hasattr(estimator, "feature_names_in_"):   # otherwise a no-op for an ndarray
            _check_feature_names(estimator, X, reset=reset)
        _check_n_features(estimator, X, reset=reset)
        return X if no_y else (X, y)
    return validate_data(estimator, X, y, reset=reset, dtype=np.float64, **check_params)


def _plain_float64(a, ndims=(2,)):
    """A float64 ndarray (not a subclass) of a given rank, not empty, all finite."""
    return (type(a) is np.ndarray and a.dtype == np.float64 and a.ndim in ndims
            and a.size > 0 and bool(np.isfinite(a.sum())))


def check_finite(array, name="X"):
    """Raise ValueError naming ``name`` if ``array`` holds NaN or infinity.

    Parameters
    ----------
    array : array-like or scipy sparse matrix
    name : str, default="X"
        How the message refers to the array.

    Returns
    -------
    array : the input, unchanged.
    """
    data = array.data if hasattr(array, "tocsr") else np.asarray(array)
    if data.dtype.kind in "fc" and not np.isfinite(data).all():
        n_nan = int(np.isnan(data).sum())
        n_inf = int(np.isinf(data).sum())
        raise ValueError(
            f"Input {name} contains {n_nan} NaN and {n_inf} infinite value(s); "
            f"expected finite numbers. Remove or impute them first "
            f"(e.g. sklearn.impute.SimpleImputer)."
        )
    return array


def check_2d(X, name="X", shape="(n_samples, n_features)", fix=None):
    """Reject input that is not a rectangular 2-D table, in nlpfeat's own words.

    Sparse matrices and objects with ``ndim == 2`` (arrays, DataFrames) pass through
    unchanged; lists are converted once (the caller validates the result further).

    Parameters
    ----------
    X : array-like or sparse matrix
    name : str, default="X"
        How the message refers to the input.
    shape : str, default="(n_samples, n_features)"
        The expected shape, for the message.
    fix : str or None, default=None
        How to fix it; by default ``X.reshape(-1, 1)`` advice for 1-D input.

    Returns
    -------
    X : the input, or its conversion to an ndarray.
    """
    if hasattr(X, "tocsr") or getattr(X, "ndim", None) == 2:
        return X
    try:
        arr = np.asarray(X) if getattr(X, "ndim", None) is None else X
    except ValueError:  # numpy: "inhomogeneous shape" for rows of different lengths
        raise ValueError(
            f"{name} must be a rectangular 2-D array of shape {shape}, but its rows have "
            f"different lengths; pad or truncate them to one length first."
        ) from None
    if arr.ndim == 2:
        return arr
    if fix is None:
        fix = ("Reshape your data with X.reshape(-1, 1) if it holds a single feature, or "
               "X.reshape(1, -1) if it is a single sample.")
    raise ValueError(f"{name} must be 2-D of shape {shape}; got {arr.ndim}-D input of "
                     f"shape {arr.shape}. {fix}")


def import_optional(module, extra, caller):
    """Import an optional dependency or raise ImportError naming the extra to install.

    Parameters
    ----------
    module : str
        Module name, e.g. ``"matplotlib.pyplot"``.
    extra : str
        The nlpfeat extra that installs it (``"viz"``, ``"zh"``, ``"torch"``).
    caller : str
        What needs it, for the message.
    """
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        top = module.split(".")[0]
        raise ImportError(
            f"{caller} requires {top}, which is not installed. "
            f'Install it with: pip install "nlpfeat[{extra}]"'
        ) from exc


