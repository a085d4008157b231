"""Collocations: score adjacent token pairs by an association measure, join the phrases.

Counting and scoring run on token-id arrays: bigram counts are the unique keys
``id[i] * n_terms + id[i + 1]`` inside documents, and every measure is one vectorised
formula over the contingency tables of all candidates at once.
"""
import gc
from contextlib import contextmanager
from itertools import chain, islice

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

from nlpfeat._validation import (
    Integral,
    Interval,
    Real,
    StrOptions,
    check_is_fitted,
    fit_context,
)
from nlpfeat.text._analyzer import TEXT_PARAMETER_CONSTRAINTS, TextMixin
from nlpfeat.text._cooccurrence import (
    new_vocabulary,
    pair_table,
    split_keys,
    token_ids,
)
from nlpfeat.text._documents import check_corpus_nonempty, check_token_types, reiterable
from nlpfeat.text._vocabulary import string_order

__all__ = ["Collocations", "bigram_scores"]

_SMALL = 1e-20          # nltk's guard against log(0) and 0 / 0, kept for exact parity
MEASURES = ("pmi", "npmi", "llr", "chi_sq", "t", "dice", "count")
_MAX_SORT_KEY = 2**62   # (score rank, word-pair rank) keys below this are sorted at once
_BREAK = (object(),)    # appended to every document's tokens: no user token, never paired


def _llr(n_ii, n_ix, n_xi, n_xx):
    """Log-likelihood ratio G^2 = 2 sum obs ln(obs / exp) over the 2x2 table (0 ln 0 = 0)."""
    n_oi, n_io = n_xi - n_ii, n_ix - n_ii
    cells = (n_ii, n_oi, n_io, n_xx - n_ii - n_oi - n_io)
    total = 0.0
    for i, obs in enumerate(cells):                 # 4 cells, each an array over bigrams
        expected = (obs + cells[i ^ 1]) * (obs + cells[i ^ 2]) / n_xx
        total = total + obs * np.log(obs / (expected + _SMALL) + _SMALL)
    return 2 * total


def _chi_sq(n_ii, n_ix, n_xi, n_xx):
    """Pearson's chi-square of the 2x2 table, ``N * phi^2``."""
    n_oi, n_io = n_xi - n_ii, n_ix - n_ii
    n_oo = n_xx - n_ii - n_oi - n_io
    phi_sq = (n_ii * n_oo - n_oi * n_io) ** 2 / (
        (n_ii + n_oi) * (n_ii + n_io) * (n_oi + n_oo) * (n_io + n_oo))
    return n_xx * phi_sq


def bigram_scores(measure, n_ii, n_ix, n_xi, n_xx):
    """Association of bigrams from their counts, vectorised over bigrams.

    Parameters
    ----------
    measure : {"pmi", "npmi", "llr", "chi_sq", "t", "dice", "count"}
    n_ii : ndarray
        Bigram counts.
    n_ix, n_xi : ndarray
        Counts of the first and of the second word.
    n_xx : float
        Number of tokens.

    Returns
    -------
    scores : ndarray of float64
        nltk's ``BigramAssocMeasures`` formulas (``pmi`` in bits, ``llr`` its
        ``likelihood_ratio``, ``t`` its ``student_t``); ``npmi`` is gensim's (natural log).
    """
    n_ii, n_ix, n_xi = (np.asarray(a, dtype=np.float64) for a in (n_ii, n_ix, n_xi))
    n_xx = float(n_xx)
    if measure == "pmi":
        return np.log2(n_ii * n_xx) - np.log2(n_ix * n_xi)
    if measure == "npmi":
        p_ab = n_ii / n_xx
        return np.log(p_ab / ((n_ix / n_xx) * (n_xi / n_xx))) / -np.log(p_ab)
    if measure == "llr":
        return _llr(n_ii, n_ix, n_xi, n_xx)
    if measure == "chi_sq":
        return _chi_sq(n_ii, n_ix, n_xi, n_xx)
    if measure == "t":
        return (n_ii - n_ix * n_xi / n_xx) / np.sqrt(n_ii + _SMALL)
    if measure == "dice":
        return 2 * n_ii / (n_ix + n_xi)
    return n_ii.copy()


def _bigram_table(units, check_types=False):
    """Unique adjacent pairs of a corpus: (terms, first ids, second ids, n_ii, freq, N).

    The bigrams are the window-1 pair table of :mod:`._cooccurrence`. The token stream
    gets a break (id -1) after every document, so no pair joins two documents; the pairs
    come sorted by (first id, second id). ``check_types`` checks that the tokens are
    ``str`` through the distinct terms (see :func:`._documents.check_token_types`).
    """
    vocab = new_vocabulary()
    vocab[_BREAK[0]]                 # id 0: the document break (shifted to -1 below)
    n_positions = sum(map(len, units)) + len(units)
    stream = chain.from_iterable(chain(doc, _BREAK) for doc in units)
    try:
        ids = np.fromiter(map(vocab.__getitem__, stream), np.int64, n_positions)
    except TypeError:                # an unhashable token
        if check_types:
            check_token_types(units, None)
        raise
    ids -= 1
    keys, n_ii = pair_table(ids, 1)
    first, second = split_keys(keys)
    words = list(islice(vocab, 1, None))
    if check_types:
        check_token_types(units, words)
    terms = np.empty(len(words), dtype=object)
    terms[:] = words
    freq = np.bincount(ids + 1, minlength=len(vocab))[1:]
    return terms, first, second, n_ii, freq, n_positions - len(units)


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


class Collocations(TextMixin, TransformerMixin, BaseEstimator):
    """Learn multi-word phrases by an association measure; join them into single tokens.

    ``fit`` counts adjacent token pairs inside each document (never across two documents),
    scores every pair seen at least ``min_count`` times, and keeps those scoring above
    ``threshold`` as phrases; ``max_len > 2`` repeats the pass on the rewritten text, so
    phrases grow by merging (``new_york`` + ``city``). ``transform`` returns token lists
    with phrases joined by ``delimiter``, ready for ``BagOfWords(input="tokens")``.

    Parameters
    ----------
    measure : {"pmi", "npmi", "llr", "chi_sq", "t", "dice", "count"}, default="npmi"
        ``pmi``: log2 P(a,b) / P(a)P(b); ``npmi``: pmi / -ln P(a,b) in [-1, 1];
        ``llr``: log-likelihood ratio G^2; ``chi_sq``: Pearson's chi-square; ``t``:
        Student's t; ``dice``: 2 n_ab / (n_a + n_b); ``count``: n_ab. Higher is stronger.
    min_count : int, default=5
        Pairs seen fewer times are never candidates.
    threshold : float or None, default=None
        A candidate becomes a phrase when its score is above it; None accepts every
        candidate (so ``scores_`` alone decides nothing). E.g. npmi 0.5, llr 10.83.
    max_len : int, default=2
        Longest phrase, in original tokens.
    delimiter : str, default="_"
    input : {"content", "filename", "file", "tokens"}, default="tokens"
        Token lists by default; strings are tokenized with the text options below.
    encoding, decode_error, lowercase, tokenizer, token_pattern, stemmer, stop_words
        The shared text options (see :class:`nlpfeat.text.BagOfWords`).

    Attributes
    ----------
    scores_ : list of (tuple of str, float)
        Every candidate with its score, best first (ties by tokens), as nltk's
        ``score_ngrams`` ranks them.
    levels_ : list of (ndarray of str, ndarray of int64)
        Per merging pass, the units seen and the sorted keys ``first * n_units + second``
        of the pairs accepted as phrases (what ``transform`` joins). The phrases are the
        entries of ``scores_`` above ``threshold`` (all of them when it is None).

    See Also
    --------
    nltk.collocations.BigramCollocationFinder, gensim.models.phrases.Phrases

    Notes
    -----
    With ``n_ab`` the pair count, ``n_a``, ``n_b`` the word counts and ``N`` the number of
    tokens, ``pmi = log2(n_ab N / (n_a n_b))`` and ``npmi = ln(p_ab / (p_a p_b)) / -ln p_ab``
    (Bouma, 2009). ``llr`` is ``2 sum_cells O ln(O / E)`` over the 2x2 contingency table of
    (a, not a) x (b, not b) with ``0 ln 0 = 0``, so it stays finite on tables with empty
    cells. The scores equal nltk's ``BigramAssocMeasures`` and gensim's npmi scorer.

    References
    ----------
    .. [1] C. Manning and H. Schuetze, "Foundations of Statistical Natural Language
       Processing", ch. 5, MIT Press, 1999.

    Examples
    --------
    >>> from nlpfeat.text import Collocations
    >>> docs = [["new", "york", "is", "big"], ["i", "love", "new", "york"],
    ...         ["new", "york", "city"]]
    >>> coll = Collocations(measure="npmi", min_count=2).fit(docs)
    >>> [(phrase, round(score, 3)) for phrase, score in coll.scores_]
    [(('new', 'york'), 1.0)]
    >>> coll.transform([["new", "york", "city"]])
    [['new_york', 'city']]
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
    }

    def __init__(self, measure="npmi", *, min_count=5, threshold=None, max_len=2,
                 delimiter="_", input="tokens", encoding="utf-8", decode_error="strict",
                 lowercase=True, tokenizer="regexp", token_pattern=None, stemmer=None,
                 stop_words=None):
        self.measure = measure
        self.min_count = min_count
        self.threshold = threshold
        self.max_len = max_len
        self.delimiter = delimiter
        self.input = input
        self.encoding = encoding
        self.decode_error = decode_error
        self.lowercase = lowercase
        self.tokenizer = tokenizer
        self.token_pattern = token_pattern
        self.stemmer = stemmer
        self.stop_words = stop_words

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Learn the phrases of the documents ``X``.

        Parameters
        ----------
        X : iterable of list of str (or of str, with ``input != "tokens"``)
        y : None
            Ignored.

        Returns
        -------
        self : Collocations
        """
        with _gc_paused():
            return self._fit(X)

    def _fit(self, X):
        # read only; the first pass checks the tokens through its vocabulary
        units = self._token_lists(X, check_tokens=False, copy=False)
        check_corpus_nonempty(len(units))
        spans = {}                       # joined unit -> tuple of original tokens (pass >= 2)
        tables, self.levels_ = [], []
        for step in range(self.max_len - 1):       # one merging pass per extra token
            level = self._score_level(units, spans, check_types=step == 0)
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
        return self

    def _score_level(self, units, spans, check_types=False):
        """Score one pass over ``units``; None when no pair is a candidate."""
        terms, first, second, n_ii, freq, n_tokens = _bigram_table(units, check_types)
        keep = n_ii >= self.min_count
        if spans:                                   # later passes: only pairs with a phrase
            span_len = np.fromiter((len(spans.get(t, "_")) for t in terms), np.int64,
                                   len(terms))
            keep &= (span_len[first] > 1) | (span_len[second] > 1)
            keep &= span_len[first] + span_len[second] <= self.max_len
        if not keep.any():
            return None
        first, second, n_ii = first[keep], second[keep], n_ii[keep]
        scores = bigram_scores(self.measure, n_ii, freq[first], freq[second], n_tokens)
        id_keys = first * len(terms) + second          # sorted: pairs come in id order
        scores, first, second = _nltk_order(scores, first, second, terms)
        lefts, rights = terms[first].tolist(), terms[second].tolist()
        if spans:
            candidates = [spans.get(a, (a,)) + spans.get(b, (b,)) for a, b in zip(lefts, rights)]
        elif self.max_len == 2:         # one pass: scores_ consumes the pairs once
            candidates = zip(lefts, rights)
        else:
            candidates = list(zip(lefts, rights))
        if self.threshold is None:
            return candidates, scores, terms, first, second, np.arange(len(scores)), id_keys
        passed = np.flatnonzero(scores > self.threshold)
        keys = np.sort(first[passed] * len(terms) + second[passed])   # id order, to search
        return candidates, scores, terms, first, second, passed, keys

    def fit_transform(self, X, y=None):
        """Fit, then rewrite ``X`` (a one-shot iterator is read once, into a list)."""
        X = reiterable(X)
        return self.fit(X).transform(X)

    def transform(self, X):
        """Rewrite documents as token lists with the learned phrases joined.

        Parameters
        ----------
        X : iterable of list of str (or of str, with ``input != "tokens"``)

        Returns
        -------
        tokens : list of list of str
        """
        check_is_fitted(self, "scores_")
        units = self._token_lists(X)
        for level in self.levels_:
            units = _join_pairs(units, level, self.delimiter)
        return units
