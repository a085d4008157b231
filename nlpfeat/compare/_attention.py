"""Attention weights of a fitted model, and how close two attention matrices are.

Both the harness (the weight-agreement columns) and the figures (the heatmaps) read the
weights, so they live here, below both.
"""
import numpy as np


def attention_of(model, X_query):
    """(n_queries, n_train) head-averaged weights of a fitted pipeline's last step, or None."""
    est = model[-1] if hasattr(model, "steps") else model
    if not hasattr(est, "attention_weights"):
        return None
    Xq = model[:-1].transform(X_query) if hasattr(model, "steps") else X_query
    W = est.attention_weights(Xq)      # (n_queries, n_keys) by nlpfeat's convention
    return W.toarray() if hasattr(W, "toarray") else np.asarray(W)


def weight_agreement(reference, weights, eps=1e-12):
    """Mean KL(reference || weights) over queries and the correlation of all weights.

    Parameters
    ----------
    reference, weights : array-like of shape (n_queries, n_memory)
        Row-stochastic attention matrices over the same queries and memory.

    Returns
    -------
    kl : float
        Mean over queries of ``sum_j p_j log(p_j / q_j)`` (q clipped at ``eps``); 0 when
        the weights are equal.
    corr : float
        Pearson correlation of the flattened matrices.

    Examples
    --------
    >>> import numpy as np
    >>> w = np.array([[0.5, 0.5], [0.9, 0.1]])
    >>> kl, corr = weight_agreement(w, w)
    >>> float(kl), float(corr)
    (0.0, 1.0)
    """
    P = np.asarray(reference.toarray() if hasattr(reference, "toarray") else reference, float)
    Q = np.asarray(weights, dtype=np.float64)
    if P.shape != Q.shape:
        raise ValueError(f"weights of shape {Q.shape} do not match the reference {P.shape}.")
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(P > 0, P * (np.log(np.maximum(P, eps)) - np.log(np.maximum(Q, eps))), 0.0)
    kl = float(terms.sum(axis=1).mean())
    corr = float(np.corrcoef(P.ravel(), Q.ravel())[0, 1]) if P.std() > 0 and Q.std() > 0 else np.nan
    return kl, corr
