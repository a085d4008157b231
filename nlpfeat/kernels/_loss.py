"""The maths both engines share: leave-one-out losses and local linear intercepts.

The numpy reference modules (:mod:`nlpfeat.kernels._bandwidth`,
:mod:`nlpfeat.kernels._nadaraya_watson`, :mod:`nlpfeat.kernels._mixed`) and the compiled
engine (:mod:`nlpfeat.kernels._compiled`) import these functions from here, so that the
two twins compute the same quantities by the same formulas and neither imports the other.
"""
import numpy as np

__all__ = ["EPS", "centred_intercepts", "loss_grad", "mean_loss", "ray_scales"]

EPS = np.finfo(np.float64).eps


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


def centred_intercepts(m, y_bar, S, T):
    """Local linear intercepts ``y_bar - b^T m``, ``b = pinv(S) T``, from centred moments.

    The last step of :func:`nlpfeat.kernels._nadaraya_watson.local_linear`, shared with the
    compiled engine (which accumulates the same moments in its loops): ``m`` (c, d) and
    ``y_bar`` (c, k) are the weighted means of the offsets ``x_i - x_q`` and of the targets,
    ``S`` (c, d, d) and ``T`` (c, d, k) the weighted centred second moments (divided by the
    weight sum).
    """
    # pinv(S) = pinv(S / t) / t: scaled by its largest entry, a local design whose spread
    # is tiny (a bandwidth far below the spacing of the data: S around 1e-300) inverts
    # without overflow; pinv's cutoff is relative, so nothing else changes.
    t = np.abs(S).max(axis=(1, 2), keepdims=True)
    t = np.where(t > 0, t, 1.0)
    b = np.linalg.pinv(S / t) @ (T / t)                                  # (c, d, k)
    return y_bar - np.einsum("qd,qdk->qk", m, b)
