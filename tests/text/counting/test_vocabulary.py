"""Vocabulary building, counting, pruning and the n-gram analyzers (shared text API)."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.feature_extraction.text import CountVectorizer

from nlpfeat.text._base._analyzer import (
    char_ngrams,
    char_wb_ngrams,
    check_ngram_range,
    word_ngrams,
)
from nlpfeat.text._counting._vocabulary import (
    check_df_bounds,
    check_vocabulary,
    count_matrix,
    document_frequency,
    prune_vocabulary,
    terms_in_column_order,
)

DOCS = ["the fat cat sat on the mat", "the cat  ate", "a dog, a cat", "mat"]


def _reference_counts(feature_lists):
    """Dense counts and sorted vocabulary computed the obvious way."""
    terms = sorted({f for feats in feature_lists for f in feats})
    index = {t: i for i, t in enumerate(terms)}
    dense = np.zeros((len(feature_lists), len(terms)), dtype=np.int64)
    for row, feats in enumerate(feature_lists):
        for f in feats:
            dense[row, index[f]] += 1
    return dense, index


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.sampled_from(list("abcdefg")) | st.text("xyz", min_size=2, max_size=3)),
                min_size=1, max_size=8))
def test_count_matrix_equals_reference(feature_lists):
    X, vocabulary = count_matrix(iter(feature_lists))
    dense, index = _reference_counts(feature_lists)
    assert vocabulary == index
    assert X.dtype == np.int64 and sp.isspmatrix_csr(X) and X.has_sorted_indices
    np.testing.assert_array_equal(X.toarray(), dense)
    X.sum_duplicates()
    np.testing.assert_array_equal(X.toarray(), dense)


def test_count_matrix_across_chunks(monkeypatch):
    import nlpfeat.text._counting._vocabulary as vocab_module

    monkeypatch.setattr(vocab_module, "_CHUNK_TOKENS", 3)  # many compressed chunks
    feature_lists = [list("abcab"), [], list("zz"), list("a"), [], list("cbbz")]
    X, vocabulary = count_matrix(feature_lists)
    dense, index = _reference_counts(feature_lists)
    assert vocabulary == index
    np.testing.assert_array_equal(X.toarray(), dense)
    Y, _ = count_matrix([list("aqz"), list("q")], vocabulary)
    np.testing.assert_array_equal(Y.toarray(), [[1, 0, 0, 1], [0, 0, 0, 0]])


def test_fixed_vocabulary_ignores_unseen_terms():
    X, vocabulary = count_matrix([["b", "new", "b"], ["new"], []], {"b": 0, "a": 1})
    assert vocabulary == {"b": 0, "a": 1}
    np.testing.assert_array_equal(X.toarray(), [[2, 0], [0, 0], [0, 0]])


def test_count_matrix_empty_inputs():
    X, vocabulary = count_matrix([[], []])
    assert X.shape == (2, 0) and vocabulary == {}
    X, _ = count_matrix([], {"a": 0})
    assert X.shape == (0, 1)


def test_count_matrix_dtype():
    X, _ = count_matrix([["a", "a"]], dtype=np.float64)
    assert X.dtype == np.float64 and X.toarray().tolist() == [[2.0]]


def test_terms_in_column_order():
    assert terms_in_column_order({"b": 1, "a": 0}) == ["a", "b"]


def _sklearn_prune(docs, **kwargs):
    cv = CountVectorizer(**kwargs)
    return cv.fit_transform(docs), cv.vocabulary_


@pytest.mark.parametrize(
    "kwargs",
    [dict(min_df=2), dict(max_df=0.5), dict(min_df=0.3, max_df=3), dict(max_features=3),
     dict(min_df=1, max_df=1.0, max_features=1), dict(max_df=2, max_features=2)],
)
def test_prune_vocabulary_equals_sklearn(kwargs):
    tokenize = CountVectorizer().build_analyzer()
    X, vocabulary = count_matrix(tokenize(d) for d in DOCS)
    X2, vocabulary2 = prune_vocabulary(X, vocabulary, **kwargs)
    expected, expected_vocabulary = _sklearn_prune(DOCS, **kwargs)
    assert vocabulary2 == expected_vocabulary
    np.testing.assert_array_equal(X2.toarray(), expected.toarray())
    assert X2.has_sorted_indices or sp.csr_matrix(X2).has_sorted_indices


def test_document_frequency():
    X = sp.csr_matrix(np.array([[1, 2, 0], [3, 0, 0]]))
    np.testing.assert_array_equal(document_frequency(X), [2, 1, 0])


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(min_df=4), "min_df=4 removed all"),
        (dict(min_df=5), "max_df=1.0 corresponds to 4 documents, fewer than the 5"),
        (dict(min_df=3, max_df=2), "min_df=3 is larger than max_df=2"),
        (dict(min_df=0.9, max_df=0.5), "min_df=0.9 is larger than max_df=0.5"),
        (dict(min_df=3, max_df=0.5), "max_df=0.5 corresponds to 2 documents"),
    ],
)
def test_prune_errors_name_the_parameter(kwargs, match):
    X, vocabulary = count_matrix([d.split() for d in DOCS])
    with pytest.raises(ValueError, match=match):
        prune_vocabulary(X, vocabulary, **kwargs)


def test_max_df_removing_everything_is_named():
    X, vocabulary = count_matrix([["a", "b"], ["b", "a"]])
    with pytest.raises(ValueError, match="max_df=1 removed all 2 terms"):
        prune_vocabulary(X, vocabulary, max_df=1)


def test_check_df_bounds_without_corpus():
    assert check_df_bounds(2, 0.5) == (None, None)  # mixed types: checked once n is known
    with pytest.raises(ValueError, match="larger than"):
        check_df_bounds(0.6, 0.5)


def test_check_vocabulary():
    assert check_vocabulary(["b", "a"]) == {"b": 0, "a": 1}
    assert check_vocabulary({"a": 1, "b": 0}) == {"a": 1, "b": 0}
    with pytest.raises(ValueError, match="'a' more than once"):
        check_vocabulary(["a", "b", "a"])
    with pytest.raises(ValueError, match="column indices 0..1"):
        check_vocabulary({"a": 0, "b": 2})
    with pytest.raises(ValueError, match="vocabulary is empty"):
        check_vocabulary([])


def test_check_vocabulary_sorts_sets_and_names_bad_columns():
    assert check_vocabulary({"pizza", "beer", "water"}) == {"beer": 0, "pizza": 1, "water": 2}
    assert check_vocabulary(frozenset({"b", "a"})) == {"a": 0, "b": 1}
    with pytest.raises(ValueError, match="'pizza' and 'beer' both map to column 0"):
        check_vocabulary({"pizza": 0, "beer": 0})
    with pytest.raises(ValueError, match="size 2 doesn't contain index 0"):
        check_vocabulary({"pizza": 1, "beer": 2})
    with pytest.raises(TypeError, match="term 'a' maps to '0' of type str"):
        check_vocabulary({"a": "0"})
    with pytest.raises(TypeError, match="got a single str"):
        check_vocabulary("abc")


@pytest.mark.parametrize("ngram_range", [(1, 1), (1, 2), (2, 3), (1, 4), (3, 3)])
def test_ngram_functions_equal_sklearn(ngram_range):
    text = "the  fat cat sat on the mat\tagain  "
    tokens = text.split()
    for analyzer, fn, arg in [("word", word_ngrams, tokens), ("char", char_ngrams, text),
                              ("char_wb", char_wb_ngrams, text)]:
        cv = CountVectorizer(analyzer=analyzer, ngram_range=ngram_range, token_pattern=r"\S+",
                             lowercase=False)
        assert fn(arg, ngram_range) == cv.build_analyzer()(text)


@pytest.mark.parametrize("bad", [(0, 1), (2, 1), (1,), [1, 2], (1.0, 2), (True, 2)])
def test_check_ngram_range(bad):
    with pytest.raises(ValueError, match="ngram_range=.* is invalid"):
        check_ngram_range(bad)


@pytest.mark.parametrize("with_nul", [False, True])
def test_string_order_is_pythons_sort(with_nul):
    """One helper orders terms for cooccurrence, PMIEmbedding and Collocations."""
    from nlpfeat.text._counting._vocabulary import string_order

    rng = np.random.default_rng(0)
    alphabet = list("abAB_é中\x01") + (["\x00"] if with_nul else [])
    words = sorted({"".join(rng.choice(alphabet, rng.integers(1, 4))) for _ in range(300)})
    words = np.array(rng.permutation(np.array(words, dtype=object)), dtype=object)
    assert string_order(words).tolist() == sorted(range(len(words)), key=words.__getitem__)


def test_cooccurrence_vocabulary_sorted_with_trailing_nul_terms():
    from nlpfeat.text import cooccurrence

    _, vocab = cooccurrence([["b", "a\x00", "a", "b"]], 1)
    assert list(vocab) == sorted(vocab) == ["a", "a\x00", "b"]


def test_remap_columns_on_threads_equals_one_thread():
    """Rows renumbered and sorted in runs on threads: the same matrix, sorted, whatever
    the runs (empty rows, fewer rows than threads)."""
    from nlpfeat.text._counting._vocabulary import remap_columns

    rng = np.random.default_rng(0)
    for n_rows in (1, 3, 200):
        X = sp.random(n_rows, 50, density=0.2, format="csr", random_state=rng,
                      data_rvs=lambda n: rng.integers(1, 9, n))
        X.indices = X.indices.astype(np.intc)
        X.indptr = X.indptr.astype(np.int64)
        new_of_old = rng.permutation(50)
        one = remap_columns(X.copy(), new_of_old, 50)
        for n_jobs in (2, 5):
            many = remap_columns(X.copy(), new_of_old, 50, n_jobs=n_jobs)
            assert many.has_sorted_indices
            np.testing.assert_array_equal(many.indptr, one.indptr)
            np.testing.assert_array_equal(many.indices, one.indices)
            np.testing.assert_array_equal(many.data, one.data)
