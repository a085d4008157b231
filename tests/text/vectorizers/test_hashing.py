"""HashingVectorizer: equal to scikit-learn's bit for bit (CSR structure included) over
random options and texts; the compiled MurmurHash3 and row sums; statelessness, chunks,
bad input."""
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.feature_extraction.text import HashingVectorizer as SklearnHashing
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.utils import get_tags, murmurhash3_32

from nlpfeat.text import HashingVectorizer
from nlpfeat.text._counting._murmur import hash_spans, hashed_rows
from nlpfeat.text._vectorizers import _hashing

SKLEARN_PATTERN = r"(?u)\b\w\w+\b"
DOCS = ["the fat cat sat on the mat", "The dog ate my homework!", "", "a cat and a dog",
        "Héllo   wörld\n x\ty  ", "我爱NLP和machine learning"]


def assert_same_csr(got, expected):
    """Equal matrices, bit for bit: shape, dtypes, indptr, indices and data."""
    assert sp.issparse(got) and got.format == "csr"
    assert type(got) is type(expected)
    assert got.shape == expected.shape
    assert got.dtype == expected.dtype
    assert got.indptr.dtype == expected.indptr.dtype
    assert got.indices.dtype == expected.indices.dtype
    np.testing.assert_array_equal(got.indptr, expected.indptr)
    np.testing.assert_array_equal(got.indices, expected.indices)
    np.testing.assert_array_equal(got.data.view(np.uint8), expected.data.view(np.uint8))


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=40))
def test_murmur_equals_sklearn(data):
    buffer = np.frombuffer(b"xy" + data + b"z", np.uint8)      # a span inside a buffer
    got = hash_spans(buffer, np.array([2]), np.array([2 + len(data)]))
    assert got.dtype == np.int32
    assert int(got[0]) == murmurhash3_32(data, seed=0, positive=False)


@pytest.mark.parametrize("n_features", [1, 2, 3, 7, 2**20, 2**31 - 2])
def test_the_hash_without_abs_gets_sklearns_column(n_features):
    """abs(-2**31) does not exist in 32 bits; scikit-learn puts it at 2**31 % n_features."""
    hashes = np.array([-2**31, 5, -5], np.int32)
    indptr, indices, values = hashed_rows(hashes, np.array([0, 3]), n_features, True)
    expected = {2**31 % n_features: -1}
    for column, sign in ((5 % n_features, 1), (5 % n_features, -1)):
        expected[column] = expected.get(column, 0) + sign
    assert indptr.tolist() == [0, len(expected)]
    assert dict(zip(indices.tolist(), values.tolist())) == expected
    assert indices.tolist() == sorted(expected)


def test_cancelled_signs_stay_explicit_zeros_as_in_sklearn():
    docs = ["cat dog", "aa bb cc dd ee ff gg hh", "aa aa bb", "cat"]  # cat +1, dog -1
    for kwargs in ({"norm": None}, {"norm": None, "binary": True}, {"norm": "l2"}):
        ours = HashingVectorizer(n_features=1, **kwargs).transform(docs)
        theirs = SklearnHashing(n_features=1, **kwargs).transform(docs)
        assert_same_csr(ours, theirs)
    zero = HashingVectorizer(n_features=1, norm=None).transform(docs)
    assert zero.indptr.tolist() == [0, 1, 2, 3, 4] and zero.data.tolist() == [0, 0, 3, 1]


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)
_WORDY = st.lists(st.sampled_from(["a", "ab", "Ab", "é", "ça", "x y", "  ", "\n", "\t ",
                                   "の", "ß", "İ", "_", "1", "de-la", "!!"]),
                  max_size=12).map("".join)


@settings(max_examples=60, deadline=None)
@given(docs=st.lists(st.one_of(_TEXT, _WORDY), min_size=1, max_size=5),
       analyzer=st.sampled_from(["word", "char", "char_wb"]),
       min_n=st.integers(1, 3), extra=st.integers(0, 2),
       n_features=st.integers(2, 17), alternate_sign=st.booleans(),
       norm=st.sampled_from([None, "l1", "l2"]), binary=st.booleans(),
       lowercase=st.booleans(), strip_accents=st.sampled_from([None, "ascii", "unicode"]),
       dtype=st.sampled_from([np.float64, np.float32, np.int64]))
def test_equals_sklearn_over_random_options(docs, analyzer, min_n, extra, n_features,
                                            alternate_sign, norm, binary, lowercase,
                                            strip_accents, dtype):
    kwargs = dict(analyzer=analyzer, ngram_range=(min_n, min_n + extra), n_features=n_features,
                  alternate_sign=alternate_sign, norm=norm, binary=binary, lowercase=lowercase,
                  strip_accents=strip_accents, dtype=dtype)
    pattern = {"token_pattern": SKLEARN_PATTERN} if analyzer == "word" else {}
    ours = HashingVectorizer(**kwargs, **pattern).transform(docs)
    assert_same_csr(ours, SklearnHashing(**kwargs).transform(docs))


@pytest.mark.parametrize("kwargs", [
    {}, {"ngram_range": (1, 3), "n_features": 5}, {"stop_words": "english"},
    {"stop_words": ["the", "cat"], "ngram_range": (2, 2)},
    {"analyzer": "char", "ngram_range": (3, 5)}, {"analyzer": "char_wb", "ngram_range": (1, 4)},
    {"preprocessor": str.upper, "lowercase": False},
])
def test_equals_sklearn_on_the_fixed_documents(kwargs):
    pattern = {} if kwargs.get("analyzer", "word") != "word" else {"token_pattern":
                                                                   SKLEARN_PATTERN}
    ours = HashingVectorizer(**kwargs, **pattern).fit_transform(DOCS)
    assert_same_csr(ours, SklearnHashing(**kwargs).fit_transform(DOCS))


def test_default_tokens_are_the_cjk_aware_ones():
    """The default tokenizer makes each ideograph a token, as BagOfWords; scikit-learn
    with that tokenizer gives the same matrix."""
    hv = HashingVectorizer()
    sk = SklearnHashing(tokenizer=hv.build_tokenizer(), token_pattern=None)
    assert_same_csr(hv.transform(DOCS), sk.transform(DOCS))


def test_callable_analyzer_and_tokens_input():
    def analyzer(doc):
        return doc.split() + ["", "x y", "a\x00b"]        # empty, spaced and NUL features

    sk = SklearnHashing(analyzer=analyzer, n_features=11)
    assert_same_csr(HashingVectorizer(analyzer=analyzer, n_features=11).transform(DOCS),
                    sk.transform(DOCS))
    token_docs = [doc.split() for doc in DOCS]
    ours = HashingVectorizer(input="tokens", lowercase=False, ngram_range=(1, 2),
                             n_features=13).transform(token_docs)
    theirs = SklearnHashing(analyzer=lambda doc: doc, n_features=13).transform(
        [doc + [" ".join(p) for p in zip(doc, doc[1:])] for doc in token_docs])
    assert_same_csr(ours, theirs)


def test_any_chunk_size_gives_the_same_matrix(monkeypatch):
    docs = DOCS * 7
    expected = HashingVectorizer(ngram_range=(1, 2), n_features=31).transform(docs)
    for size in (1, 10, 50):
        monkeypatch.setattr(_hashing, "_CHUNK_SIZE", size)
        got = HashingVectorizer(ngram_range=(1, 2), n_features=31).transform(iter(docs))
        assert_same_csr(got, expected)


def test_stateless_as_sklearn():
    hv = HashingVectorizer(n_features=16)
    assert get_tags(hv).requires_fit is False
    assert get_tags(hv).input_tags.string
    assert not hasattr(hv, "get_feature_names_out")
    unfitted = hv.transform(DOCS)
    assert hv.partial_fit(DOCS) is hv and hv.fit(DOCS) is hv
    assert vars(hv) == vars(HashingVectorizer(n_features=16))  # nothing learnt
    assert_same_csr(hv.fit_transform(iter(DOCS)), unfitted)      # fit does not read X
    assert_same_csr(clone(hv).transform(DOCS), unfitted)
    assert_same_csr(pickle.loads(pickle.dumps(hv)).transform(DOCS), unfitted)


def test_pipeline_and_grid_search():
    docs = ["good great fine", "bad awful poor", "great good", "poor bad"] * 5
    y = [1, 0, 1, 0] * 5
    pipe = make_pipeline(HashingVectorizer(n_features=64), LogisticRegression())
    search = GridSearchCV(pipe, {"hashingvectorizer__ngram_range": [(1, 1), (1, 2)]}, cv=2)
    assert search.fit(docs, y).score(docs, y) == 1.0


@pytest.mark.parametrize("kwargs, error, match", [
    ({"n_features": 0}, ValueError, "n_features"),
    ({"n_features": 2**31 - 1}, ValueError, "n_features"),
    ({"dtype": np.uint8}, ValueError, "signed"),
    ({"dtype": bool}, ValueError, "signed"),
    ({"dtype": "nonsense"}, ValueError, "signed"),
    ({"ngram_range": (2, 1)}, ValueError, "ngram_range"),
    ({"norm": "l3"}, ValueError, "norm"),
])
def test_bad_parameters_are_clear_errors_in_fit_and_transform(kwargs, error, match):
    for call in ("fit", "transform"):
        with pytest.raises(error, match=match):
            getattr(HashingVectorizer(**kwargs), call)(DOCS)


def test_bad_input_is_a_clear_error():
    hv = HashingVectorizer()
    for X in ("one document", b"one document"):
        for call in (hv.fit, hv.transform, hv.fit_transform):
            with pytest.raises(ValueError, match="string object received"):
                call(X)
    empty = hv.transform([])                       # scikit-learn: StopIteration
    assert empty.shape == (0, hv.n_features) and empty.nnz == 0
    with pytest.raises(ValueError, match="Document 1 holds a lone surrogate"):
        HashingVectorizer(analyzer="char").transform(["fine", "bad \ud800 text"])
    with pytest.raises(ValueError, match="Document 2 holds a lone surrogate"):
        HashingVectorizer(tokenizer=str.split).transform(["a", "b", "c \udfff"])
    with pytest.raises(TypeError, match="Features must be str"):
        HashingVectorizer(analyzer=lambda doc: [1, 2]).transform(["a"])


@pytest.mark.parametrize("kwargs", [{"encoding": "latin-1"}, {"decode_error": "replace"},
                                    {"decode_error": "ignore", "analyzer": "char"}])
def test_bytes_are_decoded_as_sklearn_decodes_them(kwargs):
    docs = [b"caf\xe9 cr\xe8me br\xfbl\xe9e", b"na\xefve \xff\xfe text", "déjà vu".encode()]
    pattern = {} if "analyzer" in kwargs else {"token_pattern": SKLEARN_PATTERN}
    ours = HashingVectorizer(**kwargs, **pattern).transform(docs)
    assert_same_csr(ours, SklearnHashing(**kwargs).transform(docs))
