"""Leave-one-out local linear predictions and their sensitivity to the kernel weights.

For ``bandwidth="loo-ard"`` with ``reg_type="ll"``: the local linear prediction at a
query ``q`` is the intercept of the weighted least squares fit of ``y_j`` on
``x~_j = [1, c_j - c_q]`` with weights ``w_j``. With the centred moments of
:func:`nlpfeat.kernels._nadaraya_watson.centred_moments` (normalised weights: the
centroid's offset ``m`` from the query, ``y_bar``, ``S`` and ``T``, and the centred
offsets ``c~_j``), the slopes are ``b = S^+ T``, the prediction ``p = y_bar - b^T m``
(exactly as :func:`~nlpfeat.kernels._loss.centred_intercepts`, degenerate designs
included) and, by the block inverse of ``M = sum_j w_j x~_j x~_j^T``,

    dp / dw_j = g_j r_j,   g_j = (1 - c~_j^T S^+ m) / sum w,   r_j = y_j - y_bar - b^T c~_j

(exact where the local design is regular, and on the subspace that
:func:`~nlpfeat.kernels._loss.local_solve` keeps where it is not). The prediction does not
change when all weights of a row are scaled, so ``sum_j w_j dp/dw_j = 0`` and, for
normalised weights ``w_j = exp(l_j) / sum exp(l)``, ``dp/dl_j = w_j dp/dw_j``. The chain
rule through the loss then needs, per query row ``i`` and training row ``j``,
``B_ij = w_ij g_ij a_i . r_ij`` with ``a_i = dLoss/dp_i``: the gradient with respect to
any log-kernel parameter ``theta`` is ``sum_ij B_ij dl_ij/dtheta``, the same form as for
the local constant fit.
"""
import numpy as np

from nlpfeat.kernels._loss import ll_exponent, local_solve, spread_tolerance
from nlpfeat.kernels._nadaraya_watson import centred_moments

__all__ = ["ll_loo_terms"]


def ll_loo_terms(W, Cq, C, Y):
    """Local linear predictions and a map from ``dLoss/dP`` to the weight sensitivities.

    Parameters
    ----------
    W : ndarray of shape (c, n)
        Kernel weights (normalised or not; the diagonal of a leave-one-out chunk at 0).
    Cq : ndarray of shape (c, d)
        Coordinates of the query rows (scaled like ``C``).
    C : ndarray of shape (n, d)
        Coordinates of the training rows (brought to magnitude 1 by a power of two here,
        as :class:`~nlpfeat.kernels._nadaraya_watson.NWIndex` does).
    Y : ndarray of shape (n, k)

    Returns
    -------
    P : ndarray of shape (c, k)
        The intercepts (predictions).
    sensitivity : callable
        ``sensitivity(a)`` for ``a = dLoss/dP`` of shape (c, k) returns ``B`` (c, n).
    """
    e = ll_exponent(C)
    C, Cq = np.ldexp(C, -e), np.ldexp(Cq, -e)
    m, y_bar, S, T, Dc, sw = centred_moments(W, Cq, C, Y)
    k = Y.shape[1]
    sol = local_solve(S, np.concatenate([T, m[:, :, None]], axis=2), spread_tolerance(C))
    b, G = sol[:, :, :k], sol[:, :, k:]                        # (c, d, k), (c, d, 1)
    P = y_bar - np.einsum("qd,qdk->qk", m, b)

    def sensitivity(a):
        g = (1.0 - (Dc @ G)[:, :, 0]) / sw                      # (c, n)
        R = Y[None] - y_bar[:, None] - Dc @ b                  # (c, n, k)
        return W * g * np.einsum("cnk,ck->cn", R, a)

    return P, sensitivity
