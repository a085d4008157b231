"""Scaled distances and log kernel weights between query rows and training rows.

One home for the three metrics every kernel estimator uses:

- ``"euclidean"``: radial kernel ``K(||(x - x_i) / h||)`` (``h`` a scalar or one
  bandwidth per feature),
- ``"product"``: product of one-dimensional kernels ``prod_f K(|x_f - x_if| / h_f)``,
  as statsmodels' ``KernelReg`` does (identical to ``"euclidean"`` for the Gaussian),
- ``"cosine"``: ``K((1 - cos(x, x_i)) / h)``, for dense or sparse (e.g. TF-IDF) rows.

Public API: :func:`kernel_log_weights` (what ``nlpfeat.text`` uses) and
:func:`log_normalize`.
"""
import math

import numpy as np
from scipy import sparse

from nlpfeat._persist import PlainStateMixin
from nlpfeat._validation import check_finite
from nlpfeat.kernels._kernels import get_kernel

__all__ = ["UNDERFLOW_LOG", "PairwiseScaled", "check_bandwidth", "kernel_log_weights",
           "log_normalize", "nearest_mask", "softmax_rows", "tie_log_weights", "tie_tolerance"]

METRICS = ("euclidean", "product", "cosine")

_EPS = 2.0**-52


def tie_tolerance(scale, n_features):
    """Distances within this of the smallest one tie: the rule of every nearest-point path.

    ``scale`` is ``max |z_q| + max |z_i|`` over the query's and the training rows' scaled
    coordinates. Training points at equal distances in X (an integer grid, repeated
    rows) land at distances that differ by the rounding of the centred, scaled
    coordinates, at most ``sqrt(d) * 2 eps * scale``; this bound, with a margin, makes
    them tie whichever engine or path computed the distances. Plain arithmetic, so that
    the compiled engine compiles this very function (``numba.njit(tie_tolerance)``).
    """
    return 8.0 * math.sqrt(n_features) * _EPS * scale


#: A row whose largest log weight is below this has weights that underflow in linear space
#: (a tiny bandwidth): it is computed in log space, where :func:`tie_log_weights` applies.
UNDERFLOW_LOG = math.log(1e-150)


def tie_log_weights(L, near):
    """Rows of log weights ``L`` whose largest entry is below :data:`UNDERFLOW_LOG` give
    their nearest training points (``near``, a mask of :func:`nearest_mask`'s ties) that
    largest value, in place: at a tiny bandwidth the log weights are ``-u^2 / 2`` around
    -1e16, whose rounding would otherwise decide between equidistant points."""
    top = L.max(axis=1, keepdims=True)
    np.copyto(L, top, where=near & (top < UNDERFLOW_LOG))
    return L


def nearest_mask(Zq, Z, blocked=None):
    """Boolean (n_q, n_train) mask of each query's nearest training row(s), ties by
    :func:`tie_tolerance`.

    Dense scaled coordinates; distances are computed feature by feature (``hypot``: no
    cancellation, no overflow). ``blocked`` (n_q, n_train), if given, marks pairs that
    may not be chosen (a leave-one-out diagonal); a row must keep one pair open.
    """
    D = np.zeros((Zq.shape[0], Z.shape[0]))
    for f in range(Zq.shape[1]):  # loop over features, not samples
        np.hypot(D, Zq[:, f, None] - Z[None, :, f], out=D)
    if blocked is not None:
        D[blocked] = np.inf
    scale = np.abs(Zq).max(axis=1, keepdims=True, initial=0.0) + np.abs(Z).max(initial=0.0)
    return D <= D.min(axis=1, keepdims=True) + tie_tolerance(scale, Zq.shape[1])


def check_bandwidth(bandwidth, n_features, metric="euclidean"):
    """A positive finite scalar or per-feature vector -> float64 array of shape (d,) or ().

    Raises ValueError saying what was wrong and how to fix it.
    """
    h = np.asarray(bandwidth, dtype=np.float64) if not isinstance(bandwidth, str) else None
    if h is None or h.ndim > 1 or h.size == 0:
        raise ValueError(
            f"bandwidth must be a positive float or one positive float per feature; got "
            f"{bandwidth!r}."
        )
    if not np.all(np.isfinite(h)) or np.any(h <= 0):
        raise ValueError(
            f"bandwidth must be strictly positive and finite; got {bandwidth!r}. Pass a "
            f"value > 0, or a selector such as 'scott' or 'loo'."
        )
    if h.ndim == 1 and h.size == 1:
        h = h.reshape(())
    if h.ndim == 1 and (metric == "cosine" or h.size != n_features):
        expected = "a scalar (metric='cosine')" if metric == "cosine" else f"{n_features} values"
        raise ValueError(
            f"bandwidth has {h.size} values but {expected} are expected; pass a scalar or "
            f"one bandwidth per feature of X."
        )
    return h


#: Scaled coordinates |z| above this are stored divided by a power of two (see
#: :class:`PairwiseScaled`), so that squared distances never overflow.
_MAX_ABS_Z = 2.0**480


def _scale(X, h):
    """X / h for a scalar or per-column h, dense or sparse (never in place)."""
    with np.errstate(over="ignore"):
        if sparse.issparse(X):
            if np.ndim(h) == 0:
                return X.multiply(1.0 / float(h)).tocsr()
            return (X @ sparse.diags(1.0 / h)).tocsr()
        return X / h


def _l2_normalize(X):
    """Rows scaled to unit Euclidean norm (zero rows stay zero), at any magnitude.

    Each row is first divided by its largest absolute entry, so that the squares
    neither underflow nor overflow (scikit-learn's ``normalize`` leaves rows with a
    norm below ``10 * eps`` unscaled, which breaks cosine's scale invariance).
    """
    if sparse.issparse(X):
        X = sparse.csr_matrix(X, dtype=np.float64, copy=True)
        top = np.asarray(abs(X).max(axis=1).todense()).ravel()
        X = sparse.diags(1.0 / np.where(top > 0, top, 1.0)) @ X
        norm = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
        return (sparse.diags(1.0 / np.where(norm > 0, norm, 1.0)) @ X).tocsr()
    top = np.abs(X).max(axis=1, keepdims=True) if X.size else np.ones((X.shape[0], 1))
    X = X / np.where(top > 0, top, 1.0)
    norm = np.sqrt(np.einsum("ij,ij->i", X, X))[:, None]
    return X / np.where(norm > 0, norm, 1.0)


def _ldexp(Z, e):
    """``Z * 2**e`` exactly (dense or sparse); the identity for ``e == 0``."""
    if e == 0:
        return Z
    with np.errstate(over="ignore"):
        if sparse.issparse(Z):
            Z = Z.copy()
            Z.data = np.ldexp(Z.data, e)
            return Z
        return np.ldexp(Z, e)


def _max_abs(Z):
    data = Z.data if sparse.issparse(Z) else Z
    return float(np.max(np.abs(data))) if data.size else 0.0


def _row_sqnorms(Z):
    if sparse.issparse(Z):
        return np.asarray(Z.multiply(Z).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", Z, Z)


#: GEMM squared distances below this fraction of |z_q|^2 + max |z_i|^2 are recomputed.
_CANCELLED = 2.0**-10


def _refine_close_pairs(G, Zq, Z, sqn_q, sqn):
    """Recompute, feature by feature, the squared distances that cancellation spoiled.

    ``|z_q|^2 + |z_i|^2 - 2 z_q . z_i`` is off by about ``eps (|z_q|^2 + |z_i|^2)``: for a
    close pair far from the centre that is most of its digits (equal rows get about
    ``1e-16 |z|^2`` instead of 0), and a kernel of ``u`` (Laplacian, triangular, ...)
    turns it into an error of ``sqrt(eps) |z|`` in ``u``. Entries below
    ``_CANCELLED (|z_q|^2 + max |z_i|^2)`` (close pairs, a few per row) are recomputed
    as the compiled engine computes every entry; the others keep ``2^10 eps`` relative.
    """
    rows, cols = np.nonzero(G < _CANCELLED * (sqn_q[:, None] + sqn.max(initial=0.0)))
    if rows.size:
        diff = Zq[rows] - Z[cols]
        G[rows, cols] = np.einsum("ij,ij->i", diff, diff)


def _overflow_error(what):
    return ValueError(
        f"{what} divided by the bandwidth overflows float64 (the bandwidth is below about "
        f"1e-300 times the spread of the data); pass a larger bandwidth, or rescale X.")


class PairwiseScaled(PlainStateMixin):
    """Training rows prepared once for scaled distances to many query chunks.

    The scaled coordinates are ``z = (x - mean) / h``. When they are so large that
    their squares would overflow (a bandwidth below about 1e-144 times the spread of
    the data), they are stored as ``z * 2**-exp2`` (an exact power-of-two rescaling) and
    :meth:`sq_dist` multiplies back by ``4**exp2``: squared scaled distances then
    overflow to ``inf`` (a zero kernel weight) instead of giving ``inf - inf = NaN``,
    while :meth:`near_sq_dist` stays finite and orders the training rows by distance.
    ``exp2`` is 0 in every ordinary case, where nothing is rescaled.

    Parameters
    ----------
    X_fit : ndarray or sparse matrix of shape (n_train, n_features)
    bandwidth : float or ndarray of shape (n_features,)
    metric : {"euclidean", "product", "cosine"}
    """

    def __init__(self, X_fit, bandwidth, metric="euclidean"):
        self.metric = metric
        self.bandwidth = np.asarray(bandwidth, dtype=np.float64)
        self.n_train = X_fit.shape[0]
        self.exp2 = 0
        if metric == "cosine":
            self.center = None
            self.Z = _l2_normalize(X_fit)
        else:
            # Centring keeps ||x||^2 + ||y||^2 - 2 x.y accurate (translation invariant).
            self.center = None if sparse.issparse(X_fit) else X_fit.mean(axis=0)
            Z = _scale(X_fit if self.center is None else X_fit - self.center, self.bandwidth)
            top = _max_abs(Z)
            if not np.isfinite(top):
                raise _overflow_error("X")
            if top > _MAX_ABS_Z:
                self.exp2 = int(np.frexp(top)[1])
            self.Z = _ldexp(Z, -self.exp2)
        self.sqn = _row_sqnorms(self.Z)

    def query(self, Q):
        """Queries in the same scaled space as the training rows."""
        if self.metric == "cosine":
            return _l2_normalize(Q)
        Zq = _scale(Q if self.center is None else Q - self.center, self.bandwidth)
        if not np.isfinite(_max_abs(Zq)):
            raise _overflow_error("The query X")
        return _ldexp(Zq, -self.exp2)

    def near_sq_dist(self, Zq):
        """Finite squared distances (n_q, n_train) in stored units: they order the rows.

        For "euclidean"/"product" they are the squared scaled distances divided by
        ``4**exp2``; for "cosine", ``(1 - cos)^2``, whatever the bandwidth.
        """
        if self.metric == "cosine":
            u = 1.0 - _dense(Zq @ self.Z.T)
            np.maximum(u, 0.0, out=u)
            return np.square(u, out=u)
        G = _dense(Zq @ self.Z.T)
        G *= -2.0
        sqn_q = _row_sqnorms(Zq)
        G += sqn_q[:, None]
        G += self.sqn[None, :]
        np.maximum(G, 0.0, out=G)
        if not (sparse.issparse(Zq) or sparse.issparse(self.Z)):
            _refine_close_pairs(G, Zq, self.Z, sqn_q, self.sqn)
        return G

    def to_u2(self, D2):
        """Squared scaled distances ``u^2`` from :meth:`near_sq_dist` (``inf`` on overflow)."""
        if self.metric == "cosine":
            with np.errstate(over="ignore"):
                u = np.sqrt(D2) / self.bandwidth
                return np.square(u, out=u)
        return _ldexp(D2, 2 * self.exp2)

    def sq_dist(self, Zq):
        """Squared scaled distances u^2 (n_q, n_train), clipped at 0, for scaled queries.

        Entries overflow to ``inf`` (never NaN) for a tiny bandwidth.
        """
        if self.metric == "cosine":
            u = 1.0 - _dense(Zq @ self.Z.T)
            np.maximum(u, 0.0, out=u)
            with np.errstate(over="ignore"):
                u /= self.bandwidth
                return np.square(u, out=u)
        return self.to_u2(self.near_sq_dist(Zq))

    def nearest(self, Zq, blocked=None):
        """Boolean (n_q, n_train) mask of each query's nearest training row(s).

        Dense "euclidean"/"product" rows: :func:`nearest_mask` (ties within
        :func:`tie_tolerance`, whichever algorithm asked); ``blocked`` as there. Sparse
        or cosine rows use :meth:`near_sq_dist` (exact ties).
        """
        if self.metric == "cosine" or sparse.issparse(Zq) or sparse.issparse(self.Z):
            D = self.near_sq_dist(Zq)
            if blocked is not None:
                D[blocked] = np.inf
            return D <= D.min(axis=1, keepdims=True)
        return nearest_mask(Zq, self.Z, blocked)

    def log_kernel(self, Zq, kern):
        """Unnormalised log kernel (n_q, n_train); -inf outside a compact support."""
        if self.metric == "product" and kern.family != "gaussian":
            if sparse.issparse(Zq) or sparse.issparse(self.Z):
                raise ValueError("metric='product' needs dense X; use metric='euclidean' "
                                 "or 'cosine' for sparse input.")
            L = np.zeros((Zq.shape[0], self.n_train))
            for f in range(Zq.shape[1]):  # loop over features, not samples
                L += kern.log_k(_ldexp(Zq[:, f, None] - self.Z[None, :, f], self.exp2))
            return L
        return kern.log_k_sq(self.sq_dist(Zq))


def _dense(M):
    return M.toarray() if sparse.issparse(M) else np.asarray(M)


def log_normalize(L, D2=None):
    """Row-wise log-softmax of log kernel values, robust to rows that are all ``-inf``.

    Parameters
    ----------
    L : ndarray of shape (n_queries, n_train)
        Unnormalised log weights. Not modified.
    D2 : ndarray of shape (n_queries, n_train), default=None
        Squared distances. A row with no finite value (no training point inside a
        compact support) then puts all its weight, shared equally, on its nearest
        training point(s). Without ``D2`` such a row becomes uniform.

    Returns
    -------
    log_w : ndarray of shape (n_queries, n_train)
        ``exp(log_w)`` is non-negative and each row sums to 1.
    empty : ndarray of bool, shape (n_queries,)
        Rows that had no training point in the support.

    Examples
    --------
    >>> import numpy as np
    >>> from nlpfeat.kernels import log_normalize
    >>> log_w, empty = log_normalize(np.array([[-1000.0, -1001.0], [-np.inf, -np.inf]]),
    ...                              D2=np.array([[0.0, 1.0], [4.0, 1.0]]))
    >>> print(np.round(np.exp(log_w), 3))
    [[0.731 0.269]
     [0.    1.   ]]
    >>> empty
    array([False,  True])
    """
    W, empty = softmax_rows(np.array(L, dtype=np.float64), D2)
    with np.errstate(divide="ignore"):
        return np.log(W, out=W), empty


def softmax_rows(L, D2=None):
    """In-place row softmax of log kernel values (see :func:`log_normalize`).

    Overwrites ``L`` with the normalised weights and returns ``(L, empty)``: the max
    shift keeps every row finite, and a row that is all ``-inf`` gets its nearest
    training point(s) (by ``D2``) or, without ``D2``, uniform weights.
    """
    m = L.max(axis=1)
    empty = ~np.isfinite(m)
    if empty.any():
        if D2 is None:
            L[empty] = 0.0
        else:
            d = D2[empty]
            L[empty] = np.where(d <= d.min(axis=1, keepdims=True), 0.0, -np.inf)
        m[empty] = 0.0
    L -= m[:, None]
    np.exp(L, out=L)
    L /= L.sum(axis=1, keepdims=True)
    return L, empty


def kernel_log_weights(X_query, X_train, *, kernel="gaussian", bandwidth=1.0,
                       metric="euclidean", normalize=True):
    """Log kernel weights between every query row and every training row.

    The building block of Nadaraya-Watson regression and kernel attention pooling:
    ``exp`` of the normalised result is the attention matrix (rows sum to 1). It is
    computed in one block; callers with many rows should chunk the queries.

    Parameters
    ----------
    X_query : array-like or sparse matrix of shape (n_queries, n_features)
    X_train : array-like or sparse matrix of shape (n_train, n_features)
    kernel : str, Kernel or callable, default="gaussian"
        See :func:`get_kernel`.
    bandwidth : float or array-like of shape (n_features,), default=1.0
        Strictly positive; one value per feature allowed for "euclidean"/"product".
    metric : {"euclidean", "product", "cosine"}, default="euclidean"
    normalize : bool, default=True
        If True, return the log of row-normalised weights (log-sum-exp); a row with no
        training point inside a compact kernel's support, or whose weights all underflow
        (a bandwidth so tiny that ``u^2`` overflows), falls back to its nearest training
        point(s), ties sharing the weight. If False, return the unnormalised
        ``log K(u)`` (``-inf`` outside the support or where it underflows).

    Returns
    -------
    log_w : ndarray of shape (n_queries, n_train)

    Notes
    -----
    With the Gaussian kernel, ``log w_ij = -||(q_i - x_j) / h||^2 / 2 - log Z_i``:
    the normalised weights are ``softmax(-||q_i - x_j||^2 / (2 h^2))``, i.e. attention
    with a negative squared-distance score and temperature ``h^2``.

    Examples
    --------
    >>> import numpy as np
    >>> from nlpfeat.kernels import kernel_log_weights
    >>> w = np.exp(kernel_log_weights([[0.0]], [[0.0], [1.0], [3.0]], bandwidth=1.0))
    >>> print(np.round(w, 3))
    [[0.618 0.375 0.007]]
    """
    kern = get_kernel(kernel)
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {list(METRICS)}; got {metric!r}.")
    Xq = _as_float(X_query, "X_query")
    Xt = _as_float(X_train, "X_train")
    if Xq.shape[1] != Xt.shape[1]:
        raise ValueError(f"X_query has {Xq.shape[1]} features but X_train has "
                         f"{Xt.shape[1]}; both must have the same number of columns.")
    prep = PairwiseScaled(Xt, check_bandwidth(bandwidth, Xt.shape[1], metric), metric)
    Zq = prep.query(Xq)
    L = prep.log_kernel(Zq, kern)
    if not normalize:
        return L
    log_w, empty = log_normalize(L)
    if empty.any():  # no point in a compact support, or a bandwidth so tiny u^2 overflows
        with np.errstate(divide="ignore"):
            log_w[empty] = np.log(_share(prep.nearest(Zq[empty])))
    return log_w


def _share(mask):
    """Rows of a boolean mask -> equal weights on the True entries."""
    W = mask.astype(np.float64)
    W /= W.sum(axis=1, keepdims=True)
    return W


def _as_float(X, name):
    if sparse.issparse(X):
        return check_finite(X.astype(np.float64).tocsr(), name)
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_rows, n_features); got shape {X.shape}. "
                         f"Reshape with .reshape(-1, 1) for a single feature.")
    return check_finite(X, name)
