"""Collocations: score n-grams by an association measure, join the phrases.

Counting and scoring run on token-id arrays: bigram counts are the unique keys
``id[i] << 32 | id[i + k]`` inside documents (k < ``window_size``), trigram and quadgram
counts the distinct rows of id tuples, all kept in mergeable tables that are fed a chunk
of documents at a time (:mod:`nlpfeat.text._counting._ngram_counts`); the candidates are
filtered, scored and ranked by :mod:`._collocation_scoring` and joined by
:mod:`._phrases`. This module is the estimator.
"""
import copy
import dataclasses
import gc
from contextlib import contextmanager
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

from nlpfeat._chunking import check_working_memory, chunk_n_rows
from nlpfeat._docstrings import fill_doc
from nlpfeat._params import estimator_params
from nlpfeat._progress import progress_bar
from nlpfeat._validation import Integral, Interval, Real, StrOptions, check_is_fitted, fit_context
from nlpfeat.text._association._collocation_scoring import (
    Scoring,
    bigram_scores,
    ranked,
    score_level,
    score_ngrams,
)
from nlpfeat.text._association._measures import (
    BIGRAM_ONLY,
    MEASURE_NAMES,
    canonical_measure,
)
from nlpfeat.text._association._phrases import join_pairs, rewrite
from nlpfeat.text._base._analyzer import (
    TOKEN_OPTIONS,
    TOKEN_PARAMETER_CONSTRAINTS,
    check_not_dataframe,
)
from nlpfeat.text._base._documents import check_corpus_nonempty, iter_documents
from nlpfeat.text._base._options import TokenOptions
from nlpfeat.text._counting._chunks import document_chunks
from nlpfeat.text._counting._ngram_counts import NgramCounts
from nlpfeat.text._counting._vocabulary import document_error
from nlpfeat.text._dask import (
    bag_term_counts,
    is_dask_bag,
    strip_line_break,
    transform_partitions,
)

__all__ = ["MEASURES", "Collocations", "bigram_scores"]

#: Every name the ``measure`` parameter accepts (canonical names, then aliases).
MEASURES = MEASURE_NAMES
_MAX_TUPLE_KEY = 2**63  # id tuples with fewer combinations are keyed directly
_HELD_TOKEN_BYTES = 64  # a short str token (about 56 bytes) and its list slot


def _ngram_table(units, order, min_count, lower=False, check_types=False):
    """Contiguous trigrams or quadgrams inside documents seen at least ``min_count``
    times, with nltk's marginals.

    As nltk's ``TrigramCollocationFinder`` / ``QuadgramCollocationFinder.from_documents``:
    each sub-tuple count (pairs, pairs with gaps, trigrams with a gap) counts every
    position inside a document where it fits.
    """
    counts = NgramCounts(order, 2, lower=lower, max_key=_MAX_TUPLE_KEY)
    return counts.add(units).table(min_count)


@contextmanager
def _gc_paused():
    """Pause the cyclic garbage collector while ``scores_`` is built.

    Hundreds of thousands of new (tuple, float) pairs, which form no reference cycles,
    would otherwise trigger collections that traverse every live token of the corpus.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _count_partition(estimator, docs):
    """The :class:`NgramCounts` of one partition of a dask bag (on a worker)."""
    return estimator._count(map(strip_line_break, docs))


@fill_doc
@estimator_params
class Collocations(TokenOptions, TransformerMixin, BaseEstimator):
    """Learn multi-word phrases by an association measure; join them into single tokens.

    ``fit`` counts n-grams inside each document (never across two documents), streaming
    the corpus in chunks within ``working_memory``, scores
    every n-gram seen at least ``min_count`` times, and keeps those scoring above
    ``threshold`` as phrases; with bigrams, ``max_len > 2`` repeats the pass on the
    rewritten text, so phrases grow by merging (``new_york`` + ``city``). ``transform``
    returns token lists with phrases joined by ``delimiter``, ready for
    ``BagOfWords(input="tokens")``. The counts and scores are those of nltk's
    ``BigramCollocationFinder`` / ``TrigramCollocationFinder`` /
    ``QuadgramCollocationFinder`` with ``apply_freq_filter(min_count)``, the word and
    n-gram filters, and ``score_ngrams``.

    Documents are strings by default, tokenized with the text options; ``input="tokens"``
    takes lists of tokens (e.g. the output of another ``Collocations`` or of a user's
    tokenizer).

    Parameters
    ----------
    measure : str, default="npmi"
        One of nltk's association measures: ``pmi`` (log2 P(a,b) / P(a)P(b)),
        ``likelihood_ratio`` (alias ``llr``, G^2), ``chi_sq`` (Pearson's chi-square),
        ``student_t`` (alias ``t``), ``raw_freq`` (n_ab / N), ``mi_like``
        (n_ab^3 / n_a n_b), ``poisson_stirling``, ``jaccard``, and for bigrams only
        ``dice`` (2 n_ab / (n_a + n_b)), ``phi_sq``, ``fisher`` (nltk's one-sided Fisher
        exact p-value); gensim's ``npmi`` (pmi / -ln P(a,b) in [-1, 1], bigrams only);
        or ``count`` (n_ab). Higher is stronger (as nltk ranks them, ``fisher`` too).
    %(token_options)s
    min_count : int, default=5
        N-grams seen fewer times are never candidates.
    threshold : float or None, default=None
        A candidate becomes a phrase when its score is above it; None accepts every
        candidate (so ``scores_`` alone decides nothing). E.g. npmi 0.5, llr 10.83.
    max_len : int, default=2
        Longest phrase, in original tokens, grown by repeated bigram passes
        (``order=2`` only).
    delimiter : str, default="_"
    order : {2, 3, 4}, default=2
        Bigrams, trigrams or quadgrams of adjacent tokens.
    window_size : int, default=2
        Bigrams only: count the pairs (a, b) with b 1 .. ``window_size - 1`` tokens after
        a (nltk's ``from_words(words, window_size)``, Church and Hanks' association
        ratio); the measures see the pair count over ``window_size - 1``. ``transform``
        joins adjacent occurrences of the accepted pairs.
    word_filter : {"english", "chinese"}, collection of str, callable or None, default=None
        Drop the candidates with a word in this stop-word list, or a word for which the
        callable returns True (nltk's ``apply_word_filter``). Unlike ``stop_words``, which
        removes tokens before counting, the counts keep every token.
    ngram_filter : callable or None, default=None
        Drop the candidates for which ``ngram_filter(*words)`` is True (nltk's
        ``apply_ngram_filter``); called once per candidate.
    working_memory : float or None, default=None
        MiB of temporary memory per chunk of documents counted (see "Streaming" in the
        Notes); None: scikit-learn's ``working_memory`` if set, else 4 MiB.
    %(verbose)s

    Attributes
    ----------
    scores_ : list of (tuple of str, float)
        Every candidate with its score, best first, ties broken by the words in Python's
        string order: the key ``(-score, words)`` of nltk's ``score_ngrams``, which
        depends on no platform. The scores are nltk's, bit for bit where nltk's formula
        allows (see Notes).
    levels_ : list of tuple
        Per merging pass, what ``transform`` joins: ``(units, keys)`` for bigrams, the
        unit strings (ndarray of str) and the sorted keys ``first * n_units + second``
        (int64) of the accepted pairs; ``(units, grams)`` for ``order > 2``, with the
        (k, order) int64 array of the accepted n-grams' unit ids. The phrases are the
        entries of ``scores_`` above ``threshold`` (all of them when it is None).

    See Also
    --------
    nltk.collocations.BigramCollocationFinder, gensim.models.phrases.Phrases

    Notes
    -----
    With ``n_ab`` the pair count, ``n_a``, ``n_b`` the word counts and ``N`` the number of
    tokens, ``pmi = log2(n_ab N / (n_a n_b))`` and ``npmi = ln(p_ab / (p_a p_b)) / -ln p_ab``
    (Bouma, 2009). ``likelihood_ratio`` is ``2 sum_cells O ln(O / E)`` over nltk's
    contingency table of (a, not a) x (b, not b) with ``0 ln 0 = 0``, so it stays finite
    on tables with empty cells.

    The scores are computed in nltk's order of operations, with the logarithms and
    powers of the C library, so they equal nltk's bit for bit, except where nltk
    multiplies Python integers beyond 2**53 (products of three or four word counts,
    ``N ** 3``), where they agree to about 1e-15 relative.

    nltk's table counts every token of a word but an n-gram only where one fits, so when
    one word makes up most of the tokens (``[["ha"] * 4]``) a cell of the table is
    negative and the table measures (``likelihood_ratio``, ``chi_sq``, ``phi_sq``,
    ``fisher``) have no value: nltk raises a math domain error, divides by zero, or
    returns a meaningless number; here ``fit`` raises a ValueError naming the n-gram.
    The other measures use the counts alone and are finite on every corpus.

    **Streaming.** ``fit`` reads ``X`` once, whole documents a chunk at a time (about
    ``working_memory`` MiB of token ids, pair keys and sorts per chunk), and adds each
    chunk's word and n-gram counts to count tables that hold every n-gram seen, however
    rare (``min_count`` applies to the totals). Peak memory is the budget plus these
    tables, whatever the size of the corpus: a list, a generator or a
    :class:`nlpfeat.datasets.Corpus` on disk. Documents are never split or merged, so no
    n-gram crosses a document boundary (a single document larger than the budget is
    counted as one chunk). The counts are sums: ``partial_fit`` adds a batch of documents
    and rescores, and ``fit`` on a corpus equals ``partial_fit`` over any split of it,
    bit for bit. A ``dask.bag.Bag`` of documents (``pip install "nlpfeat[dask]"``) is
    counted per partition on the workers and the counts merged by a tree reduction; the
    fitted estimator equals the single-machine fit, bit for bit; ``transform`` (and
    ``fit_transform``) of a bag returns a lazy bag of the rewritten documents, partition by
    partition, in the bag's order. ``max_len > 2`` counts
    the text rewritten by the phrases of the whole corpus, pass after pass, which does
    not add up: it is fitted in memory, and ``partial_fit`` and dask bags refuse it.
    ``fit_transform`` holds its documents, as its output does. The count tables are kept
    with the fitted estimator (``partial_fit`` adds to them) and pickled with it.

    References
    ----------
    .. [1] C. Manning and H. Schuetze, "Foundations of Statistical Natural Language
       Processing", ch. 5, MIT Press, 1999.
    .. [2] K. Church and P. Hanks, "Word association norms, mutual information, and
       lexicography", Computational Linguistics 16(1), 1990.

    Examples
    --------
    >>> from nlpfeat.text import Collocations
    >>> docs = [["new", "york", "is", "big"], ["i", "love", "new", "york"],
    ...         ["new", "york", "city"]]
    >>> coll = Collocations(measure="npmi", min_count=2, input="tokens").fit(docs)
    >>> [(phrase, round(score, 3)) for phrase, score in coll.scores_]
    [(('new', 'york'), 1.0)]
    >>> coll.transform([["new", "york", "city"]])
    [['new_york', 'city']]
    >>> tri = Collocations("likelihood_ratio", order=3, min_count=1, threshold=15,
    ...                    input="tokens").fit(docs)
    >>> [(phrase, round(score, 3)) for phrase, score in tri.scores_[:2]]
    [(('love', 'new', 'york'), 15.774), (('new', 'york', 'city'), 15.774)]
    >>> tri.transform([["new", "york", "city", "hall"]])
    [['new_york_city', 'hall']]

    Batches add up to the whole corpus:

    >>> batches = Collocations(measure="npmi", min_count=2, input="tokens")
    >>> batches.partial_fit(docs[:2]).partial_fit(docs[2:]).scores_ == coll.scores_
    True
    """

    _parameter_constraints = {
        **TOKEN_PARAMETER_CONSTRAINTS,
        "measure": [StrOptions(set(MEASURES))],
        "min_count": [Interval(Integral, 1, None, closed="left")],
        "threshold": [Real, None],
        "max_len": [Interval(Integral, 2, None, closed="left")],
        "delimiter": [str],
        "order": [Interval(Integral, 2, 4, closed="both")],
        "window_size": [Interval(Integral, 2, None, closed="left")],
        "word_filter": [StrOptions({"english", "chinese"}), list, tuple, set, frozenset,
                        callable, None],
        "ngram_filter": [callable, None],
        "working_memory": [Interval(Real, 0, None, closed="neither"), None],
        "verbose": ["verbose"],
    }

    measure: Any = dataclasses.field(default="npmi", kw_only=False)
    min_count: Any = 5
    threshold: Any = None
    max_len: Any = 2
    delimiter: Any = "_"
    order: Any = 2
    window_size: Any = 2
    word_filter: Any = None
    ngram_filter: Any = None
    working_memory: Any = None
    verbose: Any = 0

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Learn the phrases of the documents ``X``.

        Parameters
        ----------
        X : iterable of list of str (or of str, with ``input != "tokens"``), or dask bag
            Read once, a chunk of documents at a time (see "Streaming" in the Notes): a
            generator or a :class:`nlpfeat.datasets.Corpus` works.
        y : None
            Ignored.

        Returns
        -------
        self : Collocations
        """
        self._check_combination()
        if not self._one_pass():
            if is_dask_bag(X):
                raise ValueError(self._not_additive("a dask bag"))
            return self._fit_passes(self._token_lists(X, check_tokens=False, copy=False))
        counts = self._count(X)
        check_corpus_nonempty(counts.n_documents)
        return self._fit_counts(counts)

    @fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y=None):
        """Add the n-grams of the documents ``X`` to the counts, then score all of them.

        The counts are sums, so ``fit(X)`` equals ``partial_fit`` over any split of ``X``
        into batches of whole documents (the same counts, bit for bit, and so the same
        scores and phrases). A batch that fails (the error names the document) changes
        nothing.

        %(partial_fit_sections)s
        """
        self._check_combination()
        if not self._one_pass():
            raise ValueError(self._not_additive("partial_fit"))
        if hasattr(self, "_counts"):
            changed = [name for name, value in self._counted_options.items()
                       if getattr(self, name) != value]
            if changed:
                raise ValueError(f"The text options {changed} changed since the counts "
                                 f"began (fit or the first partial_fit): the batches would "
                                 f"not add up. Call fit to start again.")
        batch = self._count(X)
        if hasattr(self, "_counts"):
            counts = self._counts.merge(batch)
        else:
            check_corpus_nonempty(batch.n_documents)
            counts = batch
        return self._fit_counts(counts)

    @fit_context(prefer_skip_nested_validation=True)
    def fit_transform(self, X, y=None):
        """Learn the phrases of ``X`` and return ``X`` with them joined.

        ``X`` is read once (a generator works): the same token lists are counted and
        rewritten, so they are held in memory, as the output is. A dask bag is fitted
        (counted on the workers), then transformed: a lazy bag of the rewritten
        documents, which reads the bag's partitions again when it is computed.

        Parameters
        ----------
        X : iterable of list of str (or of str, with ``input != "tokens"``), or dask bag
        y : None
            Ignored.

        Returns
        -------
        tokens : list of list of str, or dask bag of list of str
        """
        self._check_combination()
        if is_dask_bag(X):                 # fit (computed), then a lazy bag of rewrites
            return self.fit(X).transform(X)
        units = self._named_token_lists(X)            # new lists, read once
        if self._one_pass():
            # counts of the kind partial_fit counts, so that a later batch merges (the
            # units are lowercased already: lowercasing them again changes nothing)
            counts = self._count_lists(units, self._new_counts())
            check_corpus_nonempty(counts.n_documents)
            self._fit_counts(counts)
        else:
            self._fit_passes(units)
        return self._rewrite(units)

    def transform(self, X):
        """Rewrite documents as token lists with the learned phrases joined.

        Parameters
        ----------
        X : iterable of list of str (or of str, with ``input != "tokens"``), or dask bag
            Read once: a generator works. An empty corpus gives an empty list.

        Returns
        -------
        tokens : list of list of str, or dask bag of list of str
            One new list per document of ``X``, in order. For a bag, a bag with the same
            partitions, rewritten on the workers when it is computed (lazily), to which
            the fitted estimator is sent once per worker, without its count tables and
            ``scores_``; a failing document is named with its partition.
        """
        check_is_fitted(self, "scores_")
        if is_dask_bag(X):
            return transform_partitions(self, X)
        return self._rewrite(self._named_token_lists(X))

    def __nlpfeat_worker_copy__(self):
        """A copy for a Dask worker's ``transform``, without what it does not read: the
        count tables and ``scores_`` (every candidate), which can be far larger than the
        phrases in ``levels_``."""
        light = copy.copy(self)
        light.__dict__.pop("_counts", None)
        light.scores_ = []
        return light

    def _named_token_lists(self, X):
        """New token lists of ``X`` (as ``_token_lists``); a tokenizer's error names the
        document (as the counting does)."""
        tokens = self._token_fn()
        if tokens is list:
            return self._token_lists(X)
        check_not_dataframe(X)
        units = []
        for i, doc in enumerate(iter_documents(X, self.input, self.encoding,
                                               self.decode_error, caller="Collocations",
                                               verbose=self.verbose)):
            try:
                units.append(tokens(doc))
            except Exception as exc:
                raise document_error(exc, i) from exc
        return units

    def _rewrite(self, units):
        return rewrite(units, self.levels_, self.delimiter)

    def _scoring(self):
        return Scoring(self.measure, self.min_count, self.threshold, self.max_len,
                       self.word_filter, self.ngram_filter)

    def _one_pass(self):
        """Whether one counting pass decides everything (else ``max_len > 2`` bigram
        passes rewrite the text between passes)."""
        return self.order > 2 or self.max_len == 2

    def _not_additive(self, what):
        return (f"{what} needs counts that add up; with max_len={self.max_len} each "
                f"bigram pass counts the text rewritten by the previous passes' phrases, "
                f"which depend on the whole corpus. Use max_len=2 (or order=3 or 4), or "
                f"fit a list or a re-iterable corpus in memory.")

    def _lower_tokens(self):
        """Whether the only change to token lists is lowercasing, done by the counts once
        per distinct token (the documents' own lists are read unchanged)."""
        return (self.lowercase and self.input == "tokens" and not self.stop_words
                and self.stemmer is None)

    def _new_counts(self, lower=None):
        lower = self._lower_tokens() if lower is None else lower
        return NgramCounts(self.order, self.window_size, lower=lower,
                           max_key=_MAX_TUPLE_KEY)

    def _chunk_tokens(self, held=True):
        """Tokens counted per chunk so that the chunk's temporaries fit ``working_memory``:
        the token ids, pair keys (one per offset of the window) and their sort for
        bigrams, the id columns and keys of one sub-tuple at a time for n-grams (measured
        with tracemalloc: 31, 50 and 85 bytes a token for windows 2, 3 and 5, 40 for
        trigrams and quadgrams, besides the count tables), plus the chunk's token lists
        when they are read or made here (``held``; a user's list is not copied)."""
        check_working_memory(self.working_memory)
        return chunk_n_rows(self._token_bytes(held), 1 << 62, self.working_memory)

    def _token_bytes(self, held):
        """Bytes of temporaries per token counted (see :meth:`_chunk_tokens`)."""
        per_token = (32 + 18 * (self.window_size - 2) if self.order == 2
                     else 16 + 8 * self.order)
        return per_token + _HELD_TOKEN_BYTES * held

    def _count(self, X):
        """The :class:`NgramCounts` of ``X``, streamed a chunk at a time (or a dask bag's,
        counted per partition on the workers and merged by a tree reduction)."""
        if is_dask_bag(X):
            return bag_term_counts(self, X, _count_partition)
        counts = self._new_counts()
        check_not_dataframe(X)
        to_tokens = None
        if counts.lower or self._token_fn() is list:       # the documents' own lists
            if type(X) is list and all(type(doc) is list for doc in X):
                return self._count_lists(X, counts)
            docs = iter_documents(X, "tokens", check_tokens=False, caller="Collocations",
                                  verbose=self.verbose)
        else:
            tokens = self._token_fn()
            docs = iter_documents(X, self.input, self.encoding, self.decode_error,
                                  caller="Collocations", verbose=self.verbose)

            def to_tokens(doc, index):
                try:
                    return tokens(doc)
                except Exception as exc:
                    raise document_error(exc, index) from exc

            options = self._text_pass_options()
            if options is not None:
                return self._count_text(docs, counts, options, to_tokens)
        for start, units in document_chunks(docs, self._chunk_tokens(), to_tokens=to_tokens):
            counts.add(units, start)
        return counts

    def _count_text(self, docs, counts, options, to_tokens):
        """Count decoded documents tokenized by the compiled tokenizer (``options``: the
        :class:`~nlpfeat.text._counting._text_pass.TextPass` of the text options), a
        chunk at a time; a chunk it refuses is counted from its Python token lists."""
        from nlpfeat.text._counting._text_ids import text_chunks

        limit = self._chunk_tokens(held=False) * self._token_bytes(held=False)
        for start, chunk in text_chunks(docs, limit, per_token=self._token_bytes(False)):
            if counts.add_text(chunk, options) is None:
                counts.add([to_tokens(doc, i) for i, doc in enumerate(chunk, start)], start)
        return counts

    def _count_lists(self, units, counts):
        """Count a list of token lists into ``counts``, a chunk of documents at a time."""
        limit = self._chunk_tokens(held=False)
        ends = np.cumsum(np.fromiter(map(len, units), np.int64, len(units)))
        start = 0
        with progress_bar(self.verbose, "Collocations: documents", total=len(units),
                          unit="doc") as bar:
            while start < len(units):
                done = ends[start - 1] if start else 0
                stop = max(int(np.searchsorted(ends, done + limit, side="left")) + 1,
                           start + 1)
                counts.add(units[start:stop] if start or stop < len(units) else units, start)
                bar.update(stop - start)
                start = stop
        return counts

    def _check_combination(self):
        """The checks between parameters that ``_parameter_constraints`` cannot express."""
        self._check_text_params()
        measure = canonical_measure(self.measure)
        if self.order > 2 and measure in BIGRAM_ONLY:
            raise ValueError(f"measure={self.measure!r} is defined for bigrams only; with "
                             f"order={self.order} use one of nltk's n-gram measures "
                             f"(pmi, likelihood_ratio, chi_sq, student_t, ...).")
        if self.order > 2 and self.window_size != 2:
            raise ValueError(f"window_size={self.window_size} applies to bigrams; with "
                             f"order={self.order} the n-grams are contiguous: leave "
                             f"window_size=2.")
        if self.order > 2 and self.max_len != 2:
            raise ValueError(f"max_len={self.max_len} grows phrases by bigram passes; with "
                             f"order={self.order} leave max_len=2.")

    def _fit_counts(self, counts):
        """Keep ``counts`` (``partial_fit`` adds to them) and the text options they were
        counted with, and score them; returns self."""
        self._counts = counts
        self._counted_options = {name: getattr(self, name) for name in TOKEN_OPTIONS}
        with _gc_paused():
            self._score_counts(counts)
        return self

    def _fit_passes(self, units):
        """Fit by bigram passes (``max_len > 2``), which keep no counts; returns self."""
        for name in ("_counts", "_counted_options"):
            self.__dict__.pop(name, None)
        with _gc_paused():
            self._score_passes(units)
        return self

    def _score_counts(self, counts):
        """Score the n-grams of ``counts`` (one pass): sets ``scores_`` and ``levels_``."""
        table = counts.table(self.min_count)
        self.levels_, self.scores_ = [], []
        if self.order > 2:
            level = score_ngrams(table, self._scoring())
            if level is not None:
                candidates, scores, grams = level
                self.scores_ = list(zip(candidates, scores.tolist()))
                if len(grams):
                    self.levels_.append((table.terms, grams))
            return
        level = score_level(table, {}, self._scoring())
        if level is not None:
            candidates, scores, terms, _, _, passed, keys = level
            if passed.size:
                self.levels_.append((terms, keys))
            self.scores_ = ranked([(candidates, scores)])

    def _score_passes(self, units):
        """``max_len > 2``: bigram passes, each over the text rewritten by the previous."""
        check_corpus_nonempty(len(units))
        spans = {}                       # joined unit -> tuple of original tokens (pass >= 2)
        tables, self.levels_ = [], []
        for step in range(self.max_len - 1):       # one merging pass per extra token
            counts = self._count_lists(units, self._new_counts(lower=False))
            level = score_level(counts.table(self.min_count), spans, self._scoring())
            if level is None:
                break
            candidates, scores, terms, first, second, passed, keys = level
            tables.append((candidates, scores))
            if not passed.size:
                break
            self.levels_.append((terms, keys))
            if step + 2 < self.max_len:            # another pass follows: rewrite the text
                for i in passed.tolist():
                    a, b = terms[first[i]], terms[second[i]]
                    spans[a + self.delimiter + b] = candidates[i]
                units = join_pairs(units, self.levels_[-1], self.delimiter)
        self.scores_ = ranked(tables)

