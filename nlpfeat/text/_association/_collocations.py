"""Collocations: score n-grams by an association measure, join the phrases.

Counting and scoring run on token-id arrays: bigram counts are the unique keys
``id[i] << 32 | id[i + k]`` inside documents (k < ``window_size``), trigram and quadgram
counts the distinct rows of id tuples, all kept in mergeable tables that are fed a chunk
of documents at a time (:mod:`._ngram_counts`), and every measure is one vectorised
formula over the marginals of all candidates at once (:mod:`._assoc_measures`, in nltk's
order of operations).
"""
import copy
import gc
from contextlib import contextmanager
from itertools import chain

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

from nlpfeat._chunking import check_working_memory, chunk_n_rows
from nlpfeat._validation import (
    Integral,
    Interval,
    Real,
    StrOptions,
    check_is_fitted,
    fit_context,
)
from nlpfeat.text._association._cooccurrence import token_ids
from nlpfeat.text._association._measures import (
    BIGRAM_ONLY,
    MEASURE_NAMES,
    TABLE_MEASURES,
    assoc_scores,
    canonical_measure,
    contingency,
)
from nlpfeat.text._base._analyzer import (
    TEXT_PARAMETER_CONSTRAINTS,
    TextMixin,
    check_not_dataframe,
)
from nlpfeat.text._base._documents import check_corpus_nonempty, iter_documents
from nlpfeat.text._base._tokenize import get_stop_words
from nlpfeat.text._counting._ngram_counts import NgramCounts, Table
from nlpfeat.text._counting._vocabulary import document_error, string_order
from nlpfeat.text._dask import bag_term_counts, is_dask_bag, send_once, strip_line_break
from nlpfeat.text._dask._bags import _require_dask, _transform_partition

__all__ = ["Collocations", "bigram_scores", "MEASURES"]

#: Every name the ``measure`` parameter accepts (canonical names, then aliases).
MEASURES = MEASURE_NAMES
_MAX_SORT_KEY = 2**62   # (score rank, word-pair rank) keys below this are sorted at once
_MAX_TUPLE_KEY = 2**63  # id tuples with fewer combinations are keyed directly
_HELD_TOKEN_BYTES = 64  # a short str token (about 56 bytes) and its list slot

_Table = Table


def bigram_scores(measure, n_ii, n_ix, n_xi, n_xx):
    """Association of bigrams from their counts, vectorised over bigrams.

    Parameters
    ----------
    measure : str
        A name of :data:`MEASURES` valid for bigrams.
    n_ii : ndarray
        Bigram counts (divided by ``window_size - 1`` for windows, as nltk's finder does).
    n_ix, n_xi : ndarray of int
        Counts of the first and of the second word.
    n_xx : int
        Number of tokens.

    Returns
    -------
    scores : ndarray of float64
        nltk's ``BigramAssocMeasures`` formulas (``pmi`` in bits, ``llr`` its
        ``likelihood_ratio``, ``t`` its ``student_t``); ``npmi`` is gensim's (natural log).

    Examples
    --------
    >>> from nlpfeat.text._association._collocations import bigram_scores
    >>> bigram_scores("dice", [2.0], [2], [3], 10)
    array([0.8])
    """
    n_ix, n_xi = (np.asarray(a, dtype=np.int64) for a in (n_ix, n_xi))
    return assoc_scores(measure, np.asarray(n_ii, dtype=np.float64), (n_ix, n_xi), int(n_xx))


def _ngram_table(units, order, min_count, lower=False, check_types=False):
    """Contiguous trigrams or quadgrams inside documents seen at least ``min_count``
    times, with nltk's marginals.

    As nltk's ``TrigramCollocationFinder`` / ``QuadgramCollocationFinder.from_documents``:
    each sub-tuple count (pairs, pairs with gaps, trigrams with a gap) counts every
    position inside a document where it fits.
    """
    counts = NgramCounts(order, 2, lower=lower, max_key=_MAX_TUPLE_KEY)
    return counts.add(units).table(min_count)


def _select(table, keep):
    """The rows ``keep`` (bool or index array) of a table's n-grams and marginals."""
    def take(part):
        if isinstance(part, tuple):
            return tuple(take(p) for p in part)
        return part[keep] if isinstance(part, np.ndarray) else part

    return _Table(table.terms, take(table.grams), table.counts[keep], take(table.marginals))


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


def _nltk_order(scores, first, second, terms):
    """The pairs sorted by (-score, first word, second word), as nltk ranks them.

    Words compare in Python's string order; only the candidates' words are ranked.
    Returns ``(scores, first, second)`` in that order.

    The scores are ranked by one sort, then one sort of the keys (score rank, word-pair
    rank), which hold everything the sorted table needs: no permutation is gathered. When
    a key would not fit in int64, or a score is NaN or -0.0, a sort by words and a stable
    sort by score do it instead.
    """
    used = np.zeros(len(terms), dtype=bool)
    used[first] = used[second] = True
    words = np.flatnonzero(used)
    by_rank = words[string_order(terms[words])]     # word id of each rank
    ranks = np.empty(len(terms), dtype=np.int64)
    ranks[by_rank] = np.arange(len(words))
    n_words = len(words)
    pair_rank = ranks[first] * n_words + ranks[second]         # unique per pair
    if not (np.isnan(scores).any() or np.signbit(scores[scores == 0]).any()):
        by_score = np.argsort(-scores)
        ranked = scores[by_score]
        new = np.empty(len(ranked), dtype=bool)
        new[:1] = True
        np.not_equal(ranked[1:], ranked[:-1], out=new[1:])
        distinct = ranked[new]
        if len(distinct) * n_words**2 < _MAX_SORT_KEY:
            keys = (np.cumsum(new) - 1) * n_words**2 + pair_rank[by_score]
            keys.sort()
            score_rank, pair_rank = np.divmod(keys, n_words**2)
            first_rank, second_rank = np.divmod(pair_rank, n_words)
            return distinct[score_rank], by_rank[first_rank], by_rank[second_rank]
    order = np.argsort(pair_rank)
    order = order[np.argsort(-scores[order], kind="stable")]
    return scores[order], first[order], second[order]


def _ngram_order(scores, grams, terms):
    """The permutation that sorts n-grams by (-score, first word, second word, ...)."""
    used = np.zeros(len(terms), dtype=bool)
    for g in grams:
        used[g] = True
    words = np.flatnonzero(used)
    ranks = np.empty(len(terms), dtype=np.int64)
    ranks[words[string_order(terms[words])]] = np.arange(len(words))
    return np.lexsort([ranks[g] for g in reversed(grams)] + [-scores])


def _ranked(tables):
    """Merge the passes' (candidates, scores) tables, each sorted best first, into one."""
    if len(tables) == 1:
        candidates, scores = tables[0]
        return list(zip(candidates, scores.tolist()))
    table = [item for candidates, scores in tables for item in zip(candidates, scores.tolist())]
    return sorted(table, key=lambda item: (-item[1], item[0]))


def _join_pairs(units, level, delimiter):
    """Greedy left-to-right joining of the adjacent pairs of ``level`` (gensim's rule).

    ``level`` is ``(terms, keys)``: the unit strings and the sorted keys
    ``first * len(terms) + second`` of the pairs to join. In a run of consecutive matching
    pairs the 1st, 3rd, ... are joined, as a left-to-right scan that joins a pair and skips
    past it does.
    """
    terms, pair_keys = level
    if not units:
        return []
    vocab = dict(zip(terms.tolist(), range(len(terms))))
    n_terms = len(terms)
    ids, lengths = token_ids(units, vocab)
    keys = ids[:-1] * n_terms + ids[1:]
    pos = np.minimum(np.searchsorted(pair_keys, keys), len(pair_keys) - 1)
    match = (ids[:-1] >= 0) & (ids[1:] >= 0) & (pair_keys[pos] == keys)
    ends = np.cumsum(lengths)
    match[ends[(ends > 0) & (ends < len(ids))] - 1] = False
    idx = np.arange(len(match))
    last_miss = np.maximum.accumulate(np.where(match, -1, idx))
    chosen = np.flatnonzero(match & ((idx - last_miss) % 2 == 1))
    flat = np.empty(len(ids), dtype=object)
    flat[:] = list(chain.from_iterable(units))
    flat[chosen] = [a + delimiter + b for a, b in zip(flat[chosen], flat[chosen + 1])]
    keep = np.ones(len(ids), dtype=bool)
    keep[chosen + 1] = False
    doc_of = np.repeat(np.arange(len(lengths)), lengths)
    new_lengths = lengths - np.bincount(doc_of[chosen], minlength=len(lengths))
    return [part.tolist() for part in np.split(flat[keep], np.cumsum(new_lengths)[:-1])]


def _join_ngrams(units, level, delimiter):
    """Greedy left-to-right joining of the trigrams or quadgrams of ``level``.

    ``level`` is ``(terms, grams)``: the unit strings and the (k, n) id array of the
    n-grams to join. Scanning left to right, an n-gram of ``level`` is joined and the scan
    resumes after it; the scan runs over all matches at once, one step per joined n-gram
    of the longest chain of overlapping matches.
    """
    terms, grams = level
    n = grams.shape[1]
    if not units:
        return []
    vocab = dict(zip(terms.tolist(), range(len(terms))))
    ids, lengths = token_ids(units, vocab)
    flat = np.empty(len(ids), dtype=object)
    flat[:] = list(chain.from_iterable(units))
    # n-gram at position p: inside its document and made of known units
    doc_end = np.repeat(np.cumsum(lengths), lengths)
    starts = np.flatnonzero(np.arange(len(ids)) + n <= doc_end)
    rows = np.stack([ids[starts + k] for k in range(n)], axis=1)
    starts, rows = starts[(rows >= 0).all(axis=1)], rows[(rows >= 0).all(axis=1)]
    _, inverse = np.unique(np.concatenate([grams, rows]), axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    accepted = np.zeros(len(grams) + len(rows), dtype=bool)
    accepted[inverse[:len(grams)]] = True
    match = starts[accepted[inverse[len(grams):]]]             # sorted positions
    nxt = np.searchsorted(match, match + n)     # the next match a join at match[i] allows
    chosen = np.zeros(len(match), dtype=bool)
    frontier = np.flatnonzero(np.diff(match, prepend=-n) >= n)   # nothing blocks these
    while frontier.size:
        chosen[frontier] = True
        frontier = nxt[frontier]
        frontier = frontier[frontier < len(match)]
        frontier = frontier[~chosen[frontier]]
    at = match[chosen]
    flat[at] = [delimiter.join(parts) for parts in zip(*(flat[at + k] for k in range(n)))]
    keep = np.ones(len(ids), dtype=bool)
    for k in range(1, n):
        keep[at + k] = False
    doc_of = np.repeat(np.arange(len(lengths)), lengths)
    new_lengths = lengths - (n - 1) * np.bincount(doc_of[at], minlength=len(lengths))
    return [part.tolist() for part in np.split(flat[keep], np.cumsum(new_lengths)[:-1])]


def _count_partition(estimator, docs):
    """The :class:`NgramCounts` of one partition of a dask bag (on a worker)."""
    return estimator._count(map(strip_line_break, docs))


def _rewrite_bag(estimator, bag):
    """A bag of the rewritten documents of ``bag``, one partition per partition, in order.

    Lazy: each partition is rewritten on a worker when the bag is computed (a failing one
    names its partition and document). The fitted estimator is sent to each worker once,
    without what ``transform`` does not read: the count tables and ``scores_`` (every
    candidate), which can be far larger than the phrases in ``levels_``.
    """
    dask = _require_dask()
    import dask.bag as db

    light = copy.copy(estimator)
    light.__dict__.pop("_counts", None)
    light.scores_ = []
    fitted = send_once(light, dask)
    parts = [dask.delayed(_transform_partition, pure=True)(fitted, i, part)
             for i, part in enumerate(bag.to_delayed())]
    return db.from_delayed(parts)


def _word_mask(word_filter, terms):
    """True for the terms that ``word_filter`` removes (nltk's ``apply_word_filter``)."""
    if word_filter is None:
        return None
    if callable(word_filter):
        return np.fromiter((bool(word_filter(t)) for t in terms.tolist()), bool, len(terms))
    stop = get_stop_words(word_filter)
    return np.fromiter((t in stop for t in terms.tolist()), bool, len(terms))


def _check_table(measure, table, candidates_of):
    """Raise if a candidate's contingency table has a negative cell (see Notes of
    ``Collocations``): the table measures are undefined there."""
    cells = contingency(*table.marginals)
    negative = np.zeros(len(table.counts), dtype=bool)
    for cell in cells:
        negative |= cell < 0
    if negative.any():
        i = int(np.flatnonzero(negative)[0])
        raise ValueError(
            f"measure={measure!r} is undefined for {candidates_of(i)!r}: its contingency "
            f"table has a negative cell, because one word makes up most of the tokens "
            f"(nltk's marginals count every token of a word, the n-gram counts only the "
            f"positions where an n-gram fits). Use a measure of counts alone (pmi, "
            f"student_t, dice, ...) or a corpus where no word dominates.")


class Collocations(TextMixin, TransformerMixin, BaseEstimator):
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
    input : {"content", "filename", "file", "tokens"}, default="content"
        As every nlpfeat text estimator: documents are strings by default, tokenized with
        the text options below; ``"tokens"`` takes lists of tokens (e.g. the output of
        another ``Collocations`` or of a user's tokenizer).
    encoding, decode_error, lowercase, tokenizer, token_pattern, stemmer, stop_words
        The shared text options (see :class:`nlpfeat.text.BagOfWords`).
    working_memory : float or None, default=None
        MiB of temporary memory per chunk of documents counted (see "Streaming" in the
        Notes); None: scikit-learn's ``working_memory`` if set, else 4 MiB.

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
        **{k: TEXT_PARAMETER_CONSTRAINTS[k] for k in (
            "input", "encoding", "decode_error", "lowercase", "tokenizer", "token_pattern",
            "stemmer", "stop_words")},
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
    }

    def __init__(self, measure="npmi", *, min_count=5, threshold=None, max_len=2,
                 delimiter="_", order=2, window_size=2, word_filter=None, ngram_filter=None,
                 input="content", encoding="utf-8", decode_error="strict", lowercase=True,
                 tokenizer="regexp", token_pattern=None, stemmer=None, stop_words=None,
                 working_memory=None):
        self.measure = measure
        self.min_count = min_count
        self.threshold = threshold
        self.max_len = max_len
        self.delimiter = delimiter
        self.order = order
        self.window_size = window_size
        self.word_filter = word_filter
        self.ngram_filter = ngram_filter
        self.input = input
        self.encoding = encoding
        self.decode_error = decode_error
        self.lowercase = lowercase
        self.tokenizer = tokenizer
        self.token_pattern = token_pattern
        self.stemmer = stemmer
        self.stop_words = stop_words
        self.working_memory = working_memory

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
            units = self._token_lists(X, check_tokens=False, copy=False)
            self.__dict__.pop("_counts", None)
            with _gc_paused():
                self._fit_passes(units)
            return self
        counts = self._count(X)
        check_corpus_nonempty(counts.n_documents)
        self._counts = counts
        with _gc_paused():
            self._fit_counts(counts)
        return self

    @fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y=None):
        """Add the n-grams of the documents ``X`` to the counts, then score all of them.

        The counts are sums, so ``fit(X)`` equals ``partial_fit`` over any split of ``X``
        into batches of whole documents (the same counts, bit for bit, and so the same
        scores and phrases). A batch that fails (the error names the document) changes
        nothing.

        Parameters
        ----------
        X : iterable of list of str (or of str, with ``input != "tokens"``), or dask bag
        y : None
            Ignored.

        Returns
        -------
        self : Collocations
        """
        self._check_combination()
        if not self._one_pass():
            raise ValueError(self._not_additive("partial_fit"))
        batch = self._count(X)
        if hasattr(self, "_counts"):
            if self._counts.lower != batch.lower:
                raise ValueError("The text options changed since the first partial_fit "
                                 "(lowercase, input, stop_words or stemmer): call fit to "
                                 "start again.")
            counts = self._counts.merge(batch)
        else:
            check_corpus_nonempty(batch.n_documents)
            counts = batch
        self._counts = counts
        with _gc_paused():
            self._fit_counts(counts)
        return self

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
            counts = self._count_lists(units, self._new_counts(lower=False))
            check_corpus_nonempty(counts.n_documents)
            self._counts = counts
            with _gc_paused():
                self._fit_counts(counts)
        else:
            self.__dict__.pop("_counts", None)
            with _gc_paused():
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
            return _rewrite_bag(self, X)
        return self._rewrite(self._named_token_lists(X))

    def _named_token_lists(self, X):
        """New token lists of ``X`` (as ``_token_lists``); a tokenizer's error names the
        document (as the counting does)."""
        tokens = self._token_fn()
        if tokens is list:
            return self._token_lists(X)
        check_not_dataframe(X)
        units = []
        for i, doc in enumerate(iter_documents(X, self.input, self.encoding,
                                               self.decode_error)):
            try:
                units.append(tokens(doc))
            except Exception as exc:
                raise document_error(exc, i) from exc
        return units

    def _rewrite(self, units):
        for level in self.levels_:
            join = _join_pairs if len(level[1].shape) == 1 else _join_ngrams
            units = join(units, level, self.delimiter)
        return units

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
        per_token = (32 + 18 * (self.window_size - 2) if self.order == 2
                     else 16 + 8 * self.order)
        return chunk_n_rows(per_token + _HELD_TOKEN_BYTES * held, 1 << 62,
                            self.working_memory)

    def _count(self, X):
        """The :class:`NgramCounts` of ``X``, streamed a chunk at a time (or a dask bag's,
        counted per partition on the workers and merged by a tree reduction)."""
        if is_dask_bag(X):
            return bag_term_counts(self, X, _count_partition)
        counts = self._new_counts()
        check_not_dataframe(X)
        tokens = None
        if counts.lower or self._token_fn() is list:       # the documents' own lists
            if type(X) is list and all(type(doc) is list for doc in X):
                return self._count_lists(X, counts)
            docs = iter_documents(X, "tokens", check_tokens=False)
        else:
            tokens = self._token_fn()
            docs = iter_documents(X, self.input, self.encoding, self.decode_error)
        limit = self._chunk_tokens()
        units, size, start = [], 0, 0
        for i, doc in enumerate(docs):
            if tokens is not None:
                try:
                    doc = tokens(doc)
                except Exception as exc:
                    raise document_error(exc, i) from exc
            units.append(doc)
            size += len(doc)
            if size >= limit:
                counts.add(units, start)
                start = i + 1
                units, size = [], 0
        if units:
            counts.add(units, start)
        return counts

    def _count_lists(self, units, counts):
        """Count a list of token lists into ``counts``, a chunk of documents at a time."""
        limit = self._chunk_tokens(held=False)
        ends = np.cumsum(np.fromiter(map(len, units), np.int64, len(units)))
        start = 0
        while start < len(units):
            done = ends[start - 1] if start else 0
            stop = max(int(np.searchsorted(ends, done + limit, side="left")) + 1, start + 1)
            counts.add(units[start:stop] if start or stop < len(units) else units, start)
            start = stop
        return counts

    def _check_combination(self):
        """The checks between parameters that ``_parameter_constraints`` cannot express."""
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
        """Score the n-grams of ``counts`` (one pass): sets ``scores_`` and ``levels_``."""
        table = counts.table(self.min_count)
        self.levels_, self.scores_ = [], []
        if self.order > 2:
            level = self._score_ngrams(table)
            if level is not None:
                candidates, scores, grams = level
                self.scores_ = list(zip(candidates, scores.tolist()))
                if len(grams):
                    self.levels_.append((table.terms, grams))
            return
        level = self._score_level(table, {})
        if level is not None:
            candidates, scores, terms, _, _, passed, keys = level
            if passed.size:
                self.levels_.append((terms, keys))
            self.scores_ = _ranked([(candidates, scores)])

    def _fit_passes(self, units):
        """``max_len > 2``: bigram passes, each over the text rewritten by the previous."""
        check_corpus_nonempty(len(units))
        spans = {}                       # joined unit -> tuple of original tokens (pass >= 2)
        tables, self.levels_ = [], []
        for step in range(self.max_len - 1):       # one merging pass per extra token
            counts = self._count_lists(units, self._new_counts(lower=False))
            level = self._score_level(counts.table(self.min_count), spans)
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
                units = _join_pairs(units, self.levels_[-1], self.delimiter)
        self.scores_ = _ranked(tables)

    def _filter(self, table, spans=None):
        """The candidates of ``table``: frequent enough and kept by the filters; None if
        none is left. ``spans`` maps joined units to their original tokens."""
        keep = table.counts >= self.min_count
        if spans:                                   # later passes: only pairs with a phrase
            span_len = np.fromiter((len(spans.get(t, "_")) for t in table.terms), np.int64,
                                   len(table.terms))
            first, second = table.grams
            keep &= (span_len[first] > 1) | (span_len[second] > 1)
            keep &= span_len[first] + span_len[second] <= self.max_len
        if self.word_filter is not None:
            tokens = [spans.get(t, (t,)) if spans else (t,) for t in table.terms.tolist()]
            flat = np.empty(sum(map(len, tokens)), dtype=object)
            flat[:] = list(chain.from_iterable(tokens))
            dropped = np.add.reduceat(_word_mask(self.word_filter, flat),
                                      np.cumsum([0] + [len(t) for t in tokens[:-1]])) > 0 \
                if len(tokens) else np.zeros(0, dtype=bool)
            for g in table.grams:
                keep &= ~dropped[g]
        if not keep.any():
            return None
        table = _select(table, keep)
        if self.ngram_filter is not None:
            words = zip(*(table.terms[g].tolist() for g in table.grams))
            if spans:
                words = (tuple(chain.from_iterable(spans.get(w, (w,)) for w in gram))
                         for gram in words)
            keep = np.fromiter((not self.ngram_filter(*gram) for gram in words), bool,
                               len(table.counts))
            if not keep.any():
                return None
            table = _select(table, keep)
        return table

    def _scores(self, table, spans=None):
        measure = canonical_measure(self.measure)
        if measure in TABLE_MEASURES:
            def candidate(i):
                words = (table.terms[g[i]] for g in table.grams)
                return tuple(chain.from_iterable(
                    spans.get(w, (w,)) if spans else (w,) for w in words))

            _check_table(self.measure, table, candidate)
        if measure == "count":                  # the n-gram count, not over window - 1
            return table.counts.astype(np.float64)
        return assoc_scores(measure, *table.marginals)

    def _score_ngrams(self, table):
        """Score the trigrams or quadgrams; None when none is a candidate."""
        table = self._filter(table)
        if table is None:
            return None
        scores = self._scores(table)
        order = _ngram_order(scores, table.grams, table.terms)
        scores = scores[order]
        grams = np.stack([g[order] for g in table.grams], axis=1)
        candidates = list(zip(*(table.terms[g].tolist() for g in grams.T)))
        if self.threshold is not None:
            grams = grams[scores > self.threshold]
        return candidates, scores, grams

    def _score_level(self, table, spans):
        """Score the pairs of one bigram pass; None when no pair is a candidate."""
        table = self._filter(table, spans)
        if table is None:
            return None
        terms, (first, second) = table.terms, table.grams
        scores = self._scores(table, spans)
        id_keys = first * len(terms) + second          # sorted: pairs come in id order
        scores, first, second = _nltk_order(scores, first, second, terms)
        lefts, rights = terms[first].tolist(), terms[second].tolist()
        if spans:
            candidates = [spans.get(a, (a,)) + spans.get(b, (b,)) for a, b in zip(lefts, rights)]
        elif not spans and self.max_len == 2:   # one pass: scores_ consumes the pairs once
            candidates = zip(lefts, rights)
        else:
            candidates = list(zip(lefts, rights))
        if self.threshold is None:
            return candidates, scores, terms, first, second, np.arange(len(scores)), id_keys
        passed = np.flatnonzero(scores > self.threshold)
        keys = np.sort(first[passed] * len(terms) + second[passed])   # id order, to search
        return candidates, scores, terms, first, second, passed, keys
