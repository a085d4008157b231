"""Character n-grams on compiled code (numba): ``analyzer="char"`` / ``"char_wb"`` counted
without a Python ``str`` per n-gram.

A chunk's documents are preprocessed and their white space normalised once per document
(:func:`~nlpfeat.text._base._analyzer.collapse_white_space` for ``char``,
:func:`~nlpfeat.text._base._analyzer.padded_words` for ``char_wb``: the words joined and
padded by single spaces), then encoded to one UTF-8 buffer. Every character n-gram is a
span of that buffer: ``n`` consecutive code points for ``char``; for ``char_wb``, inside a
word padded with the spaces on either side of it (neighbouring words share a space), a
padded word no longer than ``n`` giving itself once and no longer n-grams: scikit-learn's
rule. :func:`char_ngram_spans` lists the spans in the Python analyzer's order (``char``:
the unigrams, then the bigrams, ...; ``char_wb``: word by word), nothing copied; the
spans are numbered in a :class:`~._token_table.TokenTable` (exact on any bytes), and a
new n-gram becomes a ``str`` once, when the pass first sees it
(:class:`~._analyzer_passes.CharPass`). :func:`hash_char_ngrams` hashes the same n-grams
as it enumerates them (``HashingVectorizer``), without the spans.

The compiled functions are built on first use (or loaded from numba's cache).
"""
import numpy as np
from numba import njit

from nlpfeat.text._counting._compiled_tokens import _padded_buffer
from nlpfeat.text._counting._murmur import murmurhash3_32
from nlpfeat.text._counting._spans import encode_texts

__all__ = ["char_ngram_spans", "hash_char_ngrams", "encoded_chars"]

_SPACE = np.uint8(0x20)

@njit(cache=True, nogil=True)
def _word_bounds(buffer, char_bytes, lo, hi):
    """Code points ``lo .. hi - 1`` split at single spaces: the (first, past-last) code
    point of each non-empty run without a space, as an (n_words, 2) array."""
    bounds = np.empty(((hi - lo) // 2 + 1, 2), np.int64)
    n, start = 0, -1
    for c in range(lo, hi + 1):
        is_space = c == hi or buffer[char_bytes[c]] == _SPACE
        if is_space:
            if start >= 0:
                bounds[n, 0], bounds[n, 1] = start, c
                n += 1
            start = -1
        elif start < 0:
            start = c
    return bounds[:n]


@njit(cache=True, nogil=True)
def _n_ngrams(size, min_n, max_n, words):
    """N-grams of a text (``words=False``) or a padded word (``words=True``) of ``size``
    code points."""
    total = 0
    for n in range(min_n, max_n + 1):
        if words and size <= n:
            return total + 1
        if size < n:
            break
        total += size - n + 1
    return total


@njit(cache=True, nogil=True, inline="always")
def _emit(buffer, a, b, k, starts, ends, hashes, hashing):
    """N-gram ``k``, the bytes ``a .. b - 1``: its span, or with ``hashing`` its hash."""
    if hashing:
        hashes[k] = murmurhash3_32(buffer, np.int64(a), np.int64(b))
    else:
        starts[k], ends[k] = a, b


@njit(cache=True, nogil=True)
def _put(buffer, char_bytes, lo, size, min_n, max_n, words, starts, ends, hashes, hashing,
         k):
    """The n-grams of code points ``lo .. lo + size - 1`` from ``k`` on (see
    :func:`_emit`); returns the next ``k``."""
    for n in range(min_n, max_n + 1):
        if words and size <= n:
            _emit(buffer, char_bytes[lo], char_bytes[lo + size], k, starts, ends, hashes,
                  hashing)
            return k + 1
        for i in range(lo, lo + size - n + 1):
            _emit(buffer, char_bytes[i], char_bytes[i + n], k, starts, ends, hashes, hashing)
            k += 1
    return k


@njit(cache=True, nogil=True)
def _row_offsets(buffer, char_bytes, doc_chars, min_n, max_n, words):
    """Where the n-grams of each document begin (and the total, last)."""
    n_docs = doc_chars.shape[0] - 1
    row_offsets = np.zeros(n_docs + 1, np.int64)
    for d in range(n_docs):
        total = 0
        if words:
            bounds = _word_bounds(buffer, char_bytes, doc_chars[d], doc_chars[d + 1])
            for w in range(bounds.shape[0]):
                total += _n_ngrams(bounds[w, 1] - bounds[w, 0] + 2, min_n, max_n, True)
        else:
            total = _n_ngrams(doc_chars[d + 1] - doc_chars[d], min_n, max_n, False)
        row_offsets[d + 1] = row_offsets[d] + total
    return row_offsets


@njit(cache=True, nogil=True)
def _char_ngrams(buffer, char_bytes, doc_chars, min_n, max_n, words, starts, ends, hashes,
                 hashing):
    """Every n-gram of the documents, in order, into the spans or the hashes."""
    k = 0
    for d in range(doc_chars.shape[0] - 1):
        if words:
            bounds = _word_bounds(buffer, char_bytes, doc_chars[d], doc_chars[d + 1])
            for w in range(bounds.shape[0]):
                k = _put(buffer, char_bytes, bounds[w, 0] - 1, bounds[w, 1] - bounds[w, 0] + 2,
                         min_n, max_n, True, starts, ends, hashes, hashing, k)
        else:
            k = _put(buffer, char_bytes, doc_chars[d], doc_chars[d + 1] - doc_chars[d], min_n,
                     max_n, False, starts, ends, hashes, hashing, k)


@njit(cache=True, nogil=True)
def char_ngram_spans(buffer, char_bytes, doc_chars, min_n, max_n, words):
    """The character n-grams of each document as byte spans of ``buffer``.

    The text of document ``d`` is code points ``doc_chars[d] .. doc_chars[d + 1] - 1``,
    code point ``c`` the bytes ``buffer[char_bytes[c]:char_bytes[c + 1]]``. With
    ``words=False`` (``char``, white space already collapsed) the n-grams are every ``n``
    consecutive code points; with ``words=True`` (``char_wb``, text of the form
    ``" w1 w2 ... wk "``) they are taken inside each word padded with its two spaces, a
    padded word no longer than ``n`` giving itself once and no longer n-grams. Returns
    ``(starts, ends, row_offsets)`` (int64): the n-grams of document ``d`` are
    ``row_offsets[d] .. row_offsets[d + 1] - 1``, in the Python analyzer's order.
    """
    row_offsets = _row_offsets(buffer, char_bytes, doc_chars, min_n, max_n, words)
    starts = np.empty(row_offsets[-1], np.int64)
    ends = np.empty(row_offsets[-1], np.int64)
    _char_ngrams(buffer, char_bytes, doc_chars, min_n, max_n, words, starts, ends,
                 np.empty(0, np.int32), False)
    return starts, ends, row_offsets


@njit(cache=True, nogil=True)
def hash_char_ngrams(buffer, char_bytes, doc_chars, min_n, max_n, words):
    """The :func:`~._murmur.murmurhash3_32` of the n-grams of :func:`char_ngram_spans`
    (``HashingVectorizer``), computed as they are enumerated: ``(hashes, row_offsets)``
    as :func:`~._murmur.hash_word_ngrams` returns them."""
    row_offsets = _row_offsets(buffer, char_bytes, doc_chars, min_n, max_n, words)
    hashes = np.empty(row_offsets[-1], np.int32)
    none = np.empty(0, np.int64)
    _char_ngrams(buffer, char_bytes, doc_chars, min_n, max_n, words, none, none, hashes,
                 True)
    return hashes, row_offsets


def encoded_chars(texts):
    """``(buffer, char_bytes, doc_chars)`` of :func:`~._spans.encode_texts` with ``buffer``
    in a zero-padded array of 64-bit words (as :class:`~._token_table.TokenTable` reads
    spans); None when a text holds a lone surrogate (UTF-8 cannot encode it)."""
    try:
        buffer, char_bytes, doc_chars = encode_texts(texts)
    except ValueError:
        return None
    return _padded_buffer(buffer), char_bytes, doc_chars
