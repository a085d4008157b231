"""Ragged token arrays: documents as segments of one concatenated token axis.

Kernel attention pooling and the locally weighted bag of words both weight the tokens of
each document by a normalised kernel. Rather than loop over documents, the tokens of all
documents are concatenated along one axis and each document is a *segment* of it, given by
its start offset. This module turns documents into that axis (vocabulary ids and offsets)
and cuts it into chunks under ``working_memory``; the kernel weights within segments are
the kernels' (:mod:`nlpfeat.kernels._shared`). Shared by ``_pooling.py`` and ``_lowbow.py``.
"""
from array import array
from itertools import repeat

import numpy as np

from nlpfeat._chunking import chunk_n_rows

__all__ = ["lookup_ids", "segment_chunks"]


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
    get, flat, ends = vocabulary.get, array("q"), array("q")
    for tokens in token_lists:  # one C-level dictionary look-up per token, -1 if unknown
        flat.extend(map(get, tokens, repeat(-1)))
        ends.append(len(flat))
    all_ids = np.frombuffer(flat, dtype=np.int64) if flat else np.zeros(0, np.int64)
    ends = np.frombuffer(ends, dtype=np.int64) if ends else np.zeros(0, np.int64)
    known = all_ids >= 0
    # a few arrays of one number per token, none per (document, token) pair: offsets from
    # the running count of known tokens, positions from each known token's document start
    bounds = np.r_[0, ends]                         # where each document starts and ends
    offsets = np.concatenate(([0], np.cumsum(known)))[bounds]
    starts = bounds[:-1]
    positions = np.flatnonzero(known) - np.repeat(starts, np.diff(offsets))
    return all_ids[known], offsets, positions


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
