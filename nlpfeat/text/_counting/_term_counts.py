"""Counting a corpus in chunks within a memory budget, and mergeable term statistics.

Every counting estimator streams its corpus the same way: documents are analysed and
counted ``chunk_tokens(working_memory)`` features at a time by
:func:`~nlpfeat.text._counting._vocabulary.count_chunks`, each chunk updates a :class:`TermCounts`
(document frequencies and occurrence counts per term, which are sums) and, when the
output is wanted, is appended to a :class:`~nlpfeat.text._counting._vocabulary.CsrBuilder`. Peak
memory is then the budget plus the model (vocabulary, statistics) plus the output, not
the corpus. Because the statistics are sums, :meth:`TermCounts.merge` combines the counts
of batches (``partial_fit``) or of the partitions of a Dask bag, exactly: integer counts
do not depend on the order in which they were added.

Another counting estimator adopts this with a few lines::

    counts = TermCounts()                                  # or TermCounts(fixed_vocabulary)
    for chunk in count_chunks(docs, counts.vocabulary, learn=True, analyze=analyze,
                              chunk_tokens=chunk_tokens(self.working_memory)):
        counts.add(chunk)                                  # and/or use the chunk itself
    terms, order = counts.sorted_terms()

(:func:`count_terms` does exactly this.)
"""
import zlib

import numpy as np

from nlpfeat._chunking import chunk_n_rows
from nlpfeat.text._counting._term_order import term_order
from nlpfeat.text._counting._vocabulary import growing_vocabulary, grown

__all__ = ["BYTES_PER_TOKEN", "chunk_tokens", "TermCounts", "count_terms", "term_shards"]

#: Bytes of temporary memory one buffered feature costs while a chunk is counted: its
#: term id in a Python list (8), the id and count arrays and scipy's duplicate summing.
BYTES_PER_TOKEN = 32


def chunk_tokens(working_memory=None):
    """Features counted per chunk so that one chunk's temporaries fit ``working_memory`` MiB.

    ``working_memory`` resolves and is checked as for every chunked computation of
    nlpfeat (:func:`nlpfeat._chunking.resolve_working_memory`).

    Examples
    --------
    >>> from nlpfeat.text._counting._term_counts import chunk_tokens
    >>> chunk_tokens(1)
    32768
    """
    return chunk_n_rows(BYTES_PER_TOKEN, 1 << 62, working_memory)


class TermCounts:
    """Per-term sums over a corpus: document frequency, occurrences, and optionally
    ``sum tf ln tf`` (for log-entropy weights); mergeable and picklable.

    Parameters
    ----------
    vocabulary : mapping of str to int or None, default=None
        A fixed vocabulary (columns ``0 .. n - 1``); ``None`` learns terms as they come,
        numbered in order of first appearance.
    xlogx : bool, default=False
        Also accumulate ``sum_d tf_td ln tf_td`` of each term.

    Attributes
    ----------
    vocabulary : dict of str to int
    n_documents : int
    df, totals : ndarray of int64 of shape (n_terms,)
    xlogx : ndarray of float64 of shape (n_terms,) or None
    first_seen : ndarray of int64 of shape (n_terms,) or None
        Where each term was first seen in a Dask bag (partition index times ``2**40``
        plus its id in that partition, kept through splits and merges by the minimum), so
        that the fitted estimator can order its ``transform`` lookup by first appearance in
        the whole bag, as after a single-machine fit. None for other counts.

    Examples
    --------
    >>> from nlpfeat.text._counting._term_counts import TermCounts, count_terms
    >>> a = count_terms([["x", "y", "x"]], TermCounts())
    >>> b = count_terms([["y"], ["z"]], TermCounts())
    >>> merged = a.merge(b)
    >>> merged.n_documents, dict(merged.vocabulary), merged.df.tolist(), merged.totals.tolist()
    (3, {'x': 0, 'y': 1, 'z': 2}, [1, 2, 1], [2, 2, 1])
    """

    def __init__(self, vocabulary=None, *, xlogx=False):
        self.learn = vocabulary is None
        self.vocabulary = growing_vocabulary() if self.learn else dict(vocabulary)
        self.n_documents = 0
        n = len(self.vocabulary)
        self._df = np.zeros(max(n, 16), dtype=np.int64)
        self._totals = np.zeros_like(self._df)
        self._xlogx = np.zeros(self._df.size, dtype=np.float64) if xlogx else None
        self.first_seen = None

    @property
    def n_terms(self):
        return len(self.vocabulary)

    @property
    def df(self):
        return self._df[: self.n_terms]

    @property
    def totals(self):
        return self._totals[: self.n_terms]

    @property
    def xlogx(self):
        return None if self._xlogx is None else self._xlogx[: self.n_terms]

    def _reserve(self, n):
        self._df, self._totals = grown(self._df, n), grown(self._totals, n)
        if self._xlogx is not None:
            self._xlogx = grown(self._xlogx, n)

    def add(self, chunk, start=0):
        """Add the counts of one :class:`~nlpfeat.text._counting._vocabulary.CountChunk`
        (in these ids); ``start`` is ignored (the chunk knows its first document)."""
        n = self.n_terms
        self._reserve(n)
        self.first_seen = None          # (set for a bag's partition once it is counted)
        indices = chunk.indices
        if indices.size:
            size = int(indices.max()) + 1
            self._df[:size] += np.bincount(indices, minlength=size)
            self._totals[:size] += np.bincount(indices, weights=chunk.counts,
                                               minlength=size).astype(np.int64)
            if self._xlogx is not None:
                tf = chunk.counts.astype(np.float64)
                self._xlogx[:size] += np.bincount(indices, weights=tf * np.log(tf),
                                                  minlength=size)
        self.n_documents += chunk.n_documents
        return self

    def merge(self, other):
        """Add ``other``'s statistics (its new terms are appended); returns ``self``."""
        n_before = self.n_terms
        if other.n_terms:
            if self.learn:
                vocabulary = self.vocabulary
                ids = np.fromiter(map(vocabulary.__getitem__, other.vocabulary),
                                  dtype=np.intp, count=other.n_terms)
            else:
                ids = np.fromiter(other.vocabulary.values(), dtype=np.intp, count=other.n_terms)
            other_ids = np.fromiter(other.vocabulary.values(), dtype=np.intp,
                                    count=other.n_terms)
            self._reserve(self.n_terms)
            self._df[ids] += other._df[other_ids]
            self._totals[ids] += other._totals[other_ids]
            if self._xlogx is not None:
                self._xlogx[ids] += other._xlogx[other_ids]
        if self.first_seen is not None and other.first_seen is not None:
            first = np.full(self.n_terms, np.iinfo(np.int64).max, dtype=np.int64)
            first[:n_before] = self.first_seen
            if other.n_terms:
                first[ids] = np.minimum(first[ids], other.first_seen[other_ids])
            self.first_seen = first
        else:
            self.first_seen = None
        self.n_documents += other.n_documents
        return self

    def split(self, n_shards):
        """The counts in ``n_shards`` parts of disjoint terms, by a hash of the term that is
        the same in every process (CRC-32 of its UTF-8 bytes, not Python's salted ``hash``),
        so that shard k of every partition holds the same terms and the shards can be merged
        in parallel. ``n_documents`` stays with shard 0. A fixed vocabulary is not split.

        Examples
        --------
        >>> from nlpfeat.text._counting._term_counts import TermCounts, count_terms
        >>> counts = count_terms([["x", "y", "x"], ["z"]], TermCounts())
        >>> parts = counts.split(2)
        >>> sorted(t for p in parts for t in p.vocabulary), sum(p.n_documents for p in parts)
        (['x', 'y', 'z'], 2)
        """
        if not self.learn or n_shards <= 1:
            return [self] + [TermCounts(self.vocabulary if not self.learn else None,
                                        xlogx=self._xlogx is not None)
                             for _ in range(n_shards - 1)]
        terms = self.terms_by_id()
        shard = term_shards(terms, n_shards)
        by_id = np.empty(len(terms), dtype=object)
        by_id[:] = terms
        parts = []
        for k in range(n_shards):
            ids = np.flatnonzero(shard == k)
            part = TermCounts(xlogx=self._xlogx is not None)
            part.vocabulary.update(zip(by_id[ids].tolist(), range(ids.size)))
            part._df, part._totals = self._df[ids], self._totals[ids]
            if self._xlogx is not None:
                part._xlogx = self._xlogx[ids]
            if self.first_seen is not None:
                part.first_seen = self.first_seen[ids]
            parts.append(part)
        parts[0].n_documents = self.n_documents
        return parts

    def sorted_terms(self):
        """``(terms, ids)``: the terms in sorted order and their ids here."""
        by_id, ids = self.sorted_ids()
        return list(map(by_id.__getitem__, ids.tolist())), ids

    def sorted_ids(self):
        """``(terms_by_id, ids)``: :meth:`terms_by_id` and the ids in the sorted order of
        their terms (no list of the sorted terms is made)."""
        by_id = self.terms_by_id()      # sorting ids by term: no dictionary lookups
        return by_id, term_order(by_id)

    def terms_by_id(self):
        """The list of the terms, the term of id i at position i."""
        terms = list(self.vocabulary)
        ids = np.fromiter(self.vocabulary.values(), dtype=np.intp, count=len(terms))
        if not np.array_equal(ids, np.arange(len(terms))):   # not in insertion order
            ordered = np.empty(len(terms), dtype=object)
            ordered[ids] = terms
            terms = ordered.tolist()
        return terms

    def __getstate__(self):
        """A learned vocabulary travels as the list of its terms (ids are positions): half
        the objects of a dict to pickle and send between Dask workers."""
        state = self.__dict__.copy()
        state["vocabulary"] = self.terms_by_id() if self.learn else dict(self.vocabulary)
        n = self.n_terms
        for name in ("_df", "_totals", "_xlogx"):
            if state[name] is not None:
                state[name] = state[name][:n].copy()
        return state

    def __setstate__(self, state):
        self.__dict__.setdefault("first_seen", None)       # pickled before it existed
        self.__dict__.update(state)
        if self.learn:
            terms = self.vocabulary
            self.vocabulary = growing_vocabulary(
                terms if isinstance(terms, dict) else zip(terms, range(len(terms))))


def term_shards(terms, n_shards):
    """The shard (``0 .. n_shards - 1``) of each term: CRC-32 of its UTF-8 bytes modulo
    ``n_shards``, the same in every process (``hash`` of a str is salted per process).

    Examples
    --------
    >>> from nlpfeat.text._counting._term_counts import term_shards
    >>> term_shards(["ab", "cd", "x", "zz", ("a", 1)], 3).tolist()
    [2, 2, 0, 0, 1]
    """
    try:        # one C-level pass for str terms (the usual case)
        encoded = list(map(str.encode, terms))
    except (TypeError, UnicodeEncodeError):     # other terms, or lone surrogates
        encoded = [(t if isinstance(t, str) else repr(t)).encode("utf-8", "surrogatepass")
                   for t in terms]
    return np.fromiter(map(zlib.crc32, encoded), dtype=np.int64, count=len(terms)) % n_shards


def count_terms(docs, counts, *, analyze=None, working_memory=None, builder=None, start=0,
                text_pass=None, n_jobs=None):
    """Stream ``docs`` into ``counts`` (a :class:`TermCounts`) a chunk at a time.

    Parameters
    ----------
    docs : iterable
        Documents (analysed by ``analyze``) or feature lists (``analyze=None``).
    counts : TermCounts
        Updated in place and returned.
    analyze : callable or None, default=None
    working_memory : float or None, default=None
        MiB of temporary memory per chunk (see :func:`chunk_tokens`).
    builder : CsrBuilder or None, default=None
        If given, every chunk is also appended to it (the document-term matrix, in the
        term ids of ``counts``).
    start : int, default=0
        Index of the first document (for error messages).
    text_pass : TextPass or None, default=None
        Count decoded documents by the compiled pass with these options
        (:func:`~nlpfeat.text._counting._text_pass.text_pass_chunks`; ``analyze`` is then
        the Python analyzer with the same options, for a chunk the pass refuses).
    n_jobs : int or None, default=None
        Threads of the compiled pass; the counts do not depend on it.

    Returns
    -------
    counts : TermCounts
    """
    from nlpfeat.text._counting._text_pass import term_chunks   # numba: on use

    for chunk in term_chunks(docs, counts.vocabulary, learn=counts.learn, analyze=analyze,
                             chunk_tokens=chunk_tokens(working_memory),
                             working_memory=working_memory, options=text_pass, n_jobs=n_jobs,
                             start=start):
        counts.add(chunk)
        if builder is not None:
            builder.append(chunk)
    return counts
