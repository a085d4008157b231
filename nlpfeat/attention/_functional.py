"""Attention building blocks as free functions, each with its hand-written backward.

Every forward keeps the arrays' dtype (float32 stays float32) and works on any number of
leading batch axes: scores are ``(..., n_queries, n_keys)``. Masks follow PyTorch: a boolean
mask is ``True`` where attention is *forbidden*; a float mask is added to the scores.
"""
import numpy as np

from nlpfeat.attention._scores import (  # the scoring functions are part of this API
    additive_score,
    additive_score_backward,
    gaussian_score,
    gaussian_score_backward,
    multidim_score,
    multidim_score_backward,
    scaled_dot_score,
    scaled_dot_score_backward,
)

__all__ = [
    "additive_score",
    "additive_score_backward",
    "attention_dropout",
    "attention_dropout_backward",
    "causal_mask",
    "gaussian_score",
    "gaussian_score_backward",
    "key_padding_mask",
    "mask_to_additive",
    "masked_softmax",
    "masked_softmax_backward",
    "mse_loss",
    "multidim_score",
    "multidim_score_backward",
    "scaled_dot_score",
    "scaled_dot_score_backward",
    "sinkhorn",
    "sinkhorn_backward",
]


def mask_to_additive(mask, dtype=np.float64):
    """Turn a boolean (``True`` = masked) or float mask into an additive float mask.

    Parameters
    ----------
    mask : ndarray of bool or float, or None
    dtype : numpy dtype, default=np.float64

    Returns
    -------
    additive : ndarray of ``dtype`` (0 where allowed, ``-inf`` where masked) or None.

    Examples
    --------
    >>> from nlpfeat.attention.functional import mask_to_additive
    >>> mask_to_additive(np.array([True, False]))
    array([-inf,   0.])
    """
    if mask is None:
        return None
    mask = np.asarray(mask)
    if mask.dtype == bool:
        return np.where(mask, -np.inf, 0.0).astype(dtype, copy=False)
    if mask.dtype.kind not in "fiu":
        raise TypeError(f"A mask must be boolean or float, got dtype {mask.dtype}.")
    return mask.astype(dtype, copy=False)


def causal_mask(n_queries, n_keys=None, offset=0):
    """Boolean causal mask: query ``i`` may not attend to key ``j > i + offset``.

    Parameters
    ----------
    n_queries : int
    n_keys : int, default=None
        Defaults to ``n_queries + offset``.
    offset : int, default=0
        Position of the first query: the number of earlier keys (a key/value cache) that
        every query may see.

    Returns
    -------
    mask : ndarray of bool, shape (n_queries, n_keys)
        ``True`` above the diagonal (masked), as torch's
        ``nn.Transformer.generate_square_subsequent_mask``; with an ``offset`` the
        diagonal starts at key ``offset`` (queries at positions ``offset, offset + 1, ...``).

    Examples
    --------
    >>> from nlpfeat.attention.functional import causal_mask
    >>> causal_mask(3).astype(int)
    array([[0, 1, 1],
           [0, 0, 1],
           [0, 0, 0]])
    >>> causal_mask(2, offset=2).astype(int)
    array([[0, 0, 0, 1],
           [0, 0, 0, 0]])
    """
    offset = int(offset)
    if offset < 0:
        raise ValueError(f"offset must be a non-negative int, got {offset}.")
    n_keys = n_queries + offset if n_keys is None else n_keys
    return np.triu(np.ones((n_queries, n_keys), dtype=bool), k=1 + offset)


def key_padding_mask(lengths, max_len=None):
    """Boolean key-padding mask from sequence lengths: ``True`` marks padding positions.

    Parameters
    ----------
    lengths : array-like of int, shape (batch,)
    max_len : int, default=None
        Defaults to ``max(lengths)``.

    Returns
    -------
    mask : ndarray of bool, shape (batch, max_len)

    Examples
    --------
    >>> from nlpfeat.attention.functional import key_padding_mask
    >>> key_padding_mask([1, 3]).astype(int)
    array([[0, 1, 1],
           [0, 0, 0]])
    """
    lengths = np.asarray(lengths)
    if lengths.ndim != 1 or (lengths < 0).any():
        raise ValueError(f"lengths must be a 1-D array of non-negative ints, got {lengths!r}.")
    max_len = int(lengths.max()) if max_len is None else int(max_len)
    return np.arange(max_len)[None, :] >= lengths[:, None]


def masked_softmax(scores, mask=None, axis=-1):
    """Numerically stable softmax with an optional mask; a fully masked row gives zeros.

    Parameters
    ----------
    scores : ndarray of shape (..., n_keys)
    mask : ndarray of bool or float, broadcastable to ``scores``, default=None
        Boolean ``True`` = masked; a float mask is added to the scores (``-inf`` masks).
    axis : int, default=-1

    Returns
    -------
    weights : ndarray, same shape and dtype as ``scores``; each row sums to one, or to zero
        when every entry of the row is masked (never NaN).

    Notes
    -----
    softmax(s)_j = exp(s_j - max s) / sum_k exp(s_k - max s).

    Examples
    --------
    >>> from nlpfeat.attention.functional import masked_softmax
    >>> masked_softmax(np.array([[1e3, 1e3], [0.0, 1.0]]), np.array([False, True])).round(3)
    array([[1., 0.],
           [1., 0.]])
    >>> masked_softmax(np.zeros((1, 2)), np.array([True, True]))
    array([[0., 0.]])
    """
    if mask is not None:
        scores = scores + mask_to_additive(mask, scores.dtype)
    finfo = np.finfo(scores.dtype)
    m = scores.max(axis=axis, keepdims=True)
    np.maximum(m, finfo.min, out=m)  # an all -inf row: exp(-inf - min) = 0, never inf - inf
    e = scores - m
    np.exp(e, out=e)
    s = e.sum(axis=axis, keepdims=True)
    np.maximum(s, finfo.tiny, out=s)  # an all-zero row stays zero, never 0 / 0
    e /= s
    return e


def masked_softmax_backward(d_weights, weights, axis=-1):
    """Gradient of :func:`masked_softmax` with respect to the scores.

    Parameters
    ----------
    d_weights : ndarray, gradient of the loss with respect to the weights.
    weights : ndarray, the forward output.
    axis : int, default=-1

    Returns
    -------
    d_scores : ndarray, ``w * (dw - sum(dw * w))`` (zero where masked).

    Examples
    --------
    >>> from nlpfeat.attention.functional import masked_softmax, masked_softmax_backward
    >>> w = masked_softmax(np.array([0.0, 0.0, 5.0]), np.array([False, False, True]))
    >>> masked_softmax_backward(np.array([1.0, 0.0, 7.0]), w)
    array([ 0.25, -0.25,  0.  ])
    """
    dw = d_weights * weights
    dw -= weights * dw.sum(axis=axis, keepdims=True)
    return dw


def _log_normalize(x, axis):
    """``x - logsumexp(x, axis)`` where a fully ``-inf`` slice stays ``-inf`` (no NaN)."""
    m = x.max(axis=axis, keepdims=True)
    m[~np.isfinite(m)] = 0.0
    s = np.exp(x - m).sum(axis=axis, keepdims=True)
    s[s == 0] = 1.0
    return x - (np.log(s) + m)


def sinkhorn(scores, mask=None, n_iter=3):
    """Sinkhorn normalisation in the log domain: alternately normalise columns and rows.

    Parameters
    ----------
    scores : ndarray of shape (..., n_queries, n_keys)
    mask : ndarray of bool or float, broadcastable to ``scores``, default=None
    n_iter : int, default=3
        Number of (column, row) normalisation rounds; ``n_iter=0`` is the plain softmax.

    Returns
    -------
    weights : ndarray, same shape as ``scores``. Rows sum to one exactly (the last step
        normalises rows); column sums approach ``n_queries / n_keys`` (one for a square
        matrix: doubly stochastic) as ``n_iter`` grows.
    cache : tuple for :func:`sinkhorn_backward`.

    Notes
    -----
    Each round applies ``L <- L - logsumexp(L, axis=-2) + log(n_queries / n_keys)`` then
    ``L <- L - logsumexp(L, axis=-1)`` to the log-weights ``L``, so rows and columns are
    coupled instead of each query normalising on its own. Both marginals then carry the same
    total mass, so the iterations converge for any shape (without a mask that forbids it).

    A few rounds only approach the column sums: with the default 3, on i.i.d. N(0, 1)
    scores of 10 x 10 matrices, columns are off by 0.2% on average and by up to 7.5%
    (scores of spread 2: 3.0% and 30%; ``benchmarks/RESULTS.md``).

    A causal mask forbids the doubly stochastic limit. Query 0 sees key 0 only, so column 0
    holds weight 1 before any other query gives key 0 anything; every later query must then
    give it zero, and so on down the diagonal: the only doubly stochastic lower-triangular
    matrix is the identity. The iterations drift towards it (each token attending to itself
    alone, whatever the scores) and never reach it with finite scores: after 3 rounds the
    columns of 10 x 10 causal matrices are off by 29% on average, the diagonal holds half
    the weight, and after 100 rounds 94% of it.

    References
    ----------
    Sinkhorn, R. (1964). A relationship between arbitrary positive matrices and doubly
    stochastic matrices. Ann. Math. Statist. 35(2).

    Examples
    --------
    >>> from nlpfeat.attention.functional import sinkhorn
    >>> w, _ = sinkhorn(np.array([[2.0, 0.0], [1.0, 0.0]]), n_iter=50)
    >>> w.sum(axis=0).round(3), w.sum(axis=1).round(3)
    (array([1., 1.]), array([1., 1.]))
    """
    if int(n_iter) < 0:
        raise ValueError(f"n_iter must be a non-negative int, got {n_iter!r}.")
    log_w = scores if mask is None else scores + mask_to_additive(mask, scores.dtype)
    outputs = []
    log_ratio = float(np.log(scores.shape[-2] / scores.shape[-1]))
    for _ in range(int(n_iter)):
        log_w = _log_normalize(log_w, axis=-2)
        if log_ratio:
            log_w += log_ratio
        outputs.append(log_w)
        log_w = _log_normalize(log_w, axis=-1)
        outputs.append(log_w)
    if not outputs:
        log_w = _log_normalize(log_w, axis=-1)
        outputs.append(log_w)
    weights = np.exp(log_w)
    return weights, (outputs, weights, log_ratio)


def sinkhorn_backward(d_weights, cache):
    """Gradient of :func:`sinkhorn` with respect to the scores.

    Each log-normalisation ``y = x - logsumexp(x)`` has backward ``dx = dy - exp(y) sum(dy)``,
    applied to the stored steps in reverse order.

    Parameters
    ----------
    d_weights : ndarray, gradient with respect to the weights.
    cache : the second output of :func:`sinkhorn`.

    Returns
    -------
    d_scores : ndarray shaped as the scores.

    Examples
    --------
    >>> from nlpfeat.attention.functional import sinkhorn, sinkhorn_backward
    >>> w, cache = sinkhorn(np.array([[1.0, 0.0], [0.0, 1.0]]), n_iter=2)
    >>> sinkhorn_backward(np.ones_like(w), cache)  # the total weight does not move
    array([[0., 0.],
           [0., 0.]])
    """
    outputs, weights, log_ratio = cache
    d = d_weights * weights
    axes = [-2, -1] * (len(outputs) // 2) if len(outputs) > 1 else [-1]
    for y, axis in zip(outputs[::-1], axes[::-1]):
        p = np.exp(y - log_ratio) if axis == -2 and log_ratio else np.exp(y)
        d = d - p * d.sum(axis=axis, keepdims=True)
    return d


def attention_dropout(weights, p, rng):
    """Zero attention weights with probability ``p`` and rescale the rest by ``1 / (1 - p)``.

    Parameters
    ----------
    weights : ndarray
    p : float in [0, 1)
    rng : numpy.random.Generator

    Returns
    -------
    out : ndarray, the dropped-out weights.
    keep : ndarray or None, the scaled keep mask (``None`` when ``p == 0``) for the backward.

    Examples
    --------
    >>> from nlpfeat.attention.functional import attention_dropout
    >>> out, keep = attention_dropout(np.full((2, 4), 0.25), 0.5, np.random.default_rng(0))
    >>> sorted(set(out.ravel().tolist()))
    [0.0, 0.5]
    """
    if not 0.0 <= p < 1.0:
        raise ValueError(f"The dropout probability must be in [0, 1), got p={p!r}.")
    if p == 0.0:
        return weights, None
    keep = (rng.random(weights.shape, dtype=np.float32) >= p).astype(weights.dtype)
    keep *= 1.0 / (1.0 - p)
    return weights * keep, keep


def attention_dropout_backward(d_out, keep):
    """Gradient of :func:`attention_dropout`: ``d_out * keep``.

    Examples
    --------
    >>> from nlpfeat.attention.functional import attention_dropout_backward
    >>> attention_dropout_backward(np.ones(3), np.array([0.0, 2.0, 2.0]))
    array([0., 2., 2.])
    """
    return d_out if keep is None else d_out * keep


def mse_loss(y_pred, y_true):
    """Mean squared error and its gradient, as ``torch.nn.MSELoss()`` (mean over all entries).

    Returns
    -------
    loss : float
    d_pred : ndarray shaped as ``y_pred``

    Examples
    --------
    >>> from nlpfeat.attention.functional import mse_loss
    >>> mse_loss(np.array([1.0, 3.0]), np.array([1.0, 1.0]))
    (2.0, array([0., 2.]))
    """
    diff = y_pred - y_true
    return float((diff * diff).mean()), diff * (2.0 / diff.size)
