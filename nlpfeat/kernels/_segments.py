"""Kernel weights within segments of one axis: the numpy twin of :mod:`._compiled._segments`.

The text features (kernel attention pooling, the locally weighted bag of words) weight the
tokens of each document by a normalised kernel. Rather than loop over documents, the
tokens of all documents are concatenated along one axis and each document is a *segment*
of it, given by its start offset; per-segment reductions are ``np.maximum.reduceat`` /
``np.add.reduceat`` over those offsets, or a sparse product. These are the reference
implementations; :mod:`nlpfeat.kernels._engine` chooses between them and the compiled
loops, and text reaches both through :mod:`nlpfeat.kernels._shared`.
"""
import numpy as np
import scipy.sparse as sp

__all__ = ["TIE_RTOL", "attention_pool", "dimension_scale", "position_weights",
           "query_distances", "segment_ids", "segment_kernel_weights", "segment_softmax",
           "segment_sum_matrix"]

TIE_RTOL = 1e-9  # relative distance difference below which nearest tokens tie


def segment_ids(offsets):
    """Segment (document) index of every element: ``offsets`` (n+1,) -> (offsets[-1],)."""
    return np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))


def segment_sum_matrix(starts, n_tokens, weights=None):
    """Sparse (n_segments, n_tokens) matrix ``M`` with ``M @ V`` the per-segment sums of ``V``.

    Row ``i`` holds ``weights`` (default 1) over the tokens of segment ``i``; a sparse
    product sums rows of ``V`` faster than ``np.add.reduceat`` along the first axis.

    Examples
    --------
    >>> segment_sum_matrix(np.array([0, 2]), 3).toarray()
    array([[1., 1., 0.],
           [0., 0., 1.]])
    """
    data = np.ones(n_tokens) if weights is None else weights
    return sp.csr_matrix((data, np.arange(n_tokens), np.append(starts, n_tokens)),
                         shape=(len(starts), n_tokens))


def segment_softmax(log_k, dist, starts):
    """Normalise log kernel values within each segment, in log space.

    Tokens run along the last (contiguous) axis, where ``reduceat`` is fast.

    Parameters
    ----------
    log_k : ndarray of shape (k, n_tokens)
        Log kernel value of each token for each of ``k`` queries; ``-inf`` outside a compact
        kernel's support.
    dist : ndarray of shape (k, n_tokens)
        The distances the kernel was evaluated at, for the nearest-token fallback.
    starts : ndarray of shape (n_segments,)
        Start of each (non-empty) segment; segments are contiguous and cover all tokens.

    Returns
    -------
    weights : ndarray of shape (k, n_tokens)
        Non-negative; each segment sums to 1 in each row. Where a whole segment lies outside
        the kernel's support (or underflows), the nearest token(s) share the weight: the
        limit of a vanishing bandwidth, never ``0/0``; distances equal to a relative
        ``TIE_RTOL`` count as ties.

    Examples
    --------
    >>> w = segment_softmax(np.log([[1.0, 3.0, 2.0]]), np.zeros((1, 3)), np.array([0, 2]))
    >>> print(w)
    [[0.25 0.75 1.  ]]
    """
    seg = segment_ids(np.append(starts, log_k.shape[-1]))
    top = np.maximum.reduceat(log_k, starts, axis=-1)  # (k, n_segments)
    empty = ~np.isfinite(top)
    if empty.any():
        # Ties within rounding share the weight (a 2-token document is equidistant from its mean).
        nearest = dist <= np.minimum.reduceat(dist, starts, axis=-1)[:, seg] * (1.0 + TIE_RTOL)
        log_k = np.where(empty[:, seg], np.where(nearest, 0.0, -np.inf), log_k)
        top = np.where(empty, 0.0, top)
    weights = np.exp(log_k - top[:, seg])
    weights /= np.add.reduceat(weights, starts, axis=-1)[:, seg]
    return weights


def attention_pool(vectors, starts, kernel, bandwidth, *, query=None, token_weights=None):
    """Nadaraya-Watson attention pooling of concatenated token vectors, one segment per document.

    Parameters
    ----------
    vectors : ndarray of shape (n_tokens, d)
        Token vectors of all documents, document after document (keys and values).
    starts : ndarray of shape (n_documents,)
        Offset of each document's first token; every document holds at least one token.
    kernel : Kernel
        From :func:`nlpfeat.kernels.get_kernel`.
    bandwidth : float or ndarray of shape (d,)
    query : ndarray of shape (d,) or None, default=None
        Fixed query; None uses each document's (weighted) mean vector.
    token_weights : ndarray of shape (n_tokens,) or None, default=None
        Weights of the mean query (e.g. idf); None for the plain mean.

    Returns
    -------
    pooled : ndarray of shape (n_documents, d)
    weights : ndarray of shape (n_tokens,)
        Attention weights; they sum to 1 within each document.

    Examples
    --------
    >>> from nlpfeat.kernels import get_kernel
    >>> V = np.array([[0.0, 0.0], [2.0, 0.0], [5.0, 5.0]])
    >>> pooled, w = attention_pool(V, np.array([0, 2]), get_kernel("gaussian"), 1e6)
    >>> print(pooled, w)
    [[1. 0.]
     [5. 5.]] [0.5 0.5 1. ]
    """
    dist = query_distances(vectors, starts, query=query, token_weights=token_weights,
                           scale=dimension_scale(bandwidth))  # (n_tokens,)
    weights = segment_kernel_weights(dist, starts, kernel, bandwidth)
    return segment_sum_matrix(starts, len(vectors), weights) @ vectors, weights


def dimension_scale(bandwidth):
    """One bandwidth per dimension: rescale, keeping the ordering of distances overflow-free."""
    h = np.asarray(bandwidth, dtype=np.float64)
    return h.min() / h if h.ndim else None


def segment_kernel_weights(dist, starts, kernel, bandwidth):
    """Kernel weights of the (scaled) distances, normalised within each segment."""
    h = np.asarray(bandwidth, dtype=np.float64)
    with np.errstate(over="ignore"):
        u2 = np.square(dist / (h.min() if h.ndim else h))  # inf at tiny bandwidths: fallback
    return segment_softmax(kernel.log_k_sq(u2)[None, :], dist[None, :], starts)[0]


def query_distances(vectors, starts, *, query=None, token_weights=None, scale=None):
    """Euclidean distance of every token vector to its document's query.

    Parameters as in :func:`attention_pool`; ``scale`` (shape (d,)) multiplies the
    differences first. Returns an ndarray of shape (n_tokens,).
    """
    if query is None:
        ends = np.append(starts, len(vectors))
        tw = np.ones(len(vectors)) if token_weights is None else token_weights
        means = segment_sum_matrix(starts, len(vectors), tw) @ vectors
        means /= np.add.reduceat(tw, starts)[:, None]
        diff = vectors - means[segment_ids(ends)]  # (n_tokens, d)
    else:
        diff = vectors - query
    if scale is not None:
        diff *= scale
    return np.sqrt(np.einsum("ij,ij->i", diff, diff))


def position_weights(offsets, mu, kernel, bandwidth):
    """Kernel weight of every token at every position point, normalised per document.

    Parameters
    ----------
    offsets : ndarray of shape (n_documents + 1,)
        Document ``i`` owns tokens ``offsets[i]:offsets[i + 1]`` (starting at 0).
    mu : ndarray of shape (n_positions,)
    kernel : Kernel
    bandwidth : float
        In units of the document length (positions are in [0, 1]).

    Returns
    -------
    weights : ndarray of shape (n_positions, n_tokens)
        Token ``t`` (0-based) of a document of length ``L`` sits at ``(t + 0.5) / L``; each
        document's weights at each ``mu_j`` sum to 1.

    Examples
    --------
    >>> from nlpfeat.kernels import get_kernel
    >>> w = position_weights(np.array([0, 4]), np.array([0.0, 1.0]), get_kernel("tophat"), 0.4)
    >>> print(w)
    [[0.5 0.5 0.  0. ]
     [0.  0.  0.5 0.5]]
    """
    lengths = np.diff(offsets)
    seg = segment_ids(offsets)
    rank = np.arange(offsets[-1]) - offsets[seg]  # index of each token in its document
    midpoints = (rank + 0.5) / lengths[seg]
    dist = np.abs(mu[:, None] - midpoints[None, :])  # (n_positions, n_tokens)
    return segment_softmax(kernel.log_k(dist / bandwidth), dist,
                           offsets[:-1][lengths > 0])
