"""The character analyzers of BagOfWords / TfidfVectorizer and PositionalBagOfWords on the
compiled text pass equal their Python path (the private switch ``_compiled_text = False``)
and scikit-learn's ``CountVectorizer(analyzer="char" / "char_wb")``, on arbitrary Unicode
text (combining marks, white space of other scripts, empty documents), for every chunk
size and ``n_jobs``."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.feature_extraction.text import TfidfVectorizer as SklearnTfidf

from nlpfeat.datasets import load_lee
from nlpfeat.text import BagOfWords, PositionalBagOfWords, TfidfVectorizer

SPECIAL = ["\u0301", "\u0308", "e\u0301", "\u3000", "\u2028", "\x85", "\x1c", "\xa0",
           "\u1680", "\t", "\n", "  ", " ", "İ", "ß", "Σ", "ΣΑΣ", "中文", "\x00", "Café",
           "ﬁ", "٣", "_", "K\u212a"]
TEXT = st.lists(st.one_of(st.sampled_from(SPECIAL),
                          st.text(st.characters(blacklist_categories=("Cs",)), max_size=4)),
                max_size=10).map("".join)
DOCS = st.lists(TEXT, min_size=1, max_size=6)
RANGES = st.sampled_from([(1, 1), (1, 3), (2, 4), (3, 3), (2, 5)])
CHAR_OPTIONS = st.fixed_dictionaries({}, optional={
    "lowercase": st.booleans(), "strip_accents": st.sampled_from([None, "ascii", "unicode"]),
    "min_df": st.sampled_from([1, 2, 0.5]), "max_df": st.sampled_from([1.0, 0.8, 1]),
    "max_features": st.sampled_from([None, 1, 7]), "binary": st.booleans(),
})
CHUNKING = st.sampled_from([{}, {"working_memory": 0.0005}, {"working_memory": 0.002,
                                                             "n_jobs": 2}])


def python_path(estimator):
    estimator._compiled_text = False
    return estimator


def fit_both(compiled, python, X):
    """``fit_transform`` of both, or None when both raise the same ValueError."""
    try:
        B = python.fit_transform(X)
    except ValueError as exc:                                  # an empty vocabulary
        with pytest.raises(ValueError, match=str(exc)[:30]):
            compiled.fit_transform(X)
        return None
    return compiled.fit_transform(X), B


def assert_equal_csr(A, B):
    assert A.shape == B.shape and A.dtype == B.dtype
    for name in ("indptr", "indices", "data"):
        np.testing.assert_array_equal(getattr(A, name), getattr(B, name))


@settings(max_examples=30, deadline=None)
@given(DOCS, st.sampled_from(["char", "char_wb"]), RANGES, CHAR_OPTIONS, CHUNKING)
def test_char_analyzers_equal_the_python_path_and_sklearn(X, analyzer, ngram_range, options,
                                                           chunking):
    kwargs = {"analyzer": analyzer, "ngram_range": ngram_range, **options}
    compiled = BagOfWords(**kwargs, **chunking)
    assert compiled._text_pass_options() is not None
    found = fit_both(compiled, python_path(BagOfWords(**kwargs)), X)
    if found is None:
        return
    A, B = found
    sklearn = CountVectorizer(**kwargs)
    S = sklearn.fit_transform(X)
    assert compiled.vocabulary_ == sklearn.vocabulary_
    assert_equal_csr(A, B)
    assert (A != S).nnz == 0
    reverse = X[::-1] + ["unseen Ωmega"]
    assert (compiled.transform(reverse) != sklearn.transform(reverse)).nnz == 0


@settings(max_examples=15, deadline=None)
@given(DOCS, st.sampled_from(["char", "char_wb"]), RANGES, st.data())
def test_char_tfidf_and_a_fixed_vocabulary(X, analyzer, ngram_range, data):
    kwargs = {"analyzer": analyzer, "ngram_range": ngram_range}
    names = sorted({g for doc in X for g in
                    CountVectorizer(**kwargs).build_analyzer()(doc)})
    vocabulary = data.draw(st.lists(st.sampled_from(names), unique=True, max_size=6)) \
        if names else []
    vocabulary = vocabulary + ["zz unseen"]
    compiled = BagOfWords(**kwargs, vocabulary=vocabulary, working_memory=0.0005)
    A = compiled.fit_transform(X)
    assert_equal_csr(A, python_path(BagOfWords(**kwargs, vocabulary=vocabulary))
                     .fit_transform(X))
    assert (A != CountVectorizer(**kwargs, vocabulary=vocabulary).fit_transform(X)).nnz == 0
    found = fit_both(TfidfVectorizer(**kwargs), python_path(TfidfVectorizer(**kwargs)), X)
    if found is not None:
        assert_equal_csr(*found)
        np.testing.assert_allclose(found[0].toarray(),
                                   SklearnTfidf(**kwargs).fit_transform(X).toarray(),
                                   rtol=1e-12, atol=1e-15)


WORD_DOCS = st.lists(st.lists(st.one_of(
    st.sampled_from(["the", "The", "CAT", "cat", "café", "İstanbul", "ΟΔΟΣ", "中文", "x",
                     "don't", "\u0301é", "ß", " ", ", ", "\n"]),
    TEXT), max_size=10).map("".join), min_size=1, max_size=6)
POSITIONAL_OPTIONS = st.fixed_dictionaries({
    "position": st.sampled_from(["absolute", "from_end", "relative", "log"]),
}, optional={
    "ngram_range": RANGES, "max_position": st.sampled_from([None, 1, 3]),
    "n_bins": st.sampled_from([1, 3, 10]), "lowercase": st.booleans(),
    "strip_accents": st.sampled_from([None, "ascii", "unicode"]),
    "stop_words": st.sampled_from([None, "english", ["cat", "x"]]), "min_df": st.just(2),
})


@settings(max_examples=40, deadline=None)
@given(WORD_DOCS, st.sampled_from(["word", "char"]), POSITIONAL_OPTIONS, CHUNKING)
def test_positional_equals_the_python_path(X, analyzer, options, chunking):
    if analyzer == "char":
        options.pop("stop_words", None)
    kwargs = {"analyzer": analyzer, **options}
    chunking.pop("n_jobs", None)
    compiled = PositionalBagOfWords(**kwargs, **chunking)
    assert compiled._text_pass_options() is not None
    python = python_path(PositionalBagOfWords(**kwargs))
    found = fit_both(compiled, python, X)
    if found is None:
        return
    assert compiled.vocabulary_ == python.vocabulary_
    assert_equal_csr(*found)
    reverse = X[::-1]
    assert_equal_csr(compiled.transform(reverse), python.transform(reverse))


def test_lone_surrogates_and_every_chunk_size():
    X = load_lee().background[:40] + ["odd \udcff surrogate Words", "", "Ünïcode ΣΟΦΙΑ"]
    for Vectorizer, kwargs in ((BagOfWords, {"analyzer": "char_wb", "ngram_range": (2, 4)}),
                               (BagOfWords, {"analyzer": "char", "ngram_range": (1, 2)}),
                               (PositionalBagOfWords, {"max_position": 30}),
                               (PositionalBagOfWords, {"analyzer": "char",
                                                       "position": "relative"})):
        reference = python_path(Vectorizer(**kwargs))
        R = reference.fit_transform(X)
        for chunking in ({}, {"working_memory": 0.003}, {"working_memory": 0.01, "n_jobs": 2}):
            if Vectorizer is PositionalBagOfWords:
                chunking.pop("n_jobs", None)
            compiled = Vectorizer(**kwargs, **chunking)
            assert compiled._text_pass_options() is not None
            assert_equal_csr(compiled.fit_transform(iter(X)), R)     # a one-shot iterator
            assert compiled.vocabulary_ == reference.vocabulary_
    sklearn = CountVectorizer(analyzer="char_wb", ngram_range=(2, 4)).fit(X)
    assert BagOfWords(analyzer="char_wb", ngram_range=(2, 4)).fit(X).vocabulary_ == \
        sklearn.vocabulary_
