"""The maths both engines share: leave-one-out losses and local linear intercepts.

The numpy reference modules (:mod:`nlpfeat.kernels._bandwidth`,
:mod:`nlpfeat.kernels._nadaraya_watson`, :mod:`nlpfeat.kernels._mixed`) and the compiled
engine (:mod:`nlpfeat.kernels._compiled`) import these functions from here, so that the
two twins compute the same quantities by the same formulas and neither imports the other.
"""
import numpy as np

from nlpfeat.kernels._pairwise import tie_tolerance

__all__ = ["EPS", "centred_intercepts", "ll_exponent", "local_solve", "loss_grad", "mean_loss",
           "ray_scales", "spread_tolerance"]

EPS = np.finfo(np.float64).eps
_PINV_RCOND = 1e-15   # np.linalg.pinv's default relative cutoff, kept from before


def loss_grad(P, Y, loss):
    """Loss summed over a chunk of rows and its derivative ``a = dLoss/dP`` (unscaled).

    ``loss="log_loss"``: ``-sum log(P . Y)`` (one-hot ``Y``, probabilities clipped at
    ``EPS``, no gradient where clipped); else the squared error ``sum (P - Y)^2``.
    """
    if loss == "log_loss":
        p = np.maximum((P * Y).sum(axis=1), EPS)
        a = -Y / p[:, None] * ((P * Y).sum(axis=1) > EPS)[:, None]
        return -np.log(p).sum(), a
    r = P - Y
    return float(np.einsum("ij,ij->", r, r)), 2.0 * r


def mean_loss(total, n, k, loss):
    """A loss summed over ``n`` rows of ``k`` outputs as a mean: per row for the log loss,
    per row and output for the squared error (``total`` may be an array, e.g. a gradient)."""
    return total / n if loss == "log_loss" else total / (n * k)


def ray_scales(grid):
    """Scales ``s_g`` with ``grid[g] = s_g * grid[0]``, or None when the grid is not a ray."""
    ratio = grid / grid[:1]
    s = ratio[:, 0]
    return s if np.allclose(ratio, s[:, None], rtol=1e-12, atol=0) else None


def ll_exponent(Z):
    """The power of two ``e`` that brings the local linear coordinates ``Z * 2**-e`` to
    magnitude 1 (``max |Z * 2**-e|`` in [0.5, 1); 0 for an all-zero ``Z``).

    The scaling is exact and leaves every intercept unchanged, but the second moments of
    the offsets then neither underflow (a bandwidth 1e200 times the spread of X, where
    ``(x / h)^2`` is 0 in float64) nor overflow. Raises a ValueError where the scaled
    coordinates ``x / h`` themselves are subnormal (below 2.2e-308: a bandwidth about
    1e308 times the spread of X), whose relative precision is lost.
    """
    top = float(np.max(np.abs(Z), initial=0.0))
    if 0.0 < top < np.finfo(np.float64).tiny:
        raise ValueError(
            "reg_type='ll' with a bandwidth about 1e308 times the spread of X or more: X "
            "divided by the bandwidth underflows float64. Pass a smaller bandwidth (the "
            "local linear fit equals the global linear fit long before, e.g. at 1e100 "
            "times the spread), or rescale X.")
    return int(np.frexp(top)[1]) if top > 0 else 0


def spread_tolerance(C):
    """The spread below which local linear coordinates ``C`` (n, d) count as one point.

    The tie rule of the nearest-point fallback,
    :func:`~nlpfeat.kernels._pairwise.tie_tolerance`, at the scale ``max |C|``: training
    rows closer than the rounding of their scaled coordinates are at one point there,
    and a local design spread by less is degenerate (:func:`centred_intercepts`).
    """
    return tie_tolerance(float(np.max(np.abs(C), initial=0.0)), C.shape[1])


def centred_intercepts(m, y_bar, S, T, tol):
    """Local linear intercepts ``y_bar - b^T m``, ``b = S^+ T`` (:func:`local_solve`),
    from centred moments.

    The last step of :func:`nlpfeat.kernels._nadaraya_watson.local_linear`, shared with the
    compiled engine (which accumulates the same moments in its loops): ``m`` (c, d) and
    ``y_bar`` (c, k) are the weighted means of the offsets ``x_i - x_q`` and of the targets,
    ``S`` (c, d, d) and ``T`` (c, d, k) the weighted centred second moments (divided by the
    weight sum), ``tol`` the :func:`spread_tolerance`.
    """
    return y_bar - np.einsum("qd,qdk->qk", m, local_solve(S, T, tol))


def local_solve(S, R, tol):
    """``S^+ R`` for the centred second moments ``S`` (c, d, d) of local designs, with one
    rule for a degenerate design.

    A direction in which the weighted rows spread by less than ``tol`` (a standard
    deviation: :func:`spread_tolerance`, the rounding of the coordinates), or whose
    variance is below ``1e-15`` times the largest (``np.linalg.pinv``'s relative cutoff),
    is dropped: its slope is 0. All weighted rows at one point (repeated x, a constant
    feature) thus give the local constant fit on every engine and path, never slopes
    fitted to rounding noise. (An SVD, as ``pinv``: on designs whose features have very
    different spreads it is more accurate than a symmetric eigendecomposition.)
    """
    # Scaled by the largest entry, a local design whose spread is tiny (S around 1e-300)
    # decomposes without underflow; the cutoffs scale with it.
    t = np.abs(S).max(axis=(1, 2), keepdims=True)
    t = np.where(t > 0, t, 1.0)
    U, sv, Vt = np.linalg.svd(S / t)                                     # descending
    with np.errstate(over="ignore"):    # inf: the whole spread is below the tolerance
        floor = tol * tol / t[:, :, 0]
    keep = sv > np.maximum(_PINV_RCOND * sv[:, :1], floor)
    # 1 / (sv t) is finite where kept (sv t > tol^2); R is not divided by t, so that a
    # tiny S beside ordinary offsets (S^+ m for loo-ard) does not overflow
    inv = np.where(keep, 1.0 / np.where(keep, sv * t[:, :, 0], 1.0), 0.0)  # (c, d)
    return Vt.transpose(0, 2, 1) @ (inv[:, :, None] * (U.transpose(0, 2, 1) @ R))
