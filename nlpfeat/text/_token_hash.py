"""Lowercased term ids of an ASCII chunk of tokens in one compiled pass (numba), exact.

The first chunk of lowercased counts (:class:`~nlpfeat.text._ngram_counts.NgramCounts`
with ``lower=True``) numbers its raw tokens in order of first appearance and gives each
the id of the first raw token with the same lowercase form. Done with a dict lookup per
token from Python, plus ``str.lower`` and a ``dict.setdefault`` per distinct token, it
was 5.3 ms of a 7 ms fit on Lee's background corpus (60k tokens, 11k distinct). Here the
chunk's tokens are joined by ``"\\x00"`` (which no token may contain: the pass counts the
tokens it finds) and encoded once; one compiled pass hashes each token's bytes (64-bit
FNV-1a, then mixed) into an open-addressing table whose hits are verified byte for byte
against the token's first occurrence, so two distinct tokens never share an id whatever
their hashes; the new tokens' lowercase forms (ASCII: ``A-Z`` -> ``a-z``, which is all
``str.lower`` does to ASCII) go through a second such table. Only the distinct lowercase
forms are decoded to ``str``; the raw tokens stay spans of the chunk's bytes until a dict
of them is needed.

A chunk with a character beyond ASCII is numbered the same way (its UTF-8 bytes), but
its distinct tokens are decoded and lowercased by ``str.lower``. Anything else (a token
that is not a str, holds ``"\\x00"`` or a lone surrogate) is left to the caller's exact
path: :func:`ascii_lower_ids` returns None.

The compiled functions are built on first use (or loaded from numba's on-disk cache),
never at import; this module is imported lazily by :mod:`nlpfeat.text._ngram_counts`.
"""
from itertools import compress

import numpy as np
from numba import njit

__all__ = ["ascii_lower_ids", "decode_spans"]

SEP = "\x00"                   # UTF-8 encodes only U+0000 with a zero byte
_FNV_OFFSET = np.uint64(14695981039346656037)
_FNV_PRIME = np.uint64(1099511628211)
_MIX = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, nogil=True, inline="always")
def _mixed(h):
    """Spread the high bits of a hash over the low ones (a table slot's bits)."""
    h ^= h >> np.uint64(32)
    h *= _MIX
    return h ^ (h >> np.uint64(29))


@njit(cache=True, nogil=True, inline="always")
def _lowered(b):
    return b + 32 if 65 <= b <= 90 else b


@njit(cache=True, nogil=True, inline="always")
def _probe(slots, hashes, starts, ends, buf, start, end, h, mask, lower):
    """``(id, slot)``: the id in the table ``slots`` whose span of ``buf`` equals
    ``buf[start:end]`` (compared lowercased with ``lower``), or -1 and the empty slot
    where the probe stopped. A hit needs an equal hash and equal bytes: no two distinct
    spans can share an id, whatever their hashes."""
    slot = h & mask
    while slots[slot] >= 0:
        k = slots[slot]
        if hashes[k] == h and ends[k] - starts[k] == end - start:
            first = starts[k]
            same = True
            for i in range(end - start):
                if lower:
                    differ = _lowered(buf[first + i]) != _lowered(buf[start + i])
                else:
                    differ = buf[first + i] != buf[start + i]
                if differ:
                    same = False
                    break
            if same:
                return k, slot
        slot = (slot + np.uint64(1)) & mask
    return -1, slot


@njit(cache=True, nogil=True)
def _rehashed(hashes, keys, size):
    """An open-addressing table of ``size`` slots (a power of two) holding ``keys``, placed
    by their ``hashes``; -1 marks an empty slot."""
    mask = np.uint64(size - 1)
    slots = np.full(size, -1, np.int64)
    for k in keys:
        slot = hashes[k] & mask
        while slots[slot] >= 0:
            slot = (slot + np.uint64(1)) & mask
        slots[slot] = k
    return slots


@njit(cache=True, nogil=True)
def _ascii_ids(buf, n_tokens, ids, starts, ends, terms, hash_mask):
    """Ids in order of first appearance of the ``n_tokens`` zero-separated tokens of
    ``buf`` into ``ids``; the byte span of each distinct token's first occurrence into
    ``starts``, ``ends``, and into ``terms`` the id of the first distinct token with the
    same lowercase form. Returns ``(n_distinct, lowercasing changed a token)``, with
    ``n_distinct = -1`` when ``buf`` does not hold exactly ``n_tokens`` tokens. The
    hashes keep the bits of ``hash_mask`` (all but in tests, which make them collide)."""
    size = 1024             # both tables at most half full, doubled as they fill: a
    mask = np.uint64(size - 1)  # table that stays in cache (x3 faster than 2 n_tokens)
    slots = np.full(size, -1, np.int64)          # raw forms
    lower_slots = np.full(size, -1, np.int64)    # lowercase forms: their first raw id
    hashes = np.empty(n_tokens, np.uint64)
    lower_hashes = np.empty(n_tokens, np.uint64)
    n = len(buf)
    pos = 0
    n_distinct = 0
    changed = False
    for t in range(n_tokens):
        if pos > n:                              # fewer tokens than n_tokens
            return -1, changed
        start = pos
        h = _FNV_OFFSET
        while pos < n and buf[pos] != 0:
            h = (h ^ np.uint64(buf[pos])) * _FNV_PRIME
            pos += 1
        end = pos
        pos += 1                                 # past the separator
        h = _mixed(h) & hash_mask
        found, slot = _probe(slots, hashes, starts, ends, buf, start, end, h, mask, False)
        if found >= 0:
            ids[t] = found
            continue
        k = n_distinct                           # a new raw form
        n_distinct += 1
        if 2 * n_distinct > size:                # grow both tables (no new form in yet)
            size *= 2
            mask = np.uint64(size - 1)
            hashes[k] = h
            slots = _rehashed(hashes, np.arange(n_distinct), size)
            lower_slots = _rehashed(lower_hashes, np.flatnonzero(terms[:k] == np.arange(k)),
                                    size)
            slot = h & mask
            while slots[slot] != k:
                slot = (slot + np.uint64(1)) & mask
        slots[slot] = k
        hashes[k] = h
        starts[k] = start
        ends[k] = end
        ids[t] = k
        h = _FNV_OFFSET                          # its lowercase form
        for i in range(start, end):
            b = buf[i]
            if 65 <= b <= 90:
                changed = True
            h = (h ^ np.uint64(_lowered(b))) * _FNV_PRIME
        h = _mixed(h) & hash_mask
        term, slot = _probe(lower_slots, lower_hashes, starts, ends, buf, start, end, h,
                            mask, True)
        if term < 0:                             # a new lowercase form
            lower_slots[slot] = k
            lower_hashes[k] = h
            term = k
        terms[k] = term
    if pos <= n:                                 # bytes left: more tokens than n_tokens
        return -1, changed
    return n_distinct, changed


@njit(cache=True, nogil=True)
def _gather(buf, starts, ends, lower, out):
    """The byte spans ``starts[i]:ends[i]`` of ``buf`` (lowercased if ``lower``) into
    ``out``, zero-separated."""
    k = 0
    for i in range(len(starts)):
        if i:
            out[k] = 0
            k += 1
        for j in range(starts[i], ends[i]):
            out[k] = _lowered(buf[j]) if lower else buf[j]
            k += 1


def _joined(buf, starts, ends, lower):
    out = np.empty(int((ends - starts).sum()) + len(starts) - 1, np.uint8)
    _gather(buf, starts, ends, lower, out)
    return out.tobytes()


def _decode_joined(joined):
    """The strings of ``"\\x00"``-joined ASCII bytes."""
    return joined.decode("ascii").split(SEP)


def decode_spans(spans):
    """The strings of the byte spans ``(buf, starts, ends)`` of ASCII bytes."""
    return _decode_joined(_joined(*spans, False))


def ascii_lower_ids(units, lengths, hash_mask=2**64 - 1):
    """Raw ids of the tokens of ``units`` in order of first appearance, and the ids and
    strings of their lowercase forms; None where the exact path must decide.

    Parameters
    ----------
    units : sequence of sequence of str
        Documents as token sequences.
    lengths : ndarray of int64
        Tokens of each document.
    hash_mask : int, default=2**64 - 1
        The bits of the 64-bit hashes kept (fewer: more collisions, the same result).

    Returns
    -------
    ids : ndarray of int64
        The raw id of every token, documents in a row.
    raw : tuple
        The distinct raw tokens in order of their ids, as spans of the chunk's ASCII bytes
        ``(buf, starts, ends)``, decoded by :func:`decode_spans` when they are needed.
    terms : ndarray of int64 or None
        Per raw id, the first raw id with the same lowercase form; None when
        lowercasing changes no token.
    lowered : list of str
        Per raw id, its lowercase form.

    When a token is beyond ASCII, ``raw`` is the list of the distinct raw tokens (str)
    and ``terms`` and ``lowered`` are None: ``str.lower`` decides. None when there are no
    tokens, or a token is not a str, holds ``"\\x00"`` or a lone surrogate.

    Examples
    --------
    >>> import numpy as np
    >>> from nlpfeat.text._token_hash import ascii_lower_ids, decode_spans
    >>> ids, raw, terms, lowered = ascii_lower_ids([["A", "b"], [], ["a", "b", "A"]],
    ...                                            np.array([2, 0, 3]))
    >>> ids.tolist(), decode_spans(raw), terms.tolist(), lowered
    ([0, 1, 2, 1, 0], ['A', 'b', 'a'], [0, 1, 0], ['a', 'b', 'a'])
    >>> ascii_lower_ids([["caf\\u00e9", "A", "caf\\u00e9"]], np.array([3]))
    (array([0, 1, 0]), ['caf\u00e9', 'A'], None, None)
    >>> ascii_lower_ids([["a\\x00b"]], np.array([1])) is None
    True
    """
    n_tokens = int(lengths.sum())
    if not n_tokens:
        return None
    try:
        joined = SEP.join(map(SEP.join, compress(units, lengths.tolist())))
    except TypeError:                             # a token that is not a str
        return None
    is_ascii = joined.isascii()
    try:
        buf = np.frombuffer(joined.encode("utf-8"), np.uint8)
    except UnicodeEncodeError:                    # a lone surrogate
        return None
    ids = np.empty(n_tokens, np.int64)
    starts = np.empty(n_tokens, np.int64)
    ends = np.empty(n_tokens, np.int64)
    terms = np.empty(n_tokens, np.int64)
    n_distinct, changed = _ascii_ids(buf, n_tokens, ids, starts, ends, terms,
                                      np.uint64(hash_mask))
    if n_distinct < 0:                            # a token holds the separator
        return None
    starts, ends = starts[:n_distinct], ends[:n_distinct]
    if not is_ascii:                    # str.lower decides
        return ids, _joined(buf, starts, ends, False).decode("utf-8").split(SEP), None, None
    raw = (buf, starts, ends)
    if not changed:
        return ids, raw, None, decode_spans(raw)
    return ids, raw, terms[:n_distinct], _decode_joined(_joined(buf, starts, ends, True))
