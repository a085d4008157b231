"""Mixed continuous / discrete features: statsmodels' generalised product kernel.

``var_type`` gives one code per feature, as statsmodels' ``KernelReg``: ``"c"``
continuous, ``"o"`` ordered discrete, ``"u"`` unordered discrete. The weight of a
training row is the product over features of one-dimensional kernels, stored by its
logarithm (the log of the product is the sum of the logs):

- ``"c"``: the estimator's kernel of ``(x_f - x_if) / h_f``;
- ``"o"``: Wang-van Ryzin, ``1 - h`` if ``x_f = x_if``, ``(1 - h) / 2 * h^|x_f - x_if|``
  otherwise. The factor ``1 - h`` is common to every training row, so it cancels in the
  normalised weights and is left out: ``h = 1`` is then well defined (equal
  rows weigh twice the others);
- ``"u"``: Aitchison-Aitken with ``c`` categories (the distinct values of the training
  column, as statsmodels counts them): ``1 - h`` if equal, ``h / (c - 1)`` otherwise.

Discrete bandwidths lie in ``[0, 1]``; continuous ones are positive. A discrete
bandwidth 0 gives weight only to rows in the query's category; a query whose category
no training row has then gets the zero-bandwidth limit of the weights (the rows with
the fewest mismatches, by their other factors), not 0 / 0.

The leave-one-out criterion counts the categories of the ``n - 1`` other rows (a row
alone in its category leaves ``c - 1``), as statsmodels' ``cv_ls`` does.

This module runs on numpy only; the estimators use it whenever ``var_type`` has a
discrete code.
"""
import numpy as np
from scipy.optimize import minimize

from nlpfeat._chunking import gen_row_chunks
from nlpfeat.kernels._bandwidth import loss_and_weight_sensitivity
from nlpfeat.kernels._loss import loss_grad, mean_loss
from nlpfeat.kernels._nadaraya_watson import local_linear
from nlpfeat.kernels._pairwise import _share, nearest_mask, softmax_rows

__all__ = ["MixedIndex", "MixedScaled", "check_var_type", "is_mixed", "mixed_loo_ard",
           "mixed_loo_grid", "mixed_start_grid"]

_LOG_HALF = np.log(0.5)
#: Bounds of the optimisation variables: log(h / h_start) (continuous) and logit(h)
#: (discrete: h between about 1e-11 and 1 - 1e-11).
_LOG_BOUND, _LOGIT_BOUND = 12.0, 25.0


def check_var_type(var_type, n_features):
    """None -> all continuous; else a string of ``n_features`` codes from "c", "o", "u"."""
    if var_type is None:
        return "c" * n_features
    if not isinstance(var_type, str):
        raise TypeError(f"var_type must be a string with one code per feature ('c', 'o' or "
                         f"'u'), e.g. 'cco'; got {var_type!r}.")
    if len(var_type) != n_features:
        raise ValueError(
            f"var_type has {len(var_type)} codes ({var_type!r}) but X has {n_features} "
            f"features; pass one code per column of X: 'c' continuous, 'o' ordered, "
            f"'u' unordered.")
    bad = sorted(set(var_type) - set("cou"))
    if bad:
        raise ValueError(f"var_type may only contain 'c' (continuous), 'o' (ordered) and 'u' "
                         f"(unordered); got {bad} in {var_type!r}.")
    return var_type


def is_mixed(var_type):
    """True when ``var_type`` (checked) has a discrete code."""
    return var_type is not None and any(code != "c" for code in var_type)


def check_integer_codes(X, var_type, what):
    for f, code in enumerate(var_type):
        if code == "c":
            continue
        col = X[:, f]
        bad = col != np.round(col)
        if bad.any():
            kind = "ordered ('o')" if code == "o" else "unordered ('u')"
            raise ValueError(
                f"var_type marks feature {f} as {kind}, but {what}[:, {f}] has the non-integer "
                f"value {float(col[bad][0])!r}; discrete features take integer codes (encode "
                f"categories with e.g. sklearn.preprocessing.OrdinalEncoder), or mark the "
                f"feature 'c'.")


def check_mixed_bandwidth(bandwidth, var_type):
    """One bandwidth per feature: continuous ones > 0, discrete ones in [0, 1]."""
    h = None if isinstance(bandwidth, str) else np.asarray(bandwidth, dtype=np.float64)
    d = len(var_type)
    if h is None or h.ndim > 1 or h.size != d or (h.ndim == 0 and d > 1):
        raise ValueError(
            f"with var_type={var_type!r}, bandwidth must hold one value per feature ({d} "
            f"values: > 0 for 'c', in [0, 1] for 'o' and 'u'); got {bandwidth!r}.")
    h = h.reshape(d)
    cont = np.array([code == "c" for code in var_type])
    bad_c = cont & ~(np.isfinite(h) & (h > 0))
    bad_d = ~cont & ~((h >= 0) & (h <= 1))
    if bad_c.any() or bad_d.any():
        f = int(np.flatnonzero(bad_c | bad_d)[0])
        need = "strictly positive and finite" if cont[f] else "in [0, 1]"
        raise ValueError(
            f"the bandwidth of feature {f} (var_type {var_type[f]!r}) must be {need}; got "
            f"{float(h[f])!r}.")
    return h


class MixedScaled:
    """Training rows for the mixed product kernel: continuous columns centred and scaled.

    Continuous columns hold ``(x - mean) / h``, discrete ones their integer codes
    (exact, so equal categories compare equal). Local linear fits use these coordinates
    as their design (the intercept does not depend on how columns are scaled).
    """

    metric = "product"
    exp2 = 0

    def __init__(self, X, var_type, bandwidth):
        self.var_type = var_type
        self.h = np.asarray(bandwidth, dtype=np.float64).reshape(len(var_type))
        self.cont = np.array([code == "c" for code in var_type])
        self.n_train = X.shape[0]
        self.center = X[:, self.cont].mean(axis=0) if X.shape[0] else np.zeros(self.cont.sum())
        self.Z = self.query(X)
        self.categories, self.n_levels, self.singleton = {}, {}, {}
        for f, code in enumerate(var_type):
            if code == "u":
                cats, counts = np.unique(X[:, f], return_counts=True)
                self.categories[f], self.n_levels[f] = cats, cats.size
                self.singleton[f] = counts[np.searchsorted(cats, X[:, f])] == 1

    def query(self, Q):
        Zq = np.array(Q, dtype=np.float64)
        with np.errstate(over="ignore"):
            Zq[:, self.cont] = (Q[:, self.cont] - self.center) / self.h[self.cont]
        if not np.all(np.isfinite(Zq)):
            raise ValueError("X divided by a continuous bandwidth overflows float64; pass a "
                             "larger bandwidth, or rescale X.")
        return Zq

    def check_query(self, X):
        """Integer codes; unordered ones among the categories seen in fit."""
        check_integer_codes(X, self.var_type, "X")
        for f, cats in self.categories.items():
            unseen = ~np.isin(X[:, f], cats)
            if unseen.any():
                raise ValueError(
                    f"feature {f} is unordered ('u') with categories {cats.tolist()} in the "
                    f"training data, but X[:, {f}] has the code {float(X[unseen, f][0])!r}; "
                    f"the Aitchison-Aitken kernel is defined on the training categories only "
                    f"(refit with data that has the category, or mark the feature 'o' or 'c').")

    def _levels(self, f, self_idx):
        """Categories the kernel counts for feature f, per query row (LOO: without it)."""
        c = self.n_levels[f]
        if self_idx is None:
            return c
        return (c - self.singleton[f][self_idx])[:, None]

    def log_kernel(self, Zq, kern, self_idx=None, limit=False):
        """Unnormalised log kernel (n_q, n_train).

        ``self_idx`` (training index of each query row) marks a leave-one-out chunk.
        With ``limit=True``, discrete features with bandwidth 0 contribute their
        zero-bandwidth limit instead of ``-inf``: returns ``(L, penalty)`` where
        ``penalty`` counts the powers of ``h`` (mismatches) those features add.
        """
        L = np.zeros((Zq.shape[0], self.n_train))
        penalty = np.zeros_like(L) if limit else None
        for f, code in enumerate(self.var_type):  # loop over features, not samples
            diff = Zq[:, f, None] - self.Z[None, :, f]
            h = self.h[f]
            if code == "c":
                L += kern.log_k(diff)
                continue
            mismatch = diff != 0
            if code == "o":
                ad = np.abs(diff)
                if h > 0:
                    L += np.where(mismatch, _LOG_HALF + ad * np.log(h), 0.0)
                elif limit:
                    L += np.where(mismatch, _LOG_HALF, 0.0)
                    penalty += ad
                else:
                    L[mismatch] = -np.inf
                continue
            log_other = -np.log(np.maximum(self._levels(f, self_idx) - 1, 1))
            with np.errstate(divide="ignore"):
                if h > 0:
                    L += np.where(mismatch, np.log(h) + log_other, np.log1p(-h))
                elif limit:
                    L += np.where(mismatch, log_other, 0.0)
                    penalty += mismatch
                else:
                    L[mismatch] = -np.inf
        return (L, penalty) if limit else L

    def weights(self, Zq, kern, self_idx=None):
        """Normalised weights (n_q, n_train) and the empty-support mask.

        A row with no positive weight gets the zero-bandwidth limit of its discrete
        factors, then (a compact continuous kernel reaching no row) its nearest rows by
        continuous scaled distance among the best-matching ones, ties sharing the weight.
        """
        L = self.log_kernel(Zq, kern, self_idx)
        rows = np.arange(Zq.shape[0])
        if self_idx is not None:
            L[rows, self_idx] = -np.inf
        W, empty = softmax_rows(L)
        if not empty.any():
            return W, empty
        sub = None if self_idx is None else self_idx[empty]
        L, penalty = self.log_kernel(Zq[empty], kern, sub, limit=True)
        if sub is not None:
            penalty[np.arange(sub.size), sub] = np.inf
        L[penalty > penalty.min(axis=1, keepdims=True)] = -np.inf
        W_sub, still = softmax_rows(L)
        if still.any():
            p = penalty[still]
            W_sub[still] = _share(nearest_mask(Zq[empty][still][:, self.cont],
                                               self.Z[:, self.cont],
                                               p > p.min(axis=1, keepdims=True)))
        W[empty] = W_sub
        out = np.zeros_like(empty)
        out[np.flatnonzero(empty)[still]] = kern.compact
        return W, out

    def dlog_kernel(self, Zq, kern, f, self_idx=None):
        """d l_ij / d theta_f: theta = log h (continuous) or logit h (discrete)."""
        diff = Zq[:, f, None] - self.Z[None, :, f]
        code, h = self.var_type[f], self.h[f]
        if code == "c":
            u = np.abs(diff)
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                G = -u * kern.dlog_k_du(u)
            return G
        if code == "o":
            return np.abs(diff) * (1.0 - h)
        return np.where(diff != 0, 1.0 - h, -h)


class MixedIndex:
    """Training data for repeated chunked queries on the mixed path (numpy only).

    Offers what :func:`~nlpfeat.kernels._nadaraya_watson.nw_predict` and
    :func:`~nlpfeat.kernels._nadaraya_watson.nw_weights` use of an ``NWIndex``.
    """

    compiled = None   # mixed data always runs on the numpy engine

    fast = False
    tree = None

    def __init__(self, X, Y, kern, bandwidth, var_type, reg_type="lc"):
        self.pair = MixedScaled(X, var_type, bandwidth)
        self.kern, self.reg_type, self.n_out = kern, reg_type, Y.shape[1]
        self.Y = Y
        self.Y1 = np.hstack([Y, np.ones((Y.shape[0], 1))])

    def check_query(self, X):
        self.pair.check_query(X)

    def row_bytes(self):
        d = self.pair.Z.shape[1]
        return 8 * self.pair.n_train * (4 + (2 * (d + 1) if self.reg_type == "ll" else 0))

    def weights(self, Zq, self_idx=None):
        return self.pair.weights(Zq, self.kern, self_idx)

    def brute_chunk(self, Zq, buf=None):
        W, empty = self.weights(Zq)
        return self.from_weights(W, Zq), empty

    def from_weights(self, W, Zq):
        if self.reg_type == "lc":
            R = W @ self.Y1
            return R[:, :-1] / R[:, -1:]
        return local_linear(W, Zq, self.pair.Z, self.Y)


def mixed_start_grid(h0, var_type, n_points):
    """Rule-of-thumb multiples ``s h0`` for continuous features, ``s / (1 + s)`` (0.05
    to 0.83) for discrete ones, ``s`` log-spaced from 0.05 to 5."""
    s = np.geomspace(0.05, 5.0, n_points)[:, None]
    cont = np.array([code == "c" for code in var_type])
    return np.where(cont[None, :], s * np.asarray(h0)[None, :], s / (1.0 + s))


def mixed_loo_grid(X, Y, kern, var_type, grid, *, reg_type="lc", loss="squared",
                   working_memory=None, progress=None):
    """Leave-one-out loss (mean, as ``loo_grid``) at every row of ``grid`` (g, d);
    ``progress``, if given, is called with 1 after each row of the grid."""
    n, k = Y.shape
    out = np.empty(len(grid))
    for g, h in enumerate(grid):
        index = MixedIndex(X, Y, kern, h, var_type, reg_type)
        total = 0.0
        for rows in gen_row_chunks(n, index.row_bytes(), working_memory):
            idx = np.arange(n)[rows]
            Zq = index.pair.Z[rows]
            W, _ = index.weights(Zq, idx)
            total += loss_grad(index.from_weights(W, Zq), Y[rows], loss)[0]
        out[g] = mean_loss(total, n, k, loss)
        if progress is not None:
            progress(1)
    return out


def to_theta(h, h_start, var_type):
    """Optimisation variables: log(h / h_start) (continuous), logit(h) (discrete)."""
    cont = np.array([code == "c" for code in var_type])
    hd = np.clip(h, 1e-11, 1 - 1e-11)
    return np.where(cont, np.log(h / h_start), np.log(hd) - np.log1p(-hd))


def from_theta(theta, h_start, var_type):
    cont = np.array([code == "c" for code in var_type])
    return np.where(cont, h_start * np.exp(theta), 0.5 * (1.0 + np.tanh(0.5 * theta)))


def theta_bounds(var_type):
    return [(-_LOG_BOUND, _LOG_BOUND) if code == "c" else (-_LOGIT_BOUND, _LOGIT_BOUND)
            for code in var_type]


def mixed_loo_ard(X, Y, kern, var_type, h_start, *, reg_type="lc", loss="squared",
                  working_memory=None, max_iter=100, progress=None):
    """Per-feature bandwidths of every type minimising the LOO loss (L-BFGS, analytic
    gradient; continuous bandwidths in log space, discrete ones in logit space);
    ``progress``, if given, is called with 1 after each evaluation of the objective."""
    if "c" in var_type:
        kern.dlog_k_du(np.zeros(1))  # a clear ValueError for a kernel without gradient
    h_start = np.asarray(h_start, dtype=np.float64)
    theta0 = to_theta(h_start, h_start, var_type)
    def objective(*args):
        value = _mixed_objective(*args)
        if progress is not None:
            progress(1)
        return value

    res = minimize(objective, theta0, jac=True, method="L-BFGS-B",
                   bounds=theta_bounds(var_type),
                   args=(h_start, X, Y, kern, var_type, reg_type, loss, working_memory),
                   options={"maxiter": max_iter})
    return from_theta(res.x, h_start, var_type), float(res.fun)


def _mixed_objective(theta, h_start, X, Y, kern, var_type, reg_type, loss, working_memory):
    n, k = Y.shape
    index = MixedIndex(X, Y, kern, from_theta(theta, h_start, var_type), var_type, reg_type)
    pair = index.pair
    total, grad = 0.0, np.zeros_like(theta)
    for rows in gen_row_chunks(n, index.row_bytes() + 8 * n, working_memory):
        idx = np.arange(n)[rows]
        Zq = pair.Z[rows]
        W, empty = index.weights(Zq, idx)
        chunk_loss, B = loss_and_weight_sensitivity(W, empty, Zq, pair.Z, Y, rows, loss,
                                                    reg_type)
        total += chunk_loss
        for f in range(len(var_type)):  # loop over features
            G = pair.dlog_kernel(Zq, kern, f)
            grad[f] += np.sum(np.where(B != 0, B * np.where(np.isfinite(G), G, 0.0), 0.0))
    return mean_loss(total, n, k, loss), mean_loss(grad, n, k, loss)
