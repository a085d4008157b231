"""Word n-grams from id sequences (numba), for the compiled text pass's ``ngram_range``.

A chunk's tokens, as word ids (one id per distinct lowered token; -1 for a stop word,
dropped BEFORE the n-grams are formed, as the Python analyzer's ``word_ngrams`` is fed
the tokens without stop words), are written once as int32 into a zero-padded buffer;
the n-gram of ``n`` words at position ``i`` of a document is then the span of bytes
``4 i .. 4 (i + n) - 1`` of that buffer: the spans overlap, nothing is copied per n-gram.
The spans are numbered by a :class:`~nlpfeat.text._counting._token_table.TokenTable`
(exact on any bytes: a row matches on the key's bytes and length, so n-grams of
different lengths never meet), in the order the Python analyzer lists the features of a
document (its unigrams, then its bigrams, ...), documents in order; n-grams never cross
a document. The string of an n-gram (its words joined by one space) is made once, when
the n-gram is first seen (:func:`ngram_strings`).

The compiled functions are built on first use (or loaded from numba's cache).
"""
import numpy as np
from numba import njit

__all__ = ["ngram_spans", "first_positions", "ngram_strings", "n_sizes"]


def n_sizes(ngram_range):
    """How many n-gram lengths ``ngram_range`` spans (the features per token, at most)."""
    return ngram_range[1] - ngram_range[0] + 1


@njit(cache=True, nogil=True)
def _spans(words, doc_offsets, lo, hi, kept, starts, ends, ngram_offsets):
    """The n-grams of each document into ``starts`` / ``ends`` (byte spans of ``kept``,
    which receives the kept word ids); ``ngram_offsets[d]``: the first n-gram of
    document ``d``. Returns the number of n-grams."""
    k = 0
    m = 0
    n_docs = len(doc_offsets) - 1
    for d in range(n_docs):
        ngram_offsets[d] = m
        first = k
        for t in range(doc_offsets[d], doc_offsets[d + 1]):
            w = words[t]
            if w >= 0:
                kept[k] = w
                k += 1
        for n in range(lo, hi + 1):
            for i in range(first, k - n + 1):
                starts[m] = 4 * i
                ends[m] = 4 * (i + n)
                m += 1
    ngram_offsets[n_docs] = m
    return m


def ngram_spans(words, doc_offsets, ngram_range):
    """``(buffer, starts, ends, ngram_offsets)``: the n-grams of the documents whose word
    ids are ``words[doc_offsets[d]:doc_offsets[d + 1]]`` (-1: a dropped stop word), as
    spans of ``buffer`` (uint8, its base zero-padded 64-bit words, as
    :meth:`TokenTable.add_spans` reads it); ``buffer.view(np.int32)`` holds the kept ids.

    Examples
    --------
    >>> import numpy as np
    >>> from nlpfeat.text._counting._ngram_ids import ngram_spans
    >>> buffer, starts, ends, offsets = ngram_spans(
    ...     np.array([5, -1, 6, 7, 8]), np.array([0, 4, 5]), (1, 2))
    >>> [buffer.view(np.int32)[s // 4:e // 4].tolist() for s, e in zip(starts, ends)]
    [[5], [6], [7], [5, 6], [6, 7], [8]]
    >>> offsets.tolist()
    [0, 5, 6]
    """
    lo, hi = ngram_range
    size = len(words) * n_sizes(ngram_range)
    padded = np.zeros(len(words) // 2 + 2, np.uint64)
    buffer = padded.view(np.uint8)[:4 * len(words)]
    starts, ends = np.empty(size, np.int64), np.empty(size, np.int64)
    ngram_offsets = np.empty(len(doc_offsets), np.int64)
    m = _spans(np.asarray(words, np.int64), np.asarray(doc_offsets, np.int64), lo, hi,
               padded.view(np.int32), starts, ends, ngram_offsets)
    return buffer, starts[:m], ends[:m], ngram_offsets


@njit(cache=True, nogil=True)
def first_positions(ids, n_before, n_after):
    """Where each id ``n_before .. n_after - 1`` first occurs in ``ids`` (a table numbers
    new keys in order of first appearance, so a new id's first occurrence is where ``ids``
    first passes the ids seen so far)."""
    out = np.empty(n_after - n_before, np.int64)
    nxt = n_before
    for t in range(len(ids)):
        if ids[t] == nxt:
            out[nxt - n_before] = t
            nxt += 1
            if nxt == n_after:
                break
    return out


def ngram_strings(word_strings, kept, starts, sizes):
    """The n-grams whose word ids are ``kept[starts[j]:starts[j] + sizes[j]]``, as str:
    their words (``word_strings``, an object array) joined by one space, as
    :func:`~nlpfeat.text._base._analyzer.word_ngrams` joins them; one str per n-gram,
    made by numpy's elementwise concatenation, a length at a time.

    Examples
    --------
    >>> import numpy as np
    >>> from nlpfeat.text._counting._ngram_ids import ngram_strings
    >>> words = np.array(["the", "fat", "cat"], object)
    >>> ngram_strings(words, np.array([0, 1, 2]), np.array([0, 1, 2]), np.array([2, 2, 1]))
    ['the fat', 'fat cat', 'cat']
    """
    out = np.empty(len(starts), object)
    for n in np.unique(sizes).tolist():
        where = np.flatnonzero(sizes == n)
        firsts = starts[where]
        joined = word_strings[kept[firsts]]
        for j in range(1, n):
            joined = joined + " " + word_strings[kept[firsts + j]]
        out[where] = joined
    return out.tolist()
