"""BagOfWords and TfidfVectorizer against scikit-learn's CountVectorizer and TfidfVectorizer.

Each test re-checks a behaviour of scikit-learn's own suite
(``sklearn/feature_extraction/tests/test_text.py``, named in each docstring) on nlpfeat's
vectorizers, comparing with scikit-learn's output wherever there is one; its
``TfidfTransformer`` tests run on ``TermWeighting`` in ``test_sklearn_tfidf_transformer.py``.
Not covered here:

- tests of ``HashingVectorizer`` (``test_sklearn_hashing.py``), ``strip_accents_*`` and ``strip_tags``
  alone (scikit-learn's own code; nlpfeat uses its accent strippers);
- tests of private helpers (``_tfidf``, ``_sort_features``, ``_stop_words_id``,
  ``_check_stop_words_consistency``): the behaviour behind them is checked where it is public;
- scikit-learn's exact error wording (a ValueError/TypeError of our own wording is checked);
- deliberate differences (tests ``test_known_difference_*`` pin them; the "Known
  differences" table of docs/migration.md gives the reasons): a ``str`` where ``input="file"`` expects an open
  file is a TypeError, not an AttributeError; an analyzer or tokenizer must return a list
  (``None`` or a ``str`` is a TypeError); documents must be ``str``/``bytes`` even with a
  preprocessor (scikit-learn passes dicts to it), and NaN is a TypeError; ``idf_`` is ones
  with ``use_idf=False``; the stop-word check runs at every fit.
"""
import pickle
import re
import uuid
import warnings
from collections import defaultdict
from functools import partial
from io import StringIO

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.feature_extraction.text import (
    ENGLISH_STOP_WORDS,
    CountVectorizer,
    TfidfTransformer,
    strip_accents_unicode,
    strip_tags,
)
from sklearn.feature_extraction.text import TfidfVectorizer as SklearnTfidf
from sklearn.model_selection import GridSearchCV, cross_val_score, train_test_split
from sklearn.pipeline import Pipeline
from sklearn.svm import LinearSVC

from nlpfeat.datasets import load_polarity
from nlpfeat.text import BagOfWords, TfidfVectorizer

JUNK = (
    "the pizza pizza beer copyright",
    "the pizza burger beer copyright",
    "the the pizza beer beer copyright",
    "the burger beer beer copyright",
    "the coke burger coke copyright",
    "the coke burger burger",
)
NOT_JUNK = (
    "the salad celeri copyright",
    "the salad salad sparkling water copyright",
    "the the celeri celeri copyright",
    "the tomato tomato salad water",
    "the tomato salad water copyright",
)
FOOD = JUNK + NOT_JUNK
FRENCH = "J'ai mangé du kangourou  ce midi, c'était pas très bon."
ENGLISH = "This \n\tis a test, really.\n\n I met Harry yesterday"
PAIRS = [(BagOfWords, CountVectorizer), (TfidfVectorizer, SklearnTfidf)]


@pytest.fixture(scope="module")
def polarity():
    return load_polarity().data


def _same_matrix(ours, theirs, atol=1e-12):
    assert sp.issparse(ours) and ours.shape == theirs.shape
    np.testing.assert_allclose(ours.toarray(), theirs.toarray(), rtol=0, atol=atol)


def uppercase(text):
    return strip_accents_unicode(text).upper()


def strip_eacute(text):
    return text.replace("é", "e")


def lazy_analyze(text):
    return ["the_ultimate_feature"]


# --- analyzers: test_strip_accents, test_to_ascii, test_word_analyzer_unigrams[CountVectorizer],
# test_word_analyzer_unigrams_and_bigrams, test_char_ngram_analyzer,
# test_char_wb_ngram_analyzer, test_word_ngram_analyzer ------------------------------------

ANALYZER_SETTINGS = [
    dict(strip_accents="ascii"),
    dict(strip_accents="unicode"),
    dict(preprocessor=uppercase),
    dict(tokenizer=str.split, strip_accents="ascii"),
    dict(strip_accents="unicode", ngram_range=(1, 2)),
    dict(strip_accents="unicode", ngram_range=(3, 6)),
    dict(analyzer="char", strip_accents="unicode", ngram_range=(3, 6)),
    dict(analyzer="char_wb", strip_accents="unicode", ngram_range=(3, 6)),
    dict(analyzer="char", strip_accents="ascii"),
    dict(analyzer="char", strip_accents=strip_eacute, lowercase=False),
]
ANALYZER_TEXTS = [FRENCH, ENGLISH, "àáâãäåçèéêë ìíîïñòóôõöùúûüý",
                  "\u0625 o\u0308\u0304 \u0300\u0301", "this is à test"]


@pytest.mark.parametrize("kwargs", ANALYZER_SETTINGS)
def test_analyzer_equals_sklearn(kwargs):
    """test_word_analyzer_unigrams and the other analyzer tests: the same features."""
    ours, theirs = BagOfWords(**kwargs).build_analyzer(), CountVectorizer(**kwargs).build_analyzer()
    for text in ANALYZER_TEXTS:
        assert ours(text) == theirs(text)


@pytest.mark.parametrize("analyzer", ["word", "char", "char_wb"])
def test_analyzer_reads_files_and_bytes(analyzer):
    """The analyzer decodes like fit (file-like objects, bytes), as scikit-learn's does."""
    kwargs = dict(analyzer=analyzer, ngram_range=(3, 6))
    expected = CountVectorizer(**kwargs).build_analyzer()(ENGLISH)
    assert BagOfWords(input="file", **kwargs).build_analyzer()(StringIO(ENGLISH)) == expected
    assert BagOfWords(**kwargs).build_analyzer()(ENGLISH.encode("utf-8")) == expected


def test_analyzer_reads_file_names(tmp_path):
    path = tmp_path / "doc.txt"
    path.write_bytes(FRENCH.encode("latin-1"))
    ours = BagOfWords(input="filename", encoding="latin-1").build_analyzer()
    assert ours(str(path)) == CountVectorizer().build_analyzer()(FRENCH)


@pytest.mark.parametrize("analyzer", ["word", "char"])
def test_unicode_decode_error(analyzer):
    """test_unicode_decode_error: the analyzer decodes bytes with ``encoding`` and raises."""
    analyze = BagOfWords(analyzer=analyzer, ngram_range=(1, 2), encoding="ascii").build_analyzer()
    with pytest.raises(UnicodeDecodeError):
        analyze(FRENCH.encode("utf-8"))


# --- fixed vocabularies -------------------------------------------------------------------

@pytest.mark.parametrize("kind", [dict, list, iter, partial(defaultdict, int), set])
def test_custom_vocabulary(kind):
    """test_countvectorizer_custom_vocabulary (plus a set, which is sorted)."""
    vocabulary = {"pizza": 0, "beer": 1}
    ours = BagOfWords(vocabulary=kind(vocabulary)).fit(JUNK)
    theirs = CountVectorizer(vocabulary=kind(vocabulary)).fit(JUNK)
    assert ours.vocabulary_ == theirs.vocabulary_
    assert ours.fixed_vocabulary_
    X = ours.transform(JUNK)
    _same_matrix(X, theirs.transform(JUNK))
    unfitted = BagOfWords(vocabulary=kind(vocabulary))
    inverse = unfitted.inverse_transform(X)  # no fit: the fixed vocabulary is used
    assert len(inverse) == X.shape[0]
    assert [list(terms) for terms in inverse] == [
        list(terms) for terms in CountVectorizer(vocabulary=kind(vocabulary)).inverse_transform(X)
    ]


def test_set_vocabulary_is_sorted():
    assert BagOfWords(vocabulary={"water", "beer", "pizza"}).fit(FOOD).vocabulary_ == {
        "beer": 0, "pizza": 1, "water": 2}


def test_fixed_vocabulary_without_fit(polarity):
    """test_vectorizer / test_feature_names: transform and feature names need no fit."""
    fitted = BagOfWords(max_df=0.5).fit(polarity[:300])
    ours = BagOfWords(vocabulary=fitted.vocabulary_)
    theirs = CountVectorizer(vocabulary=fitted.vocabulary_)
    np.testing.assert_array_equal(ours.get_feature_names_out(), theirs.get_feature_names_out())
    _same_matrix(ours.transform(polarity[300:600]), theirs.transform(polarity[300:600]))
    assert ours.fixed_vocabulary_ and ours.vocabulary_ == fitted.vocabulary_
    assert BagOfWords(vocabulary=["b", "a"]).get_feature_names_out().tolist() == ["b", "a"]


@pytest.mark.parametrize("Ours, Theirs", PAIRS)
def test_fixed_vocabulary_flag_on_every_path(Ours, Theirs):
    """fixed_vocabulary_ (test_feature_names, test_vectorizer,
    test_tfidf_vectorizer_with_fixed_vocabulary): True for a given vocabulary, False for a
    learnt one, after fit, fit_transform and partial_fit, and before any fit."""
    for vocabulary in (None, ["pizza", "beer"]):
        fixed = vocabulary is not None
        for run in ("fit", "fit_transform", "partial_fit"):
            est = Ours(vocabulary=vocabulary)
            getattr(est, run)(FOOD)
            assert est.fixed_vocabulary_ is fixed, run
            theirs = Theirs(vocabulary=vocabulary)
            if run != "partial_fit":
                getattr(theirs, run)(FOOD)
                assert theirs.fixed_vocabulary_ is fixed
        fresh = Ours(vocabulary=vocabulary)
        assert fresh.fixed_vocabulary_ is fixed    # scikit-learn: set at first use
        if fixed:                                  # the first use: feature names need no fit
            np.testing.assert_array_equal(fresh.get_feature_names_out(), vocabulary)
            assert fresh.fixed_vocabulary_
    learnt = Ours().fit(FOOD)
    learnt.set_params(vocabulary=["pizza"])       # a parameter change needs a new fit
    assert not learnt.fixed_vocabulary_
    assert learnt.fit(FOOD).fixed_vocabulary_
    assert not clone(learnt).set_params(vocabulary=None).fit(FOOD).fixed_vocabulary_


def test_custom_vocabulary_pipeline():
    """test_countvectorizer_custom_vocabulary_pipeline."""
    steps = lambda count: Pipeline([("count", count), ("tfidf", TfidfTransformer())])  # noqa: E731
    ours = steps(BagOfWords(vocabulary=["pizza", "beer"]))
    theirs = steps(CountVectorizer(vocabulary=["pizza", "beer"]))
    _same_matrix(ours.fit_transform(FOOD), theirs.fit_transform(FOOD))
    assert set(ours.named_steps["count"].vocabulary_) == {"pizza", "beer"}


@pytest.mark.parametrize(
    "vocabulary, match",
    [({"pizza": 0, "beer": 0}, "repeated indices: 'pizza' and 'beer' both map to column 0"),
     ({"pizza": 1, "beer": 2}, "doesn't contain index 0"),
     (["a", "b", "c", "a", "a"], "the term 'a' more than once"),
     ([], "vocabulary is empty")],
)
@pytest.mark.parametrize("Est", [BagOfWords, TfidfVectorizer])
def test_bad_vocabulary(Est, vocabulary, match):
    """test_countvectorizer_custom_vocabulary_repeated_indices, ..._gap_index,
    test_non_unique_vocab, test_countvectorizer_empty_vocabulary (first half)."""
    with pytest.raises(ValueError, match=match):
        Est(vocabulary=vocabulary).fit(["pasta_siziliana"])


def test_uppercase_in_vocabulary_warns_at_fit_only():
    """test_countvectorizer_uppercase_in_vocab."""
    vocabulary = ["Sample", "Upper", "Case", "Vocabulary"]
    vectorizer = BagOfWords(lowercase=True, vocabulary=vocabulary)
    with pytest.warns(UserWarning, match="Upper case characters found in vocabulary while "
                                         "'lowercase' is True"):
        vectorizer.fit(vocabulary)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        vectorizer.transform(vocabulary)
        BagOfWords(lowercase=False, vocabulary=vocabulary).fit(vocabulary)


def test_vectorizer_vocab_clone():
    """test_vectorizer_vocab_clone."""
    est = TfidfVectorizer(vocabulary=["the"])
    copy = clone(est)
    assert est.fit(FOOD).vocabulary_ == copy.fit(FOOD).vocabulary_


@pytest.mark.parametrize("kind", ["set", "dict"])
def test_vocabulary_survives_pickling(kind):
    """test_countvectorizer_vocab_sets_when_pickling / ..._dicts_when_pickling."""
    rng = np.random.RandomState(0)
    words = np.array(["beer", "burger", "celeri", "coke", "pizza", "salad", "sparkling",
                      "tomato", "water"])
    for _ in range(20):
        chosen = rng.choice(words, size=5, replace=False).tolist()
        vocabulary = set(chosen) if kind == "set" else dict(zip(chosen, range(5)))
        est = BagOfWords(vocabulary=vocabulary)
        restored = pickle.loads(pickle.dumps(est))
        names = est.fit(FOOD).get_feature_names_out()
        np.testing.assert_array_equal(names, restored.fit(FOOD).get_feature_names_out())
        np.testing.assert_array_equal(
            names, CountVectorizer(vocabulary=vocabulary).fit(FOOD).get_feature_names_out())


# --- stop words, token patterns, pruning ---------------------------------------------------

def test_get_stop_words():
    """test_countvectorizer_stop_words."""
    est = BagOfWords(stop_words="english")
    assert est.get_stop_words() == ENGLISH_STOP_WORDS
    assert est.set_params(stop_words=["some", "other", "words"]).get_stop_words() == {
        "some", "other", "words"}
    for bad in ["_bad_str_stop_", "_bad_unicode_stop_"]:
        with pytest.raises(ValueError, match="not a known list"):
            est.set_params(stop_words=bad).get_stop_words()


def test_stop_words_only_corpus_raises():
    """test_countvectorizer_empty_vocabulary (second half; our wording)."""
    with pytest.raises(ValueError, match="Empty vocabulary: .*stop_words='english'"):
        BagOfWords(max_df=1.0, stop_words="english").fit(
            ["to be or not to be", "and me too", "and so do you"])


def test_stop_words_inconsistent_warns_like_sklearn():
    """test_vectorizer_stop_words_inconsistent: the same tokens are reported."""
    stop_words = ["you've", "you", "you'll", "AND"]
    with pytest.warns(UserWarning, match="stop_words may be inconsistent") as theirs:
        CountVectorizer(stop_words=stop_words).fit(["hello world"])
    expected = re.search(r"generated tokens (\[.*?\])", str(theirs[0].message)).group(1)
    assert expected == "['and', 'll', 've']"
    for Est in (BagOfWords, TfidfVectorizer):
        with pytest.warns(UserWarning, match="stop_words may be inconsistent") as ours:
            Est(stop_words=stop_words).fit(["hello world"])
        assert f"generated tokens {expected} not in stop_words" in str(ours[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        BagOfWords(stop_words=["you", "and"]).fit(["hello world"])
        BagOfWords(stop_words="english").fit(["hello world"])
        # a tokenizer that keeps "you've" whole makes the list consistent
        BagOfWords(stop_words=["you've"], tokenizer=str.split).fit(["hello world"])


def test_custom_token_pattern():
    """test_countvectorizer_custom_token_pattern and ..._with_several_group."""
    corpus = ["This is the 1st document in my corpus.", "This document is the 2nd sample.",
              "And this is the 3rd one.", "Is this the 4th document?"]
    pattern = r"[0-9]{1,3}(?:st|nd|rd|th)\s\b(\w{2,})\b"
    ours = BagOfWords(token_pattern=pattern).fit(corpus).get_feature_names_out()
    np.testing.assert_array_equal(ours, ["document", "one", "sample"])
    np.testing.assert_array_equal(
        ours, CountVectorizer(token_pattern=pattern).fit(corpus).get_feature_names_out())
    with pytest.raises(ValueError, match="2 capturing groups"):
        BagOfWords(token_pattern=r"([0-9]{1,3}(?:st|nd|rd|th))\s\b(\w{2,})\b").fit(corpus)


def test_fit_twice():
    """test_fit_countvectorizer_twice."""
    est = BagOfWords()
    assert est.fit_transform(FOOD[:5]).shape[1] != est.fit_transform(FOOD[5:]).shape[1]


@pytest.mark.parametrize("Ours, Theirs", PAIRS)
@pytest.mark.parametrize(
    "kwargs",
    [dict(max_df=0.6, max_features=4), dict(max_features=1), dict(max_features=3),
     dict(analyzer="char", max_df=0.5), dict(analyzer="char", max_df=1),
     dict(analyzer="char", min_df=2), dict(analyzer="char", min_df=0.8),
     dict(analyzer="char", binary=True), dict(analyzer="char", binary=True, dtype=np.float32)],
)
def test_pruning_and_binary_equal_sklearn(Ours, Theirs, kwargs):
    """test_vectorizer_max_features, test_count_vectorizer_max_features,
    test_vectorizer_max_df, test_vectorizer_min_df, test_count_binary_occurrences."""
    for docs in (FOOD, ["abc", "dea", "eat"], ["aaabc", "abbde"]):
        ours, theirs = Ours(**kwargs), Theirs(**kwargs)
        X, expected = ours.fit_transform(docs), theirs.fit_transform(docs)
        assert ours.vocabulary_ == theirs.vocabulary_
        assert X.dtype == expected.dtype
        _same_matrix(X, expected, atol=1e-6)


def test_tie_breaking_sample_order_invariance():
    """test_tie_breaking_sample_order_invariance."""
    est = BagOfWords(max_features=1)
    assert est.fit(["hello", "world"]).vocabulary_ == est.fit(["world", "hello"]).vocabulary_


# --- preprocessing parameters and the fitted matrix -----------------------------------------

@pytest.mark.parametrize("Ours, Theirs", PAIRS)
@pytest.mark.parametrize(
    "kwargs",
    [dict(strip_accents="unicode"), dict(strip_accents="ascii", lowercase=False),
     dict(preprocessor=strip_tags), dict(strip_accents=strip_eacute, ngram_range=(1, 2)),
     dict(tokenizer=None, token_pattern=r"(?u)\b\w+\b")],
)
def test_preprocessing_equals_sklearn_on_polarity(Ours, Theirs, kwargs, polarity):
    docs = polarity[:500]
    ours, theirs = Ours(**kwargs), Theirs(**kwargs)
    _same_matrix(ours.fit_transform(docs), theirs.fit_transform(docs))
    np.testing.assert_array_equal(ours.get_feature_names_out(), theirs.get_feature_names_out())


def test_vectorizer_walkthrough():
    """test_vectorizer: max_df pruning on an iterator, a copied vocabulary, tf-idf (l1)."""
    v1 = BagOfWords(max_df=0.5)
    counts_train = v1.fit_transform(iter(FOOD[:-1]))
    assert counts_train[0, v1.vocabulary_["pizza"]] == 2
    assert "the" not in v1.vocabulary_ and "copyright" not in v1.vocabulary_
    v2 = BagOfWords(vocabulary=v1.vocabulary_)
    for v in (v1, v2):
        counts_test = v.transform([FOOD[-1]])
        _same_matrix(counts_test, CountVectorizer(vocabulary=v1.vocabulary_).transform([FOOD[-1]]))
        for word, count in [("salad", 1), ("tomato", 1), ("water", 1), ("coke", 0)]:
            assert counts_test[0, v.vocabulary_[word]] == count
    tfidf = TfidfTransformer(norm="l1").fit(counts_train)
    ours = TfidfVectorizer(norm="l1", max_df=0.5)
    np.testing.assert_allclose(ours.fit_transform(iter(FOOD[:-1])).toarray(),
                               tfidf.transform(counts_train).toarray(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours.transform([FOOD[-1]]).toarray(),
                               tfidf.transform(v1.transform([FOOD[-1]])).toarray(), atol=1e-12)
    assert not ours.fixed_vocabulary_
    with pytest.raises(NotFittedError):
        BagOfWords().transform(FOOD)
    processor = BagOfWords(strip_accents="ascii", lowercase=False).build_preprocessor()
    assert processor(FRENCH) == CountVectorizer(
        strip_accents="ascii", lowercase=False).build_preprocessor()(FRENCH)
    with pytest.raises(ValueError, match="strip_accents='_gabbledegook_' is not supported"):
        BagOfWords(strip_accents="_gabbledegook_").build_preprocessor()
    with pytest.raises(ValueError, match="strip_accents"):
        BagOfWords(strip_accents="_gabbledegook_").build_analyzer()
    with pytest.raises(ValueError, match="strip_accents"):
        BagOfWords(strip_accents="_gabbledegook_").fit(FOOD)


def test_feature_names():
    """test_feature_names."""
    est = BagOfWords(max_df=0.5)
    with pytest.raises(NotFittedError):
        est.get_feature_names_out()
    assert not est.fixed_vocabulary_   # defined as in scikit-learn after the failed call
    X = est.fit_transform(FOOD)
    names = est.get_feature_names_out()
    assert isinstance(names, np.ndarray) and names.dtype == object
    assert len(names) == X.shape[1] == len(est.vocabulary_)
    np.testing.assert_array_equal(
        names, CountVectorizer(max_df=0.5).fit(FOOD).get_feature_names_out())
    assert all(est.vocabulary_[name] == i for i, name in enumerate(names))


def test_unicode_cyrillic():
    """test_vectorizer_unicode (the counting half)."""
    document = ("Машинное обучение — обширный подраздел искусственного интеллекта, изучающий "
                "методы построения алгоритмов, способных обучаться.")
    X = BagOfWords().fit_transform([document])
    assert X.shape == (1, 12)
    _same_matrix(X, CountVectorizer().fit_transform([document]))


def test_tfidf_with_fixed_vocabulary():
    """test_tfidf_vectorizer_with_fixed_vocabulary."""
    est = TfidfVectorizer(vocabulary=["pizza", "celeri"])
    X1 = est.fit_transform(FOOD)
    np.testing.assert_allclose(X1.toarray(), est.transform(FOOD).toarray(), atol=1e-15)
    _same_matrix(X1, SklearnTfidf(vocabulary=["pizza", "celeri"]).fit_transform(FOOD))
    assert est.fixed_vocabulary_


def test_unsmoothed_idf_of_a_term_absent_from_training():
    """A fixed-vocabulary term that no training document holds, with smooth_idf=False:
    scikit-learn's idf_ (inf, with its divide-by-zero RuntimeWarning), its output where the
    term is absent, and a ValueError naming the term where scikit-learn's transform fails."""
    vocabulary = ["pizza", "zebra", "beer"]
    with pytest.warns(RuntimeWarning, match="divide by zero"):
        theirs = SklearnTfidf(vocabulary=vocabulary, smooth_idf=False).fit(FOOD)
    ours = TfidfVectorizer(vocabulary=vocabulary, smooth_idf=False)
    with pytest.warns(RuntimeWarning, match="divide by zero .*'zebra'"):
        X = ours.fit_transform(FOOD)
    np.testing.assert_array_equal(ours.idf_, theirs.idf_)
    assert np.isinf(ours.idf_[1])
    _same_matrix(X, theirs.transform(FOOD))
    _same_matrix(ours.transform(["pizza beer beer"]), theirs.transform(["pizza beer beer"]))
    with pytest.raises(ValueError):
        theirs.transform(["zebra pizza"])
    with pytest.raises(ValueError, match="'zebra'.* infinite idf.*smooth_idf=True"):
        ours.transform(["pizza", "zebra pizza"])
    for kwargs in ({"norm": None}, {"sublinear_tf": True}, {"dtype": np.float32}):
        est = TfidfVectorizer(vocabulary=vocabulary, smooth_idf=False, **kwargs)
        with pytest.warns(RuntimeWarning, match="divide by zero"):
            est.fit(FOOD)
        with pytest.raises(ValueError, match="'zebra'"):
            est.transform(["zebra"])
    with warnings.catch_warnings():     # smoothed, or learnt: every idf is finite
        warnings.simplefilter("error")
        assert np.isfinite(TfidfVectorizer(vocabulary=vocabulary).fit(FOOD).idf_).all()
        assert np.isfinite(TfidfVectorizer(smooth_idf=False).fit(FOOD).idf_).all()


def test_unsmoothed_idf_streamed_becomes_finite_once_the_term_is_seen():
    """partial_fit: a term not seen yet may come in a later batch (no warning), but a
    document that holds it cannot be weighed until then."""
    est = TfidfVectorizer(vocabulary=["pizza", "zebra"], smooth_idf=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est.partial_fit(JUNK)
        assert np.isinf(est.idf_[1])
        with pytest.raises(ValueError, match="Document 0 holds 'zebra'"):
            est.transform(["zebra"])
        est.partial_fit(["a zebra"])
    expected = SklearnTfidf(vocabulary=["pizza", "zebra"], smooth_idf=False).fit(
        [*JUNK, "a zebra"])
    np.testing.assert_allclose(est.idf_, expected.idf_, rtol=1e-15)
    _same_matrix(est.transform(["zebra pizza"]), expected.transform(["zebra pizza"]))


def test_tfidf_binary():
    """test_tfidfvectorizer_binary."""
    est = TfidfVectorizer(binary=True, use_idf=False, norm=None)
    docs = ["hello world", "hello hello"]
    np.testing.assert_array_equal(est.fit_transform(docs).toarray().ravel(), [1, 1, 1, 0])
    np.testing.assert_array_equal(est.transform(docs).toarray().ravel(), [1, 1, 1, 0])


# --- inverse_transform --------------------------------------------------------------------

@pytest.mark.parametrize("Ours, Theirs", PAIRS)
def test_inverse_transform_equals_sklearn(Ours, Theirs, polarity):
    """test_vectorizer_inverse_transform: CSR, dense and CSC input give the same terms."""
    docs = polarity[:200]
    ours, theirs = Ours(), Theirs()
    X = ours.fit_transform(docs)
    theirs.fit(docs)
    assert X.format == "csr"
    expected = theirs.inverse_transform(X)
    analyze = ours.build_analyzer()
    for matrix in (X, X.toarray(), X.tocsc()):
        inverse = ours.inverse_transform(matrix)
        assert isinstance(inverse, list) and len(inverse) == len(docs)
        for doc, terms, their_terms in zip(docs, inverse, expected):
            np.testing.assert_array_equal(np.sort(terms.astype(str)), np.sort(their_terms))
            np.testing.assert_array_equal(np.sort(terms.astype(str)), np.unique(analyze(doc)))


def test_inverse_transform_checks_width():
    est = BagOfWords().fit(FOOD)
    with pytest.raises(ValueError, match="X has 2 columns but this vectorizer has 11 features"):
        est.inverse_transform(np.ones((1, 2)))
    assert est.inverse_transform(np.zeros((0, 11))) == []


# --- Pipelines, pickling, clone -----------------------------------------------------------

def _food_target():
    return np.array([-1] * len(JUNK) + [1] * len(NOT_JUNK))


@pytest.mark.parametrize("Ours, Theirs", PAIRS)
def test_pipeline_grid_selection_equals_sklearn(Ours, Theirs):
    """test_count_vectorizer_pipeline_grid_selection, test_vectorizer_pipeline_grid_selection."""
    X_train, X_test, y_train, y_test = train_test_split(
        list(FOOD), _food_target(), test_size=0.2, random_state=0)
    grid = {"vect__ngram_range": [(1, 1), (1, 2)], "svc__loss": ("hinge", "squared_hinge")}
    for Vectorizer in (Ours, Theirs):
        search = GridSearchCV(Pipeline([("vect", Vectorizer()), ("svc", LinearSVC())]), grid,
                              cv=3)
        np.testing.assert_array_equal(search.fit(X_train, y_train).predict(X_test), y_test)
        assert search.best_score_ == 1.0
        assert search.best_params_["vect__ngram_range"] == (1, 1)


def test_tfidf_grid_over_norm_equals_sklearn():
    """test_vectorizer_pipeline_grid_selection: norm in the grid, a learnt vocabulary."""
    X_train, X_test, y_train, y_test = train_test_split(
        list(FOOD), _food_target(), test_size=0.1, random_state=0)
    grid = {"vect__ngram_range": [(1, 1), (1, 2)], "vect__norm": ("l1", "l2"),
            "svc__loss": ("hinge", "squared_hinge")}
    chosen = []
    for Vectorizer in (TfidfVectorizer, SklearnTfidf):
        search = GridSearchCV(Pipeline([("vect", Vectorizer()), ("svc", LinearSVC())]), grid,
                              cv=4)
        np.testing.assert_array_equal(search.fit(X_train, y_train).predict(X_test), y_test)
        best = search.best_estimator_.named_steps["vect"]
        assert search.best_score_ == 1.0 and not best.fixed_vocabulary_
        chosen.append(search.best_params_)
    assert chosen[0] == chosen[1] and chosen[0]["vect__norm"] == "l2"


def test_pipeline_cross_validation():
    """test_vectorizer_pipeline_cross_validation."""
    scores = cross_val_score(Pipeline([("vect", TfidfVectorizer()), ("svc", LinearSVC())]),
                             list(FOOD), _food_target(), cv=3)
    np.testing.assert_array_equal(scores, [1.0, 1.0, 1.0])


@pytest.mark.parametrize(
    "est",
    [BagOfWords(), BagOfWords(preprocessor=strip_tags), BagOfWords(analyzer=lazy_analyze),
     BagOfWords(preprocessor=strip_tags).fit(JUNK),
     BagOfWords(strip_accents=strip_eacute).fit(JUNK),
     TfidfVectorizer(), TfidfVectorizer(analyzer=lazy_analyze), TfidfVectorizer().fit(JUNK)],
    ids=lambda est: repr(est),
)
def test_pickling_vectorizer(est):
    """test_pickling_vectorizer."""
    copy = pickle.loads(pickle.dumps(est))
    assert type(copy) is type(est) and copy.get_params() == est.get_params()
    np.testing.assert_allclose(copy.fit_transform(JUNK).toarray(),
                               est.fit_transform(JUNK).toarray(), rtol=0, atol=1e-12)


@pytest.mark.parametrize("factory", ["build_analyzer", "build_preprocessor", "build_tokenizer"])
@pytest.mark.parametrize(
    "kwargs", [{}, dict(strip_accents="unicode", stop_words=["du"], ngram_range=(1, 2)),
               dict(analyzer="char_wb", ngram_range=(2, 3)), dict(stemmer="porter")])
def test_pickling_built_processors(factory, kwargs):
    """test_pickling_built_processors: the built callables pickle and agree with sklearn."""
    function = getattr(BagOfWords(**kwargs), factory)()
    restored = pickle.loads(pickle.dumps(function))
    assert restored(FRENCH) == function(FRENCH)
    if "stemmer" not in kwargs:
        assert function(FRENCH) == getattr(CountVectorizer(**kwargs), factory)()(FRENCH)


@pytest.mark.parametrize("Est", [BagOfWords, TfidfVectorizer])
def test_no_n_features_in_and_no_set_output(Est):
    """test_n_features_in, test_vectorizers_do_not_have_set_output."""
    est = Est()
    assert not hasattr(est, "set_output")
    assert not hasattr(est.fit(JUNK), "n_features_in_")


# --- TfidfVectorizer: idf_, dtype ---------------------------------------------------------

def test_idf_setter():
    """test_tfidf_vectorizer_setter, test_tfidfvectorizer_invalid_idf_attr."""
    fitted = TfidfVectorizer(use_idf=True).fit(JUNK)
    copy = TfidfVectorizer(vocabulary=fitted.vocabulary_, use_idf=True)
    copy.idf_ = fitted.idf_
    np.testing.assert_allclose(copy.transform(JUNK).toarray(), fitted.transform(JUNK).toarray(),
                               rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="`idf_` cannot be set"):
        TfidfVectorizer(vocabulary=fitted.vocabulary_, use_idf=False).idf_ = fitted.idf_
    with pytest.raises(ValueError, match="one value per vocabulary term"):
        TfidfVectorizer(vocabulary=fitted.vocabulary_).idf_ = [1.0] * (len(fitted.idf_) + 1)
    with pytest.raises(NotFittedError):
        TfidfVectorizer(vocabulary=fitted.vocabulary_).transform(JUNK)
    for Est in (SklearnTfidf, TfidfVectorizer):   # an AttributeError too: hasattr is False
        with pytest.raises(NotFittedError):
            Est().idf_  # noqa: B018
        assert not hasattr(Est(), "idf_")


@pytest.mark.filterwarnings("ignore:The parameter 'smooth_idf' will not be used")
def test_weighting_parameters_apply_at_the_next_fit():
    """test_tfidf_vectorizer_setters and test_tfidfvectorizer_export_idf, through the public
    ``weighting_`` (scikit-learn's private ``_tfidf``): a parameter set after fit changes
    nothing until the next fit."""
    before = {"norm": "l2", "use_idf": False, "smooth_idf": False, "sublinear_tf": False}
    after = {"norm": "l1", "use_idf": True, "smooth_idf": True, "sublinear_tf": True}
    est = TfidfVectorizer(**before).fit(JUNK)
    X = est.transform(JUNK)
    est.set_params(**after)
    assert {name: getattr(est.weighting_, name) for name in before} == before
    np.testing.assert_array_equal(est.transform(JUNK).toarray(), X.toarray())
    est.fit(JUNK)
    assert {name: getattr(est.weighting_, name) for name in after} == after
    _same_matrix(est.transform(JUNK), SklearnTfidf(**after).fit(JUNK).transform(JUNK))
    np.testing.assert_array_equal(est.idf_, est.weighting_.idf_)


def test_known_difference_idf_without_use_idf_is_ones():
    """scikit-learn has no idf_ when use_idf=False; nlpfeat's is the (uniform) weight used."""
    with pytest.raises(AttributeError):
        SklearnTfidf(use_idf=False).fit(JUNK).idf_   # noqa: B018
    est = TfidfVectorizer(use_idf=False).fit(JUNK)
    np.testing.assert_array_equal(est.idf_, np.ones(len(est.vocabulary_)))


@pytest.mark.parametrize(
    "dtype, output_dtype, warns",
    [(np.int32, np.float64, True), (np.int64, np.float64, True),
     (np.float32, np.float32, False), (np.float64, np.float64, False)],
)
def test_tfidf_dtype(dtype, output_dtype, warns):
    """test_tfidf_vectorizer_type, test_tfidf_vectorizer_preserve_dtype_idf."""
    docs = np.array(["numpy", "scipy", "sklearn"])
    est = TfidfVectorizer(dtype=dtype)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        X = est.fit_transform(docs)
    messages = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    assert any("'dtype' should be used" in m for m in messages) == warns
    assert X.dtype == output_dtype == est.transform(docs).dtype
    assert est.idf_.dtype == output_dtype
    _same_matrix(X, SklearnTfidf().fit_transform(docs), atol=1e-6)


def test_idf_dtype_on_many_terms():
    """test_tfidf_vectorizer_preserve_dtype_idf (fewer documents)."""
    docs = [str(uuid.UUID(int=i * 7919 + 1)) for i in range(2000)]
    for dtype in (np.float32, np.float64):
        assert TfidfVectorizer(dtype=dtype).fit(docs).idf_.dtype == dtype


# --- bad input and unused parameters ------------------------------------------------------

@pytest.mark.parametrize("Est", [BagOfWords, TfidfVectorizer])
def test_string_object_as_input(Est):
    """test_vectorizer_string_object_as_input."""
    message = "Iterable over raw text documents expected, string object received."
    est = Est()
    for method in (est.fit, est.fit_transform):
        with pytest.raises(ValueError, match=message):
            method("hello world!")
    est.fit(["some text", "some other text"])
    with pytest.raises(ValueError, match=message):
        est.transform("hello world!")


@pytest.mark.parametrize("Est", [BagOfWords, TfidfVectorizer])
def test_invalid_ngram_range(Est):
    """test_vectorizers_invalid_ngram_range (our wording)."""
    est = Est(ngram_range=(2, 1))
    for method in (est.fit, est.fit_transform):
        with pytest.raises(ValueError, match=re.escape("ngram_range=(2, 1) is invalid")):
            method(["good news everyone"])


@pytest.mark.parametrize("Est", [BagOfWords, TfidfVectorizer])
def test_callable_analyzer_errors(Est, tmp_path):
    """test_callable_analyzer_error, test_callable_analyzer_change_behavior ("filename"),
    test_callable_analyzer_reraise_error."""
    data = ["this is text, not file or filename"]
    for analyzer in (str.split, lambda doc: open(doc)):
        with pytest.raises(FileNotFoundError, match="no file named 'this is text"):
            Est(analyzer=analyzer, input="filename").fit_transform(data)

    def failing(doc):
        raise Exception("testing")

    path = tmp_path / "file.txt"
    path.write_text("sample content\n")
    with open(path) as fh, pytest.raises(Exception, match="testing"):
        Est(analyzer=failing, input="file").fit_transform([fh])


@pytest.mark.parametrize("Est", [BagOfWords, TfidfVectorizer])
def test_known_difference_str_for_input_file(Est):
    """scikit-learn raises AttributeError ("'str' object has no attribute 'read'")."""
    with pytest.raises(TypeError, match="Document 0 is of type str .* expected an open file"):
        Est(analyzer=str.split, input="file").fit_transform(["text, not a file"])


def test_known_difference_token_pattern_warns_only_when_given():
    """scikit-learn's default token_pattern is a pattern, so a tokenizer alone warns and its
    own pattern given with analyzer='char' does not; nlpfeat's default is None."""
    default = r"(?u)\b\w\w+\b"
    with pytest.warns(UserWarning, match="'token_pattern' will not be used"):
        CountVectorizer(tokenizer=str.split).fit(JUNK)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        CountVectorizer(analyzer="char", token_pattern=default).fit(JUNK)
        BagOfWords(tokenizer=str.split).fit(JUNK)
    with pytest.warns(UserWarning, match="'token_pattern' will not be used since 'analyzer'"):
        BagOfWords(analyzer="char", token_pattern=default).fit(JUNK)


@pytest.mark.parametrize("Est", [BagOfWords, TfidfVectorizer])
def test_stop_word_check_with_custom_preprocessing(Est):
    """test_stop_word_validation_custom_preprocessor: a preprocessor made for other objects
    skips the stop-word check (also when it comes from an overridden build_preprocessor);
    a tokenizer that keeps one-letter words makes a list consistent."""

    class CustomPreprocessor(Est):
        def build_preprocessor(self):
            return lambda doc: doc["text"]

    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        Est(preprocessor=lambda doc: doc["text"], stop_words=["and"])._check_text_params()
        CustomPreprocessor(stop_words=["and"])._check_text_params()
        Est(tokenizer=lambda doc: re.compile(r"\w{1,}").findall(doc),
            stop_words=["and", "a"]).fit(["a cat and a dog"])


@pytest.mark.parametrize("Ours, Theirs", PAIRS)
def test_known_difference_nan_document_is_a_type_error(Ours, Theirs):
    """test_hashingvectorizer_nan_in_docs: scikit-learn's ValueError is a TypeError here."""
    docs = ["hello world", np.nan, "hello hello"]
    with pytest.raises(ValueError, match="np.nan is an invalid document"):
        Theirs().fit_transform(docs)
    with pytest.raises(TypeError, match=r"Document 1 is of type float \(nan\)"):
        Ours().fit_transform(docs)


def test_known_difference_stop_words_checked_at_every_fit():
    """test_vectorizer_stop_words_inconsistent: scikit-learn warns once per list (cached
    by the list's id()); nlpfeat checks at every fit, so a list changed in place is seen."""
    stop_words = ["you've", "you"]
    theirs, ours = CountVectorizer(stop_words=stop_words), BagOfWords(stop_words=stop_words)
    for est in (theirs, ours):
        with pytest.warns(UserWarning, match="stop_words may be inconsistent"):
            est.fit(["hello world"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        theirs.fit(["hello world"])
    with pytest.warns(UserWarning, match="stop_words may be inconsistent"):
        ours.fit(["hello world"])
    stop_words[0] = "you"              # consistent now, in place
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        ours.fit(["hello world"])


@pytest.mark.parametrize("bad", [lambda doc: doc.upper(), lambda doc: None])
def test_known_difference_analyzer_must_return_a_list(bad):
    """scikit-learn counts the characters of a str and fails deep inside on None."""
    for kwargs in (dict(analyzer=bad), dict(tokenizer=bad)):
        with pytest.raises(TypeError, match="must return a list of str"):
            BagOfWords(**kwargs).fit(JUNK)


def _upper(text):
    return text.upper().split()


# test_unused_parameters_warn's cases (an analyzer returning a list: see the known
# difference), and a callable analyzer with the options that only the word analyzer reads
UNUSED = [
    ({"stop_words": ["you've", "you'll"], "analyzer": "char"}, "'stop_words'",
     "'analyzer' != 'word'"),
    ({"tokenizer": str.split, "analyzer": "char"}, "'tokenizer'", "'analyzer' != 'word'"),
    ({"tokenizer": str.split, "token_pattern": r"\w+"}, "'token_pattern'",
     "'tokenizer' is not None"),
    ({"preprocessor": str.upper, "token_pattern": r"\w+", "analyzer": _upper}, "'preprocessor'",
     "'analyzer' is callable"),
    ({"ngram_range": (1, 2), "analyzer": _upper}, "'ngram_range'", "'analyzer' is callable"),
    ({"token_pattern": r"\w+", "analyzer": "char"}, "'token_pattern'", "'analyzer' != 'word'"),
    ({"token_pattern": r"\w+", "analyzer": _upper}, "'token_pattern'", "'analyzer' != 'word'"),
    ({"stop_words": ["you"], "analyzer": _upper}, "'stop_words'", "'analyzer' != 'word'"),
    ({"tokenizer": str.split, "analyzer": _upper}, "'tokenizer'", "'analyzer' != 'word'"),
]


@pytest.mark.parametrize("Ours, Theirs", PAIRS)
@pytest.mark.parametrize("params, unused, because", UNUSED)
def test_unused_parameters_warn(Ours, Theirs, params, unused, because):
    """test_unused_parameters_warn: scikit-learn's message (its own pattern) from both."""
    message = f"The parameter {unused} will not be used since {because}"
    for Est in (Theirs, Ours):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            Est(**params).fit(JUNK)
        messages = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
        assert any(re.search(message, m) for m in messages), (Est.__name__, messages)


@pytest.mark.parametrize("Ours, Theirs", PAIRS)
def test_empty_transform_gives_zero_rows(Ours, Theirs):
    """scikit-learn's TfidfVectorizer raises on transform([]); nlpfeat returns 0 rows."""
    ours = Ours().fit(FOOD)
    X = ours.transform([])
    assert X.shape == (0, len(ours.vocabulary_)) and X.format == "csr"
    if Theirs is CountVectorizer:
        assert Theirs().fit(FOOD).transform([]).shape == X.shape
