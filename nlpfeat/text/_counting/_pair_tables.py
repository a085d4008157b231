"""The numeric core of co-occurrence counting: token ids, document layout, pair tables.

:func:`pair_table` pairs ``ids[i]`` with ``ids[i + offset]`` for every offset
``1..window`` at once (one array operation per offset, never a loop over tokens).
Documents are laid out longest first by :func:`layout_documents`, each followed by
``min(window, length - 1)`` padding ids (``-1``), so no pair crosses a document boundary,
and offset ``d`` only scans the documents longer than ``d``: the cost of a document is
bounded by ``min(window, length)`` per token, however large ``window`` is. A pair is one
int64 key ``word << 32 | context``; a table is its sorted unique keys and their summed
weights, and tables add up by a linear-time merge (:func:`merge_tables`).
"""
from collections import defaultdict
from itertools import chain, repeat

import numpy as np
import scipy.sparse as sp

from nlpfeat.text._counting._vocabulary import string_order

__all__ = [
    "INT32_MAX",
    "MASK",
    "SHIFT",
    "document_pairs",
    "join_keys",
    "layout_documents",
    "merge_tables",
    "pair_table",
    "pairs_to_matrix",
    "reduce_pairs",
    "select_terms",
    "split_keys",
    "token_ids",
]

SHIFT = 32                         # a pair key is word << 32 | context (ids below 2**31)
MASK = (1 << SHIFT) - 1
INT32_MAX = np.iinfo(np.int32).max  # the largest count or index an int32 array holds
_NARROW_SHIFT = 16                 # with fewer than 2**16 ids, a pair fits a uint32
_NARROW = 1 << _NARROW_SHIFT


def token_ids(token_lists, vocabulary, lengths=None):
    """Map token lists to one flat id array plus document lengths.

    Parameters
    ----------
    token_lists : list of list of str
    vocabulary : dict
        term -> id. Unknown terms get id -1, unless ``vocabulary`` is a
        :func:`~nlpfeat.text._counting._vocabulary.growing_vocabulary`, which numbers them
        in order of first appearance.
    lengths : ndarray of int64 or None, default=None
        The documents' lengths, when the caller has them already.

    Returns
    -------
    ids : ndarray of int64, shape (n_tokens,)
    lengths : ndarray of int64, shape (n_docs,)
    """
    if lengths is None:
        lengths = np.fromiter(map(len, token_lists), np.int64, len(token_lists))
    flat = chain.from_iterable(token_lists)
    if isinstance(vocabulary, defaultdict):
        lookup = map(vocabulary.__getitem__, flat)
    else:
        lookup = map(vocabulary.get, flat, repeat(-1))
    return np.fromiter(lookup, np.int64, int(lengths.sum())), lengths


def layout_documents(ids, lengths, window):
    """Longest document first, each followed by its own padding: (padded ids, reach).

    Document ``i`` is followed by ``min(window, lengths[i] - 1)`` ids of -1, the largest
    offset at which it has a pair, so no pair crosses a document boundary.
    ``reach[d - 1]`` is the number of leading positions that hold every document longer
    than ``d`` (with its padding): the only ones offset ``d`` needs to scan.
    ``len(reach)`` is the largest offset with a pair, ``min(window, max(lengths) - 1)``.

    Examples
    --------
    >>> from nlpfeat.text._counting._pair_tables import layout_documents
    >>> layout_documents(np.array([7, 8, 9]), np.array([1, 2]), window=10**6)
    (array([ 8,  9, -1,  7]), array([3]))
    """
    order = np.argsort(-lengths, kind="stable")
    sorted_lengths = lengths[order]
    pad = np.minimum(window, np.maximum(sorted_lengths - 1, 0))
    ends = np.cumsum(sorted_lengths + pad)
    starts = ends - sorted_lengths - pad
    doc = np.repeat(np.arange(len(order)), sorted_lengths)
    rank = np.arange(len(doc)) - np.repeat(np.cumsum(sorted_lengths) - sorted_lengths,
                                           sorted_lengths)
    source = (np.cumsum(lengths) - lengths)[order]
    out = np.full(int(ends[-1]) if len(ends) else 0, -1, dtype=np.int64)
    out[starts[doc] + rank] = ids[source[doc] + rank]
    max_offset = int(min(window, max(int(sorted_lengths.max(initial=0)) - 1, 0)))
    # the documents longer than d are the first searchsorted(-L, -d) of the sorted ones
    n_longer = np.searchsorted(-sorted_lengths, -np.arange(1, max_offset + 1), side="left")
    return out, np.concatenate([[0], ends])[n_longer]


def reduce_pairs(keys, values):
    """Sort ``keys`` and add the ``values`` of equal keys: (unique keys, sums).

    ``values=None`` weighs every key 1 (the sums are counts).
    """
    if not len(keys):
        return keys, np.zeros(0, np.int64 if values is None else values.dtype)
    if values is None:
        keys = np.sort(keys)
    else:
        order = np.argsort(keys)
        keys, values = keys[order], values[order]
    starts = np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1]]))
    if values is None:
        return keys[starts], np.diff(np.append(starts, len(keys)))
    return keys[starts], np.add.reduceat(values, starts)


def merge_tables(table, other):
    """Add the sorted pair table ``other`` into the sorted table ``table`` (linear time)."""
    (keys, values), (new_keys, new_values) = table, other
    if not len(keys):
        return new_keys, new_values
    pos = np.searchsorted(keys, new_keys)
    hit = pos < len(keys)
    hit[hit] = keys[pos[hit]] == new_keys[hit]
    values = values.astype(np.result_type(values, new_values))   # a copy: never in place
    values[pos[hit]] += new_values[hit]                 # keys are unique: no collisions
    # interleave the new keys: the j-th one lands at its insertion point + j
    new_at = pos[~hit] + np.arange(np.count_nonzero(~hit))
    old = np.ones(len(keys) + len(new_at), dtype=bool)
    old[new_at] = False
    merged_keys = np.empty(len(old), dtype=keys.dtype)
    merged_values = np.empty(len(old), dtype=values.dtype)
    merged_keys[old], merged_keys[new_at] = keys, new_keys[~hit]
    merged_values[old], merged_values[new_at] = values, new_values[~hit]
    return merged_keys, merged_values


def split_keys(keys):
    """Pair keys -> (word ids, context ids)."""
    return keys >> SHIFT, keys & MASK


def join_keys(words, contexts):
    """(word ids, context ids) -> pair keys ``word << 32 | context`` (int64)."""
    return (words.astype(np.int64) << SHIFT) | contexts


def pair_table(padded_ids, window, *, weighting="uniform", reach=None, upper=False):
    """Directed pairs (word, context at 1..window after it) and their summed weights.

    With ``upper=True`` each pair is keyed by its smaller id first, ``min << 32 | max``:
    the table is the upper triangle (``i <= j``) of the symmetric counts, whose matrix is
    that triangle plus its transpose (a diagonal entry counts each pair ``(a, a)`` once).

    Parameters
    ----------
    padded_ids : ndarray of int64, shape (n_positions,)
        Term ids below 2**31; ``-1`` marks padding or an out-of-vocabulary token (never
        paired). Documents must be separated by at least ``window`` padding ids, or laid
        out by :func:`layout_documents`, which gives ``reach``.
    window : int
    weighting : {"uniform", "harmonic"}
        Weight 1 per pair, or ``1 / offset``.
    reach : ndarray of int64, shape (n_offsets,), default=None
        Offset ``d`` pairs only the first ``reach[d - 1]`` positions, and offsets beyond
        ``len(reach)`` none; None: every position, offsets up to ``window``.
    upper : bool, default=False
        Key each pair by (smaller id, larger id): the symmetric counts' upper triangle.

    Returns
    -------
    keys : ndarray of int64
        Sorted unique ``word << 32 | context``.
    values : ndarray
        int64 counts (uniform) or float64 summed weights (harmonic).
    """
    # ids below 2**16 pack a pair into 32 bits, which sorts about twice as fast
    narrow = len(padded_ids) > 0 and padded_ids.max() < _NARROW
    ids = padded_ids.astype(np.uint32) if narrow else padded_ids
    shift = _NARROW_SHIFT if narrow else SHIFT
    keys, weights = [], []
    if reach is None:
        reach = np.full(min(window, max(len(padded_ids) - 1, 0)), len(padded_ids))
    for offset, n in enumerate(reach.tolist(), start=1):   # offsets; tokens are an axis
        left, right = padded_ids[:n - offset], padded_ids[offset:n]
        keep = (left >= 0) & (right >= 0)
        words, contexts = ids[:n - offset][keep], ids[offset:n][keep]
        if upper:
            words, contexts = np.minimum(words, contexts), np.maximum(words, contexts)
        keys.append((words << shift) | contexts)
        if weighting == "harmonic":
            weights.append(np.full(keys[-1].shape, 1.0 / offset))
    keys = np.concatenate(keys) if keys else np.empty(0, np.int64)
    keys, values = reduce_pairs(keys, np.concatenate(weights) if weights else None)
    if narrow:        # back to the int64 layout word << 32 | context (order unchanged)
        wide = keys.astype(np.int64)
        keys = ((wide >> _NARROW_SHIFT) << SHIFT) | (wide & (_NARROW - 1))
    return keys, values


def document_pairs(ids, lengths, window, *, weighting="uniform", upper=False):
    """The pair table of documents given as flat ids and lengths, by compiled loops.

    Equal to :func:`pair_table` of :func:`layout_documents` (integer counts bit for bit,
    harmonic weights to rounding: summed in another order): each token is paired with
    the next ``window`` tokens of its document in one compiled pass
    (:func:`~nlpfeat.text._counting._pair_kernels.window_keys`), the keys are sorted by
    numpy and counted in a second one (weights: summed by numpy).

    Parameters
    ----------
    ids : ndarray of int, shape (n_tokens,)
        Term ids below 2**31, -1 for a token that pairs with nothing (keeping its place).
    lengths : ndarray of int, shape (n_documents,)
        Consecutive documents' numbers of ids; no pair crosses a document boundary.
    window : int
    weighting : {"uniform", "harmonic"}, default="uniform"
    upper : bool, default=False
        Key each pair by (smaller id, larger id), as :func:`pair_table`.

    Returns
    -------
    keys, values : ndarray
        As :func:`pair_table` returns them (float64 weights also when there is no pair).

    Examples
    --------
    >>> from nlpfeat.text._counting._pair_tables import document_pairs, split_keys
    >>> keys, counts = document_pairs(np.array([0, 1, 0, 1]), np.array([3, 1]), 2)
    >>> [k.tolist() for k in split_keys(keys)], counts.tolist()
    ([[0, 0, 1], [0, 1, 0]], [1, 1, 1])
    """
    from nlpfeat.text._counting._pair_kernels import window_keys  # numba: on use
    from nlpfeat.text._counting._sorted_tables import _count_runs

    ids = np.ascontiguousarray(ids, dtype=np.int64)
    lengths = np.ascontiguousarray(lengths, dtype=np.int64)
    harmonic = weighting == "harmonic"
    # ids below 2**16 pack a pair into 32 bits, which sorts about twice as fast
    narrow = len(ids) > 0 and ids.max() < _NARROW
    shift = _NARROW_SHIFT if narrow else SHIFT
    sample = np.empty(0, np.uint32 if narrow else np.int64)
    keys, offsets = window_keys(ids, lengths, max(int(window), 0), bool(upper), shift,
                                sample, harmonic)
    if not harmonic:
        keys.sort()
        out_keys, counts = np.empty(len(keys), np.int64), np.empty(len(keys), np.int64)
        m = _count_runs(keys, narrow, out_keys, counts)   # widened to word << 32 | context
        return out_keys[:m], counts[:m]
    order = np.argsort(keys)
    keys = keys[order]
    weights = 1.0 / offsets[order]
    del order
    if not len(keys):
        return np.empty(0, np.int64), np.zeros(0)
    starts = np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1]]))
    values = np.add.reduceat(weights, starts)
    keys = keys[starts]
    if narrow:        # back to the int64 layout word << 32 | context (order unchanged)
        wide = keys.astype(np.int64)
        keys = ((wide >> _NARROW_SHIFT) << SHIFT) | (wide & (_NARROW - 1))
    return keys.astype(np.int64, copy=False), values


def select_terms(freq, vocabulary, min_count, *, strings=None):
    """Terms seen at least ``min_count`` times, sorted: (their old ids, new vocabulary).

    ``vocabulary`` maps each term to its id; ``freq`` is indexed by id. With ``strings``
    (``ids -> list of str``, e.g. a token table's ``strings_of``) the terms of the ids
    kept are asked of it instead, and ``vocabulary`` may be None: no string, no dict
    entry for a term that is not kept.
    """
    # a token table also numbers the tokens it dropped (stop words), at frequency 0
    if not (freq.any() if strings is not None else len(vocabulary)):
        raise ValueError("The documents hold no tokens at all; check the tokenizer options "
                         "(the default regexp tokenizer drops one-letter words).")
    kept = np.flatnonzero(freq >= min_count)
    if not len(kept):
        raise ValueError(
            f"min_count={min_count} removes every term: the most frequent term occurs "
            f"{int(freq.max())} time(s). Lower min_count or pass a larger corpus.")
    if strings is None:
        terms = np.empty(len(vocabulary), dtype=object)
        terms[np.fromiter(vocabulary.values(), np.int64, len(vocabulary))] = list(vocabulary)
        words = terms[kept]
    else:
        words = np.empty(len(kept), dtype=object)
        words[:] = strings(kept)
    order = string_order(words)
    return kept[order], dict(zip(words[order].tolist(), range(len(kept))))


def pairs_to_matrix(table, n_terms, new_id=None, *, symmetric=True, block=1 << 22):
    """CSR matrix (int32 indices) of a pair table, its ids renumbered by ``new_id``.

    ``table`` is a list holding one ``(keys, values)`` pair table; it is emptied once the
    table is converted, so that the caller's last reference is the only one and the table
    is freed before the matrix is assembled. ``new_id[old id]`` is a term's row and column,
    -1 to drop it and its pairs; None keeps the ids. The table is converted ``block``
    pairs at a time (no full-size int64 temporaries); scipy then builds the CSR matrix in
    linear time and, when ``symmetric``, adds its transpose.
    """
    keys, values = table.pop()
    parts = []
    for start in range(0, len(keys), block):
        w, c = split_keys(keys[start : start + block])
        v = values[start : start + block]
        if new_id is not None:
            w, c = new_id[w], new_id[c]
            keep = (w >= 0) & (c >= 0)
            w, c, v = w[keep], c[keep], v[keep]
        parts.append((w.astype(np.int32), c.astype(np.int32), v))
    dtype = values.dtype
    del keys, values
    words, contexts, data = (np.concatenate([p[k] for p in parts]) if parts else
                             np.empty(0, np.int32 if k < 2 else dtype) for k in range(3))
    del parts
    counts = sp.coo_matrix((data, (words, contexts)), shape=(n_terms, n_terms))
    del words, contexts, data
    counts = counts.tocsr()
    return (counts + counts.T).tocsr() if symmetric else counts
