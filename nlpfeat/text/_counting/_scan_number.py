"""The default tokenizer and the token table fused: one compiled loop from bytes to ids.

:func:`number_text` finds the tokens of a chunk's UTF-8 buffer as
:func:`~._compiled_tokens.token_spans` does and numbers each in a
:class:`~._token_table.TokenTable` as soon as it ends: its bytes are hashed and looked
up while they are still in the first level of cache, and no span is stored (the
separate scan and numbering read every token twice and wrote two offsets of it). The
ids, the hash and the table's rows are the table's own, so the same table is also
filled by its other methods. The loop is resumed after the table grows, at the start of
the token that did not fit, so the output does not depend on the sizes.

Imported on first use (numba); compiled on first call and cached on disk.
"""
import numpy as np
from numba import njit

from nlpfeat.text._counting._compiled_tokens import _class_at, _run_end
from nlpfeat.text._counting._token_table import (_ID_BITS, _ID_MASK, _MAX_LENGTH, _find,
                                                 _hash, _insert, _rehashed)

__all__ = ["number_text"]

#: New tokens the table makes room for before each resumption of the loop.
_BLOCK = 4096
_BATCH = 256     # tokens found, then numbered
#: Entries of the small direct-mapped cache of recent short tokens (16 KiB: in the
#: first level of cache, where the frequent tokens are found without a probe of the table).
_CACHE = 1024
_CACHE_MASK = np.uint64(_CACHE - 1)
_STATE = 6       # doc, pos, tokens, n, n_words, words the next new token needs


@njit(cache=True, nogil=True)
def _scan_block(words, buffer, doc_bytes, lower, classes, state, ids, doc_offsets, slots,
                store, first, lengths, hash_mask, max_n):
    """Scan from ``state`` on, numbering tokens, until the documents end (True) or a batch
    of new tokens could pass ``max_n`` tokens or the end of ``store`` (False, ``state`` at
    the batch's start, ``state[5]`` the words the batch may need).

    A batch of :data:`_BATCH` tokens is found, then numbered in a loop of its own: the
    tokens' bounds are known, so their lookups (a cache miss each, on a large table) do
    not wait on one another (1.2-1.4x one loop that looks each token up as it ends)."""
    d, pos, k, n, n_words = state[0], state[1], state[2], state[3], state[4]
    n_docs = len(doc_bytes) - 1
    at = np.empty(_BATCH, np.int64)
    size = np.empty(_BATCH, np.int64)
    lowered = np.empty(_BATCH, np.bool_)
    cache = np.zeros((_CACHE, 2), np.uint64)          # recent short tokens: word, id
    while d < n_docs:
        d0, pos0 = d, pos
        m = 0
        need = 0
        while d < n_docs and m < _BATCH:             # a batch of tokens
            if pos == doc_bytes[d]:
                doc_offsets[d] = k + m
            end = doc_bytes[d + 1]
            low = lower[d]
            while pos < end and m < _BATCH:
                c, width = _class_at(buffer, pos, classes)
                s = pos
                pos += width
                if c == 1:
                    pos, rest = _run_end(buffer, pos, end, classes, False)
                    if rest < 1:                     # a run of one character
                        continue
                elif c != 2:                         # 2: an ideograph, a token alone
                    continue
                at[m] = s                            # a token: buffer[s:pos]
                size[m] = pos - s
                lowered[m] = low
                need += (pos - s + 7) >> 3
                m += 1
            if pos >= end:
                d += 1
                if d < n_docs:
                    pos = doc_bytes[d]
        if n + m > max_n or n_words + need > len(store):
            state[0], state[1], state[2], state[3], state[4] = d0, pos0, k, n, n_words
            state[5] = need
            return False
        for t in range(m):                           # the batch numbered
            s, length, low = at[t], size[t], lowered[t]
            h, w = _hash(words, s, length, low, hash_mask)
            c = h & _CACHE_MASK
            meta = np.uint64(length) << _ID_BITS
            e = cache[c, 1]
            if length <= 8 and cache[c, 0] == w and (e & ~_ID_MASK) == meta:
                ids[k + t] = np.int64(e & _ID_MASK)
                continue
            found, slot = _find(words, s, length, low, h, w, slots, store, first)
            if found < 0:
                found = n
                n_words = _insert(words, s, length, low, w, slot, slots, store, first,
                                  lengths, n, n_words)
                n += 1
            if length <= 8:
                cache[c, 0] = w
                cache[c, 1] = meta | np.uint64(found)
            ids[k + t] = found
        k += m
    doc_offsets[n_docs] = k
    state[0], state[1], state[2], state[3], state[4] = d, pos, k, n, n_words
    return True


@njit(cache=True, nogil=True)
def _grown_copy(array, size, keep):
    out = np.empty(size, array.dtype)
    out[:keep] = array[:keep]
    return out


@njit(cache=True, nogil=True)
def _scan_number(words, buffer, doc_bytes, lower, classes, ids, doc_offsets, slots, store,
                 first, lengths, n, n_words, hash_mask):
    """:func:`_scan_block` resumed until the documents end, the table grown between
    (slots at most half full, room for :data:`_BLOCK` new tokens and their words)."""
    state = np.zeros(_STATE, np.int64)
    state[1] = doc_bytes[0]
    state[3], state[4], state[5] = n, n_words, 1
    while True:
        n, n_words = state[3], state[4]
        size = slots.shape[0]
        while 2 * (n + _BLOCK) > size:
            size *= 2
        if size > slots.shape[0]:
            slots = _rehashed(slots, store, first, hash_mask, size)
        if len(first) < n + _BLOCK:
            size = max(n + _BLOCK, len(first) * 3 // 2)
            first = _grown_copy(first, size, n)
            lengths = _grown_copy(lengths, size, n)
        if len(store) < n_words + state[5] + _BLOCK:
            store = _grown_copy(store, max(n_words + state[5] + _BLOCK, len(store) * 3 // 2),
                                n_words)
        if _scan_block(words, buffer, doc_bytes, lower, classes, state, ids, doc_offsets,
                       slots, store, first, lengths, hash_mask, n + _BLOCK):
            return slots, store, first, lengths, state[2], state[3], state[4]


def number_text(table, buffer, doc_bytes, lower, classes):
    """``(ids, doc_offsets)``: the tokens of the documents of ``buffer`` (a
    :func:`~._compiled_tokens.scan_input`: document ``d`` the bytes ``doc_bytes[d] ..
    doc_bytes[d + 1] - 1``, its ASCII letters lowered when ``lower[d]``; ``classes`` the
    scan's table of character classes) numbered in ``table`` (a
    :class:`~._token_table.TokenTable`), new tokens after the known ones; the tokens of
    document ``d`` are ``ids[doc_offsets[d]:doc_offsets[d + 1]]``. None (nothing added)
    when a token could be too long for a row of the table: the caller numbers spans.

    Examples
    --------
    >>> from nlpfeat.text._counting._compiled_tokens import scan_input, word_classes
    >>> from nlpfeat.text._counting._scan_number import number_text
    >>> from nlpfeat.text._counting._token_table import TokenTable
    >>> table = TokenTable()
    >>> ids, doc_offsets = number_text(table, *scan_input(["The cat, THE CAT", "我 cat"]),
    ...                                word_classes())
    >>> ids.tolist(), doc_offsets.tolist(), table.strings()
    ([0, 1, 0, 1, 2, 1], [0, 4, 6], ['the', 'cat', '我'])
    """
    if len(buffer) > _MAX_LENGTH:
        return None
    ids = np.empty(len(buffer) // 2 + 1, np.int64)
    doc_offsets = np.empty(len(doc_bytes), np.int64)
    table.check_room(len(ids))
    (table._slots, table._store, table._first, table._lengths, n_tokens,
     table.n, table._n_words) = _scan_number(buffer.base, buffer, doc_bytes, lower, classes,
                                             ids, doc_offsets, table._slots,
                                             table._store, table._first, table._lengths,
                                             table.n, table._n_words,
                                             np.uint64(table.hash_mask))
    return ids[:n_tokens], doc_offsets
