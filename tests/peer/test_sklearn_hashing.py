"""HashingVectorizer against scikit-learn's on real text (gensim's Lee background corpus),
and the behaviours of scikit-learn's own ``HashingVectorizer`` tests
(``sklearn/feature_extraction/tests/test_text.py``, named in each docstring)."""
import numpy as np
import pytest
from gensim.test.utils import datapath
from sklearn.feature_extraction.text import HashingVectorizer as SklearnHashing

from nlpfeat.datasets import Corpus
from nlpfeat.text import HashingVectorizer

SKLEARN_PATTERN = r"(?u)\b\w\w+\b"


@pytest.fixture(scope="module")
def lee():
    return list(Corpus(datapath("lee_background.cor")))


@pytest.mark.parametrize("kwargs", [
    {},
    {"ngram_range": (1, 2), "norm": "l1", "n_features": 2**18},
    {"analyzer": "char_wb", "ngram_range": (2, 4), "alternate_sign": False},
    {"analyzer": "char", "ngram_range": (1, 3), "binary": True, "n_features": 1000},
    {"stop_words": "english", "ngram_range": (1, 3), "n_features": 17, "norm": None},
])
def test_equals_sklearn_on_lee(lee, kwargs):
    pattern = {"token_pattern": SKLEARN_PATTERN} if kwargs.get("analyzer") is None else {}
    ours = HashingVectorizer(**kwargs, **pattern).transform(lee)
    theirs = SklearnHashing(**kwargs).transform(lee)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    assert ours.indices.dtype == theirs.indices.dtype
    assert ours.indptr.dtype == theirs.indptr.dtype
    np.testing.assert_array_equal(ours.indptr, theirs.indptr)
    np.testing.assert_array_equal(ours.indices, theirs.indices)
    np.testing.assert_array_equal(ours.data, theirs.data)


def test_hashing_vectorizer(lee):
    """``test_hashing_vectorizer``: signs, bounded values, unit rows; n-grams add entries."""
    X = HashingVectorizer().transform(lee)
    assert X.shape == (len(lee), 2**20) and X.dtype == np.float64
    assert -1 < X.data.min() < 0 < X.data.max() < 1
    np.testing.assert_allclose(np.sqrt(X.multiply(X).sum(axis=1)).ravel(), 1.0, rtol=1e-12)
    X2 = HashingVectorizer(ngram_range=(1, 2), norm="l1").transform(lee)
    assert X2.nnz > X.nnz     # (scikit-learn's "< 2x" holds for its short documents only)
    np.testing.assert_allclose(abs(X2).sum(axis=1).A.ravel(), 1.0, rtol=1e-12)


def test_hashed_binary_occurrences():
    """``test_hashed_binary_occurrences``: counts by default, ones with ``binary``."""
    docs = ["aaabc", "abbde"]
    X = HashingVectorizer(alternate_sign=False, analyzer="char", norm=None).transform(docs)
    assert X[0].data.max() == 3 and X[1].data.max() == 2 and X.dtype == np.float64
    X = HashingVectorizer(analyzer="char", alternate_sign=False, binary=True,
                          norm=None).transform(docs)
    assert X.data.max() == 1 and X.dtype == np.float64


def test_nonnegative_hashing_vectorizer_result_indices():
    """``test_nonnegative_hashing_vectorizer_result_indices`` (scikit-learn PR 19035)."""
    X = HashingVectorizer(n_features=1000000, ngram_range=(2, 3)).transform(["22pcs efuture"])
    assert X.indices.min() >= 0


def test_hashing_vectorizer_transform_without_fit():
    """``test_hashing_vectorizer_transform_without_fit`` and ``..._requires_fit_tag``."""
    X = HashingVectorizer(n_features=10).transform(["hello world", "hello"])
    assert X.shape == (2, 10)
