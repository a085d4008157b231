"""ExplicitSemanticAnalysis: equals the direct computation, pruning rules, scikit-learn
protocol, and clear errors."""
import copy
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import normalize
from sklearn.utils.estimator_checks import parametrize_with_checks

from nlpfeat.datasets import load_lee, load_polarity
from nlpfeat.text import ExplicitSemanticAnalysis, TfidfVectorizer
from nlpfeat.text._semantics._esa import prune_inverted_index, top_k_per_row

CONCEPTS = ["the cat sat on the mat", "a dog chased the cat", "stocks and bonds fell",
            "the bank raised interest rates", "my dog likes the mat", "bonds pay interest"]
DOCS = ["the cat and the dog", "interest on bonds", "a mat", "nothing known here"]


def _direct(concepts, docs, k, vectorizer=None, document_vectorizer=None):
    """TF-IDF cosine of each document to each concept, then the k largest per row."""
    vec = (vectorizer or TfidfVectorizer()).fit(concepts)
    C = normalize(vec.transform(concepts).toarray())
    doc_vec = vec if document_vectorizer is None else document_vectorizer.set_params(
        vocabulary=vec.vocabulary_).fit(concepts)
    S = normalize(doc_vec.transform(docs).toarray()) @ C.T
    if k is not None:
        for row in S:                                     # reference: one row at a time
            order = sorted(range(len(row)), key=lambda j: (-row[j], j))
            row[order[k:]] = 0.0
    return S


@pytest.fixture(scope="module")
def lee():
    return load_lee()


@pytest.mark.parametrize("k", [1, 2, 3, None])
def test_equals_direct_computation_small_corpus(k):
    got = ExplicitSemanticAnalysis(topn=k).fit(CONCEPTS).transform(DOCS)
    assert sp.issparse(got) and got.shape == (len(DOCS), len(CONCEPTS))
    np.testing.assert_allclose(got.toarray(), _direct(CONCEPTS, DOCS, k), rtol=0, atol=1e-12)
    assert (np.diff(got.indptr) <= (k or len(CONCEPTS))).all()
    assert got[3].nnz == 0                                # no known word: a zero row


@pytest.mark.parametrize("k", [10, 100])
def test_equals_direct_computation_on_lee(lee, k):
    text = dict(stop_words="english", stemmer="porter")
    esa = ExplicitSemanticAnalysis(TfidfVectorizer(**text), topn=k).fit(lee.background)
    expected = _direct(lee.background, lee.test, k, TfidfVectorizer(**text))
    np.testing.assert_allclose(esa.transform(lee.test).toarray(), expected, atol=1e-12)


def test_document_vectorizer_weighs_the_documents_differently():
    binary = TfidfVectorizer(binary=True, use_idf=False)
    esa = ExplicitSemanticAnalysis(document_vectorizer=binary, topn=2).fit(iter(CONCEPTS))
    expected = _direct(CONCEPTS, DOCS, 2, document_vectorizer=clone(binary))
    np.testing.assert_allclose(esa.transform(DOCS).toarray(), expected, atol=1e-12)
    assert esa.document_vectorizer_.vocabulary_ == esa.vectorizer_.vocabulary_


def test_passthrough_matrix_equals_text_input():
    vec = TfidfVectorizer().fit(CONCEPTS)
    C, D = vec.transform(CONCEPTS), vec.transform(DOCS)
    C_before = C.copy()
    esa = ExplicitSemanticAnalysis("passthrough", topn=2).fit(C)
    np.testing.assert_allclose(esa.transform(D).toarray(), _direct(CONCEPTS, DOCS, 2),
                               atol=1e-12)
    np.testing.assert_array_equal(esa.transform(D.toarray()).toarray(),
                                  esa.transform(D).toarray())
    assert (C != C_before).nnz == 0                       # the user's matrix is untouched
    assert esa.n_features_in_ == C.shape[1]


def test_feature_names_are_the_concepts():
    esa = ExplicitSemanticAnalysis(concept_names=[f"c{i}" for i in range(6)]).fit(CONCEPTS)
    assert esa.get_feature_names_out().tolist() == [f"c{i}" for i in range(6)]
    default = ExplicitSemanticAnalysis().fit(CONCEPTS).get_feature_names_out()
    assert default.tolist() == [f"concept{i}" for i in range(6)]


def test_generator_is_read_once_and_norm():
    gen = (doc for doc in CONCEPTS)
    esa = ExplicitSemanticAnalysis(norm="l2", topn=3).fit(gen)
    assert list(gen) == []
    X = esa.transform(DOCS[:3]).toarray()
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0)
    np.testing.assert_allclose(X, normalize(_direct(CONCEPTS, DOCS[:3], 3)), atol=1e-12)


def test_working_memory_does_not_change_results(lee):
    esa = ExplicitSemanticAnalysis(topn=20).fit(lee.background)
    small = clone(esa).set_params(working_memory=1e-3).fit(lee.background)
    np.testing.assert_array_equal(esa.transform(lee.test).toarray(),
                                  small.transform(lee.test).toarray())


def test_top_k_per_row_keeps_the_largest_and_breaks_ties_by_column():
    S = sp.csr_matrix([[0.2, 0.5, 0.2, 0.0, 0.1], [0.0, 0.0, 0.0, 0.0, 0.0],
                       [0.3, 0.3, 0.3, 0.3, 0.3]])
    got = top_k_per_row(S, 2).toarray()
    np.testing.assert_array_equal(got, [[0.2, 0.5, 0, 0, 0], [0] * 5, [0.3, 0.3, 0, 0, 0]])
    assert S[0, 2] == 0.2                                 # input untouched


def _prune_reference(C, window, drop):
    """Gabrilovich-Markovitch pruning, one term at a time."""
    C = np.asarray(C, dtype=float).copy()
    for t in range(C.shape[1]):
        idx = [i for i in sorted(range(C.shape[0]), key=lambda i: (-C[i, t], i)) if C[i, t]]
        w = C[idx, t]
        for r in range(len(w) - window + 1):
            if w[r] - w[r + window - 1] < drop * w[0]:
                C[idx[r + 1:], t] = 0.0
                break
    return C


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("window,drop", [(2, 0.05), (3, 0.2), (5, 0.5)])
def test_prune_inverted_index_matches_reference(seed, window, drop):
    rng = np.random.RandomState(seed)
    C = sp.random(40, 12, density=0.4, random_state=rng).toarray()
    C[:, 0] = 0.0                                         # an empty term
    C[:6, 1] = [1.0, 0.99, 0.98, 0.97, 0.5, 0.4]          # a flat head
    got = prune_inverted_index(sp.csr_matrix(C), window, drop)
    np.testing.assert_array_equal(got.toarray(), _prune_reference(C, window, drop))


def test_pruning_in_the_estimator(lee):
    full = ExplicitSemanticAnalysis(topn=None).fit(lee.background)
    pruned = ExplicitSemanticAnalysis(topn=None, prune_window=10, prune_drop=0.1)
    pruned.fit(lee.background)
    assert 0 < pruned.concepts_.nnz < full.concepts_.nnz
    expected = _prune_reference(full.concepts_.toarray(), 10, 0.1)
    np.testing.assert_array_equal(pruned.concepts_.toarray(), expected)


def test_clone_pickle_pipeline_and_grid_search(assert_best_is_argmax):
    polarity = load_polarity()
    esa = ExplicitSemanticAnalysis(TfidfVectorizer(stop_words="english"), topn=50)
    restored = pickle.loads(pickle.dumps(esa.fit(polarity.data)))
    np.testing.assert_array_equal(restored.transform(DOCS).toarray(),
                                  esa.transform(DOCS).toarray())
    assert not hasattr(clone(esa), "concepts_")
    pipe = make_pipeline(ExplicitSemanticAnalysis(TfidfVectorizer()), LogisticRegression())
    grid = GridSearchCV(pipe, {"explicitsemanticanalysis__topn": [5, 50],
                               "explicitsemanticanalysis__vectorizer__sublinear_tf":
                                   [False, True]}, cv=2)
    grid.fit(polarity.data, polarity.target)
    assert_best_is_argmax(grid)


@parametrize_with_checks([ExplicitSemanticAnalysis("passthrough", topn=2)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize("params,fit_input,error,message", [
    ({}, [], ValueError, "Empty corpus"),
    ({"vectorizer": "passthrough"}, sp.csr_matrix((0, 3)), ValueError, "0 sample"),
    ({"topn": 0}, CONCEPTS, ValueError, "'topn' parameter"),
    ({"topn": 2.5}, CONCEPTS, ValueError, "'topn' parameter"),
    ({"prune_window": 1}, CONCEPTS, ValueError, "'prune_window' parameter"),
    ({"prune_drop": 1.5}, CONCEPTS, ValueError, "'prune_drop' parameter"),
    ({"concept_names": ["a", "b"]}, CONCEPTS, ValueError, "2 names for 6 concepts"),
    ({}, "one string", TypeError, "not a single string"),
    ({"vectorizer": "passthrough", "document_vectorizer": CountVectorizer()},
     np.ones((2, 3)), ValueError, "document_vectorizer needs a vectorizer"),
    ({"vectorizer": "passthrough", "prune_window": 2}, -np.ones((2, 3)), ValueError,
     "non-negative"),
])
def test_bad_input_raises_clear_errors(params, fit_input, error, message):
    with pytest.raises(error, match=message):
        ExplicitSemanticAnalysis(**params).fit(fit_input)


class _OwnVocabulary(CountVectorizer):
    """A document vectorizer that ignores the vocabulary it is given."""

    def fit(self, X, y=None):
        self.vocabulary = None
        return super().fit(list(X) + ["extra words everywhere"])


def test_mismatched_vocabularies_raise():
    esa = ExplicitSemanticAnalysis(document_vectorizer=_OwnVocabulary()).fit(CONCEPTS)
    with pytest.raises(ValueError, match="Mismatched vocabularies.*concept vocabulary"):
        esa.transform(DOCS)
    matrix = ExplicitSemanticAnalysis("passthrough").fit(np.ones((3, 4)))
    with pytest.raises(ValueError, match="4 features"):
        matrix.transform(np.ones((2, 5)))
    with pytest.raises(TypeError, match="not a single string"):
        ExplicitSemanticAnalysis().fit(CONCEPTS).transform("one string")


def test_not_fitted():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        ExplicitSemanticAnalysis().transform(DOCS)


def test_input_documents_not_modified():
    concepts, snapshot = list(CONCEPTS), copy.deepcopy(CONCEPTS)
    ExplicitSemanticAnalysis().fit(concepts).transform(concepts)
    assert concepts == snapshot


def test_n_jobs_gives_the_same_vectors():
    from nlpfeat.text import ExplicitSemanticAnalysis

    concepts = ["the cat sat on the mat", "dogs chase cats", "stock markets fell today",
                "the market rallied", "a dog barked at the cat"]
    docs = ["a cat and a dog", "markets and stocks", "the mat", "nothing known here"] * 5
    one = ExplicitSemanticAnalysis(topn=2, working_memory=1e-5).fit(concepts)
    two = ExplicitSemanticAnalysis(topn=2, working_memory=1e-5, n_jobs=2).fit(concepts)
    assert (one.transform(docs) != two.transform(docs)).nnz == 0


@pytest.mark.parametrize("norm", [None, "l2"])
def test_an_empty_batch_gives_zero_rows_and_fit_transform_reads_a_generator_once(norm):
    """transform([]) raised scikit-learn's normalize error, and fit_transform of a
    generator fitted on it and then found it empty."""
    esa = ExplicitSemanticAnalysis(topn=2, norm=norm).fit(CONCEPTS)
    assert esa.transform([]).shape == (0, len(CONCEPTS))
    got = ExplicitSemanticAnalysis(topn=2, norm=norm).fit_transform(d for d in CONCEPTS)
    expected = esa.transform(CONCEPTS)
    assert got.shape == expected.shape == (len(CONCEPTS), len(CONCEPTS))
    np.testing.assert_allclose(got.toarray(), expected.toarray(), rtol=1e-12)
    counts = CountVectorizer().fit_transform(CONCEPTS)
    matrix = ExplicitSemanticAnalysis("passthrough", topn=2, norm=norm).fit(counts)
    assert matrix.transform(counts[:0]).shape == (0, len(CONCEPTS))


def test_a_generator_is_read_once_with_a_document_vectorizer():
    binary = CountVectorizer(binary=True)
    gen = (doc for doc in CONCEPTS)
    esa = ExplicitSemanticAnalysis(document_vectorizer=binary, topn=None).fit(gen)
    assert list(gen) == []
    np.testing.assert_allclose(esa.transform(DOCS).toarray(),
                               _direct(CONCEPTS, DOCS, None, None, clone(binary)), atol=1e-12)
