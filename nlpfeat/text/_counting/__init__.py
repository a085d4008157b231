"""The counting engine: vocabulary, term / pair / n-gram counts, token tables and merges.

No estimator and no scikit-learn here: the estimators of the other wings call these.
Every counting class (:class:`~._term_counts.TermCounts`, :class:`~._pair_counts.PairCounts`,
:class:`~._ngram_counts.NgramCounts`) follows the :class:`Counts` protocol, which is all
the Dask glue (``nlpfeat.text._dask``) relies on.
"""
from typing import Protocol, runtime_checkable

__all__ = ["Counts"]


@runtime_checkable
class Counts(Protocol):
    """Statistics of the documents counted so far, which add up exactly.

    Counts are sums (integer counts do not depend on the order they were added in), so a
    corpus may be counted a chunk at a time, in batches (``partial_fit``) or per
    partition of a Dask bag, and the parts merged: the result is the same, bit for bit.

    Attributes
    ----------
    n_documents : int
        Documents counted so far.

    Methods
    -------
    add(batch, start=0)
        Count one batch of whole documents, in the class's own input form (a
        :class:`~._vocabulary.CountChunk` of term ids for ``TermCounts``, lists of tokens
        for the others); ``start`` is the index of the batch's first document, for the
        messages that name a bad document. Returns ``self``.
    merge(other)
        Add the counts of ``other`` (counts of the same kind and settings; its new terms
        are appended). Returns ``self``; ``other`` must not be used afterwards.
    split(n_shards)
        A list of ``n_shards`` counts of disjoint terms whose merge equals these counts,
        the same terms in shard k in every process, so that shard k of many partitions
        can be merged in parallel. Counts that do not split return ``[self]`` followed by
        ``None`` for each other shard (nothing to merge there).
    """

    n_documents: int

    def add(self, batch, start=0): ...

    def merge(self, other): ...

    def split(self, n_shards): ...
