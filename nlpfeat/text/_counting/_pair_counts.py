"""Co-occurrence (pair) counts of a corpus read so far, streamed in chunks within a budget.

:class:`PairCounts` holds the statistics of a corpus read so far: the vocabulary (term ->
id in order of first appearance), each term's frequency (and document frequency), and the
pair table, sorted unique int64 keys ``word << 32 | context`` with their summed weights
(the numeric core is :mod:`._pair_tables`). Documents are tokenised and counted a chunk
at a time (:meth:`PairCounts.update`, chunks sized by ``working_memory``); each chunk's
table is pushed on a stack of sorted tables of doubling sizes, merged pairwise in linear
time as a binary counter carries, so memory holds one chunk plus about twice the final
table, never the corpus. Counting is additive: :meth:`PairCounts.merge` adds the
statistics of another batch or of a Dask partition exactly (integer sums), whatever the
order, and the terms kept by ``min_count`` are chosen from the summed frequencies at the
end (:meth:`PairCounts.matrix`).

Symmetric counts without ``prune_at`` are counted in two passes instead
(:func:`._pair_merge.count_upper_pairs`): the terms first, then only the pairs of the
kept terms, spilled to disk and merged once, in linear time; :class:`PairCounts` serves
the one-pass cases (``partial_fit``, Dask partitions, ``prune_at``, directed counts) and
counts only the terms for the two-pass one.
"""
from itertools import repeat

import numpy as np

from nlpfeat._chunking import PAIR_COUNTING_WORKING_MEMORY, chunk_n_rows
from nlpfeat.text._base._documents import token_list
from nlpfeat.text._counting._chunks import document_chunks
from nlpfeat.text._counting._pair_tables import (
    document_pairs,
    join_keys,
    merge_tables,
    pairs_to_matrix,
    reduce_pairs,
    select_terms,
    split_keys,
    token_ids,
)
from nlpfeat.text._counting._text_ids import TextChunk, TextIds
from nlpfeat.text._counting._vocabulary import growing_vocabulary, grown

__all__ = ["PairCounts", "counting_limit", "doc_chunks"]


def _as_tokens(doc, tokenize, index, check_tokens):
    """One document -> list of tokens (strings go through ``tokenize``)."""
    if isinstance(doc, str):
        return tokenize(doc)
    if isinstance(doc, bytes) or not hasattr(doc, "__iter__"):
        raise TypeError(
            f"Document {index} is a {type(doc).__name__}; expected a str or a list of "
            f"str tokens. Pass a list of documents, e.g. [['new', 'york'], ...]."
        )
    return token_list(index, doc, check_tokens)     # a dict or a set is rejected there


def counting_limit(working_memory=None):
    """Bytes of counting work per chunk: ``working_memory`` MiB, resolved by the one rule
    with :data:`~nlpfeat._chunking.PAIR_COUNTING_WORKING_MEMORY` as its default."""
    return chunk_n_rows(1, 2**62, working_memory, default=PAIR_COUNTING_WORKING_MEMORY)


def doc_chunks(docs, window, working_memory=None, *, tokenize=None, check_tokens=True,
               text=False, per_token=16):
    """Yield lists of token lists whose counting takes about ``working_memory`` MiB.

    A document of ``L`` tokens costs ``8 L (2 min(window, L) + 4)`` bytes (ids, padding,
    pair keys and sort space); ``working_memory`` resolves as :func:`counting_limit` says.
    With ``text``, the string documents come as
    :class:`~nlpfeat.text._counting._text_ids.TextChunk` s instead, untokenized, for
    the compiled numbering of :func:`~._pair_merge.count_upper_pairs` (which counts
    their terms only: ids and lengths, about ``per_token=16`` bytes a token; the one-pass
    counts of :meth:`PairCounts.update` count their pairs too).
    """
    def cost(tokens):
        return 8 * len(tokens) * (2 * min(window, len(tokens)) + 4)

    def as_tokens(doc, index):
        return _as_tokens(doc, tokenize, index, check_tokens)

    if text:
        from nlpfeat.text._counting._text_ids import text_chunks

        yield from text_chunks(docs, counting_limit(working_memory), per_token=per_token,
                               to_tokens=as_tokens, cost=cost)
        return
    for _, chunk in document_chunks(docs, counting_limit(working_memory), cost,
                                    to_tokens=as_tokens):
        yield chunk


class PairCounts:
    """Co-occurrence statistics of the documents counted so far; mergeable and picklable.

    Parameters
    ----------
    window : int
    weighting : {"uniform", "harmonic"}, default="uniform"
    vocabulary : mapping of str to int or None, default=None
        Fixed terms (ids ``0 .. n - 1``; other tokens are ignored but keep their
        positions); None learns the terms, numbered in order of first appearance.
    document_frequency : bool, default=False
        Also count the documents each term occurs in.
    prune_at : int or None, default=None
        Largest vocabulary kept while counting (gensim's ``prune_at``; learned vocabulary
        only): after a chunk that leaves more terms, the terms seen fewer than ``m`` times
        so far are dropped with their pairs, ``m = 2`` at the first pruning and one more
        at each next, until at most ``prune_at`` remain. Approximate: a dropped term seen
        again starts from zero. None never prunes (every count exact).

    Attributes
    ----------
    vocabulary : dict of str to int
    n_documents : int
    freq, df : ndarray of int64 of shape (n_terms,)
        Occurrences and document frequency (``df`` only with ``document_frequency``).
    n_prunings : int

    Examples
    --------
    >>> from nlpfeat.text._counting._pair_counts import PairCounts
    >>> a = PairCounts(window=1).update([["new", "york"]])
    >>> b = PairCounts(window=1).update([["york", "city"], ["new", "york"]])
    >>> counts, vocabulary = a.merge(b).matrix()
    >>> vocabulary, counts.toarray().tolist()
    ({'city': 0, 'new': 1, 'york': 2}, [[0, 0, 1], [0, 0, 2], [1, 2, 0]])
    """

    def __init__(self, window, *, weighting="uniform", vocabulary=None,
                 document_frequency=False, prune_at=None):
        self.window = window
        self.weighting = weighting
        self.learn = vocabulary is None
        self.vocabulary = growing_vocabulary() if self.learn else dict(vocabulary)
        self.prune_at = prune_at
        self.n_documents = 0
        self.n_prunings = 0
        self._min_reduce = 2
        self._freq = np.zeros(max(len(self.vocabulary), 16), dtype=np.int64)
        self._df = np.zeros_like(self._freq) if document_frequency else None
        self._stack = []            # sorted (keys, values) tables of decreasing sizes

    @property
    def n_terms(self):
        return len(self.vocabulary)

    @property
    def freq(self):
        return self._freq[: self.n_terms]

    @property
    def df(self):
        return None if self._df is None else self._df[: self.n_terms]

    def _reserve(self, n):
        self._freq = grown(self._freq, n)
        if self._df is not None:
            self._df = grown(self._df, n)

    def _push(self, table):
        """Add a sorted table: merge it with the top of the stack while that is not more
        than twice as large (the stack's sizes keep doubling: log(n) tables)."""
        while self._stack and len(self._stack[-1][0]) <= 2 * len(table[0]):
            table = merge_tables(self._stack.pop(), table)
        self._stack.append(table)

    def table(self):
        """The pair table: (sorted unique keys, summed weights), the stack merged."""
        if not self._stack:
            dtype = np.int64 if self.weighting == "uniform" else np.float64
            return np.empty(0, np.int64), np.empty(0, dtype)
        while len(self._stack) > 1:
            top = self._stack.pop()
            self._stack[-1] = merge_tables(self._stack[-1], top)
        return self._stack[0]

    def add(self, token_lists, start=0):
        """Count one chunk of documents (lists of tokens); returns ``self``.

        ``start`` (the index of the chunk's first document) is part of the
        :class:`~nlpfeat.text._counting.Counts` protocol; the token lists are checked
        already, so nothing here names a document."""
        return self._add_ids(*self.count_terms(token_lists))

    def _add_ids(self, ids, lengths):
        """Count the pairs of one chunk whose terms are counted (ids, lengths)."""
        self._push(document_pairs(ids, lengths, self.window, weighting=self.weighting))
        if self.prune_at is not None and self.learn:
            self._prune()
        return self

    def _text_ids(self, docs, options):
        """``(ids, lengths)`` of the decoded documents ``docs`` in this vocabulary, the
        tokens found and numbered by the compiled pass with ``options`` (a
        :class:`~nlpfeat.text._counting._text_pass.TextPass`), each distinct token of
        the chunk looked up once (new terms numbered in order of first appearance, as
        token by token); None where the Python tokenizer must decide."""
        from nlpfeat.text._counting._token_table import TokenTable  # numba: on use

        table = TokenTable()                 # the chunk's own: pruning renumbers terms
        numbered = TextIds(table, options).ids(docs)
        if numbered is None:
            return None
        ids, lengths = numbered
        strings = table.strings()
        lookup = (map(self.vocabulary.__getitem__, strings) if self.learn else
                  map(self.vocabulary.get, strings, repeat(-1)))
        return np.fromiter(lookup, np.int64, table.n)[ids], lengths

    def count_terms(self, token_lists, numbered=None):
        """Count the terms (and documents) of one chunk, not its pairs: (ids, lengths).

        ``ids`` are the chunk's token ids (-1 for a token outside a fixed vocabulary),
        ``lengths`` its document lengths, as :func:`token_ids` gives them; or given as
        ``numbered``, ``(ids, lengths, n_terms)``, by a caller that numbers the terms
        itself (the vocabulary is then filled in by that caller).
        """
        if numbered is None:
            ids, lengths = token_ids(token_lists, self.vocabulary)
            n = self.n_terms
        else:
            ids, lengths, n = numbered
        self._reserve(n)
        known = ids[ids >= 0] if not self.learn else ids
        self._freq[:n] += np.bincount(known, minlength=n)
        if self._df is not None and known.size:
            from nlpfeat.text._counting._term_loops import (  # numba: on use
                add_document_frequency,
            )

            add_document_frequency(ids, lengths, self._df[:n])
        self.n_documents += len(lengths)
        return ids, lengths

    def update(self, docs, *, working_memory=None, tokenize=None, check_tokens=True,
               text=None):
        """Count ``docs`` (read once) a chunk at a time; returns ``self``.

        String documents are split by ``tokenize``; an error names the document's index.
        ``text``, ``(options, to_tokens)`` as :func:`~._pair_merge.count_upper_pairs`
        takes it: string documents are numbered by the compiled pass with ``options``
        instead (the same ids), a chunk it refuses split by ``to_tokens(doc, index)``.
        Not with ``prune_at``, whose counts depend on the chunks' boundaries.
        """
        if text is not None and self.prune_at is not None:
            raise ValueError("The compiled text pass does not count with prune_at.")
        per_token = 8 * (2 * min(self.window, 1024) + 4)     # as a token list's cost
        for chunk in doc_chunks(docs, self.window, working_memory, tokenize=tokenize,
                                check_tokens=check_tokens, text=text is not None,
                                per_token=per_token):
            if isinstance(chunk, TextChunk):
                numbered = self._text_ids(chunk.docs, text[0])
                if numbered is not None:
                    self._add_ids(*self.count_terms(None, (*numbered, self.n_terms)))
                    continue
                chunk = [text[1](doc, i) for i, doc in enumerate(chunk.docs, chunk.start)]
            self.add(chunk)
        return self

    def _prune(self):
        while self.n_terms > self.prune_at:
            keep = self.freq >= self._min_reduce
            self._min_reduce += 1
            self.n_prunings += 1
            self._renumber(keep)

    def _renumber(self, keep):
        """Keep the terms of mask ``keep`` (ids stay in the same order: tables stay sorted)."""
        new_id = np.cumsum(keep) - 1
        new_id[~keep] = -1
        terms = np.empty(self.n_terms, dtype=object)
        terms[:] = list(self.vocabulary)            # in id order (first appearance)
        self._freq = self.freq[keep].copy()
        self._df = None if self._df is None else self.df[keep].copy()
        self.vocabulary = growing_vocabulary(zip(terms[keep].tolist(), range(int(keep.sum()))))
        stack = []
        for keys, values in self._stack:
            words, contexts = split_keys(keys)
            words, contexts = new_id[words], new_id[contexts]
            mask = (words >= 0) & (contexts >= 0)
            stack.append((join_keys(words[mask], contexts[mask]), values[mask]))
        self._stack = stack

    def keep_terms(self, ids, terms):
        """Keep only the terms of ``ids`` (increasing), ``terms`` their strings in that
        order, renumbered ``0 ..`` in that order with their frequencies; the counts must
        hold no pairs (:func:`~._pair_merge.count_upper_pairs` counts them apart). The ids
        may be those of a caller that numbers the terms itself (see :meth:`count_terms`),
        the vocabulary then still empty."""
        self._freq = self._freq[ids]
        self._df = None if self._df is None else self._df[ids]
        self.vocabulary = growing_vocabulary(zip(terms, range(len(terms))))

    def merge(self, other):
        """Add the statistics of ``other`` (its new terms are appended); returns ``self``."""
        if other.n_terms:
            if self.learn:
                ids = np.fromiter(map(self.vocabulary.__getitem__, other.vocabulary),
                                  dtype=np.int64, count=other.n_terms)
            else:
                ids = np.arange(other.n_terms)
            self._reserve(self.n_terms)
            self._freq[ids] += other.freq
            if self._df is not None:
                self._df[ids] += other.df
            keys, values = other.table()
            if not np.array_equal(ids, np.arange(len(ids))):
                words, contexts = split_keys(keys)
                keys, values = reduce_pairs(join_keys(ids[words], ids[contexts]), values)
            self._push((keys, values))
        self.n_documents += other.n_documents
        if self.prune_at is not None and self.learn:
            self._prune()
        return self

    def matrix(self, min_count=1, *, symmetric=True, release=False):
        """(CSR counts, vocabulary): learned terms seen at least ``min_count`` times,
        sorted; a fixed vocabulary as given.

        ``release=True`` hands the pair table over to the matrix (it is freed as soon as
        it is converted, before the matrix is assembled): these counts hold no pairs
        afterwards, only the vocabulary and the frequencies.
        """
        table = [self.table()]
        if release:
            self._stack = []
        if not self.learn:
            return pairs_to_matrix(table, self.n_terms, symmetric=symmetric), \
                dict(self.vocabulary)
        kept, vocabulary = select_terms(self.freq, self.vocabulary, min_count)
        new_id = np.full(self.n_terms, -1, dtype=np.int64)
        new_id[kept] = np.arange(len(kept))
        return pairs_to_matrix(table, len(kept), new_id, symmetric=symmetric), vocabulary

    def split(self, n_shards):
        """Pair counts do not split (see :class:`~nlpfeat.text._counting.Counts`): the
        whole counts, then None for each other shard."""
        return [self] + [None] * (n_shards - 1)

    def selected_ids(self, vocabulary):
        """The ids here of the terms of ``vocabulary`` (in its column order)."""
        terms = sorted(vocabulary, key=vocabulary.__getitem__)
        return np.fromiter(map(self.vocabulary.__getitem__, terms), np.int64, len(terms))

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_stack"] = [self.table()] if self._stack else []
        state["vocabulary"] = dict(self.vocabulary)
        state["_freq"] = self.freq.copy()
        state["_df"] = None if self._df is None else self.df.copy()
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        if self.learn:
            self.vocabulary = growing_vocabulary(self.vocabulary)
