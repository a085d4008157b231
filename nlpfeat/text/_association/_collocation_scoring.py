"""Scoring and ranking collocation candidates: filters, nltk's measures and sort order.

Every measure is one vectorised formula over the marginals of all candidates at once
(:mod:`._measures`, in nltk's order of operations); candidates are ranked by nltk's key
``(-score, words)`` in Python's string order.
"""
from itertools import chain
from typing import NamedTuple

import numpy as np

from nlpfeat.text._association._measures import (
    TABLE_MEASURES,
    assoc_scores,
    canonical_measure,
    contingency,
)
from nlpfeat.text._base._tokenize import get_stop_words
from nlpfeat.text._counting._ngram_counts import Table
from nlpfeat.text._counting._vocabulary import string_order

__all__ = ["Scoring", "bigram_scores", "candidate_scores", "filter_candidates", "ngram_order",
           "nltk_order", "ranked", "score_level", "score_ngrams", "select_rows", "word_mask"]

_MAX_SORT_KEY = 2**62   # (score rank, word-pair rank) keys below this are sorted at once


class Scoring(NamedTuple):
    """The parameters of a ``Collocations`` that choose and score its candidates."""

    measure: str
    min_count: int
    threshold: float
    max_len: int
    word_filter: object
    ngram_filter: object


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
    >>> from nlpfeat.text._association._collocation_scoring import bigram_scores
    >>> bigram_scores("dice", [2.0], [2], [3], 10)
    array([0.8])
    """
    n_ix, n_xi = (np.asarray(a, dtype=np.int64) for a in (n_ix, n_xi))
    return assoc_scores(measure, np.asarray(n_ii, dtype=np.float64), (n_ix, n_xi), int(n_xx))


def select_rows(table, keep):
    """The rows ``keep`` (bool or index array) of a table's n-grams and marginals."""
    def take(part):
        if isinstance(part, tuple):
            return tuple(take(p) for p in part)
        return part[keep] if isinstance(part, np.ndarray) else part

    return Table(table.terms, take(table.grams), table.counts[keep], take(table.marginals))


def nltk_order(scores, first, second, terms):
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


def ngram_order(scores, grams, terms):
    """The permutation that sorts n-grams by (-score, first word, second word, ...)."""
    used = np.zeros(len(terms), dtype=bool)
    for g in grams:
        used[g] = True
    words = np.flatnonzero(used)
    ranks = np.empty(len(terms), dtype=np.int64)
    ranks[words[string_order(terms[words])]] = np.arange(len(words))
    return np.lexsort([ranks[g] for g in reversed(grams)] + [-scores])


def ranked(tables):
    """Merge the passes' (candidates, scores) tables, each sorted best first, into one."""
    if len(tables) == 1:
        candidates, scores = tables[0]
        return list(zip(candidates, scores.tolist()))
    table = [item for candidates, scores in tables for item in zip(candidates, scores.tolist())]
    return sorted(table, key=lambda item: (-item[1], item[0]))


def word_mask(word_filter, terms):
    """True for the terms that ``word_filter`` removes (nltk's ``apply_word_filter``)."""
    if word_filter is None:
        return None
    if callable(word_filter):
        return np.fromiter((bool(word_filter(t)) for t in terms.tolist()), bool, len(terms))
    stop = get_stop_words(word_filter)
    return np.fromiter((t in stop for t in terms.tolist()), bool, len(terms))


def check_table(measure, table, candidates_of):
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


def filter_candidates(table, scoring, spans=None):
    """The candidates of ``table``: frequent enough and kept by the filters; None if
    none is left. ``spans`` maps joined units to their original tokens."""
    keep = table.counts >= scoring.min_count
    if spans:                                   # later passes: only pairs with a phrase
        span_len = np.fromiter((len(spans.get(t, "_")) for t in table.terms), np.int64,
                               len(table.terms))
        first, second = table.grams
        keep &= (span_len[first] > 1) | (span_len[second] > 1)
        keep &= span_len[first] + span_len[second] <= scoring.max_len
    if scoring.word_filter is not None:
        tokens = [spans.get(t, (t,)) if spans else (t,) for t in table.terms.tolist()]
        flat = np.empty(sum(map(len, tokens)), dtype=object)
        flat[:] = list(chain.from_iterable(tokens))
        dropped = np.add.reduceat(word_mask(scoring.word_filter, flat),
                                  np.cumsum([0] + [len(t) for t in tokens[:-1]])) > 0 \
            if len(tokens) else np.zeros(0, dtype=bool)
        for g in table.grams:
            keep &= ~dropped[g]
    if not keep.any():
        return None
    table = select_rows(table, keep)
    if scoring.ngram_filter is not None:
        words = zip(*(table.terms[g].tolist() for g in table.grams))
        if spans:
            words = (tuple(chain.from_iterable(spans.get(w, (w,)) for w in gram))
                     for gram in words)
        keep = np.fromiter((not scoring.ngram_filter(*gram) for gram in words), bool,
                           len(table.counts))
        if not keep.any():
            return None
        table = select_rows(table, keep)
    return table

def candidate_scores(table, scoring, spans=None):
    """Scores of the candidates of ``table`` by ``scoring.measure`` (nltk's formulas)."""
    measure = canonical_measure(scoring.measure)
    if measure in TABLE_MEASURES:
        def candidate(i):
            words = (table.terms[g[i]] for g in table.grams)
            return tuple(chain.from_iterable(
                spans.get(w, (w,)) if spans else (w,) for w in words))

        check_table(scoring.measure, table, candidate)
    if measure == "count":                  # the n-gram count, not over window - 1
        return table.counts.astype(np.float64)
    return assoc_scores(measure, *table.marginals)

def score_ngrams(table, scoring):
    """Score the trigrams or quadgrams; None when none is a candidate."""
    table = filter_candidates(table, scoring)
    if table is None:
        return None
    scores = candidate_scores(table, scoring)
    order = ngram_order(scores, table.grams, table.terms)
    scores = scores[order]
    grams = np.stack([g[order] for g in table.grams], axis=1)
    candidates = list(zip(*(table.terms[g].tolist() for g in grams.T)))
    if scoring.threshold is not None:
        grams = grams[scores > scoring.threshold]
    return candidates, scores, grams

def score_level(table, spans, scoring):
    """Score the pairs of one bigram pass; None when no pair is a candidate."""
    table = filter_candidates(table, scoring, spans)
    if table is None:
        return None
    terms, (first, second) = table.terms, table.grams
    scores = candidate_scores(table, scoring, spans)
    id_keys = first * len(terms) + second          # sorted: pairs come in id order
    scores, first, second = nltk_order(scores, first, second, terms)
    lefts, rights = terms[first].tolist(), terms[second].tolist()
    if spans:
        candidates = [spans.get(a, (a,)) + spans.get(b, (b,)) for a, b in zip(lefts, rights)]
    elif not spans and scoring.max_len == 2:   # one pass: scores_ consumes the pairs once
        candidates = zip(lefts, rights)
    else:
        candidates = list(zip(lefts, rights))
    if scoring.threshold is None:
        return candidates, scores, terms, first, second, np.arange(len(scores)), id_keys
    passed = np.flatnonzero(scores > scoring.threshold)
    keys = np.sort(first[passed] * len(terms) + second[passed])   # id order, to search
    return candidates, scores, terms, first, second, passed, keys
