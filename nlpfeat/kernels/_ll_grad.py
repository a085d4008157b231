"""Leave-one-out local linear predictions and their sensitivity to the kernel weights.

For ``bandwidth="loo-ard"`` with ``reg_type="ll"``: the local linear prediction at a
query ``q`` is the intercept ``beta_0`` of the weighted least squares fit of ``y_j`` on
``x~_j = [1, c_j - c_q]`` with weights ``w_j``: ``beta = M^+ V``, ``M = sum_j w_j x~_j
x~_j^T``, ``V = sum_j w_j x~_j y_j^T``. Its derivative with respect to one weight is

    dp / dw_j = (M^-1 e_1)^T x~_j (y_j - x~_j^T beta)

(exact where the local design is regular). The prediction does not change when all
weights of a row are scaled, so ``sum_j w_j dp/dw_j = 0`` and, for normalised weights
``w_j = exp(l_j) / sum exp(l)``, ``dp/dl_j = w_j dp/dw_j``. The chain rule through
the loss then needs, per query row ``i`` and training row ``j``,
``B_ij = w_ij g_ij a_i . r_ij`` with ``g_ij = (M_i^-1 e_1)^T x~_ij``, the residuals
``r_ij = y_j - x~_ij^T beta_i`` and ``a_i = dLoss/dp_i``: the gradient with respect to
any log-kernel parameter ``theta`` is ``sum_ij B_ij dl_ij/dtheta``, the same form as for
the local constant fit.
"""
import numpy as np

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
        Coordinates of the training rows.
    Y : ndarray of shape (n, k)

    Returns
    -------
    P : ndarray of shape (c, k)
        The intercepts (predictions).
    sensitivity : callable
        ``sensitivity(a)`` for ``a = dLoss/dP`` of shape (c, k) returns ``B`` (c, n).
    """
    c, d = Cq.shape
    Xt = np.empty((c, C.shape[0], d + 1))
    Xt[:, :, 0] = 1.0
    np.subtract(C[None], Cq[:, None], out=Xt[:, :, 1:])        # (c, n, d + 1)
    WXt = (W[:, :, None] * Xt).transpose(0, 2, 1)              # (c, d + 1, n)
    M_inv = np.linalg.pinv(WXt @ Xt, hermitian=True)           # (c, d + 1, d + 1)
    beta = M_inv @ (WXt @ Y)                                   # (c, d + 1, k)
    P = beta[:, 0, :]

    def sensitivity(a):
        g = (Xt @ M_inv[:, :, :1])[:, :, 0]                    # (c, n)
        R = Y[None] - Xt @ beta                                # (c, n, k)
        return W * g * np.einsum("cnk,ck->cn", R, a)

    return P, sensitivity
