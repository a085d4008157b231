"""(position, n-gram) features from id sequences (numba), for ``PositionalBagOfWords``.

A document is a sequence of units: word ids (one per distinct lowered token; -1 for a
stop word, dropped BEFORE positions are counted, as the Python analyzer counts the
tokens left after stop-word removal) or code points (``analyzer="char"``). The feature
``"p|g"`` of the n-gram ``g`` starting at unit ``k`` is the key ``(p, u_k, ..., u_k+n-1)``
written as int32 into one zero-padded buffer (:func:`position_keys`), ``p`` the position
value of :func:`~nlpfeat.text._vectorizers._positional.position_values` (the same
formulae, in integers); keys whose ``p`` is not below ``max_position`` are not written.
The keys are numbered by a :class:`~._token_table.TokenTable` (exact on any bytes), in
the Python analyzer's order (per document: the unigrams, then the bigrams, ...), and a
new key becomes a ``str`` once (:func:`key_strings`).

The compiled functions are built on first use (or loaded from numba's cache).
"""
import numpy as np
from numba import njit

__all__ = ["POSITION_MODES", "position_keys", "key_strings"]

#: The code of each ``position`` of ``PositionalBagOfWords`` in :func:`position_keys`.
POSITION_MODES = {"absolute": 0, "from_end": 1, "relative": 2, "log": 3}

#: ``n_bins`` and ``max_position`` up to which the integer formulae cannot overflow.
MAX_BINS = 2**31 - 1


@njit(cache=True, nogil=True, inline="always")
def _position(k, n_units, n, mode, n_bins):
    if mode == 0:
        return k
    if mode == 1:
        return n_units - n - k
    if mode == 2:
        return n_bins * k // n_units
    p, v = 0, k + 1                              # floor(log2(k + 1))
    while v > 1:
        v >>= 1
        p += 1
    return p


@njit(cache=True, nogil=True)
def _keys(units, doc_offsets, lo, hi, mode, n_bins, max_position, kept, keys, starts, ends,
          key_offsets):
    """The keys of every document into ``keys`` (int32) and their byte spans; returns
    their number."""
    q, m = 0, 0
    for d in range(doc_offsets.shape[0] - 1):
        key_offsets[d] = m
        n_units = 0
        for t in range(doc_offsets[d], doc_offsets[d + 1]):
            if units[t] >= 0:
                kept[n_units] = units[t]
                n_units += 1
        for n in range(lo, min(hi, n_units) + 1):
            for k in range(n_units - n + 1):
                p = _position(k, n_units, n, mode, n_bins)
                if p >= max_position:
                    continue
                starts[m] = 4 * q
                keys[q] = p
                for j in range(n):
                    keys[q + 1 + j] = kept[k + j]
                q += n + 1
                ends[m] = 4 * q
                m += 1
    key_offsets[doc_offsets.shape[0] - 1] = m
    return m


@njit(cache=True, nogil=True)
def _sizes(units, doc_offsets, lo, hi):
    """``(keys, int32 words, longest document)``: bounds for :func:`_keys`."""
    n_keys, n_words, longest = 0, 0, 0
    for d in range(doc_offsets.shape[0] - 1):
        n_units = 0
        for t in range(doc_offsets[d], doc_offsets[d + 1]):
            if units[t] >= 0:
                n_units += 1
        longest = max(longest, n_units)
        for n in range(lo, min(hi, n_units) + 1):
            n_keys += n_units - n + 1
            n_words += (n_units - n + 1) * (n + 1)
    return n_keys, n_words, longest


def position_keys(units, doc_offsets, ngram_range, mode, n_bins, max_position):
    """``(buffer, starts, ends, key_offsets)``: the keys of the documents whose units are
    ``units[doc_offsets[d]:doc_offsets[d + 1]]`` (int64; -1: dropped) as spans of
    ``buffer`` (uint8, its base zero-padded 64-bit words, as :meth:`TokenTable.add_spans`
    reads it); ``buffer.view(np.int32)`` holds the keys. ``mode``: a code of
    :data:`POSITION_MODES`; ``max_position``: an int (keys at or above it dropped).

    Examples
    --------
    >>> import numpy as np
    >>> from nlpfeat.text._counting._position_ids import position_keys
    >>> buffer, starts, ends, offsets = position_keys(
    ...     np.array([5, -1, 6, 7]), np.array([0, 3, 4]), (1, 2), 1, 10, 2**62)
    >>> [buffer.view(np.int32)[s // 4:e // 4].tolist() for s, e in zip(starts, ends)]
    [[1, 5], [0, 6], [0, 5, 6], [0, 7]]
    >>> offsets.tolist()
    [0, 3, 4]
    """
    lo, hi = ngram_range
    units = np.asarray(units, np.int64)
    doc_offsets = np.asarray(doc_offsets, np.int64)
    n_keys, n_words, longest = _sizes(units, doc_offsets, lo, hi)
    padded = np.zeros(n_words // 2 + 2, np.uint64)
    starts, ends = np.empty(n_keys, np.int64), np.empty(n_keys, np.int64)
    key_offsets = np.empty(len(doc_offsets), np.int64)
    m = _keys(units, doc_offsets, lo, hi, mode, n_bins, max_position,
              np.empty(longest, np.int64), padded.view(np.int32), starts, ends, key_offsets)
    buffer = padded.view(np.uint8)[:int(ends[m - 1]) if m else 0]
    return buffer, starts[:m], ends[:m], key_offsets


def key_strings(keys, starts, sizes, grams):
    """The features ``"p|g"`` of the keys ``keys[starts[j]:starts[j] + sizes[j]]`` (int32
    words: the position, then the n-gram's units); ``grams(keys, firsts, n)`` gives the
    str of the n-grams of ``n`` units starting at the words ``firsts``.

    Examples
    --------
    >>> import numpy as np
    >>> from nlpfeat.text._counting._position_ids import key_strings
    >>> def letters(keys, firsts, n):
    ...     return ["".join(chr(c) for c in keys[f:f + n]) for f in firsts.tolist()]
    >>> key_strings(np.array([3, 97, 98, 0, 99]), np.array([0, 3]), np.array([3, 2]),
    ...             letters)
    ['3|ab', '0|c']
    """
    out = np.empty(len(starts), object)
    positions = keys[starts]
    for n in np.unique(sizes).tolist():
        where = np.flatnonzero(sizes == n)
        names = grams(keys, starts[where] + 1, n - 1)
        out[where] = [f"{p}|{g}" for p, g in zip(positions[where].tolist(), names)]
    return out.tolist()
