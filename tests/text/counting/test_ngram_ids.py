"""Word n-grams on the compiled text pass (``ngram_range``): BagOfWords and TfidfVectorizer
equal their Python path (the private switch ``_compiled_text = False``) and scikit-learn's
CountVectorizer, n-grams formed after stop words, never across documents, for every chunk
size and ``n_jobs``."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.feature_extraction.text import CountVectorizer

from nlpfeat.datasets import load_lee
from nlpfeat.text import BagOfWords, TfidfVectorizer
from nlpfeat.text._counting._ngram_ids import ngram_spans

SKLEARN_PATTERN = r"(?u)\b\w\w+\b"
WORDS = ["the", "The", "CAT", "cat", "café", "CAFÉ", "naïve", "İstanbul", "ΟΔΟΣ", "σας",
         "中文", "x", "_a", "٣٤", "don't", "ß", "STRASSE", "and", "is"]
RANGES = [(1, 2), (2, 2), (1, 3), (2, 4)]
sampled_docs = st.lists(st.lists(st.sampled_from(WORDS + [" ", ", ", "\n"]), max_size=14)
                        .map("".join), min_size=1, max_size=8)
unicode_docs = st.lists(st.text(st.characters(blacklist_categories=("Cs",)), max_size=40),
                        min_size=1, max_size=6)
options = st.fixed_dictionaries({"ngram_range": st.sampled_from(RANGES)}, optional={
    "stop_words": st.sampled_from(["english", ["cat", "σας", "the"]]),
    "lowercase": st.booleans(), "strip_accents": st.sampled_from(["ascii", "unicode"]),
    "min_df": st.sampled_from([1, 2, 0.3]), "max_df": st.sampled_from([0.6, 1.0]),
    "max_features": st.sampled_from([1, 5]), "binary": st.booleans(),
})


def python_path(estimator):
    estimator._compiled_text = False
    return estimator


def fitted(estimator, X):
    """``(matrix with sorted indices, vocabulary_)``, or ``(message, None)``: scikit-learn
    leaves each row's column indices in the order before its vocabulary was sorted."""
    try:
        A = estimator.fit_transform(X)
        if isinstance(estimator, CountVectorizer):
            A.sort_indices()
        return A, estimator.vocabulary_
    except ValueError as exc:                   # an empty vocabulary, said the same way
        return str(exc), None


def assert_equal(a, b, same_message=True):
    (A, va), (B, vb) = a, b
    if isinstance(A, str) or isinstance(B, str):
        assert isinstance(A, str) and isinstance(B, str)
        assert A == B or not same_message
        return
    assert va == vb
    assert A.shape == B.shape and A.dtype == B.dtype
    for name in ("indptr", "indices", "data"):
        np.testing.assert_array_equal(getattr(A, name), getattr(B, name))


@settings(max_examples=30, deadline=None)
@given(st.one_of(sampled_docs, unicode_docs), options, st.booleans(),
       st.sampled_from([None, 0.0004]), st.sampled_from([1, 2]))
def test_compiled_ngrams_equal_python_path_and_sklearn(X, kwargs, sklearn_pattern,
                                                      working_memory, n_jobs):
    pattern = {"token_pattern": SKLEARN_PATTERN} if sklearn_pattern else {}
    compiled = BagOfWords(**kwargs, **pattern, working_memory=working_memory, n_jobs=n_jobs)
    assert compiled._text_pass_options() is not None
    got = fitted(compiled, X)
    assert_equal(got, fitted(python_path(BagOfWords(**kwargs, **pattern)), X))
    if sklearn_pattern:
        assert_equal(got, fitted(CountVectorizer(**kwargs, dtype=np.int64), X),
                     same_message=False)       # scikit-learn words it otherwise
    if not isinstance(got[0], str):              # transform: unseen n-grams ignored
        Y = X[::-1] + ["the cat and the CAT café"]
        python = python_path(BagOfWords(**kwargs, **pattern)).fit(X)
        assert (compiled.transform(Y) != python.transform(Y)).nnz == 0


def test_word_ngrams_take_the_pass_only_in_the_counting_vectorizers():
    from nlpfeat.text import PositionalBagOfWords

    for Vectorizer in (BagOfWords, TfidfVectorizer):
        assert Vectorizer(ngram_range=(2, 4))._text_pass_options().ngram_range == (2, 4)
    positional = PositionalBagOfWords(ngram_range=(1, 2))._text_pass_options()
    assert positional.ngram_range == (1, 2) and positional.state.__name__ == "_PositionState"
    assert BagOfWords(ngram_range=(1, 2), tokenizer="whitespace")._text_pass_options() is None


def test_fixed_vocabulary_of_ngrams_whose_words_are_not_terms():
    vocabulary = ["cat sat", "sat", "the fat cat", "zzz yyy", "mat"]
    X = ["The fat cat sat on the mat", "", "cat", "sat cat sat"]
    for ngram_range in ((1, 2), (2, 3), (1, 3)):
        compiled = BagOfWords(ngram_range=ngram_range, vocabulary=vocabulary,
                              token_pattern=SKLEARN_PATTERN, working_memory=0.0001)
        reference = CountVectorizer(ngram_range=ngram_range, vocabulary=vocabulary)
        assert_equal(fitted(compiled, X), fitted(reference, X), same_message=False)


def test_ngrams_skip_stop_words_and_never_cross_documents():
    X = ["big and cat", "dog", "", "x", "and the", "red fox"]
    bow = BagOfWords(ngram_range=(2, 2), stop_words=["and"], working_memory=0.00002)
    assert sorted(bow.fit(X).vocabulary_) == ["big cat", "red fox"]   # not "dog red"
    buffer, starts, ends, offsets = ngram_spans(
        np.array([1, -1, 2, 3, 4, -1]), np.array([0, 3, 3, 4, 6]), (2, 3))
    kept = buffer.view(np.int32)
    assert [kept[s // 4:e // 4].tolist() for s, e in zip(starts, ends)] == [[1, 2]]
    assert offsets.tolist() == [0, 1, 1, 1, 1]


def test_lee_corpus_equal_for_every_n_jobs_and_chunk_size_and_tfidf():
    X = load_lee().background
    reference = CountVectorizer(ngram_range=(1, 2), dtype=np.int64).fit(X)
    ref = reference.transform(X)
    for n_jobs, working_memory in ((1, None), (2, 0.05), (-1, 0.02)):
        bow = BagOfWords(ngram_range=(1, 2), token_pattern=SKLEARN_PATTERN, n_jobs=n_jobs,
                         working_memory=working_memory)
        A = bow.fit_transform(X)
        assert bow.vocabulary_ == reference.vocabulary_
        assert (A != ref).nnz == 0
    tfidf = TfidfVectorizer(ngram_range=(2, 3), stop_words="english", min_df=2, n_jobs=2,
                            working_memory=0.05)
    python = python_path(TfidfVectorizer(ngram_range=(2, 3), stop_words="english", min_df=2))
    A, B = tfidf.fit_transform(X), python.fit_transform(X)
    assert tfidf.vocabulary_ == python.vocabulary_
    np.testing.assert_allclose(A.toarray(), B.toarray(), rtol=1e-12, atol=1e-15)


def test_partial_fit_and_a_lone_surrogate_chunk():
    X = load_lee().background[:40] + ["odd \udcff surrogate Words here", "Ünïcode ΣΟΦΙΑ x"]
    kwargs = {"ngram_range": (1, 3), "working_memory": 0.01}
    compiled, python = BagOfWords(**kwargs, n_jobs=2), python_path(BagOfWords(**kwargs))
    for part in (X[:25], X[25:]):
        compiled.partial_fit(iter(part))
        python.partial_fit(part)
    assert compiled.vocabulary_ == python.vocabulary_
    assert (compiled.transform(X) != python.transform(X)).nnz == 0
