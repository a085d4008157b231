"""LocallyWeightedBagOfWords: the bag-of-words limit, locality, the paper's integral,
pooling consistency, scikit-learn integration and bad input."""
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import normalize

from nlpfeat.datasets import load_lee, load_polarity
from nlpfeat.text import LocallyWeightedBagOfWords


@pytest.fixture(scope="module")
def lee_docs():
    return load_lee().test[:20]


def _blocks(X, n_positions):
    """The local histograms of a concat matrix: list of (n_docs, n_terms) dense blocks."""
    return np.split(X.toarray(), n_positions, axis=1)


@pytest.mark.parametrize("kernel", ["gaussian", "epanechnikov", "tophat", "laplacian"])
def test_huge_bandwidth_gives_l1_bag_of_words_everywhere(lee_docs, kernel):
    lowbow = LocallyWeightedBagOfWords(n_positions=4, kernel=kernel, bandwidth=1e12)
    X = lowbow.fit_transform(lee_docs)
    counts = CountVectorizer().fit(lee_docs)  # same default tokens on English text
    expected = normalize(counts.transform(lee_docs).astype(float), norm="l1").toarray()
    assert list(lowbow.get_feature_names_out()[: expected.shape[1]]) == [
        f"p0|{t}" for t in counts.get_feature_names_out()]
    for block in _blocks(X, 4):
        np.testing.assert_allclose(block, expected, rtol=1e-10, atol=1e-15)


def _naive_tophat(token_lists, vocabulary, mu, h):
    """Local histograms counting only the tokens within h of mu (nearest if none)."""
    out = np.zeros((len(token_lists), len(mu), len(vocabulary)))
    for i, tokens in enumerate(token_lists):
        tokens = [t for t in tokens if t in vocabulary]
        L = len(tokens)
        pos = (np.arange(L) + 0.5) / L
        for j, m in enumerate(mu):
            near = [k for k in range(L) if abs(pos[k] - m) <= h]
            if not near:
                d = np.abs(pos - m)
                near = [k for k in range(L) if d[k] <= d.min() * (1 + 1e-9)]
            for k in near:
                out[i, j, vocabulary[tokens[k]]] += 1.0 / len(near)
    return out.reshape(len(token_lists), -1)


@pytest.mark.parametrize("bandwidth", [0.01, 0.1, 0.25])
def test_tophat_small_bandwidth_counts_only_nearby_tokens(bandwidth):
    rng = np.random.RandomState(0)
    words = ["alpha", "beta", "gamma", "delta", "eps"]
    docs = [list(rng.choice(words, size=n)) for n in [1, 2, 3, 7, 10, 20, 33]]
    lowbow = LocallyWeightedBagOfWords(n_positions=6, kernel="tophat", bandwidth=bandwidth,
                                       input="tokens")
    X = lowbow.fit_transform(docs)
    expected = _naive_tophat(docs, lowbow.vocabulary_, lowbow.positions_, bandwidth)
    np.testing.assert_allclose(X.toarray(), expected, rtol=1e-12, atol=1e-15)


def test_gaussian_matches_the_papers_restricted_kernel_integral():
    """Midpoint rule vs the exact integral of the [0, 1]-renormalised Gaussian (Lebanon et al.)."""
    rng = np.random.RandomState(1)
    tokens = list(rng.choice(["a", "b", "c", "d"], size=400))
    lowbow = LocallyWeightedBagOfWords(n_positions=5, bandwidth=0.1, input="tokens")
    X = lowbow.fit_transform([tokens]).toarray().reshape(5, -1)
    edges = np.arange(401) / 400
    for j, mu in enumerate(lowbow.positions_):
        mass = np.diff(norm.cdf(edges, loc=mu, scale=0.1))  # kernel mass of each token
        mass /= norm.cdf(1, mu, 0.1) - norm.cdf(0, mu, 0.1)  # restricted to [0, 1]
        exact = [mass[np.array(tokens) == t].sum() for t in ["a", "b", "c", "d"]]
        np.testing.assert_allclose(X[j], exact, atol=2e-5)


@pytest.mark.parametrize("kernel, bandwidth", [("gaussian", 0.05), ("gaussian", 0.3),
                                               ("biweight", 0.2), ("tophat", 0.02)])
def test_mean_pooling_is_the_mean_of_the_local_histograms(lee_docs, kernel, bandwidth):
    params = dict(n_positions=7, kernel=kernel, bandwidth=bandwidth, stop_words="english")
    concat = LocallyWeightedBagOfWords(**params).fit(lee_docs)
    mean = LocallyWeightedBagOfWords(combine="mean", **params).fit(lee_docs)
    X_concat, X_mean = concat.transform(lee_docs), mean.transform(lee_docs)
    np.testing.assert_allclose(X_mean.toarray(), np.mean(_blocks(X_concat, 7), axis=0),
                               rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(X_mean.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(X_concat.sum(axis=1), 7.0, rtol=1e-12)
    assert list(mean.get_feature_names_out()) == sorted(mean.vocabulary_)


@settings(max_examples=30, deadline=None)
@given(lengths=st.lists(st.integers(0, 15), min_size=1, max_size=8),
       n_positions=st.integers(1, 6), log_h=st.floats(-4, 4),
       kernel=st.sampled_from(["gaussian", "tophat", "epanechnikov", "cosine"]))
def test_property_every_local_histogram_sums_to_one(lengths, n_positions, log_h, kernel):
    rng = np.random.RandomState(sum(lengths))
    docs = [list(rng.choice(["x", "y", "z"], size=n)) for n in lengths] + [["x", "y"]]
    lowbow = LocallyWeightedBagOfWords(n_positions=n_positions, kernel=kernel,
                                       bandwidth=10.0**log_h, input="tokens")
    X = lowbow.fit_transform(docs)
    sums = np.array([block.sum(axis=1) for block in _blocks(X, n_positions)])
    np.testing.assert_allclose(sums, np.where(np.array(lengths + [2]) > 0, 1.0, 0.0)[None, :]
                               * np.ones((n_positions, 1)), rtol=1e-12)
    assert (X.data > 0).all() and np.isfinite(X.data).all()


def test_local_histograms_differ_along_the_document():
    doc = " ".join(["war"] * 20 + ["peace"] * 20)
    X = LocallyWeightedBagOfWords(n_positions=3, bandwidth=0.1).fit_transform([doc])
    names = list(LocallyWeightedBagOfWords(n_positions=3).fit([doc]).get_feature_names_out())
    row = dict(zip(names, X.toarray()[0]))
    assert row["p0|war"] > 0.99 and row["p2|peace"] > 0.99
    np.testing.assert_allclose([row["p1|war"], row["p1|peace"]], [0.5, 0.5], rtol=1e-12)


def test_fit_transform_equals_fit_then_transform_and_working_memory(lee_docs):
    params = dict(n_positions=5, bandwidth=0.15, min_df=2, max_features=100)
    a = LocallyWeightedBagOfWords(**params).fit_transform(lee_docs)
    est = LocallyWeightedBagOfWords(**params).fit(lee_docs)
    b = est.transform(lee_docs)
    c = LocallyWeightedBagOfWords(working_memory=1e-4, **params).fit(lee_docs).transform(lee_docs)
    assert a.format == "csr" and a.shape == (20, 5 * 100) and len(est.vocabulary_) == 100
    assert a.has_canonical_format and c.has_canonical_format and (a.data > 0).all()
    np.testing.assert_allclose(a.toarray(), b.toarray(), rtol=1e-14)
    np.testing.assert_allclose(c.toarray(), b.toarray(), rtol=1e-12, atol=1e-15)


def test_fixed_vocabulary_unknown_and_empty_documents():
    lowbow = LocallyWeightedBagOfWords(n_positions=2, vocabulary=["cat", "mat"], bandwidth=1e9)
    X = lowbow.fit_transform(["the cat sat on the mat", "no known word", "cat cat"])
    np.testing.assert_allclose(X.toarray(), [[0.5, 0.5, 0.5, 0.5], [0, 0, 0, 0], [1, 0, 1, 0]])
    assert list(lowbow.get_feature_names_out()) == ["p0|cat", "p0|mat", "p1|cat", "p1|mat"]
    assert lowbow.fixed_vocabulary_


def test_clone_pickle_pipeline_and_grid_search():
    X, y = load_polarity(return_X_y=True)
    pipe = make_pipeline(LocallyWeightedBagOfWords(n_positions=2, min_df=2),
                         LogisticRegression(max_iter=300))
    grid = {"locallyweightedbagofwords__bandwidth": [0.1, 10.0],
            "locallyweightedbagofwords__combine": ["concat", "mean"]}
    search = GridSearchCV(pipe, grid, cv=StratifiedKFold(3, shuffle=True, random_state=0))
    search.fit(X, y)
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()
    fitted = search.best_estimator_
    again = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(again.predict_proba(X[:10]), fitted.predict_proba(X[:10]))
    assert clone(fitted[0]).get_params() == fitted[0].get_params()
    assert fitted[0].__sklearn_tags__().input_tags.string


@pytest.mark.parametrize("params, error, match", [
    ({"kernel": "gauss"}, ValueError, "Unknown kernel 'gauss'. Valid kernels are"),
    ({"bandwidth": 0}, ValueError, "'bandwidth' parameter of LocallyWeightedBagOfWords"),
    ({"bandwidth": -0.1}, ValueError, "'bandwidth' parameter of LocallyWeightedBagOfWords"),
    ({"n_positions": 0}, ValueError, "'n_positions' parameter"),
    ({"combine": "max"}, ValueError, "'combine' parameter"),
    ({"min_df": 3, "max_df": 2}, ValueError, "min_df=3 is larger than max_df=2"),
    ({"min_df": 2}, ValueError, "min_df=2 removed all"),
    ({"min_df": 5}, ValueError, "fewer than the 5 of min_df=5"),
    ({"stop_words": "english"}, ValueError, "Empty vocabulary: .*stop_words='english'"),
])
def test_bad_input(params, error, match):
    with pytest.raises(error, match=match):
        LocallyWeightedBagOfWords(**params).fit(["the and of", "to be or not to be"])


def test_bad_documents_and_not_fitted():
    with pytest.raises(NotFittedError):
        LocallyWeightedBagOfWords().transform(["a b"])
    with pytest.raises(ValueError, match="string object received"):
        LocallyWeightedBagOfWords().fit("one document")
    with pytest.raises(ValueError, match="Empty corpus"):
        LocallyWeightedBagOfWords().fit([])
    with pytest.raises(TypeError, match="Document 1 is of type NoneType"):
        LocallyWeightedBagOfWords().fit(["a b", None])


@pytest.mark.parametrize("kernel, bandwidth", [("gaussian", 0.2), ("gaussian", 1e-4),
                                               ("tophat", 0.3), ("tophat", 1e-6),
                                               ("epanechnikov", 0.05)])
@pytest.mark.parametrize("pooling", ["concat", "mean"])
def test_a_document_longer_than_the_budget_is_read_in_spans(kernel, bandwidth, pooling):
    """A document that alone exceeds working_memory is weighted span by span, with the
    same histograms (a tiny compact bandwidth: the nearest tokens share the weight)."""
    rng = np.random.RandomState(0)
    words = [f"w{i}" for i in range(40)]
    docs = [list(rng.choice(words, size=n)) for n in (4000, 3, 1, 2999)]
    params = dict(input="tokens", n_positions=7, kernel=kernel, bandwidth=bandwidth,
                  combine=pooling)
    whole = LocallyWeightedBagOfWords(**params).fit(docs).transform(docs)
    spans = LocallyWeightedBagOfWords(working_memory=0.01, **params).fit(docs).transform(docs)
    assert spans.has_canonical_format and (spans.data > 0).all()
    np.testing.assert_allclose(spans.toarray(), whole.toarray(), rtol=1e-10, atol=1e-15)
    blocks = np.stack(_blocks(spans, 7 if pooling == "concat" else 1))  # (n_pos, docs, terms)
    np.testing.assert_allclose(blocks.sum(axis=2)[:, [0, 3]], 1.0, rtol=1e-12)


def test_long_document_memory_stays_within_the_budget():
    """Peak memory (tracemalloc) of transform on one 40,000-token document with 10
    positions and a 1 MiB budget: 4.1 MiB, the budget plus O(n_tokens) bookkeeping; 14 MiB
    when the (positions x tokens) weights were held at once."""
    import tracemalloc

    rng = np.random.RandomState(0)
    doc = list(rng.choice([f"w{i}" for i in range(30)], size=40_000))
    lowbow = LocallyWeightedBagOfWords(input="tokens", n_positions=10, working_memory=1)
    lowbow.fit([doc[:50]])
    tracemalloc.start()
    try:
        lowbow.transform([doc])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**20 * 1 + 16 * 8 * len(doc)


@pytest.mark.parametrize("n_docs", [1, 500])
@pytest.mark.parametrize("combine", ["concat", "mean"])
def test_peak_memory_follows_working_memory_not_the_corpus(n_docs, combine):
    """Peak memory (tracemalloc) of transform on 200,000 tokens of 50,000 words, 10
    positions, a 4 MiB budget, above the output: at most twice the budget, 48 bytes a
    token and 8 an output entry (the values joined once more). The whole corpus's
    entries as COO triples, converted at the end, and one long document's per-span
    histograms of every position took 36-42 MiB for one document and 126 MiB for 500
    (the output: 5.6 and 22.8 MiB); now 9-11 and 5-18 MiB."""
    import tracemalloc

    rng = np.random.RandomState(0)
    words = np.array([f"w{i}" for i in range(50_000)], dtype=object)
    flat = list(words[rng.randint(0, len(words), size=200_000)])
    size = len(flat) // n_docs
    docs = [flat[i:i + size] for i in range(0, len(flat), size)]
    lowbow = LocallyWeightedBagOfWords(input="tokens", lowercase=False, n_positions=10,
                                       working_memory=4, combine=combine).fit(docs)
    lowbow.transform([docs[0][:50]])                 # the engine compiled before measuring
    tracemalloc.start()
    try:
        X = lowbow.transform(docs)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    output = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    assert X.shape[0] == n_docs and X.nnz > 0
    assert peak - output < 2 * 4 * 2**20 + 48 * len(flat) + 8 * X.nnz
