"""HashingVectorizer's word analyzer on the compiled tokenizer: bit for bit its Python path
(the private switch ``_compiled_text = False``) and scikit-learn's, for every option the
compiled scan honours; the options it cannot honour keep the Python path."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.feature_extraction.text import HashingVectorizer as SklearnHashing

from nlpfeat.text import HashingVectorizer
from nlpfeat.text._base._analyzer import text_pass_options

SKLEARN_PATTERN = r"(?u)\b\w\w+\b"
WORDS = ["the", "The", "CAT", "café", "CAFÉ", "naïve", "İstanbul", "ΟΔΟΣ", "中文", "x",
         "_a", "٣٤", "don't", "\u0301é", "ß", "K\u212a"]
docs = st.lists(st.lists(st.sampled_from(WORDS + [" ", ", ", "\n"]), max_size=10)
                .map("".join), min_size=1, max_size=6)
options = st.fixed_dictionaries({}, optional={
    "ngram_range": st.sampled_from([(1, 1), (1, 2), (2, 3)]),
    "lowercase": st.booleans(), "strip_accents": st.sampled_from([None, "ascii", "unicode"]),
    "alternate_sign": st.booleans(), "binary": st.booleans(),
    "norm": st.sampled_from([None, "l1", "l2"]), "n_features": st.sampled_from([7, 2**20]),
})


def python_path(estimator):
    estimator._compiled_text = False
    return estimator


def assert_bits_equal(A, B):
    assert A.shape == B.shape and A.dtype == B.dtype
    for name in ("indptr", "indices", "data"):
        a, b = getattr(A, name), getattr(B, name)
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))


@settings(max_examples=40, deadline=None)
@given(docs, options, st.booleans())
def test_compiled_word_hashing_equals_python_path_and_sklearn(X, kwargs, sklearn_pattern):
    pattern = {"token_pattern": SKLEARN_PATTERN} if sklearn_pattern else {}
    compiled = HashingVectorizer(**kwargs, **pattern)
    assert text_pass_options(compiled, stop_words=False) is not None
    A = compiled.transform(X)
    assert_bits_equal(A, python_path(HashingVectorizer(**kwargs, **pattern)).transform(X))
    if sklearn_pattern:
        assert_bits_equal(A, SklearnHashing(**kwargs).transform(X))


def test_many_chunks_and_a_lone_surrogate(monkeypatch):
    from nlpfeat.text._vectorizers import _hashing

    monkeypatch.setattr(_hashing, "_CHUNK_SIZE", 64)          # many chunks
    X = [" ".join(WORDS[i % len(WORDS):]) for i in range(40)]
    kwargs = {"token_pattern": SKLEARN_PATTERN, "ngram_range": (1, 2)}
    assert_bits_equal(HashingVectorizer(**kwargs).transform(X),
                      SklearnHashing(ngram_range=(1, 2)).transform(X))
    X = ["fine Words", "bad \udcff one"]          # a chunk UTF-8 cannot encode: Python path
    assert_bits_equal(HashingVectorizer().transform(X),
                      python_path(HashingVectorizer()).transform(X))


@pytest.mark.parametrize("kwargs", [
    {"stop_words": "english"}, {"token_pattern": r"\b\w+\b"}, {"stemmer": "porter"},
    {"preprocessor": str.upper}, {"tokenizer": "whitespace"}, {"analyzer": "char"},
])
def test_options_the_scan_cannot_honour_keep_the_python_path(kwargs):
    hv = HashingVectorizer(**kwargs)
    assert text_pass_options(hv, stop_words=False) is None
    X = ["The cat and THE dog", "a Cat"]
    assert_bits_equal(hv.transform(X), python_path(HashingVectorizer(**kwargs)).transform(X))
