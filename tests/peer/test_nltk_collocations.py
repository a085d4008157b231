"""Collocations against nltk's collocation finders, on the Wikipedia sample and Lee's
background corpus (gensim's test data).

What nltk's own tests check, and where it is checked here:

* ``nltk/test/collocations.doctest``: bigram finders ranked by pmi, after a frequency
  filter (``test_scores_equal_nltk``), with a window and a word filter
  (``test_window_and_word_filter_equal_nltk``); trigram and quadgram finders
  (``test_ngram_scores_equal_nltk``); the word filter, the n-gram filter and the
  frequency filter applied one after the other
  (``test_filters_follow_nltks_doctest_example``); the measures on the published
  contingency values of Manning and Schuetze and Dunning
  (``test_measures_on_published_values``).
* nltk's unit tests (``test_collocations.py``: ``test_bigram2/3/5``): the window counts
  and pmi of ``'this this is is a a test test'`` for windows 2, 3 and 5
  (``test_nltk_unit_window_examples``).

Left out: the doctest's Genesis and Brown examples (nltk's corpora need a download;
the same finder behaviours are checked here on gensim's corpora); ``nbest`` and
``above_score`` (slices of ``score_ngrams``, which ``scores_`` is); tagged-word tuples
as tokens (``Collocations`` takes str tokens); the ``ContingencyMeasures`` wrapper and
the Spearman ranking helpers (nltk utilities with no counterpart here); nltk's
trigram finder with ``window_size > 3`` (``Collocations`` counts contiguous trigrams;
its ``window_size`` is for bigrams).

Comparisons never depend on the last bit of a float: scores to 1e-12 relative, and
rankings up to ties (each side's order must be sorted by the other side's scores, to
the same tolerance).
"""
from itertools import chain

import numpy as np
import pytest

from nlpfeat.text import Collocations

collocations = pytest.importorskip("nltk.collocations")
metrics = pytest.importorskip("nltk.metrics")

RTOL = 1e-12
BIGRAM = ["pmi", "likelihood_ratio", "chi_sq", "student_t", "dice", "raw_freq", "mi_like",
          "poisson_stirling", "jaccard", "phi_sq"]
NGRAM = ["pmi", "likelihood_ratio", "chi_sq", "student_t", "raw_freq", "mi_like",
         "poisson_stirling", "jaccard"]
ALIASES = {"llr": "likelihood_ratio", "t": "student_t"}
NLTK_CLASSES = {2: "BigramAssocMeasures", 3: "TrigramAssocMeasures",
                4: "QuadgramAssocMeasures"}
FINDERS = {2: "BigramCollocationFinder", 3: "TrigramCollocationFinder",
           4: "QuadgramCollocationFinder"}


def assert_matches_nltk(got, expected, min_len=1):
    """Same n-grams, scores equal to RTOL, and the same ranking up to ties."""
    assert len(got) == len(expected) >= min_len
    ours, theirs = dict(got), dict(expected)
    assert ours.keys() == theirs.keys()
    keys = list(theirs)
    np.testing.assert_allclose([ours[k] for k in keys], [theirs[k] for k in keys],
                               rtol=RTOL, atol=0)
    for ranking, scores in ((got, theirs), (expected, ours)):
        s = np.array([scores[k] for k, _ in ranking])
        # non-increasing, up to a tie of RTOL
        assert (s[1:] <= s[:-1] + RTOL * np.maximum(np.abs(s[1:]), np.abs(s[:-1]))).all()
    # our own ties are broken by the words (nltk's key (-score, ngram))
    order = sorted(range(len(got)), key=lambda i: (-got[i][1], got[i][0]))
    assert order == list(range(len(got)))


def padded(docs, window):
    """The word stream nltk's finders read for documents: window - 1 pads after each."""
    return chain.from_iterable(chain(doc, [None] * (window - 1)) for doc in docs)


@pytest.fixture(scope="module")
def wiki():
    from nlpfeat.datasets import load_wiki_sample

    return [doc.split() for doc in load_wiki_sample().data]


@pytest.fixture(scope="module")
def lee():
    from nlpfeat.datasets import load_lee

    return [doc.split() for doc in load_lee().background]


_FINDERS = {}


def finder(corpus, docs, order, window, min_count):
    """nltk's finder (cached per corpus, order, window) with the frequency filter."""
    key = (corpus, order, window)
    if key not in _FINDERS:
        cls = getattr(collocations, FINDERS[order])
        if order == 2:
            _FINDERS[key] = cls.from_words(padded(docs, window), window_size=window)
        else:
            _FINDERS[key] = cls.from_documents(docs)
    found = _FINDERS[key]
    new = type(found).__new__(type(found))
    new.__dict__.update(found.__dict__)
    new.apply_freq_filter(min_count)
    return new


def nltk_scores(found, order, measure):
    cls = getattr(metrics, NLTK_CLASSES[order])
    return found.score_ngrams(getattr(cls, ALIASES.get(measure, measure)))


@pytest.mark.parametrize("measure", ["pmi", "llr", "chi_sq", "t", "dice"])
def test_scores_equal_nltk(wiki, measure):
    """The first measures, under their short names, on the whole Wikipedia sample."""
    expected = nltk_scores(finder("wiki", wiki, 2, 2, 3), 2, measure)
    got = Collocations(measure, min_count=3, lowercase=False, input="tokens").fit(wiki).scores_
    assert_matches_nltk(got, expected, min_len=5000)


def _cases(corpora, sizes, measures, default):
    """Every (measure, size, corpus) case; those ``default`` keeps out are marked slow
    (``.ci/run`` runs them): every measure stays in the README's test command."""
    return [pytest.param(m, n, c, id=f"{m}-{n}-{c}",
                         marks=() if default(m, n, c) else pytest.mark.slow)
            for c in corpora for n in sizes for m in measures]


@pytest.mark.parametrize("measure,window,corpus", _cases(
    ["wiki", "lee"], [2, 3, 5], BIGRAM,
    default=lambda m, n, c: (c, n) == ("lee", 2) or (c, n, m) == ("wiki", 5, "pmi")))
def test_bigram_scores_equal_nltk(request, corpus, window, measure):
    """Every bigram measure and window, on the whole corpora."""
    docs = request.getfixturevalue(corpus)
    expected = nltk_scores(finder(corpus, docs, 2, window, 3), 2, measure)
    got = Collocations(measure, min_count=3, window_size=window, lowercase=False, input="tokens").fit(docs)
    assert_matches_nltk(got.scores_, expected, min_len=500)


@pytest.mark.parametrize("corpus", ["wiki", "lee"])
@pytest.mark.parametrize("window", [2, 5])
def test_fisher_equals_nltk(request, corpus, window):
    """scipy's Fisher test costs ~0.3 ms a table on both sides: the frequent pairs only."""
    docs = request.getfixturevalue(corpus)[:80]
    expected = nltk_scores(finder(corpus + "80", docs, 2, window, 8), 2, "fisher")
    got = Collocations("fisher", min_count=8, window_size=window, lowercase=False, input="tokens").fit(docs)
    assert_matches_nltk(got.scores_, expected, min_len=30)


@pytest.mark.parametrize("measure,order,corpus", _cases(
    ["wiki", "lee"], [3, 4], NGRAM,
    default=lambda m, n, c: (c, n) == ("lee", 3) or (c, m) == ("lee", "pmi")))
def test_ngram_scores_equal_nltk(request, corpus, order, measure):
    """Trigrams and quadgrams, on the whole corpora."""
    docs = request.getfixturevalue(corpus)
    expected = nltk_scores(finder(corpus, docs, order, order, 2), order, measure)
    got = Collocations(measure, order=order, min_count=2, lowercase=False, input="tokens").fit(docs)
    assert_matches_nltk(got.scores_, expected, min_len=500)


@pytest.mark.parametrize("order", [2, 3, 4])
def test_counts_equal_nltk_ngram_frequencies(lee, order):
    found = finder("lee", lee, order, order, 2)
    got = dict(Collocations("count", order=order, min_count=2, lowercase=False, input="tokens")
               .fit(lee).scores_)
    assert got == {ngram: float(n) for ngram, n in found.ngram_fd.items()}


def test_default_lowercasing_equals_nltk_on_lowercased_words(lee):
    """Lowercasing each distinct word once merges the same counts as lowercasing tokens."""
    lowered = [[token.lower() for token in doc] for doc in lee]
    found = collocations.BigramCollocationFinder.from_documents(lowered)
    found.apply_freq_filter(5)
    assert_matches_nltk(Collocations("pmi", input="tokens").fit(lee).scores_,
                        found.score_ngrams(metrics.BigramAssocMeasures.pmi), min_len=500)


@pytest.mark.slow   # 9 CPU-s; every measure stays, on Lee
def test_window_and_word_filter_equal_nltk(wiki):
    """The doctest's windowed likelihood ratio with a stop-word and length filter."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    docs = wiki[:25]              # nltk counts 19 pairs a token here: a part of the sample
    found = collocations.BigramCollocationFinder.from_words(padded(docs, 20), window_size=20)
    found.apply_freq_filter(2)

    def word_filter(w):
        return len(w) < 3 or w.lower() in ENGLISH_STOP_WORDS

    found.apply_word_filter(word_filter)
    expected = found.score_ngrams(metrics.BigramAssocMeasures.likelihood_ratio)
    got = Collocations("llr", min_count=2, window_size=20, word_filter=word_filter,
                       lowercase=False, input="tokens").fit(docs).scores_
    assert_matches_nltk(got, expected, min_len=1000)


def test_stop_word_list_filter_keeps_the_counts(lee):
    """A stop-word list drops candidates, not tokens: the scores of the pairs left are
    those of the unfiltered counts (nltk's apply_word_filter)."""
    found = collocations.BigramCollocationFinder.from_documents(lee)
    found.apply_freq_filter(3)
    stop = {"the", "of", "a", "to", "in"}
    found.apply_word_filter(lambda w: w in stop)
    got = Collocations("student_t", min_count=3, word_filter=sorted(stop),
                       lowercase=False, input="tokens").fit(lee).scores_
    assert_matches_nltk(got, found.score_ngrams(metrics.BigramAssocMeasures.student_t),
                        min_len=500)


def test_filters_follow_nltks_doctest_example():
    """The doctest's sentence: 14 trigrams, 8 without I/me, 6 without 'and' at an edge,
    1 seen twice."""
    import nltk

    text = "I do not like green eggs and ham, I do not like them Sam I am!"
    tokens = nltk.wordpunct_tokenize(text)
    fit = Collocations("raw_freq", order=3, min_count=1, lowercase=False, input="tokens").fit([tokens])
    assert len(fit.scores_) == 14
    assert {g for g, _ in fit.scores_} == set(nltk.trigrams(tokens))
    no_pronoun = Collocations("raw_freq", order=3, min_count=1, lowercase=False,
                              word_filter=lambda w: w in ("I", "me"), input="tokens")
    assert len(no_pronoun.fit([tokens]).scores_) == 8
    no_and = no_pronoun.set_params(ngram_filter=lambda w1, w2, w3: "and" in (w1, w3))
    assert len(no_and.fit([tokens]).scores_) == 6
    twice = no_and.set_params(min_count=2).fit([tokens])
    assert [g for g, _ in twice.scores_] == [("do", "not", "like")]
    finder = collocations.TrigramCollocationFinder.from_words(tokens)
    finder.apply_word_filter(lambda w: w in ("I", "me"))
    finder.apply_ngram_filter(lambda w1, w2, w3: "and" in (w1, w3))
    finder.apply_freq_filter(2)
    assert_matches_nltk(twice.scores_,
                        finder.score_ngrams(metrics.TrigramAssocMeasures.raw_freq))


@pytest.mark.parametrize("window,pmi", [
    (2, {("a", "a"): 1.0, ("a", "test"): 1.0, ("is", "a"): 1.0, ("is", "is"): 1.0,
         ("test", "test"): 1.0, ("this", "is"): 1.0, ("this", "this"): 1.0}),
    (3, {("a", "test"): 1.584962500721156, ("is", "a"): 1.584962500721156,
         ("this", "is"): 1.584962500721156, ("a", "a"): 0.0, ("is", "is"): 0.0,
         ("test", "test"): 0.0, ("this", "this"): 0.0}),
    (5, {("a", "test"): 1.0, ("is", "a"): 1.0, ("this", "is"): 1.0,
         ("is", "test"): 0.5849625007211562, ("this", "a"): 0.5849625007211562,
         ("a", "a"): -1.0, ("is", "is"): -1.0, ("test", "test"): -1.0,
         ("this", "this"): -1.0}),
])
def test_nltk_unit_window_examples(window, pmi):
    """nltk's unit tests test_bigram2/3/5: window counts and pmi of one sentence."""
    sent = "this this is is a a test test".split()
    finder = collocations.BigramCollocationFinder.from_words(sent, window_size=window)
    counts = Collocations("count", min_count=1, window_size=window, input="tokens").fit([sent]).scores_
    assert dict(counts) == {k: float(v) for k, v in finder.ngram_fd.items()}
    got = Collocations("pmi", min_count=1, window_size=window, input="tokens").fit([sent]).scores_
    assert dict(got).keys() == pmi.keys()
    np.testing.assert_allclose([dict(got)[k] for k in pmi], list(pmi.values()), rtol=1e-12,
                               atol=1e-12)
    assert_matches_nltk(got, finder.score_ngrams(metrics.BigramAssocMeasures.pmi))


@pytest.mark.parametrize("measure,marginals,expected", [
    ("student_t", (8, (15828, 4675), 14307668), 0.9999),
    ("student_t", (20, (42, 20), 14307668), 4.4721),
    ("chi_sq", (8, (15828, 4675), 14307668), 1.55),
    ("chi_sq", (59, (67, 65), 571007), 456400),
    ("likelihood_ratio", (110, (2552, 221), 31777), 270.72),
    ("likelihood_ratio", (8, (13, 32), 31777), 95.29),
    ("pmi", (20, (42, 20), 14307668), 18.38),
    ("pmi", (20, (15019, 15629), 14307668), 0.29),
])
def test_measures_on_published_values(measure, marginals, expected):
    """The doctest's values from Manning and Schuetze and Dunning, and nltk's own."""
    from nlpfeat.text._association._collocations import bigram_scores

    n_ii, (n_ix, n_xi), n_xx = marginals
    got = bigram_scores(measure, [float(n_ii)], [n_ix], [n_xi], n_xx)[0]
    digits = {0.9999: 4, 4.4721: 4, 456400: -2}.get(expected, 2)
    assert round(got, digits) == pytest.approx(expected, abs=10.0**-digits)
    nltk_value = getattr(metrics.BigramAssocMeasures, measure)(float(n_ii), (n_ix, n_xi), n_xx)
    assert got == pytest.approx(nltk_value, rel=RTOL)


@pytest.mark.parametrize("measure", ["likelihood_ratio", "chi_sq", "phi_sq", "fisher"])
def test_dominant_word_table_measures_raise_where_nltk_fails(measure):
    """nltk raises (log of a negative number, division by zero, scipy's negative-table
    check) on the table of ('ha', 'ha') in 'ha ha ha ha'; so does Collocations, by name."""
    finder = collocations.BigramCollocationFinder.from_documents([["ha"] * 4])
    with pytest.raises((ValueError, ZeroDivisionError)):
        finder.score_ngrams(getattr(metrics.BigramAssocMeasures, measure))
    with pytest.raises(ValueError, match=r"undefined for \('ha', 'ha'\).*negative cell"):
        Collocations(measure, min_count=1, input="tokens").fit([["ha"] * 4])


@pytest.mark.parametrize("measure", ["pmi", "student_t", "dice", "raw_freq", "mi_like",
                                     "poisson_stirling", "jaccard", "count"])
def test_dominant_word_count_measures_equal_nltk(measure):
    finder = collocations.BigramCollocationFinder.from_documents([["ha"] * 4])
    expected = finder.score_ngrams(
        getattr(metrics.BigramAssocMeasures, measure, None)
        or (lambda n_ii, n_ix_xi, n_xx: n_ii))
    got = Collocations(measure, min_count=1, input="tokens").fit([["ha"] * 4]).scores_
    assert np.isfinite([s for _, s in got]).all()
    assert_matches_nltk(got, expected)


@pytest.mark.parametrize("measure,_,corpus", _cases(
    ["wiki", "lee"], [2], ["likelihood_ratio", "pmi"], default=lambda m, n, c: c == "lee"))
def test_rankings_equal_nltk_exactly(request, corpus, measure, _):
    """The scores are computed with the C library's log and pow, in nltk's order of
    operations (numpy's SIMD log differed in the last bit on AVX-512 and reordered pairs
    that nltk scores equal): the same bits as nltk on any platform, so nltk's ties are
    ties here and the rankings are identical, not only equal up to ties."""
    docs = request.getfixturevalue(corpus)
    expected = nltk_scores(finder(corpus, docs, 2, 2, 1), 2, measure)
    got = Collocations(measure, min_count=1, lowercase=False, input="tokens").fit(docs).scores_
    assert [g for g, _ in got] == [g for g, _ in expected]
    assert [s for _, s in got] == [s for _, s in expected]
