"""TopicModel: scikit-learn conventions, parity with gensim and scikit-learn called directly,
coherence scoring and GridSearchCV, token input, error paths."""
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.decomposition import NMF, LatentDirichletAllocation, TruncatedSVD
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.utils.estimator_checks import parametrize_with_checks

from nlpfeat.datasets import load_lee
from nlpfeat.text import TopicModel, topic_coherence
from nlpfeat.text._base._tokenize import get_stop_words, get_tokenizer
from nlpfeat.text._counting._vocabulary import count_matrix, prune_vocabulary

gensim = pytest.importorskip("gensim")
from gensim.models import LdaModel, LsiModel  # noqa: E402
from gensim.utils import FakeDict  # noqa: E402

COMBOS = [(m, b) for m in ("lda", "nmf", "lsi") for b in ("gensim", "sklearn")]


@parametrize_with_checks([TopicModel(n_components=2, method=m, backend=b, max_iter=3, random_state=0)
                          for m, b in COMBOS])
def test_sklearn_compatible(estimator, check):
    check(estimator)



@pytest.fixture(scope="module")
def lee():
    """First 120 Lee background documents: token lists, count matrix and vocabulary."""
    tokenize, stop = get_tokenizer(), get_stop_words("english")
    texts = [[t for t in tokenize(d.lower()) if t not in stop] for d in load_lee().background[:120]]
    X, vocab = count_matrix(texts)
    X, vocab = prune_vocabulary(X, vocab, min_df=3, max_df=0.5)
    vocab_set = set(vocab)
    texts = [[t for t in doc if t in vocab_set] for doc in texts]
    return texts, sp.csr_matrix(X, dtype=np.float64), vocab


def _bow(X):
    return [list(zip(X[i].indices.tolist(), X[i].data.tolist())) for i in range(X.shape[0])]


def test_gensim_lda_equals_ldamodel_called_directly(lee):
    _, X, _ = lee
    tm = TopicModel(n_components=5, max_iter=2, random_state=0).fit(X)
    ref = LdaModel(_bow(X), num_topics=5, id2word=FakeDict(X.shape[1]), passes=2,
                   random_state=0, dtype=np.float64, eval_every=None)
    np.testing.assert_allclose(tm.components_, ref.state.get_lambda(), rtol=1e-10)
    theta = tm.transform(X)
    np.testing.assert_allclose(theta.sum(axis=1), 1.0, rtol=1e-12)
    # gensim's own document-topic distributions (its inference from a random start, normalised
    # gamma): the same fixed point up to gensim's convergence threshold
    gamma, _ = ref.inference(_bow(X))
    np.testing.assert_allclose(theta, gamma / gamma.sum(1, keepdims=True), atol=1e-2)
    # the same most probable topic, up to near-ties (both are within 1e-2 of the fixed point)
    best = gamma.argmax(1)
    assert np.all(theta[np.arange(len(theta)), best] >= theta.max(axis=1) - 2e-2)
    np.testing.assert_array_equal(theta[5:9], tm.transform(X[5:9]))  # independent of the batch


def test_lda_bound_equals_gensim_bound(lee):
    from nlpfeat.text._topics._gensim_backend import _fixed_draws, lda_bound

    _, X, _ = lee
    ref = LdaModel(_bow(X), num_topics=4, id2word=FakeDict(X.shape[1]), passes=1,
                   random_state=0, eval_every=None)
    with _fixed_draws(ref):        # gensim's bound infers each document's gamma itself
        gamma, _ = ref.inference(_bow(X))
        expected = ref.bound(_bow(X))
    got = lda_bound(X, gamma.astype(np.float64), ref.state.get_lambda().astype(np.float64),
                    ref.alpha.astype(np.float64), ref.eta.astype(np.float64), working_memory=0.01)
    assert got == pytest.approx(expected, rel=1e-5)


def test_gensim_nmf_equals_nmf_called_directly(lee):
    from gensim.models import Nmf

    _, X, _ = lee
    tm = TopicModel(n_components=4, method="nmf", max_iter=2, random_state=0).fit(X)
    ref = Nmf(_bow(X), num_topics=4, id2word=FakeDict(X.shape[1]), passes=2, random_state=0,
              eval_every=None)
    np.testing.assert_allclose(tm.components_, ref.get_topics(normalize=False), rtol=1e-10)
    theta = tm.transform(X[:20])
    np.testing.assert_array_equal(theta[3:7], tm.transform(X[3:7]))  # independent of the batch
    assert theta.shape == (20, 4) and np.all(theta >= 0)


def test_gensim_lda_parameter_mapping(lee):
    _, X, _ = lee
    tm = TopicModel(n_components=4, max_iter=1, alpha=0.3, eta=0.05, random_state=1,
                    backend_params={"iterations": 20}).fit(X)
    np.testing.assert_allclose(tm.model_.alpha, 0.3)
    np.testing.assert_allclose(tm.model_.eta, 0.05)
    assert tm.model_.passes == 1 and tm.model_.iterations == 20
    default = TopicModel(n_components=4, random_state=1).fit(X).model_
    np.testing.assert_allclose(default.alpha, 0.25)                 # 1 / n_topics, as sklearn


@pytest.mark.parametrize("method, cls", [("lda", LatentDirichletAllocation), ("nmf", NMF),
                                         ("lsi", TruncatedSVD)])
def test_sklearn_backend_equals_sklearn_called_directly(lee, method, cls):
    _, X, _ = lee
    tm = TopicModel(n_components=4, method=method, backend="sklearn", max_iter=4, random_state=0)
    tm.fit(X)
    kwargs = {"n_iter" if method == "lsi" else "max_iter": 4}
    if method == "lda":
        kwargs.update(learning_method="batch")
    ref = cls(n_components=4, random_state=0, **kwargs).fit(X)
    np.testing.assert_allclose(tm.components_, ref.components_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(tm.transform(X), ref.transform(X), rtol=1e-10, atol=1e-12)
    if method == "lda":
        assert tm.perplexity(X) == pytest.approx(ref.perplexity(X), rel=1e-10)
        np.testing.assert_allclose(tm.transform(X).sum(axis=1), 1.0)
    else:
        assert not hasattr(tm, "perplexity")


def test_gensim_lsi_spans_the_top_singular_vectors(lee):
    _, X, _ = lee
    tm = TopicModel(n_components=3, method="lsi", max_iter=4, random_state=0).fit(X)
    assert isinstance(tm.model_, LsiModel)
    _, _, vt = np.linalg.svd(X.toarray(), full_matrices=False)
    np.testing.assert_allclose(np.abs((tm.components_ * vt[:3]).sum(axis=1)), 1.0, atol=1e-6)
    np.testing.assert_allclose(tm.transform(X), X @ tm.components_.T)


@pytest.mark.parametrize("chunksize", [None, 70])
def test_gensim_lsi_equals_lsimodel_on_the_bag_of_words(lee, chunksize):
    """The one-pass updates taken from the matrix give gensim's model from the bow list."""
    from gensim.utils import FakeDict

    from nlpfeat.text._topics._gensim_backend import to_bow

    _, X, _ = lee                         # 120 documents: chunks of 70 and 50
    params = {} if chunksize is None else {"chunksize": chunksize}
    tm = TopicModel(n_components=8, method="lsi", max_iter=3, random_state=0,
                    backend_params=params).fit(X)
    seed = np.random.RandomState(0).randint(2**31 - 1)
    ref = LsiModel(to_bow(sp.csr_matrix(X, dtype=np.float64)), num_topics=8,
                   id2word=FakeDict(X.shape[1]), power_iters=3, random_seed=seed,
                   dtype=np.float64, **params)
    np.testing.assert_allclose(tm.model_.projection.s, ref.projection.s, rtol=1e-12)
    np.testing.assert_allclose(tm.model_.projection.u, ref.projection.u, rtol=1e-10,
                               atol=1e-12)
    assert tm.model_.docs_processed == ref.docs_processed == X.shape[0]


@pytest.mark.parametrize("method", ["lda", "nmf", "lsi"])
@pytest.mark.parametrize("backend", ["gensim", "sklearn"])
def test_deterministic_and_coherence_attributes(lee, method, backend):
    texts, X, vocab = lee
    make = TopicModel(n_components=4, method=method, backend=backend, max_iter=2, random_state=3,
                      vocabulary=vocab, coherence="u_mass", topn=8)
    a, b = make.fit(X), clone(make).fit(X)
    np.testing.assert_array_equal(a.components_, b.components_)
    np.testing.assert_array_equal(a.transform(X[:10]), b.transform(X[:10]))
    assert a.transform(X).shape == (X.shape[0], 4)
    assert list(a.get_feature_names_out()) == ["topic0", "topic1", "topic2", "topic3"]
    topics = a.top_words()
    assert len(topics) == 4 and all(len(t) == 8 for t in topics)
    assert all(w in vocab for t in topics for w in t)
    expected = topic_coherence(topics, X, measure="u_mass", vocabulary=vocab)
    np.testing.assert_allclose(a.coherence_, expected)
    assert a.score(X) == pytest.approx(expected.mean())
    # token lists: sliding-window coherence with gensim's default window
    assert a.score(texts) == pytest.approx(
        topic_coherence(topics, texts, measure="u_mass", vocabulary=vocab).mean())


def test_lsi_top_words_rank_by_absolute_weight():
    X = np.array([[3.0, 0, 1], [0, 2, 1], [1, 1, 0], [2, 0, 2]])
    tm = TopicModel(n_components=2, method="lsi", backend="sklearn", random_state=0).fit(X)
    order = np.argsort(-np.abs(tm.components_), axis=1, kind="stable")[:, :2]
    assert tm.top_words(2) == [[f"x{j}" for j in row] for row in order]


def test_token_input_equals_count_matrix_input(lee):
    texts, X, vocab = lee
    tm_tokens = TopicModel(n_components=3, backend="sklearn", max_iter=3, random_state=0,
                           vocabulary=vocab).fit(texts)
    tm_matrix = TopicModel(n_components=3, backend="sklearn", max_iter=3, random_state=0).fit(X)
    np.testing.assert_allclose(tm_tokens.components_, tm_matrix.components_)
    np.testing.assert_allclose(tm_tokens.transform(texts), tm_matrix.transform(X))
    assert tm_tokens.vocabulary_ == vocab
    # coherence_ on tokens uses sliding windows (c_npmi: 10 tokens)
    np.testing.assert_allclose(tm_tokens.coherence_, topic_coherence(
        tm_tokens.top_words(), texts, measure="c_npmi", vocabulary=vocab, window_size=10))
    learned = TopicModel(n_components=3, backend="sklearn", max_iter=2, random_state=0).fit(texts)
    assert set(learned.vocabulary_) == vocab.keys()


def test_grid_search_selects_n_topics_by_coherence(lee):
    _, X, _ = lee
    cv = KFold(2)
    search = GridSearchCV(TopicModel(backend="sklearn", max_iter=3, random_state=0),
                          {"n_components": [2, 5, 10]}, cv=cv).fit(X)
    scores = search.cv_results_["mean_test_score"]
    assert search.best_params_["n_components"] == [2, 5, 10][int(np.argmax(scores))]
    # the CV score is the held-out mean c_npmi of the topics fitted on the other fold
    train, test = next(cv.split(X))
    tm = TopicModel(n_components=5, backend="sklearn", max_iter=3, random_state=0).fit(X[train])
    assert search.cv_results_["split0_test_score"][1] == pytest.approx(tm.score(X[test]))


def test_pipeline_with_bag_of_words():
    from sklearn.pipeline import make_pipeline

    from nlpfeat.text import BagOfWords

    docs = load_lee().background[:60]
    pipe = make_pipeline(BagOfWords(stop_words="english", min_df=2),
                         TopicModel(n_components=3, max_iter=2, random_state=0))
    theta = pipe.fit_transform(docs)
    np.testing.assert_allclose(theta.sum(axis=1), 1.0)
    assert np.isfinite(pipe.score(docs))


def test_perplexity_gensim(lee):
    _, X, _ = lee
    short = TopicModel(n_components=4, max_iter=1, random_state=0).fit(X)
    longer = TopicModel(n_components=4, max_iter=8, random_state=0).fit(X)
    p1, p8 = short.perplexity(X), longer.perplexity(X)
    assert np.isfinite(p1) and 1 < p8 < p1
    assert short.perplexity(X) == p1                                # deterministic
    assert not hasattr(TopicModel(method="nmf").fit(X), "perplexity")


@pytest.mark.parametrize("params, X, error, match", [
    ({"n_components": 0}, np.ones((3, 4)), ValueError, "n_components"),
    ({"n_components": 5}, np.ones((6, 4)), ValueError, r"exceeds the vocabulary size \(n_features=4\)"),
    ({"alpha": 0.0}, np.ones((3, 4)), ValueError, "alpha"),
    ({"eta": -1.0}, np.ones((3, 4)), ValueError, "eta"),
    ({"method": "plsa"}, np.ones((3, 4)), ValueError, "method"),
    ({"n_components": 2}, -np.ones((3, 4)), ValueError, "Negative values.*method='lsi'"),
    ({"n_components": 3, "method": "lsi"}, np.ones((2, 4)), ValueError, r"min\(n_samples"),
    ({"n_components": 2, "method": "lsi"}, np.eye(4) * 1e200 + 1e199, ValueError,
     "too large for gensim's LsiModel.*rescale X"),
])
def test_bad_input(params, X, error, match):
    with pytest.raises(error, match=match):
        TopicModel(**params).fit(X)


@pytest.mark.parametrize("X, error, match", [
    ([{"cat": 2, "dog": 1}, {"dog": 3}], TypeError,
     r"Document 0 is a dict .*drop its values.*DictVectorizer"),
    ([{"cat", "dog"}, {"dog", "pet"}], TypeError, r"Document 0 is a set .*order is arbitrary"),
    ([["cat", "dog"], {"dog", "pet"}], TypeError, r"Document 1 is a set"),
    ([None, None], TypeError, r"Document 0 is of type NoneType"),
    ([["cat", "dog"], None], TypeError, r"Document 1 is of type NoneType"),
    ("cat dog", ValueError, "string object received"),
    (None, TypeError, "Expected an iterable of documents"),
])
def test_documents_are_what_the_other_estimators_accept(X, error, match):
    """Documents that are neither text, token lists nor rows of numbers get the errors of
    every text estimator (naming the document), not a KeyError or numpy's conversion."""
    with pytest.raises(error, match=match):
        TopicModel(n_components=1, max_iter=1, random_state=0).fit(X)


def test_bytes_documents_are_text():
    docs = ["cats and dogs", "dogs and bones", "stocks and bonds", "bonds and loans"]
    text = TopicModel(n_components=2, max_iter=2, random_state=0).fit(docs)
    raw = TopicModel(n_components=2, max_iter=2, random_state=0).fit(
        [doc.encode("utf-8") for doc in docs])
    assert raw.vocabulary_ == text.vocabulary_
    np.testing.assert_allclose(raw.components_, text.components_, rtol=1e-12)


def test_tokens_after_matrix_fit_without_words():
    tm = TopicModel(n_components=2, backend="sklearn", random_state=0).fit(np.eye(4) + 1)
    with pytest.raises(ValueError, match="vocabulary="):
        tm.transform([["a", "b"]])


def test_dataframe_columns_name_the_words():
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame([[3, 0, 1, 0], [2, 0, 2, 0], [0, 4, 0, 2], [0, 3, 0, 3]],
                     columns=["cat", "bank", "dog", "loan"])
    tm = TopicModel(n_components=2, backend="sklearn", topn=2, random_state=0).fit(X)
    assert sorted(map(sorted, tm.top_words())) == [["bank", "loan"], ["cat", "dog"]]
    assert tm.vocabulary_ == {"cat": 0, "bank": 1, "dog": 2, "loan": 3}


@pytest.mark.parametrize("backend", ["gensim", "sklearn"])
def test_generator_input_keeps_every_document(backend):
    """A generator of token lists is read once: the first document is neither dropped nor
    missing from the vocabulary, and fit/transform/score see all documents."""
    docs = [["zebra", "lion", "savanna"], ["cat", "dog", "pet"], ["cat", "dog", "vet"],
            ["bank", "loan", "stock"]]
    make = TopicModel(n_components=2, backend=backend, max_iter=2, random_state=0)
    fitted = make.fit(doc for doc in docs)
    assert {"zebra", "lion", "savanna"} <= set(fitted.vocabulary_)
    reference = clone(make).fit(docs)
    np.testing.assert_allclose(fitted.components_, reference.components_, rtol=1e-12)
    assert fitted.transform(doc for doc in docs).shape == (4, 2)
    np.testing.assert_allclose(fitted.transform(doc for doc in docs), reference.transform(docs),
                               rtol=1e-9, atol=1e-12)
    assert fitted.score(doc for doc in docs) == pytest.approx(reference.score(docs), abs=1e-12)
    np.testing.assert_allclose(clone(make).fit_transform(doc for doc in docs),
                               reference.transform(docs), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("vocabulary, match", [
    (["a", "b", "c"], "vocabulary has 3 words but X has 4 columns"),
    (["a", "b", "c", "d", "e"], "vocabulary has 5 words but X has 4 columns"),
    (["a", "b", "a", "c"], "term 'a' more than once"),
    ({"a": 0, "b": 1, "c": 2, "d": 4}, "column indices 0..3"),
])
def test_vocabulary_must_name_each_column_once(vocabulary, match):
    with pytest.raises(ValueError, match=match):
        TopicModel(n_components=2, backend="sklearn", vocabulary=vocabulary).fit(np.ones((3, 4)))


@pytest.mark.parametrize("backend", ["gensim", "sklearn"])
@pytest.mark.parametrize("X", [[["a", "a"], ["a"]], np.ones((3, 1))])
def test_one_word_vocabulary_raises_instead_of_nan_coherence(backend, X):
    with pytest.raises(ValueError, match="at least 2 words.*n_features=1"):
        TopicModel(n_components=1, backend=backend).fit(X)


@pytest.mark.parametrize("backend", ["gensim", "sklearn"])
@pytest.mark.parametrize("method", ["lda", "nmf", "lsi"])
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_empty_corpus_fit_raises_transform_gives_zero_rows(lee, backend, method):
    texts, X, vocab = lee
    with pytest.raises(ValueError, match="Empty corpus"):
        TopicModel(n_components=2, method=method, backend=backend).fit([])
    tm = TopicModel(n_components=2, method=method, backend=backend, max_iter=1, random_state=0,
                    vocabulary=vocab).fit(texts)
    for empty in ([], X[:0], X[:0].toarray()):
        assert tm.transform(empty).shape == (0, 2)
