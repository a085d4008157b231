"""Attention scoring functions ``a(q, k)``, each with its backward.

Scaled dot-product (the transformer's), additive (Bahdanau's small MLP), Gaussian (the
parametric Nadaraya-Watson score) and multi-dimensional (DiSAN's one score per feature).
All take (..., n_queries, d) queries and (..., n_keys, d) keys and return
(..., n_queries, n_keys) scores in the inputs' dtype; the multi-dimensional score puts its
features on an axis before those two, so every normalisation over queries or keys applies
to it unchanged.
"""
import numpy as np

__all__ = [
    "additive_score",
    "additive_score_backward",
    "gaussian_score",
    "gaussian_score_backward",
    "multidim_score",
    "multidim_score_backward",
    "scaled_dot_score",
    "scaled_dot_score_backward",
]


def _sum_to_shape(x, shape):
    """Sum a broadcast gradient ``x`` back down to ``shape`` (the inverse of broadcasting)."""
    shape = tuple(shape)
    lead = x.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and x.shape[lead + i] != 1
    )
    out = x.sum(axis=axes, keepdims=True) if axes else x
    return out.reshape(shape)


def scaled_dot_score(queries, keys, scale=None):
    """Scaled dot-product scores ``q·k / sqrt(d)``.

    Parameters
    ----------
    queries : ndarray of shape (..., n_queries, d)
    keys : ndarray of shape (..., n_keys, d)
    scale : float, default=None
        Defaults to ``1 / sqrt(d)``.

    Returns
    -------
    scores : ndarray of shape (..., n_queries, n_keys)

    Examples
    --------
    >>> from nlpfeat.attention.functional import scaled_dot_score
    >>> scaled_dot_score(np.array([[1.0, 1.0]]), np.array([[1.0, 0.0], [2.0, 2.0]])).round(3)
    array([[0.707, 2.828]])
    """
    scale = 1.0 / float(np.sqrt(queries.shape[-1])) if scale is None else float(scale)
    return (queries * scale) @ keys.swapaxes(-1, -2)


def scaled_dot_score_backward(d_scores, queries, keys, scale=None):
    """Gradients ``(d_queries, d_keys)`` of :func:`scaled_dot_score`.

    Examples
    --------
    >>> from nlpfeat.attention.functional import scaled_dot_score_backward
    >>> d_q, d_k = scaled_dot_score_backward(np.ones((1, 2)), np.ones((1, 4)), np.ones((2, 4)))
    >>> d_q, d_k.shape
    (array([[1., 1., 1., 1.]]), (2, 4))
    """
    scale = 1.0 / float(np.sqrt(queries.shape[-1])) if scale is None else float(scale)
    d_queries = (d_scores @ keys) * scale
    d_keys = (d_scores.swapaxes(-1, -2) @ queries) * scale
    return d_queries, d_keys


def additive_score(queries, keys, w_q, w_k, v):
    """Additive (Bahdanau) scores ``v·tanh(W_q q + W_k k)``.

    Parameters
    ----------
    queries : ndarray of shape (..., n_queries, d_q)
    keys : ndarray of shape (..., n_keys, d_k)
    w_q : ndarray of shape (..., n_hidden, d_q), broadcast over the leading axes
    w_k : ndarray of shape (..., n_hidden, d_k)
    v : ndarray of shape (..., n_hidden)

    Returns
    -------
    scores : ndarray of shape (..., n_queries, n_keys)
    cache : tuple for :func:`additive_score_backward`.

    Examples
    --------
    >>> from nlpfeat.attention.functional import additive_score
    >>> s, _ = additive_score(np.ones((1, 2)), np.ones((3, 2)), np.eye(2), np.eye(2), np.ones(2))
    >>> s.round(3)
    array([[1.928, 1.928, 1.928]])
    """
    a_q = queries @ w_q.swapaxes(-1, -2)  # (..., n_q, h)
    a_k = keys @ w_k.swapaxes(-1, -2)  # (..., n_k, h)
    hidden = np.tanh(a_q[..., :, None, :] + a_k[..., None, :, :])  # (..., n_q, n_k, h)
    scores = (hidden @ v[..., None, :, None])[..., 0]
    return scores, (queries, keys, w_q, w_k, v, hidden)


def additive_score_backward(d_scores, cache):
    """Gradients ``(d_queries, d_keys, d_w_q, d_w_k, d_v)`` of :func:`additive_score`.

    Examples
    --------
    >>> from nlpfeat.attention.functional import additive_score, additive_score_backward
    >>> s, cache = additive_score(np.ones((1, 2)), np.ones((3, 2)), np.eye(2), np.eye(2),
    ...                           np.ones(2))
    >>> [g.shape for g in additive_score_backward(np.ones_like(s), cache)]
    [(1, 2), (3, 2), (2, 2), (2, 2), (2,)]
    """
    queries, keys, w_q, w_k, v, hidden = cache
    d_v = _sum_to_shape((d_scores[..., None] * hidden).sum(axis=(-3, -2)), v.shape)
    d_pre = d_scores[..., None] * (1.0 - hidden * hidden)
    d_pre *= v[..., None, None, :]
    d_aq = d_pre.sum(axis=-2)  # (..., n_q, h)
    d_ak = d_pre.sum(axis=-3)  # (..., n_k, h)
    d_queries = _sum_to_shape(d_aq @ w_q, queries.shape)
    d_keys = _sum_to_shape(d_ak @ w_k, keys.shape)
    d_w_q = _sum_to_shape(d_aq.swapaxes(-1, -2) @ queries, w_q.shape)
    d_w_k = _sum_to_shape(d_ak.swapaxes(-1, -2) @ keys, w_k.shape)
    return d_queries, d_keys, d_w_q, d_w_k, d_v


def multidim_score(queries, keys, w_q, w_k):
    """Multi-dimensional (per-feature) scores ``tanh(W_q q + W_k k)``, one per feature.

    The additive score without its output vector ``v``: instead of one scalar per
    (query, key) pair, each of the ``n_features`` hidden units is a score of its own, so a
    softmax over the keys for each feature lets every output feature weight the keys its
    own way (DiSAN's multi-dimensional attention).

    Parameters
    ----------
    queries : ndarray of shape (..., n_queries, d_q)
    keys : ndarray of shape (..., n_keys, d_k)
    w_q : ndarray of shape (..., n_features, d_q), broadcast over the leading axes
    w_k : ndarray of shape (..., n_features, d_k)

    Returns
    -------
    scores : ndarray of shape (..., n_features, n_queries, n_keys)
        The features come before the (query, key) axes, so a softmax over the last axis
        normalises each feature over the keys.
    cache : tuple for :func:`multidim_score_backward`.

    Notes
    -----
    The scores lie in (-1, 1): for one feature no key can get more than
    :math:`e^2 \\approx 7.4` times the weight of another. DiSAN widens that range with
    ``c tanh(x / c)``; this function keeps the plain ``tanh`` of the definition.

    References
    ----------
    Shen, T. et al. (2018). DiSAN: Directional Self-Attention Network for RNN/CNN-Free
    Language Understanding. AAAI.

    Examples
    --------
    >>> from nlpfeat.attention.functional import multidim_score
    >>> s, _ = multidim_score(np.ones((1, 2)), np.zeros((3, 2)), np.eye(2), np.eye(2))
    >>> s.shape, s[:, 0, 0].round(3)
    ((2, 1, 3), array([0.762, 0.762]))
    """
    a_q = (queries @ w_q.swapaxes(-1, -2)).swapaxes(-1, -2)  # (..., F, n_q)
    a_k = (keys @ w_k.swapaxes(-1, -2)).swapaxes(-1, -2)  # (..., F, n_k)
    scores = np.tanh(a_q[..., :, :, None] + a_k[..., :, None, :])  # (..., F, n_q, n_k)
    return scores, (queries, keys, w_q, w_k, scores)


def multidim_score_backward(d_scores, cache):
    """Gradients ``(d_queries, d_keys, d_w_q, d_w_k)`` of :func:`multidim_score`.

    Examples
    --------
    >>> from nlpfeat.attention.functional import multidim_score, multidim_score_backward
    >>> s, cache = multidim_score(np.ones((1, 2)), np.ones((3, 2)), np.eye(2), np.eye(2))
    >>> [g.shape for g in multidim_score_backward(np.ones_like(s), cache)]
    [(1, 2), (3, 2), (2, 2), (2, 2)]
    """
    queries, keys, w_q, w_k, scores = cache
    d_pre = d_scores * (1.0 - scores * scores)  # tanh' = 1 - tanh^2
    d_aq = d_pre.sum(axis=-1).swapaxes(-1, -2)  # (..., n_q, F)
    d_ak = d_pre.sum(axis=-2).swapaxes(-1, -2)  # (..., n_k, F)
    d_queries = _sum_to_shape(d_aq @ w_q, queries.shape)
    d_keys = _sum_to_shape(d_ak @ w_k, keys.shape)
    d_w_q = _sum_to_shape(d_aq.swapaxes(-1, -2) @ queries, w_q.shape)
    d_w_k = _sum_to_shape(d_ak.swapaxes(-1, -2) @ keys, w_k.shape)
    return d_queries, d_keys, d_w_q, d_w_k


def gaussian_score(queries, keys, w=1.0):
    """Gaussian (parametric Nadaraya-Watson) scores ``-|w * (q - k)|^2 / 2``.

    Parameters
    ----------
    queries : ndarray of shape (..., n_queries, d)
    keys : ndarray of shape (..., n_keys, d)
    w : float or ndarray of shape (d,), default=1.0
        Inverse bandwidth; one per feature gives a diagonal metric.

    Returns
    -------
    scores : ndarray of shape (..., n_queries, n_keys)

    Notes
    -----
    softmax over keys of these scores is Nadaraya-Watson with a Gaussian kernel of bandwidth 1/w.

    Examples
    --------
    >>> from nlpfeat.attention.functional import gaussian_score
    >>> gaussian_score(np.array([[0.0]]), np.array([[0.0], [2.0]]), w=0.5)
    array([[ 0. , -0.5]])
    """
    qw, kw = queries * w, keys * w
    cross = qw @ kw.swapaxes(-1, -2)
    sq_q = (qw * qw).sum(axis=-1)[..., :, None]
    sq_k = (kw * kw).sum(axis=-1)[..., None, :]
    return cross - 0.5 * (sq_q + sq_k)


def gaussian_score_backward(d_scores, queries, keys, w=1.0):
    """Gradients ``(d_queries, d_keys, d_w)`` of :func:`gaussian_score` (``d_w`` shaped as w).

    Examples
    --------
    >>> from nlpfeat.attention.functional import gaussian_score_backward
    >>> d_q, d_k, d_w = gaussian_score_backward(np.ones((1, 1)), np.array([[0.0]]),
    ...                                         np.array([[2.0]]), w=0.5)
    >>> d_q, d_k, float(d_w)
    (array([[0.5]]), array([[-0.5]]), -2.0)
    """
    qw, kw = queries * w, keys * w
    d_qw = d_scores @ kw - d_scores.sum(axis=-1)[..., None] * qw
    d_kw = d_scores.swapaxes(-1, -2) @ qw - d_scores.sum(axis=-2)[..., None] * kw
    d_w_full = d_qw * queries
    d_w_full = d_w_full.reshape(-1, queries.shape[-1]).sum(axis=0) + (d_kw * keys).reshape(
        -1, keys.shape[-1]
    ).sum(axis=0)
    w_arr = np.asarray(w)
    d_w = d_w_full.sum() if w_arr.ndim == 0 else _sum_to_shape(d_w_full, w_arr.shape)
    return d_qw * w, d_kw * w, d_w
