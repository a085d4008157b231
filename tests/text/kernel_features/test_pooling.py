"""KernelAttentionPooling: parity with a naive per-document Nadaraya-Watson computation,
limits of the bandwidth, embeddings sources, scikit-learn integration and bad input."""
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, clone
from sklearn.decomposition import TruncatedSVD
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import make_pipeline

from nlpfeat.datasets import load_polarity
from nlpfeat.text import KernelAttentionPooling

# Random documents may hold only unknown tokens; the warning has a test of its own.
pytestmark = pytest.mark.filterwarnings("ignore:.*no token in the embeddings:UserWarning")

VOCAB = [f"w{i}" for i in range(30)]


def _random_embeddings(seed=0, d=5, n=len(VOCAB)):
    rng = np.random.RandomState(seed)
    return {tok: rng.normal(size=d) for tok in VOCAB[:n]}


def _random_docs(seed=0, n_docs=25):
    rng = np.random.RandomState(seed)
    words = VOCAB + ["oov1", "oov2"]
    return [list(rng.choice(words, size=rng.randint(1, 12))) for _ in range(n_docs)]


def _log_kernel(name, u):
    """Kernels written out directly, independent of the registry."""
    with np.errstate(divide="ignore"):
        if name == "gaussian":
            return -0.5 * u**2
        if name == "epanechnikov":
            return np.log(np.clip(1 - u**2, 0, None))
        return -u  # laplacian


def _naive_pool(docs, emb, kernel, h, query="mean", idf=None):
    """One document at a time, token by token: the textbook NW average."""
    out, all_w = [], []
    for doc in docs:
        known = [t for t in doc if t in emb]
        if not known:
            out.append(np.zeros(len(next(iter(emb.values())))))
            all_w.append(np.zeros(len(doc)))
            continue
        V = np.array([emb[t] for t in known])
        if isinstance(query, str) and query == "mean":
            q = V.mean(axis=0)
        elif isinstance(query, str) and query == "idf":
            a = np.array([idf[t] for t in known])
            q = (a[:, None] * V).sum(axis=0) / a.sum()
        else:
            q = np.asarray(query)
        dist = np.sqrt(((V - q) ** 2).sum(axis=1))
        logk = _log_kernel(kernel, dist / h)
        if np.all(np.isneginf(logk)):  # outside a compact support: nearest token(s)
            logk = np.where(dist == dist.min(), 0.0, -np.inf)
        w = np.exp(logk - logsumexp(logk))
        out.append(w @ V)
        it = iter(w)
        all_w.append(np.array([next(it) if t in emb else 0.0 for t in doc]))
    return np.array(out), all_w


@pytest.mark.parametrize("kernel", ["gaussian", "epanechnikov", "laplacian"])
@pytest.mark.parametrize("bandwidth", [0.3, 1.0, 4.0])
@pytest.mark.parametrize("query", ["mean", "idf", "fixed"])
def test_matches_naive_per_document(kernel, bandwidth, query):
    emb, docs = _random_embeddings(), _random_docs()
    q = np.linspace(-1, 1, 5) if query == "fixed" else query
    pool = KernelAttentionPooling(emb, kernel=kernel, bandwidth=bandwidth, query=q,
                                  working_memory=0.0005, input="tokens")  # several chunks
    got = pool.fit(docs).transform(docs)
    idf = None
    if query == "idf":
        df = {t: sum(t in set(d) for d in docs) for t in emb}
        idf = {t: np.log((1 + len(docs)) / (1 + df[t])) + 1 for t in emb}
        np.testing.assert_allclose(pool.idf_, [idf[t] for t in emb], rtol=1e-12)
    expected, expected_w = _naive_pool(docs, emb, kernel, bandwidth, q, idf)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
    for w, ew in zip(pool.attention_weights(docs), expected_w):
        np.testing.assert_allclose(w, ew, rtol=1e-10, atol=1e-14)


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_document_vector_is_nadaraya_watson_prediction():
    """Attention pooling = NW regression with the document's tokens as training set."""
    from nlpfeat.kernels import NadarayaWatsonRegressor

    emb, docs = _random_embeddings(3), _random_docs(3, n_docs=6)
    pool = KernelAttentionPooling(emb, bandwidth=0.8, query=np.full(5, 0.3), input="tokens").fit(docs)
    for doc, vec in zip(docs, pool.transform(docs)):
        V = np.array([emb[t] for t in doc if t in emb])
        if len(V):
            nw = NadarayaWatsonRegressor(bandwidth=0.8).fit(V, V)
            np.testing.assert_allclose(vec, nw.predict(np.full((1, 5), 0.3))[0], rtol=1e-10)


def test_huge_bandwidth_gives_plain_mean():
    emb, docs = _random_embeddings(), _random_docs(1)
    got = KernelAttentionPooling(emb, bandwidth=1e8, input="tokens").fit(docs).transform(docs)
    for doc, vec in zip(docs, got):
        V = np.array([emb[t] for t in doc if t in emb])
        np.testing.assert_allclose(vec, V.mean(axis=0) if len(V) else 0.0, atol=1e-12)


@pytest.mark.parametrize("bandwidth", [1e-6, 1e-200])
@pytest.mark.parametrize("kernel", ["gaussian", "tophat", "cosine"])
def test_tiny_bandwidth_picks_token_nearest_the_query(bandwidth, kernel):
    emb, docs = _random_embeddings(2), _random_docs(2)
    q = np.full(5, 0.2)
    pool = KernelAttentionPooling(emb, bandwidth=bandwidth, kernel=kernel, query=q, input="tokens").fit(docs)
    got = pool.transform(docs)
    assert np.isfinite(got).all()
    for doc, vec in zip(docs, got):
        V = np.array([emb[t] for t in doc if t in emb])
        if len(V):
            np.testing.assert_array_equal(vec, V[np.argmin(((V - q) ** 2).sum(axis=1))])


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("kernel", ["gaussian", "epanechnikov", "triangular", "sigmoid"])
def test_weights_sum_to_one_and_output_in_convex_hull(seed, kernel):
    emb, docs = _random_embeddings(seed, d=3), _random_docs(seed)
    bandwidth = np.random.RandomState(seed).uniform(0.05, 3.0, size=3)  # one per dimension
    pool = KernelAttentionPooling(emb, kernel=kernel, bandwidth=bandwidth, input="tokens").fit(docs)
    weights, tokens = pool.attention_weights(docs, return_tokens=True)
    for w, doc, vec in zip(weights, tokens, pool.transform(docs)):
        assert w.shape == (len(doc),) and (w >= 0).all()
        known = np.array([t in emb for t in doc])
        assert (w[~known] == 0).all()
        np.testing.assert_allclose(w.sum(), 1.0 if known.any() else 0.0, rtol=1e-12)
        if known.any():
            V = np.array([emb[t] for t in np.array(doc)[known]])
            assert (vec >= V.min(axis=0) - 1e-12).all() and (vec <= V.max(axis=0) + 1e-12).all()


class _FittedEmbedding:
    """What a fitted nlpfeat embedding estimator exposes."""

    def __init__(self, emb):
        self.vocabulary_ = {t: i for i, t in enumerate(emb)}
        self.embeddings_ = np.array(list(emb.values()))


class _RandomEmbedding(BaseEstimator):
    """A tiny unfitted embedding estimator, fitted by the pooling on its documents."""

    def __init__(self, dim=4, random_state=0):
        self.dim = dim
        self.random_state = random_state

    def fit(self, X, y=None):
        tokens = sorted({t for doc in X for t in doc.split()})
        self.vocabulary_ = {t: i for i, t in enumerate(tokens)}
        self.embeddings_ = np.random.RandomState(self.random_state).normal(
            size=(len(tokens), self.dim))
        return self


def test_dict_keyedvectors_and_estimator_agree():
    KeyedVectors = pytest.importorskip("gensim.models").KeyedVectors
    emb, docs = _random_embeddings(4), _random_docs(4)
    kv = KeyedVectors(vector_size=5, dtype=np.float64)
    kv.add_vectors(list(emb), np.array(list(emb.values())))
    outputs = [KernelAttentionPooling(source, bandwidth=0.7, query="idf", input="tokens").fit(docs).transform(docs)
               for source in (emb, kv, _FittedEmbedding(emb))]
    np.testing.assert_allclose(outputs[1], outputs[0], rtol=1e-12)
    np.testing.assert_allclose(outputs[2], outputs[0], rtol=1e-12)


def test_gensim_model_uses_its_wv_and_user_kernel_callable():
    Word2Vec = pytest.importorskip("gensim.models").Word2Vec
    docs = _random_docs(7)
    model = Word2Vec(docs, vector_size=6, min_count=1, workers=1, seed=0, epochs=1)
    a = KernelAttentionPooling(model, bandwidth=0.05, input="tokens").fit(docs).transform(docs)
    b = KernelAttentionPooling(model.wv, bandwidth=0.05, input="tokens").fit(docs).transform(docs)
    np.testing.assert_array_equal(a, b)
    # A user kernel k(u) = exp(-u) is the registry's Laplacian up to a constant factor.
    c = KernelAttentionPooling(model.wv, kernel=lambda u: np.exp(-u), bandwidth=0.05, input="tokens")
    d = KernelAttentionPooling(model.wv, kernel="laplacian", bandwidth=0.05, input="tokens")
    np.testing.assert_allclose(c.fit(docs).transform(docs), d.fit(docs).transform(docs),
                               rtol=1e-12)


def test_unfitted_embedding_estimator_is_cloned_and_fitted():
    docs = ["a b c", "b c d", "d e"]
    inner = _RandomEmbedding(dim=3)
    pool = KernelAttentionPooling(inner, input="content", tokenizer="whitespace",
                                  bandwidth=1.0).fit(docs)
    assert not hasattr(inner, "embeddings_")  # the user's estimator is left untouched
    assert pool.embeddings_.shape == (5, 3)
    assert pool.transform(docs).shape == (3, 3)
    assert pool.get_params()["embeddings__dim"] == 3


def test_grid_search_over_an_unfitted_pmi_embedding(assert_best_is_argmax):
    from nlpfeat.datasets import load_toy_corpus
    from nlpfeat.text import PMIEmbedding

    X, y = load_toy_corpus("en", return_X_y=True)
    X, y = X[::4], np.asarray(y)[::4]
    pipe = make_pipeline(
        KernelAttentionPooling(PMIEmbedding(min_count=1, random_state=0), input="content"),
        LogisticRegression(max_iter=300))
    grid = {"kernelattentionpooling__embeddings__n_components": [3, 6]}
    search = GridSearchCV(pipe, grid, cv=2).fit(X, y)
    assert_best_is_argmax(search)
    best_dim = search.best_params_["kernelattentionpooling__embeddings__n_components"]
    assert search.best_estimator_[0].embeddings_.shape[1] == best_dim


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), log_h=st.floats(-8, 8),
       kernel=st.sampled_from(["gaussian", "tophat", "tricube", "logistic"]),
       query=st.sampled_from(["mean", "idf", "fixed"]))
def test_property_finite_convex_combination(seed, log_h, kernel, query):
    emb, docs = _random_embeddings(seed % 1000, d=4), _random_docs(seed % 997, n_docs=6)
    q = np.random.RandomState(seed % 991).normal(size=4) if query == "fixed" else query
    pool = KernelAttentionPooling(emb, kernel=kernel, bandwidth=10.0**log_h, query=q, input="tokens")
    X = pool.fit(docs).transform(docs)
    assert np.isfinite(X).all()
    for w, doc, vec in zip(pool.attention_weights(docs), docs, X):
        V = np.array([emb[t] for t in doc if t in emb]).reshape(-1, 4)
        assert (w >= 0).all() and np.isclose(w.sum(), 1.0 if len(V) else 0.0, rtol=1e-12)
        if len(V):
            assert (vec >= V.min(axis=0) - 1e-9).all() and (vec <= V.max(axis=0) + 1e-9).all()


def test_fit_transform_equals_fit_then_transform_and_working_memory_invariance():
    emb, docs = _random_embeddings(5), _random_docs(5, n_docs=40)
    a = KernelAttentionPooling(emb, query="idf", input="tokens").fit_transform(docs)
    b = KernelAttentionPooling(emb, query="idf", input="tokens").fit(docs).transform(docs)
    c = KernelAttentionPooling(emb, query="idf", working_memory=1e-5, input="tokens").fit(docs).transform(docs)
    np.testing.assert_allclose(a, b, rtol=1e-14)
    np.testing.assert_allclose(c, b, rtol=1e-12)


def test_string_input_uses_the_shared_text_options():
    emb = {"good": [1.0, 0.0], "film": [0.0, 1.0], "bad": [-1.0, 0.0]}
    pool = KernelAttentionPooling(emb, input="content", bandwidth=2.0, stop_words="english")
    X = pool.fit_transform(["A GOOD film", "the BAD film!"])
    tokens_pool = KernelAttentionPooling(emb, bandwidth=2.0, input="tokens")
    np.testing.assert_allclose(X, tokens_pool.fit_transform([["good", "film"], ["bad", "film"]]))
    w, toks = pool.attention_weights(["The good, the bad"], return_tokens=True)
    assert toks == [["good", "bad"]]
    np.testing.assert_allclose(w[0], [0.5, 0.5])


def test_empty_documents_get_zero_vectors_and_one_warning():
    emb = _random_embeddings()
    pool = KernelAttentionPooling(emb, bandwidth=1.0, input="tokens").fit([["w1", "w2"]])
    with pytest.warns(UserWarning, match="2 of 3 document") as record:
        X = pool.transform([["oov"], [], ["w1"]])
    assert len(record) == 1
    np.testing.assert_array_equal(X[:2], 0.0)
    np.testing.assert_allclose(X[2], emb["w1"])


def test_clone_pickle_and_feature_names():
    emb, docs = _random_embeddings(), _random_docs()
    pool = KernelAttentionPooling(emb, query="idf", bandwidth="silverman", input="tokens").fit(docs)
    assert np.shape(pool.bandwidth_) == (5,) and np.all(pool.bandwidth_ > 0)
    again = pickle.loads(pickle.dumps(pool))
    np.testing.assert_array_equal(again.transform(docs), pool.transform(docs))
    assert clone(pool).get_params()["query"] == "idf"
    assert list(pool.get_feature_names_out()) == [f"kernelattentionpooling{i}" for i in range(5)]
    assert pool.__sklearn_tags__().input_tags.string


@pytest.fixture(scope="module")
def polarity_keyed_vectors():
    """Word vectors of the polarity sentences: SVD of the positive PMI word-sentence matrix."""
    KeyedVectors = pytest.importorskip("gensim.models").KeyedVectors
    from nlpfeat.text._counting._vocabulary import count_matrix, terms_in_column_order

    X, y = load_polarity(return_X_y=True)
    counts, vocabulary = count_matrix([s.split() for s in X])
    C = counts.T.tocsr().astype(np.float64)  # words x sentences
    total = C.sum()
    pmi = C.multiply(total / np.outer(C.sum(axis=1), C.sum(axis=0))).tocsr()
    pmi.data = np.maximum(np.log(pmi.data), 0.0)
    vectors = TruncatedSVD(n_components=16, random_state=0).fit_transform(pmi)
    kv = KeyedVectors(vector_size=16)
    kv.add_vectors(terms_in_column_order(vocabulary), vectors)
    return kv, X, y


def test_pipeline_grid_search_over_bandwidth_on_polarity(polarity_keyed_vectors,
                                                        assert_best_is_argmax):
    kv, X, y = polarity_keyed_vectors
    pipe = make_pipeline(KernelAttentionPooling(kv, input="content", tokenizer="whitespace"),
                         LogisticRegression(max_iter=500))
    grid = {"kernelattentionpooling__bandwidth": [0.05, 5.0, "scott"],
            "kernelattentionpooling__query": ["mean", "idf"]}
    search = GridSearchCV(pipe, grid, cv=StratifiedKFold(3, shuffle=True, random_state=0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every sentence has known tokens: no warning
        search.fit(X, y)
    scores = search.cv_results_["mean_test_score"]
    assert np.isfinite(scores).all() and len(scores) == 6
    assert len(np.unique(np.round(scores, 8))) > 1  # the bandwidth reaches the pooling
    assert_best_is_argmax(search)
    assert search.predict(X[:5]).shape == (5,)


@pytest.mark.parametrize("params, error, match", [
    ({"kernel": "gausian"}, ValueError, "Unknown kernel 'gausian'. Valid kernels are"),
    ({"bandwidth": 0.0}, ValueError, "'bandwidth' parameter of KernelAttentionPooling"),
    ({"bandwidth": -2.0}, ValueError, "'bandwidth' parameter of KernelAttentionPooling"),
    ({"bandwidth": [1.0, -1.0, 1.0, 1.0, 1.0]}, ValueError, "strictly positive"),
    ({"bandwidth": [1.0, 1.0]}, ValueError, "bandwidth has 2 values but 5 values"),
    ({"query": [1.0, 2.0]}, ValueError, r"query has shape \(2,\) but the embeddings have 5"),
    ({"query": "max"}, ValueError, "'query' parameter"),
    ({"query": [np.nan] * 5}, ValueError, "query contains 5 NaN"),
])
def test_bad_parameters(params, error, match):
    pool = KernelAttentionPooling(_random_embeddings(), input="tokens", **params)
    with pytest.raises(error, match=match):
        pool.fit(_random_docs())


@pytest.mark.parametrize("embeddings, error, match", [
    ([1, 2, 3], TypeError, "embeddings must be a mapping token -> vector"),
    ({"a": [1.0, 2.0], "b": [1.0]}, ValueError, "same length"),
    ({}, ValueError, "embeddings hold no vectors"),
    ({"a": [1.0, np.inf]}, ValueError, "embeddings contains 0 NaN and 1 infinite"),
])
def test_bad_embeddings(embeddings, error, match):
    with pytest.raises(error, match=match):
        KernelAttentionPooling(embeddings, input="tokens").fit([["a", "b"]])


def test_bad_documents_and_not_fitted():
    pool = KernelAttentionPooling(_random_embeddings(), input="tokens")
    with pytest.raises(NotFittedError):
        pool.transform([["w1"]])
    with pytest.raises(ValueError, match="Empty corpus"):
        pool.fit([])
    with pytest.raises(TypeError, match="Document 1 is of type str"):
        pool.fit([["w1"], "w2 w3"])
    with pytest.raises(ValueError, match="'median' needs a known token at a positive distance"):
        pool.fit([["w1", "w1"], ["w2"]])
    with pytest.raises(ValueError, match="needs at least 2 distinct known tokens"):
        pool.set_params(bandwidth="scott").fit([["w1", "w1"]])


@pytest.mark.parametrize("query", ["mean", "idf", "fixed"])
def test_median_bandwidth_is_the_median_token_query_distance(query):
    emb, docs = _random_embeddings(6), _random_docs(6)
    q = np.full(5, -0.5) if query == "fixed" else query
    pool = KernelAttentionPooling(emb, query=q, working_memory=0.001, input="tokens").fit(docs)
    idf = dict(zip(emb, pool.idf_)) if query == "idf" else None
    dist = []
    for doc in docs:
        V = np.array([emb[t] for t in doc if t in emb])
        if len(V):
            a = np.array([idf[t] for t in doc if t in emb]) if idf else np.ones(len(V))
            center = q if query == "fixed" else a @ V / a.sum()
            dist.extend(np.linalg.norm(V - center, axis=1))
    dist = np.array(dist)
    np.testing.assert_allclose(pool.bandwidth_, np.median(dist[dist > 0]), rtol=1e-12)


@pytest.mark.parametrize("query", ["mean", "idf", "fixed"])
@pytest.mark.parametrize("bandwidth", ["median", 0.7, "per-dimension"])
@pytest.mark.parametrize("kernel", ["gaussian", "tophat"])
def test_a_document_longer_than_the_budget_is_read_in_spans(query, bandwidth, kernel):
    """A document that alone exceeds working_memory is pooled span by span (mean query,
    distances, weighted sum), with the same vectors, weights and median bandwidth."""
    rng = np.random.RandomState(1)
    emb = _random_embeddings(1, d=6)
    docs = [list(rng.choice(VOCAB + ["oov1"], size=n)) for n in (3000, 7, 1, 2500)]
    q = rng.normal(size=6) if query == "fixed" else query
    h = np.linspace(0.5, 2.0, 6) if bandwidth == "per-dimension" else bandwidth
    params = dict(query=q, kernel=kernel, bandwidth=h)
    whole = KernelAttentionPooling(emb, input="tokens", **params).fit(docs)
    spans = KernelAttentionPooling(emb, working_memory=0.005, input="tokens", **params).fit(docs)  # 80 tokens
    if bandwidth == "median":
        assert spans.bandwidth_ == pytest.approx(whole.bandwidth_, rel=1e-12)
    np.testing.assert_allclose(spans.transform(docs), whole.transform(docs), rtol=1e-9,
                               atol=1e-12)
    for a, b in zip(spans.attention_weights(docs), whole.attention_weights(docs)):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-15)


def test_long_document_memory_stays_within_the_budget():
    """Peak memory (tracemalloc) of transform on one 40,000-token document, d=50, with a
    1 MiB budget: 5.1 MiB, the budget plus O(n_tokens) bookkeeping; 49 MiB when the whole
    (tokens x d) vectors and differences were held at once."""
    import tracemalloc

    rng = np.random.RandomState(0)
    emb = {t: rng.normal(size=50) for t in VOCAB}
    doc = list(rng.choice(VOCAB, size=40_000))
    pool = KernelAttentionPooling(emb, bandwidth=1.0, working_memory=1, input="tokens").fit([doc[:50]])
    tracemalloc.start()
    try:
        pool.transform([doc])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    n_tokens = len(doc)
    # the budget, plus O(n_tokens) bookkeeping (ids, positions, distances, weights), with
    # room: 24 floats a token (the vectors alone are 50)
    assert peak < 2**20 * 1 + 24 * 8 * n_tokens
