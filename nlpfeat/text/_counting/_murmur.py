"""Feature hashing, compiled (numba): MurmurHash3 of byte spans, and their sums into CSR rows.

The hashing trick of scikit-learn's ``FeatureHasher`` / ``HashingVectorizer``, bit for
bit: each feature's UTF-8 bytes are hashed with the signed 32-bit MurmurHash3 (x86_32)
of seed 0; the column is ``abs(h) % n_features`` (``2**31 % n_features`` for
``h = -2**31``, whose ``abs`` does not exist in 32 bits, as scikit-learn defines it) and
the sign is ``+1`` for ``h >= 0``, ``-1`` otherwise. The entries of a row are summed per
column and kept in column order, zeros included (``+1 - 1`` stays an explicit zero, as
``scipy``'s ``sum_duplicates`` leaves it in scikit-learn's matrix).

The features are read from one buffer of UTF-8 bytes per chunk, never as Python
strings: word n-grams from token spans (``starts``, ``ends``, ``doc_offsets``; an n-gram
is its tokens' bytes joined by a space, copied into a scratch buffer); character
n-grams are hashed where they are enumerated (``_char_ids.hash_char_ngrams``). Every
function is compiled on first
use (or loaded from numba's on-disk cache), never at import, and imports nothing from
its callers.
"""
import numpy as np
from numba import njit

__all__ = ["murmurhash3_32", "hash_spans", "hash_word_ngrams", "hashed_rows"]

_M32 = np.uint64(0xFFFFFFFF)
_C1 = np.uint64(0xCC9E2D51)
_C2 = np.uint64(0x1B873593)
_SPACE = np.uint8(0x20)


@njit(cache=True, nogil=True, inline="always")
def _rotl(x, r):
    return ((x << np.uint64(r)) | (x >> np.uint64(32 - r))) & _M32


@njit(cache=True, nogil=True, inline="always")
def _mix_block(h1, k1):
    k1 = (k1 * _C1) & _M32
    k1 = _rotl(k1, 15)
    k1 = (k1 * _C2) & _M32
    h1 ^= k1
    h1 = _rotl(h1, 13)
    return (h1 * np.uint64(5) + np.uint64(0xE6546B64)) & _M32


@njit(cache=True, nogil=True)
def murmurhash3_32(buffer, start, end):
    """Signed 32-bit MurmurHash3 (x86_32, seed 0) of ``buffer[start:end]`` (uint8), as
    ``sklearn.utils.murmurhash3_32(bytes, seed=0, positive=False)``."""
    length = end - start
    h1 = np.uint64(0)
    stop = start + (length & ~3)
    for i in range(start, stop, 4):
        k1 = (np.uint64(buffer[i]) | (np.uint64(buffer[i + 1]) << np.uint64(8))
              | (np.uint64(buffer[i + 2]) << np.uint64(16))
              | (np.uint64(buffer[i + 3]) << np.uint64(24)))
        h1 = _mix_block(h1, k1)
    tail = length & 3
    if tail:
        k1 = np.uint64(0)
        if tail == 3:
            k1 ^= np.uint64(buffer[stop + 2]) << np.uint64(16)
        if tail >= 2:
            k1 ^= np.uint64(buffer[stop + 1]) << np.uint64(8)
        k1 ^= np.uint64(buffer[stop])
        k1 = (k1 * _C1) & _M32
        k1 = _rotl(k1, 15)
        k1 = (k1 * _C2) & _M32
        h1 ^= k1
    h1 ^= np.uint64(length) & _M32
    h1 ^= h1 >> np.uint64(16)
    h1 = (h1 * np.uint64(0x85EBCA6B)) & _M32
    h1 ^= h1 >> np.uint64(13)
    h1 = (h1 * np.uint64(0xC2B2AE35)) & _M32
    h1 ^= h1 >> np.uint64(16)
    h = np.int64(h1)
    return h - (np.int64(1) << 32) if h >= (np.int64(1) << 31) else h


@njit(cache=True, nogil=True)
def hash_spans(buffer, starts, ends):
    """The :func:`murmurhash3_32` of each span ``buffer[starts[k]:ends[k]]``, as int32."""
    out = np.empty(starts.shape[0], np.int32)
    for k in range(starts.shape[0]):
        out[k] = murmurhash3_32(buffer, np.int64(starts[k]), np.int64(ends[k]))
    return out


@njit(cache=True, nogil=True)
def hash_word_ngrams(buffer, starts, ends, doc_offsets, min_n, max_n):
    """Hashes of every word n-gram (``min_n <= n <= max_n``) of each document.

    Document ``d`` has the tokens ``doc_offsets[d] .. doc_offsets[d + 1] - 1``, token ``t``
    the bytes ``buffer[starts[t]:ends[t]]``; an n-gram is the bytes of its ``n`` tokens
    joined by one space (scikit-learn's ``" ".join``). Returns ``(hashes, row_offsets)``:
    the int32 hashes of document ``d`` are ``hashes[row_offsets[d]:row_offsets[d + 1]]``.
    """
    n_docs = doc_offsets.shape[0] - 1
    row_offsets = np.zeros(n_docs + 1, np.int64)
    longest = 0
    for d in range(n_docs):
        n_tokens = doc_offsets[d + 1] - doc_offsets[d]
        total = 0
        for n in range(min_n, min(max_n, n_tokens) + 1):
            total += n_tokens - n + 1
        row_offsets[d + 1] = row_offsets[d] + total
        for t in range(doc_offsets[d], doc_offsets[d + 1]):
            longest = max(longest, ends[t] - starts[t])
    hashes = np.empty(row_offsets[n_docs], np.int32)
    scratch = np.empty((longest + 1) * max_n, np.uint8)
    k = 0
    for d in range(n_docs):
        first, n_tokens = doc_offsets[d], doc_offsets[d + 1] - doc_offsets[d]
        for n in range(min_n, min(max_n, n_tokens) + 1):
            for i in range(first, first + n_tokens - n + 1):
                if n == 1:
                    hashes[k] = murmurhash3_32(buffer, np.int64(starts[i]), np.int64(ends[i]))
                else:
                    size = 0
                    for t in range(i, i + n):
                        if t > i:
                            scratch[size] = _SPACE
                            size += 1
                        for b in range(starts[t], ends[t]):
                            scratch[size] = buffer[b]
                            size += 1
                    hashes[k] = murmurhash3_32(scratch, np.int64(0), np.int64(size))
                k += 1
    return hashes, row_offsets


@njit(cache=True, nogil=True)
def hashed_rows(hashes, row_offsets, n_features, alternate_sign):
    """The CSR rows of hashed features: ``(indptr, indices, values)``.

    Row ``d`` sums ``sign(h)`` (``1`` without ``alternate_sign``) over its hashes
    ``hashes[row_offsets[d]:row_offsets[d + 1]]`` per column ``abs(h) % n_features``;
    its columns are sorted and unique, a column whose signs cancel kept with 0 (what
    ``scipy``'s ``sum_duplicates`` does to scikit-learn's entries). ``indptr`` is int64,
    ``indices`` int32, ``values`` int64.
    """
    n_docs = row_offsets.shape[0] - 1
    size = hashes.shape[0]
    keys = np.empty(size, np.int64)           # column * 2 + (sign < 0)
    for k in range(size):
        h = np.int64(hashes[k])
        if h == -2147483648:
            column = (2147483647 - (n_features - 1)) % n_features
        else:
            column = abs(h) % n_features
        keys[k] = column * 2 + (1 if (h < 0 and alternate_sign) else 0)
    indptr = np.zeros(n_docs + 1, np.int64)
    indices = np.empty(size, np.int32)
    values = np.empty(size, np.int64)
    nnz = 0
    for d in range(n_docs):
        lo, hi = row_offsets[d], row_offsets[d + 1]
        keys[lo:hi].sort()
        k = lo
        while k < hi:
            column = keys[k] >> 1
            total = 0
            while k < hi and (keys[k] >> 1) == column:
                total += -1 if keys[k] & 1 else 1
                k += 1
            indices[nnz] = column
            values[nnz] = total
            nnz += 1
        indptr[d + 1] = nnz
    return indptr, indices[:nnz], values[:nnz]
