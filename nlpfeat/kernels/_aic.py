"""The corrected AIC of Hurvich, Simonoff and Tsai (1998), as statsmodels' ``bw="aic"``.

    AIC_c(h) = log(sigma^2) + (1 + tr(H) / n) / (1 - (tr(H) + 2) / n)

with ``sigma^2`` the mean squared residual of the fit at the training points and
``tr(H)`` the trace of the smoother matrix. Like statsmodels' ``KernelReg.aic_hurvich``,
``H`` is the matrix of normalised kernel weights (the local constant smoother) for
``reg_type="ll"`` too, while the residuals come from the fit of the chosen type.
Where ``tr(H) + 2 >= n`` the penalty's denominator is not positive and the criterion is
``inf`` (a bandwidth that nearly interpolates); statsmodels returns a negative
penalty there.
"""
import numpy as np
from scipy.optimize import minimize

from nlpfeat._chunking import gen_row_chunks

__all__ = ["aic_hurvich", "select_aic"]


def aic_hurvich(index, X, Y, working_memory=None):
    """AIC_c of the fit held by ``index`` (an ``NWIndex`` or ``MixedIndex`` built on X, Y).

    Parameters
    ----------
    index : NWIndex or MixedIndex
        Built on the training data at the bandwidth to score (brute force).
    X : ndarray of shape (n, d)
        The training inputs (dense or sparse, as the index was built).
    Y : ndarray of shape (n, k)
    working_memory : float, default=None

    Returns
    -------
    aic : float
    """
    n, k = Y.shape
    trace, sse = 0.0, 0.0
    for rows in gen_row_chunks(n, index.row_bytes(), working_memory):
        Zq = index.pair.query(X[rows])
        W, _ = index.weights(Zq)
        W = W.toarray() if hasattr(W, "toarray") else W
        trace += float(W[np.arange(W.shape[0]), np.arange(n)[rows]].sum())
        R = Y[rows] - index.from_weights(W, Zq)
        sse += float(np.einsum("ij,ij->", R, R))
    denom = 1.0 - (trace + 2.0) / n
    if not denom > 0:
        return np.inf
    with np.errstate(divide="ignore"):
        return float(np.log(sse / (n * k)) + (1.0 + trace / n) / denom)


def select_aic(make_index, X, Y, grid, to_theta, from_theta, bounds, *, working_memory=None,
               max_iter=None, progress=None):
    """Bandwidth minimising AIC_c: the best point of ``grid``, then Nelder-Mead.

    ``make_index(h)`` builds an index at bandwidth ``h``; ``to_theta(h, h_start)`` /
    ``from_theta(theta, h_start)`` map bandwidths to unbounded optimisation variables
    (log for continuous, logit for discrete bandwidths) within ``bounds``. Nelder-Mead
    (as statsmodels' ``optimize.fmin``) needs no gradient; it stops when the simplex
    spans less than 1e-4 in those variables (relative 1e-4 for continuous bandwidths)
    and the criterion less than 1e-10, or after ``max_iter`` (default 1000, as
    statsmodels) evaluations. ``progress``, if given, is called with 1 after each
    evaluation of the criterion (a progress bar's update).

    Returns
    -------
    h : ndarray
        The selected bandwidth.
    aic : float
        AIC_c at ``h``.
    scores : ndarray of shape (n_grid,)
        AIC_c at every grid row.
    """
    def crit(h):
        value = aic_hurvich(make_index(h), X, Y, working_memory)
        if progress is not None:
            progress(1)
        return value

    scores = np.array([crit(h) for h in grid])
    if not np.isfinite(scores).any():
        raise ValueError(
            f"the corrected AIC is undefined at every starting bandwidth (its penalty needs "
            f"tr(H) + 2 < n, with n = {Y.shape[0]} samples); use bandwidth='loo' or "
            f"'loo-ard', or more data.")
    h_start = grid[int(np.argmin(scores))]
    theta0 = to_theta(h_start, h_start)
    d = theta0.size
    simplex = theta0[None, :] + np.vstack([np.zeros(d), 0.3 * np.eye(d)])
    lo, hi = np.array(bounds).T
    simplex = np.clip(simplex, lo, hi)
    res = minimize(lambda t: crit(from_theta(t, h_start)), theta0, method="Nelder-Mead",
                   bounds=bounds,
                   options={"initial_simplex": simplex, "xatol": 1e-4, "fatol": 1e-10,
                            "maxfev": max_iter or 1000})
    h = from_theta(res.x, h_start)
    return h, crit(h), scores
