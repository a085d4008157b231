"""Token ids kept across chunks by one compiled pass per chunk (numba), exact.

A Python dict lookup per token (``map(vocabulary.__getitem__, tokens)``) hashes every
token's characters again (fresh strings carry no cached hash), and with a large
vocabulary it misses the cache two or three times a token: the dict's entry, then the
key's string to compare: a cost that grows faster than the corpus.

:class:`TokenTable` numbers distinct tokens in order of first appearance, the ids kept
from chunk to chunk. A chunk's tokens are joined by ``"\\x00"`` (which no token may hold:
the chunk is checked) and encoded once; numpy finds the zero bytes that end the tokens,
then one compiled pass reads each token eight bytes at a time, hashes it and looks it up
in an open-addressing table whose entries hold the token's first eight bytes, its
length and its id (16 bytes; a grown table hashes the tokens again from the store). A
token of at most eight bytes is its first word (zero-padded; no token holds a zero
byte), so an entry that matches on word and length is that token: no second memory
access. A longer token is
compared word by word with its bytes, kept eight-aligned in the table's own store. Two distinct tokens never share
an id, whatever their hashes (tests cut the hash to a few bits).

Lowercased counts keep a second table, of lowercase forms: a chunk's new raw tokens are
lowercased once each (``A-Z`` -> ``a-z``, a word at a time, read from the raw table's
store when the chunk is ASCII, which is all ``str.lower`` does to ASCII; ``str.lower``
otherwise) and numbered there.

The compiled functions are built on first use (or loaded from numba's on-disk cache),
never at import; this module is imported lazily by its users.
"""
import sys
from itertools import compress

import numpy as np
from numba import njit

from nlpfeat.text._counting._vocabulary import grown

__all__ = ["TokenTable", "joined_tokens", "table_ids"]

SEP = "\x00"                   # UTF-8 encodes only U+0000 with a zero byte
_ONES = np.uint64(0x0101010101010101)
_HIGHS = np.uint64(0x8080808080808080)
_LOW7 = np.uint64(0x7F7F7F7F7F7F7F7F)
_FROM_A = np.uint64(0x3F3F3F3F3F3F3F3F)     # byte + 0x3F has its high bit from "A" (0x41)
_PAST_Z = np.uint64(0x2525252525252525)     # byte + 0x25 has its high bit past "Z" (0x5A)
_SEED = np.uint64(0x243F6A8885A308D3)
_MIX = np.uint64(0x9E3779B97F4A7C15)
_MAX_IDS = 2**32 - 1                        # an entry holds id + 1 in 32 bits
_ID_BITS = np.uint64(32)
_ID_MASK = np.uint64((1 << 32) - 1)
_MAX_LENGTH = 2**24 - 1                     # bytes of a token (in 32 bits)
_U0 = np.uint64(0)
_U1 = np.uint64(1)
_U8 = np.uint64(8)
_U64 = np.uint64(64)
_LITTLE = sys.byteorder == "little"         # words are read as little-endian bytes


@njit(cache=True, nogil=True, inline="always")
def _mixed(h):
    """A bijection of 64-bit words that spreads every bit over the low ones (a slot)."""
    h ^= h >> np.uint64(32)
    h *= _MIX
    return h ^ (h >> np.uint64(29))


@njit(cache=True, nogil=True, inline="always")
def _word_at(words, pos):
    """The eight bytes of the buffer from byte ``pos`` (``words``: the buffer viewed as
    little-endian 64-bit words, padded with zero words past its end)."""
    i = pos >> 3
    shift = np.uint64(pos & 7) * _U8
    if shift == _U0:
        return words[i]
    return (words[i] >> shift) | (words[i + 1] << (_U64 - shift))


@njit(cache=True, nogil=True, inline="always")
def _low_bytes(v, n):
    """The first ``n`` (0-8) bytes of ``v``, the others zero."""
    if n >= 8:
        return v
    return v & ((_U1 << (np.uint64(n) * _U8)) - _U1)


@njit(cache=True, nogil=True, inline="always")
def _lowered(v):
    """``v`` with its bytes ``A-Z`` made ``a-z`` (bytes past ASCII are left as they are)."""
    t = v & _LOW7
    upper = (t + _FROM_A) & ~(t + _PAST_Z) & ~v & _HIGHS
    return v | (upper >> np.uint64(2))


@njit(cache=True, nogil=True, inline="always")
def _read(words, pos, left, lower):
    """The word of a token at byte ``pos`` with ``left`` bytes of it left (the bytes past
    the token zero), its ASCII letters lowercased with ``lower``."""
    v = _low_bytes(_word_at(words, pos), left)
    return _lowered(v) if lower else v


@njit(cache=True, nogil=True, inline="always")
def _hash(words, pos, length, lower, hash_mask):
    """``(hash, first word)`` of the token of ``length`` bytes at byte ``pos``."""
    w = _read(words, pos, length, lower)
    h = _mixed(w ^ _SEED)
    for j in range(1, (length + 7) >> 3):       # a long token: the rest, a word at a time
        h = _mixed(h ^ _read(words, pos + 8 * j, length - 8 * j, lower))
    return h & hash_mask, w


@njit(cache=True, nogil=True)
def _rehashed(slots, store, first, hash_mask, size):
    """The entries of ``slots`` placed in a table of ``size`` entries (a power of two),
    each token's hash computed again from its bytes in ``store`` (no hash is kept)."""
    out = np.zeros((size, 2), np.uint64)
    mask = np.uint64(size - 1)
    for r in range(slots.shape[0]):
        e = slots[r, 1]
        if e != _U0:
            i = np.int64(e & _ID_MASK) - 1
            h, _ = _hash(store, first[i] * 8, np.int64(e >> _ID_BITS), False, hash_mask)
            slot = h & mask
            while out[slot, 1] != _U0:
                slot = (slot + _U1) & mask
            out[slot, 0] = slots[r, 0]
            out[slot, 1] = e
    return out


@njit(cache=True, nogil=True, inline="always")
def _find(words, pos, length, lower, h, w, slots, store, first):
    """``(id, slot)`` of the token of ``length`` bytes at byte ``pos`` (hash ``h``, first
    word ``w``); id -1 when it is new, ``slot`` then the empty slot it takes. An entry
    holds a token's first word and ``id + 1 | length << 32``: a token of at most eight
    bytes is found without another memory access."""
    mask = np.uint64(slots.shape[0] - 1)
    slot = h & mask
    meta = np.uint64(length) << _ID_BITS
    while True:
        e = slots[slot, 1]
        if e == _U0:
            return np.int64(-1), slot
        if slots[slot, 0] == w and (e & ~_ID_MASK) == meta:
            i = np.int64(e & _ID_MASK) - 1
            if length <= 8:
                return i, slot
            at = first[i]
            same = True
            for j in range(1, (length + 7) >> 3):   # the words after the first
                if _read(words, pos + 8 * j, length - 8 * j, lower) != store[at + j]:
                    same = False
                    break
            if same:
                return i, slot
        slot = (slot + _U1) & mask


@njit(cache=True, nogil=True, inline="always")
def _insert(words, pos, length, lower, w, slot, slots, store, first, lengths, n, n_words):
    """Number the new token at byte ``pos`` ``n`` (its slot ``slot``); returns the words
    of ``store`` used."""
    slots[slot, 0] = w
    slots[slot, 1] = (np.uint64(length) << _ID_BITS) | np.uint64(n + 1)
    first[n] = n_words
    lengths[n] = length
    for j in range((length + 7) >> 3):
        store[n_words] = _read(words, pos + 8 * j, length - 8 * j, lower)
        n_words += 1
    return n_words


@njit(cache=True, nogil=True)
def _number_block(words, starts, sizes, stored, lo, hi, ids, slots, store, first, lengths,
                  n, n_words, hash_mask):
    """Tokens ``lo .. hi - 1`` of :func:`_number` into a table with room for all of them:
    no rehash inside (a loop that may replace its table ran 1.7 times slower on known
    tokens). Returns ``(n, n_words)``."""
    for t in range(lo, hi):
        pos = starts[t]
        length = sizes[t]
        h, w = _hash(words, pos, length, stored, hash_mask)
        found, slot = _find(words, pos, length, stored, h, w, slots, store, first)
        if found < 0:                            # a new token
            found = n
            n_words = _insert(words, pos, length, stored, w, slot, slots, store, first,
                              lengths, n, n_words)
            n += 1
        ids[t] = found
    return n, n_words


@njit(cache=True, nogil=True)
def _number(words, starts, sizes, stored, ids, slots, store, first, lengths, n, n_words,
            hash_mask):
    """Ids of the tokens of ``words`` into ``ids``: token ``t`` is the ``sizes[t]`` bytes
    from byte ``starts[t]`` (the zero-separated tokens of a chunk, spans of a buffer or
    another table's store), with ``stored`` its ASCII letters lowercased. A known token
    gets its id, a new one the next (``n``, ``n + 1``, ...), its
    bytes appended to ``store`` from word ``n_words`` on (``first``, ``lengths``).
    The caller makes room in ``store``, ``first`` and ``lengths`` for every
    token being new. Returns ``(slots, n, n_words)``: ``slots`` is a larger table when
    the old one would have been more than half full. The tokens' bounds are known
    beforehand, so their hashing and probes do not wait on one another."""
    block = 4096
    for lo in range(0, len(starts), block):
        hi = min(lo + block, len(starts))
        size = slots.shape[0]
        while 2 * (n + hi - lo) > size:          # room for every token being new
            size *= 2
        if size > slots.shape[0]:
            slots = _rehashed(slots, store, first, hash_mask, size)
        n, n_words = _number_block(words, starts, sizes, stored, lo, hi, ids, slots, store,
                                   first, lengths, n, n_words, hash_mask)
    return slots, n, n_words


@njit(cache=True, nogil=True)
def _gather_ids(store, first, lengths, ids, out):
    """The bytes of ``ids`` into ``out``, zero-separated."""
    k = 0
    for i in range(len(ids)):
        if i:
            out[k] = 0
            k += 1
        at = first[ids[i]]
        for j in range(lengths[ids[i]]):
            out[k] = np.uint8((store[at + (j >> 3)] >> (np.uint64(j & 7) * _U8))
                              & np.uint64(0xFF))
            k += 1


def _padded_words(data):
    """``data`` (bytes) as little-endian 64-bit words, with at least one zero word (so a
    token's terminating zero byte and a read of the word after it are in range)."""
    words = np.zeros(len(data) // 8 + 2, np.uint64)
    words.view(np.uint8)[:len(data)] = np.frombuffer(data, np.uint8)
    return words


def joined_tokens(units, lengths):
    """The tokens of the documents ``units`` joined by ``"\\x00"``: ``(str, is_ascii)``, or
    None when a token is not a str or there are none (a token that holds ``"\\x00"`` is
    refused by :meth:`TokenTable.add`)."""
    n_tokens = int(lengths.sum())
    if not n_tokens:
        return None
    try:
        joined = SEP.join(map(SEP.join, compress(units, lengths.tolist())))
    except TypeError:                             # a token that is not a str
        return None
    return joined, joined.isascii()


def table_ids(table, units, lengths):
    """``(ids, is_ascii)``: the flat ids of the tokens of the documents ``units`` (lists
    of ``lengths`` tokens) numbered by the :class:`TokenTable` ``table``, as
    :func:`~nlpfeat.text._counting._pair_tables.token_ids` numbers them with a growing
    vocabulary, and whether the tokens are ASCII; None (nothing added) where a dict must
    decide: a token that is not a str, holds ``"\\x00"`` or a lone surrogate."""
    found = joined_tokens(units, lengths)
    if found is None:
        return None if lengths.sum() else (np.zeros(0, np.int64), True)
    ids = table.add(found[0], int(lengths.sum()))
    return None if ids is None else (ids, found[1])


class TokenTable:
    """Distinct tokens numbered ``0, 1, ...`` in order of first appearance, across chunks.

    Parameters
    ----------
    hash_mask : int, default=2**64 - 1
        The bits of the 64-bit hashes kept (fewer: more collisions, the same ids; tests).

    Attributes
    ----------
    n : int
        Distinct tokens so far.

    Examples
    --------
    >>> from nlpfeat.text._counting._token_table import TokenTable
    >>> table = TokenTable()
    >>> table.add("a\\x00bb\\x00a", 3).tolist(), table.add("bb\\x00café", 2).tolist()
    ([0, 1, 0], [1, 2])
    >>> table.strings(), table.strings_of([2, 0])
    (['a', 'bb', 'café'], ['café', 'a'])
    >>> raw = TokenTable()
    >>> raw.add("Bb\\x00bB\\x00CAFÉ\\x00bb", 4).tolist()
    [0, 1, 2, 3]
    >>> lower = TokenTable()              # ASCII letters lowered (str.lower for the rest)
    >>> lower.add_lowered(raw, 0).tolist(), lower.strings()
    ([0, 0, 1, 0], ['bb', 'cafÉ'])
    >>> TokenTable().add("a\\udcff", 1) is None         # a lone surrogate
    True
    """

    def __init__(self, hash_mask=2**64 - 1):
        self.hash_mask = hash_mask
        self.n = 0
        self._n_words = 0
        self._slots = np.zeros((1024, 2), np.uint64)  # first word, id + 1 | length << 32
        self._store = np.zeros(1024, np.uint64)
        self._first = np.zeros(1024, np.int64)
        self._lengths = np.zeros(1024, np.int64)

    def add(self, joined, n_tokens):
        """Ids of the ``n_tokens`` tokens of ``joined`` (a str of tokens joined by
        ``"\\x00"``; or their UTF-8 bytes), new tokens numbered after the known ones; None
        (nothing added) when a token holds ``"\\x00"`` or cannot be encoded (a lone
        surrogate)."""
        if not _LITTLE:
            return None
        try:
            data = joined if isinstance(joined, bytes) else joined.encode("utf-8")
        except UnicodeEncodeError:
            return None
        words = _padded_words(data)
        ends = np.flatnonzero(words.view(np.uint8)[:len(data) + 1] == 0)
        if len(ends) != n_tokens:
            return None                           # a token holds the separator
        if len(data) >= _MAX_LENGTH and np.diff(ends, prepend=-1).max() - 1 > _MAX_LENGTH:
            return None                           # a token too long for a row's length
        starts = np.empty(n_tokens, np.int64)
        starts[:1] = 0
        starts[1:] = ends[:-1] + 1
        return self._numbered(words, starts, ends - starts, False, len(data) // 8 + n_tokens)

    def add_spans(self, buffer, starts, ends):
        """Ids of the tokens ``buffer[starts[t]:ends[t]]`` (the spans of
        :func:`~nlpfeat.text._counting._compiled_tokens.token_spans`: ``buffer.base`` a
        zero-padded array of 64-bit words), new tokens numbered after the known ones; None
        (nothing added) for a token too long for a row."""
        sizes = ends - starts
        if not _LITTLE or (len(sizes) and sizes.max() > _MAX_LENGTH):
            return None
        words = buffer.base
        return self._numbered(words, starts, sizes, False,
                              int(((sizes + 7) >> 3).sum()))

    def add_table(self, other, lo=0, *, lower=False):
        """Ids of the tokens ``lo ..`` of the table ``other`` numbered here, with ``lower``
        their ASCII letters lowercased (all that ``str.lower`` does to ASCII); read from
        ``other``'s store, never decoded."""
        n_words = other._n_words - (other._first[lo] if lo < other.n else other._n_words)
        return self._numbered(other._store, other._first[lo:other.n] * 8,
                              other._lengths[lo:other.n], lower, int(n_words))

    def add_lowered(self, other, lo):
        """:meth:`add_table` with ``lower=True``."""
        return self.add_table(other, lo, lower=True)

    def _numbered(self, words, starts, sizes, stored, max_words):
        # int64 bounds whatever the caller's (one specialisation of the compiled loop)
        starts, sizes = np.asarray(starts, np.int64), np.asarray(sizes, np.int64)
        n_tokens = len(starts)
        self.check_room(n_tokens)
        self._first = grown(self._first, self.n + n_tokens, keep=self.n)
        self._lengths = grown(self._lengths, self.n + n_tokens, keep=self.n)
        self._store = grown(self._store, self._n_words + max_words, keep=self._n_words)
        ids = np.empty(n_tokens, np.int64)
        self._slots, self.n, self._n_words = _number(
            words, starts, sizes, stored, ids, self._slots, self._store,
            self._first, self._lengths, self.n, self._n_words, np.uint64(self.hash_mask))
        return ids

    def check_room(self, n_new):
        """Raise if ``n_new`` more tokens could pass the table's ids (2**32 - 2)."""
        if self.n + n_new >= _MAX_IDS:
            raise ValueError(f"More than {_MAX_IDS - 1} distinct tokens in one table.")

    def strings_of(self, ids):
        """The tokens of ``ids`` (a list) as str."""
        ids = np.asarray(ids, np.int64)
        if not len(ids):
            return []
        out = np.empty(int(self._lengths[ids].sum()) + len(ids) - 1, np.uint8)
        _gather_ids(self._store, self._first, self._lengths, ids, out)
        return out.tobytes().decode("utf-8").split(SEP)

    def strings(self, lo=0, hi=None):
        """The tokens ``lo .. hi - 1`` as str."""
        return self.strings_of(np.arange(lo, self.n if hi is None else hi))