"""Ragged token arrays: documents as segments of one concatenated token axis.

Kernel attention pooling and the locally weighted bag of words both weight the tokens of
each document by a normalised kernel. Rather than loop over documents, the tokens of all
documents are concatenated along one axis and each document is a *segment* of it, given by
its start offset; per-document reductions are ``np.maximum.reduceat`` / ``np.add.reduceat``
over those offsets. These helpers are shared by ``_pooling.py`` and ``_lowbow.py``.
"""
from array import array
from itertools import repeat

import numpy as np
import scipy.sparse as sp

from nlpfeat._chunking import chunk_n_rows

__all__ = ["lookup_ids", "segment_chunks", "segment_ids", "segment_softmax", "segment_sum_matrix"]

_TIE_RTOL = 1e-9  # relative distance difference below which nearest tokens tie


def lookup_ids(token_lists, vocabulary):
    """Concatenated in-vocabulary ids of all documents and each document's offsets.

    Parameters
    ----------
    token_lists : iterable of list of str
    vocabulary : mapping str -> int

    Returns
    -------
    ids : ndarray of shape (n_known_tokens,), int64
        Vocabulary ids of the known tokens, document after document (unknown tokens dropped).
    offsets : ndarray of shape (n_documents + 1,), int64
        Document ``i`` owns ``ids[offsets[i]:offsets[i + 1]]``.
    positions : ndarray of shape (n_known_tokens,), int64
        Index of each known token in its (unfiltered) document.

    Examples
    --------
    >>> lookup_ids([["a", "x", "b"], ["x"], ["b"]], {"a": 0, "b": 1})
    (array([0, 1, 1]), array([0, 2, 2, 3]), array([0, 2, 0]))
    """
    get, flat, lengths = vocabulary.get, array("q"), array("q")
    for tokens in token_lists:  # one C-level dictionary look-up per token, -1 if unknown
        before = len(flat)
        flat.extend(map(get, tokens, repeat(-1)))
        lengths.append(len(flat) - before)
    all_ids = np.array(flat, dtype=np.int64)
    lengths = np.array(lengths, dtype=np.int64)
    doc = np.repeat(np.arange(len(lengths)), lengths)
    known = all_ids >= 0
    positions = np.arange(len(all_ids)) - (np.cumsum(lengths) - lengths)[doc]
    counts = np.bincount(doc[known], minlength=len(lengths))
    return all_ids[known], np.concatenate(([0], np.cumsum(counts))), positions[known]


def segment_ids(offsets):
    """Segment (document) index of every element: ``offsets`` (n+1,) -> (offsets[-1],)."""
    return np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))


def segment_chunks(offsets, row_bytes, working_memory=None):
    """Yield ``(first_doc, stop_doc)`` so that each chunk's tokens fit ``working_memory`` MiB.

    Chunks never split a document; a document longer than the budget forms a chunk alone.

    Examples
    --------
    >>> list(segment_chunks([0, 3, 5, 9, 10], row_bytes=2**20, working_memory=5))
    [(0, 2), (2, 4)]
    """
    offsets = np.asarray(offsets)
    n_docs = len(offsets) - 1
    max_tokens = chunk_n_rows(row_bytes, max(int(offsets[-1]), 1), working_memory)
    first = 0
    while first < n_docs:
        stop = int(np.searchsorted(offsets, offsets[first] + max_tokens, side="right")) - 1
        stop = min(max(stop, first + 1), n_docs)
        yield first, stop
        first = stop


def segment_sum_matrix(starts, n_tokens, weights=None):
    """Sparse (n_segments, n_tokens) matrix ``M`` with ``M @ V`` the per-segment sums of ``V``.

    Row ``i`` holds ``weights`` (default 1) over the tokens of segment ``i``. A sparse
    product is about ten times faster than ``np.add.reduceat`` along the first axis.

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
        ``1e-9`` count as ties.

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
        nearest = dist <= np.minimum.reduceat(dist, starts, axis=-1)[:, seg] * (1.0 + _TIE_RTOL)
        log_k = np.where(empty[:, seg], np.where(nearest, 0.0, -np.inf), log_k)
        top = np.where(empty, 0.0, top)
    weights = np.exp(log_k - top[:, seg])
    weights /= np.add.reduceat(weights, starts, axis=-1)[:, seg]
    return weights
