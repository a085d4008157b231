"""Sorted count tables of n-gram keys, compiled (numba): a chunk's adjacent pairs, merges.

A count table is its sorted distinct int64 keys and their int64 counts. Two tables are
added by one two-pointer pass over both (each key read once, sequentially), where a
``searchsorted`` of one table's keys in the other
(:func:`nlpfeat.text._counting._pair_tables.merge_tables`) probes ``log2(n)`` scattered
keys per key, a cost that grows faster than the corpus.

The adjacent pairs of a chunk of documents are keyed in one pass that skips the document
boundaries, sorted by numpy's (vectorised) sort, and run-length counted in one pass.

The functions are compiled on first use (or loaded from numba's on-disk cache), never at
import; this module is imported lazily by :mod:`nlpfeat.text._counting._ngram_counts`.
"""
import numpy as np
from numba import njit

__all__ = ["adjacent_pairs", "merge_sorted"]


@njit(cache=True, nogil=True)
def _merge_into(keys, counts, other_keys, other_counts, out_keys, out_counts):
    """Merge two sorted tables into ``out_*`` (long enough for both); returns the length."""
    i = j = n = 0
    n_a, n_b = len(keys), len(other_keys)
    while i < n_a and j < n_b:
        a, b = keys[i], other_keys[j]
        if a < b:
            out_keys[n] = a
            out_counts[n] = counts[i]
            i += 1
        elif b < a:
            out_keys[n] = b
            out_counts[n] = other_counts[j]
            j += 1
        else:
            out_keys[n] = a
            out_counts[n] = counts[i] + other_counts[j]
            i += 1
            j += 1
        n += 1
    while i < n_a:
        out_keys[n] = keys[i]
        out_counts[n] = counts[i]
        i += 1
        n += 1
    while j < n_b:
        out_keys[n] = other_keys[j]
        out_counts[n] = other_counts[j]
        j += 1
        n += 1
    return n


def merge_sorted(table, other):
    """The sum of two sorted count tables ``(keys, counts)``, as a new sorted table.

    Parameters
    ----------
    table, other : tuple of (ndarray of int64, ndarray of int64)
        Distinct keys in increasing order and their counts. Neither is modified.

    Returns
    -------
    keys, counts : ndarray of int64
        The union of the keys, sorted, with the counts of a key in both added.

    Examples
    --------
    >>> import numpy as np
    >>> from nlpfeat.text._counting._sorted_tables import merge_sorted
    >>> keys, counts = merge_sorted((np.array([1, 4, 9]), np.array([1, 1, 2])),
    ...                             (np.array([4, 5]), np.array([3, 1])))
    >>> keys.tolist(), counts.tolist()
    ([1, 4, 5, 9], [1, 4, 1, 2])
    """
    (keys, counts), (other_keys, other_counts) = table, other
    if not len(other_keys):
        return keys, counts
    if not len(keys):
        return other_keys, other_counts
    keys, other_keys = (np.ascontiguousarray(k, dtype=np.int64) for k in (keys, other_keys))
    counts, other_counts = (np.ascontiguousarray(c, dtype=np.int64)
                            for c in (counts, other_counts))
    size = len(keys) + len(other_keys)
    out_keys, out_counts = np.empty(size, np.int64), np.empty(size, np.int64)
    n = _merge_into(keys, counts, other_keys, other_counts, out_keys, out_counts)
    if n < size:          # keys in both: give the unused tail back (realloc, no copy)
        out_keys.resize(n, refcheck=False)
        out_counts.resize(n, refcheck=False)
    return out_keys, out_counts


@njit(cache=True, nogil=True)
def _pair_keys(ids, lengths, shift, out):
    """``ids[j] << shift | ids[j + 1]`` of the adjacent tokens inside each document of
    ``ids`` (documents of ``lengths`` tokens, in a row) into ``out``; returns the count."""
    k = 0
    pos = 0
    for length in lengths:
        for j in range(pos, pos + length - 1):
            out[k] = (ids[j] << shift) | ids[j + 1]
            k += 1
        pos += length
    return k


@njit(cache=True, nogil=True)
def _count_runs(keys, narrow, out_keys, out_counts):
    """Distinct values of the sorted ``keys`` and their counts into ``out_*`` (a narrow key
    ``a << 16 | b`` is widened to ``a << 32 | b``); returns the number of distinct keys."""
    n = len(keys)
    m = 0
    i = 0
    while i < n:
        j = i + 1
        while j < n and keys[j] == keys[i]:
            j += 1
        key = np.int64(keys[i])
        if narrow:
            key = ((key >> 16) << 32) | (key & 0xFFFF)
        out_keys[m] = key
        out_counts[m] = j - i
        m += 1
        i = j
    return m


def adjacent_pairs(ids, lengths, n_terms):
    """Sorted distinct keys ``a << 32 | b`` of the adjacent pairs inside documents, and
    their counts.

    Parameters
    ----------
    ids : ndarray of int64
        Term ids (below ``n_terms``) of the tokens of consecutive documents.
    lengths : ndarray of int64
        Tokens of each document.
    n_terms : int

    Returns
    -------
    keys, counts : ndarray of int64

    Examples
    --------
    >>> import numpy as np
    >>> from nlpfeat.text._counting._sorted_tables import adjacent_pairs
    >>> keys, counts = adjacent_pairs(np.array([0, 1, 0, 1, 1, 0]), np.array([4, 0, 2]), 2)
    >>> (keys >> 32).tolist(), (keys & 0xFFFFFFFF).tolist(), counts.tolist()
    ([0, 1], [1, 0], [2, 2])
    """
    narrow = n_terms <= 1 << 16        # a pair fits 32 bits, which sort about twice as fast
    ids = np.ascontiguousarray(ids, dtype=np.int64)
    lengths = np.ascontiguousarray(lengths, dtype=np.int64)
    keys = np.empty(max(len(ids) - 1, 0), np.uint32 if narrow else np.int64)
    keys = keys[:_pair_keys(ids, lengths, 16 if narrow else 32, keys)]
    keys.sort()
    out_keys, out_counts = np.empty(len(keys), np.int64), np.empty(len(keys), np.int64)
    m = _count_runs(keys, narrow, out_keys, out_counts)
    out_keys.resize(m, refcheck=False)
    out_counts.resize(m, refcheck=False)
    return out_keys, out_counts
