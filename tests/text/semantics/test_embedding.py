"""PMIEmbedding: equals the explicit PPMI-SVD pipeline, similarity queries, pooling, errors."""
import pickle

import numpy as np
import pytest
from scipy.sparse.linalg import svds
from sklearn.base import clone
from sklearn.preprocessing import normalize
from sklearn.utils import estimator_checks
from sklearn.utils.extmath import randomized_svd

from nlpfeat.text import KernelAttentionPooling, PMIEmbedding, cooccurrence, pmi
from nlpfeat.text._semantics._pmi_embedding import randomized_svd as _randomized_svd


@pytest.fixture(scope="module")
def wiki_tokens():
    from nlpfeat.datasets import load_wiki_sample

    return [doc.split() for doc in load_wiki_sample().data[:120]]


@pytest.fixture(scope="module")
def toy():
    from nlpfeat.datasets import load_toy_corpus

    return load_toy_corpus("en")


@pytest.fixture(scope="module")
def wiki_model(wiki_tokens):
    return PMIEmbedding(50, min_count=5, input="tokens", random_state=0).fit(wiki_tokens)


@pytest.mark.parametrize("window,alpha,eig,shift", [(5, 0.75, 0.5, 1), (2, 1.0, 0.0, 1),
                                                    (3, 0.5, 1.0, 5)])
def test_equals_cooccurrence_pmi_svd_pipeline(wiki_tokens, window, alpha, eig, shift):
    wiki_tokens = wiki_tokens[:40]
    emb = PMIEmbedding(20, window=window, min_count=5, alpha=alpha, eig=eig, shift=shift,
                       input="tokens", random_state=0).fit(wiki_tokens)
    counts, vocab = cooccurrence(wiki_tokens, window, min_count=5)
    scores = pmi(counts, "ppmi" if shift == 1 else "sppmi", alpha=alpha, shift=shift)
    U, S, _ = randomized_svd(scores, 20, n_iter=5, random_state=np.random.RandomState(0))
    assert emb.vocabulary_ == vocab
    # scikit-learn's randomized SVD with the same probe vectors: the same subspace up to
    # the float32 rounding of nlpfeat's power iterations
    np.testing.assert_allclose(emb.singular_values_, S, rtol=1e-5)
    np.testing.assert_allclose(emb.embeddings_[:, :5], (U * S**eig)[:, :5], atol=1e-4)


@pytest.mark.parametrize("dtype,rtol", [(np.float64, 1e-11), (np.float32, 1e-5)])
def test_randomized_svd_converges_to_the_exact_svd(toy, dtype, rtol):
    counts, _ = cooccurrence([d.lower() for d in toy.data], 2, min_count=2)
    A = pmi(counts, "ppmi")
    U_exact, S_exact, _ = np.linalg.svd(A.toarray())
    U, S = _randomized_svd(A, 8, n_iter=40, random_state=0, dtype=dtype)
    assert U.dtype == S.dtype == dtype
    # float32 power iterations find the subspace to ~1e-7; the float64 Rayleigh-Ritz step
    # then gives singular values to float64 precision (their error is quadratic in it)
    np.testing.assert_allclose(S, S_exact[:8], rtol=rtol)
    cosines = np.abs(np.sum(U * U_exact[:, :8], axis=0))
    np.testing.assert_allclose(cosines, 1.0, atol=1e-5)
    assert np.all(np.abs(U).argmax(axis=0) == np.argmax(U, axis=0))  # svd_flip signs
    np.testing.assert_allclose(U.T @ U, np.eye(8), atol=1e-12 if dtype == np.float64 else 1e-5)


def test_randomized_svd_does_not_modify_its_input(toy):
    counts, _ = cooccurrence([d.lower() for d in toy.data], 2, min_count=2)
    A = pmi(counts, "ppmi")
    before = A.copy()
    _randomized_svd(A, 3, random_state=0)
    assert (A != before).nnz == 0 and A.dtype == np.float64


def test_float32_svd_gives_the_same_vectors_to_float32_precision(wiki_tokens):
    params = dict(n_components=10, min_count=5, input="tokens", random_state=0)
    double = PMIEmbedding(**params).fit(wiki_tokens[:40])
    single = PMIEmbedding(**params, dtype=np.float32).fit(wiki_tokens[:40])
    assert single.embeddings_.dtype == np.float32
    np.testing.assert_allclose(single.singular_values_, double.singular_values_, rtol=1e-4)
    a, b = normalize(single.embeddings_, axis=0), normalize(double.embeddings_, axis=0)
    cosines = np.sum(a * b, axis=0)                        # one cosine per component
    assert cosines.min() > 0.999          # same directions (signs fixed by the SVD)


def test_singular_values_match_exact_svd(toy):
    emb = PMIEmbedding(5, window=2, min_count=2, eig=1.0, random_state=0).fit(toy.data)
    counts, _ = cooccurrence([d.lower() for d in toy.data], 2, min_count=2)
    exact = np.sort(svds(pmi(counts, "ppmi"), k=5, random_state=0)[1])[::-1]
    # randomized SVD (a few power iterations) is accurate to ~1e-4 here, not to 1e-10
    np.testing.assert_allclose(emb.singular_values_, exact, rtol=1e-3)
    np.testing.assert_allclose(np.linalg.norm(emb.embeddings_, axis=0), exact, rtol=1e-3)


def test_most_similar_matches_gensim_keyedvectors(wiki_model):
    pytest.importorskip("gensim")
    kv = wiki_model.to_keyedvectors()
    word = "state"
    got = wiki_model.most_similar(word, topn=8)
    expected = kv.most_similar(word, topn=8)
    # the same ranking up to ties: gensim scores in float32, so words within 1e-5 may swap
    ranked = lambda pairs: [w for w, s in sorted(pairs, key=lambda p: (-round(p[1], 5), p[0]))]  # noqa
    assert ranked(got) == ranked(expected)
    np.testing.assert_allclose([s for _, s in got], [s for _, s in expected], rtol=1e-5)
    assert word not in [w for w, _ in got]
    np.testing.assert_allclose(wiki_model.similarity("state", "govern"),
                               kv.similarity("state", "govern"), rtol=1e-5)


def test_similarity_is_symmetric_cosine(wiki_model):
    a = wiki_model.embeddings_[wiki_model.vocabulary_["war"]]
    b = wiki_model.embeddings_[wiki_model.vocabulary_["armi"]]
    cosine = a @ b / np.linalg.norm(a) / np.linalg.norm(b)
    assert wiki_model.similarity("war", "armi") == pytest.approx(cosine, rel=1e-12)
    assert wiki_model.similarity("armi", "war") == pytest.approx(cosine, rel=1e-12)
    assert wiki_model.similarity("war", "war") == pytest.approx(1.0)


def test_unknown_word_raises_key_error_naming_it(wiki_model):
    with pytest.raises(KeyError, match="'zzyzx' is not in the vocabulary"):
        wiki_model.most_similar("zzyzx")
    with pytest.raises(KeyError, match="'zzyzx'"):
        wiki_model.similarity("war", "zzyzx")


@pytest.mark.parametrize("pooling", ["mean", "tfidf"])
def test_pooling_is_a_weighted_mean_of_word_vectors(toy, pooling):
    emb = PMIEmbedding(4, window=2, min_count=2, pooling=pooling, random_state=0).fit(toy.data)
    tokens = emb._token_fn()
    docs = toy.data[:5] + ["qqq zzz"]
    got = emb.transform(docs)
    for doc, vector in zip(docs, got):
        rows = [emb.vocabulary_[t] for t in tokens(doc) if t in emb.vocabulary_]
        weights = np.ones(len(rows)) if pooling == "mean" else emb.idf_[rows]
        expected = (weights @ emb.embeddings_[rows] / weights.sum() if rows
                    else np.zeros(4))
        np.testing.assert_allclose(vector, expected, rtol=1e-10, atol=1e-12)


def test_attention_pooling_reuses_kernel_attention_pooling(toy):
    emb = PMIEmbedding(4, window=2, min_count=2, pooling="attention", random_state=0)
    got = emb.fit(toy.data).transform(toy.data[:6])
    plain = PMIEmbedding(4, window=2, min_count=2, random_state=0).fit(toy.data)
    tokens = [plain._token_fn()(doc) for doc in toy.data]
    pool = KernelAttentionPooling(plain, input="tokens").fit(tokens)
    np.testing.assert_allclose(got, pool.transform(tokens[:6]), rtol=1e-10)


def test_feature_names_and_shapes(toy):
    emb = PMIEmbedding(3, window=2, min_count=2, random_state=0).fit(toy.data)
    assert emb.transform(toy.data).shape == (len(toy.data), 3)
    assert list(emb.get_feature_names_out()) == ["pmiembedding0", "pmiembedding1",
                                                 "pmiembedding2"]


def test_eig_zero_gives_orthonormal_columns(toy):
    emb = PMIEmbedding(4, window=2, min_count=2, eig=0.0, random_state=0).fit(toy.data)
    np.testing.assert_allclose(emb.embeddings_.T @ emb.embeddings_, np.eye(4), atol=1e-10)


def test_documents_shorter_than_the_window_are_fine():
    docs = ["aa bb", "bb cc", "aa", "cc aa bb", "dd"] * 2
    emb = PMIEmbedding(2, window=10, min_count=1, random_state=0).fit(docs)
    assert np.isfinite(emb.embeddings_).all() and emb.embeddings_.shape == (4, 2)


def test_grid_search_in_a_pipeline(toy, assert_best_is_argmax):
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline

    pipe = make_pipeline(PMIEmbedding(window=2, min_count=2, random_state=0),
                         LogisticRegression(max_iter=500))
    search = GridSearchCV(pipe, {"pmiembedding__n_components": [2, 4]}, cv=2)
    search.fit(toy.data, toy.target)
    assert_best_is_argmax(search)


def test_pickle_and_clone_round_trip(toy):
    emb = PMIEmbedding(3, window=2, min_count=2, random_state=0).fit(toy.data)
    again = pickle.loads(pickle.dumps(emb))
    np.testing.assert_array_equal(again.transform(toy.data), emb.transform(toy.data))
    np.testing.assert_array_equal(clone(emb).fit(toy.data).embeddings_, emb.embeddings_)


@pytest.mark.parametrize("check", [
    estimator_checks.check_no_attributes_set_in_init,
    estimator_checks.check_parameters_default_constructible,
    estimator_checks.check_get_params_invariance,
    estimator_checks.check_set_params,
    estimator_checks.check_estimator_repr,
    estimator_checks.check_estimator_cloneable,
    estimator_checks.check_mixin_order,
    estimator_checks.check_valid_tag_types,
])
def test_sklearn_api_checks(check):
    # parametrize_with_checks yields no check for a string-input estimator (scikit-learn
    # skips it, its checks feed numeric arrays); the API checks that need no data run here.
    estimator = PMIEmbedding()
    check(type(estimator).__name__, estimator)


def test_every_word_under_min_count_raises():
    with pytest.raises(ValueError, match="min_count=3 removes every term"):
        PMIEmbedding(2, min_count=3).fit(["aa bb cc", "dd ee ff"])


def test_n_components_at_least_vocabulary_size_raises():
    with pytest.raises(ValueError, match=r"n_components=4 must be smaller than the vocabulary "
                                         r"size \(4 words.*Lower n_components"):
        PMIEmbedding(4, min_count=1).fit(["aa bb cc dd", "bb cc dd aa"])


@pytest.mark.parametrize("params,message", [
    ({"alpha": 0}, "'alpha' parameter of PMIEmbedding must be a float in the range"),
    ({"alpha": -1.0}, "'alpha' parameter of PMIEmbedding"),
    ({"window": 0}, "'window' parameter of PMIEmbedding must be an int in the range"),
    ({"n_components": 0}, "'n_components' parameter of PMIEmbedding"),
    ({"pooling": "max"}, "'pooling' parameter of PMIEmbedding"),
])
def test_bad_parameters_raise(params, message):
    with pytest.raises(ValueError, match=message):
        PMIEmbedding(**{"n_components": 1, "min_count": 1, **params}).fit(["aa bb cc dd"])


def test_not_fitted_raises():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        PMIEmbedding().most_similar("a")


def test_documents_without_tokens_raise():
    with pytest.raises(ValueError, match="hold no tokens"):
        PMIEmbedding(2).fit(["a b", "c"])


@pytest.mark.parametrize("pooling", ["mean", "tfidf", "attention"])
def test_empty_corpus_fit_raises_transform_gives_zero_rows(toy, pooling):
    with pytest.raises(ValueError, match="Empty corpus"):
        PMIEmbedding(2, min_count=1).fit([])
    emb = PMIEmbedding(3, window=2, min_count=2, pooling=pooling, random_state=0).fit(toy.data)
    out = emb.transform([])
    assert out.shape == (0, 3) and out.dtype == np.float64


def test_fit_transform_reads_the_documents_once(toy):
    """fit_transform tokenizes once: open files (read once) give the same vectors."""
    import io

    emb = PMIEmbedding(3, window=2, min_count=2, random_state=0, input="file")
    got = emb.fit_transform([io.StringIO(doc) for doc in toy.data])
    expected = PMIEmbedding(3, window=2, min_count=2, random_state=0).fit(toy.data)
    np.testing.assert_allclose(got, expected.transform(toy.data), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("params, message", [
    ({"alpha": 1e308}, "PMI overflows float64 with alpha="),
    ({"eig": 1e5}, "eig=100000.0 overflows the singular-value weights"),
])
def test_overflowing_parameters_raise_instead_of_svd_or_nan(toy, params, message):
    with pytest.raises(ValueError, match=message):
        PMIEmbedding(3, window=2, min_count=2, random_state=0, **params).fit(toy.data)
