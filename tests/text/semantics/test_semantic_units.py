"""SemanticUnitBagOfWords: units by hand, parity with BagOfWords and scipy's clustering."""
import pickle

import numpy as np
import pytest
from scipy.cluster.hierarchy import fcluster, linkage
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from nlpfeat.datasets import load_polarity, load_toy_corpus
from nlpfeat.text import BagOfWords, PMIEmbedding, SemanticUnitBagOfWords

VECTORS = {"glad": [1.0, 0.1], "happy": [0.9, 0.0], "pleased": [1.0, 0.0],
           "cat": [0.0, 1.0], "dog": [0.1, 0.9]}
DOCS = ["happy cat", "glad and pleased dog", "glad glad", "the dog"]


@pytest.fixture(scope="module")
def toy():
    return load_toy_corpus("en").data


@pytest.fixture(scope="module")
def embedding(toy):
    return PMIEmbedding(n_components=30, min_count=3, random_state=0).fit(toy)


@pytest.mark.parametrize("clustering", ["kmeans", "agglomerative"])
def test_units_and_counts_by_hand(clustering):
    est = SemanticUnitBagOfWords(VECTORS, n_units=2, clustering=clustering, random_state=0)
    X = est.fit_transform(DOCS)
    assert est.units_ == [["glad", "happy", "pleased"], ["dog", "cat"]]
    assert est.get_feature_names_out().tolist() == ["glad/happy/pleased", "dog/cat"]
    np.testing.assert_array_equal(X.toarray(), [[1, 1], [2, 1], [2, 0], [0, 1]])
    assert est.n_clustered_ == 2 and est.unit_of_word_["pleased"] == 0


def test_unknown_words_dropped_or_kept():
    drop = SemanticUnitBagOfWords(VECTORS, n_units=2).fit(DOCS)
    assert "the" not in drop.unit_of_word_ and "and" not in drop.unit_of_word_
    keep = SemanticUnitBagOfWords(VECTORS, n_units=2, unknown="keep", random_state=0)
    X = keep.fit_transform(DOCS)
    assert keep.get_feature_names_out().tolist() == ["glad/happy/pleased", "dog/cat", "and",
                                                     "the"]
    np.testing.assert_array_equal(X.toarray()[:, 2:], [[0, 0], [1, 0], [0, 0], [0, 1]])
    np.testing.assert_array_equal(keep.transform(["zebra the"]).toarray(), [[0, 0, 0, 1]])


def test_one_unit_per_word_is_the_bag_of_words(toy, embedding):
    bow = BagOfWords().fit(toy)
    n_known = sum(w in embedding.vocabulary_ for w in bow.vocabulary_)
    est = SemanticUnitBagOfWords(embedding, n_units=n_known, clustering="agglomerative",
                                 unknown="keep").fit(toy)
    assert all(len(unit) == 1 for unit in est.units_)
    X, B = est.transform(toy).toarray(), bow.transform(toy).toarray()
    order = [bow.vocabulary_[unit[0]] for unit in est.units_]
    np.testing.assert_array_equal(X, B[:, order])


def test_agglomerative_matches_scipy_average_linkage(toy, embedding):
    est = SemanticUnitBagOfWords(embedding, n_units=40, clustering="agglomerative").fit(toy)
    words = [w for w in BagOfWords().fit(toy).get_feature_names_out() if w in
             embedding.vocabulary_]
    V = embedding.embeddings_[[embedding.vocabulary_[w] for w in words]]
    labels = fcluster(linkage(V, method="average", metric="cosine"), 40, criterion="maxclust")
    scipy_units = {frozenset(np.array(words)[labels == k]) for k in np.unique(labels)}
    assert {frozenset(unit) for unit in est.units_} == scipy_units


def test_embedding_sources_agree(toy, embedding):
    """Fitted PMIEmbedding, its KeyedVectors and a plain dict give the same units."""
    as_dict = {w: embedding.embeddings_[i] for w, i in embedding.vocabulary_.items()}
    results = []
    sources = [embedding, as_dict]
    try:
        sources.append(embedding.to_keyedvectors())
    except ImportError:  # pragma: no cover - gensim is a dependency
        pass
    for source in sources:
        est = SemanticUnitBagOfWords(source, n_units=25, random_state=0).fit(toy)
        results.append((est.units_, est.transform(toy[:20]).toarray()))
    for units, X in results[1:]:
        assert units == results[0][0]
        np.testing.assert_array_equal(X, results[0][1])


def test_unfitted_embedding_is_fitted_on_the_tokens(toy):
    est = SemanticUnitBagOfWords(PMIEmbedding(n_components=30, min_count=3, random_state=0),
                                 n_units=25, random_state=0, stop_words="english").fit(toy)
    fitted = est.embeddings_estimator_
    assert fitted.input == "tokens" and "the" not in fitted.vocabulary_
    assert not hasattr(est.embeddings, "embeddings_")      # the parameter is not modified
    default = SemanticUnitBagOfWords(n_units=25, random_state=0).fit(toy)
    assert default.embeddings_estimator_.n_components == 100


def test_clone_refits_a_fitted_embedding_but_not_fixed_vectors(toy, embedding):
    est = SemanticUnitBagOfWords(embedding, n_units=25, random_state=0)
    assert not hasattr(clone(est).embedding, "embeddings_")     # documented in Notes
    fixed = SemanticUnitBagOfWords(embedding.to_keyedvectors(), n_units=25, random_state=0)
    assert clone(fixed).fit(toy[:200]).units_ == clone(fixed).fit(toy[:200]).units_
    assert not hasattr(clone(fixed).fit(toy[:200]), "embedding_")


def test_antonyms_share_units_on_the_toy_corpus(toy, embedding):
    """The warning of the concept notes, measured: PMI units merge antonyms."""
    est = SemanticUnitBagOfWords(embedding, n_units=60, random_state=0).fit(toy)
    pairs = [("good", "bad"), ("hot", "cold"), ("rich", "poor"), ("big", "small")]
    merged = [a for a, b in pairs if est.unit_of_word_[a] == est.unit_of_word_[b]]
    assert len(merged) >= 2


def test_sklearn_protocol(toy):
    est = SemanticUnitBagOfWords(VECTORS, n_units=2, random_state=0)
    assert clone(est).get_params()["n_units"] == 2
    with pytest.raises(NotFittedError):
        est.transform(DOCS)
    gen = iter(DOCS)
    fitted = clone(est).fit(gen)
    assert list(gen) == []
    again = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(again.transform(DOCS).toarray(),
                                  est.fit_transform(DOCS).toarray())
    assert fitted.transform(DOCS).format == "csr"


def test_bad_input():
    with pytest.raises(ValueError, match=r"n_units=6 exceeds the 5 words"):
        SemanticUnitBagOfWords(VECTORS, n_units=6).fit(DOCS)
    with pytest.raises(TypeError, match="embedding must be a PMIEmbedding"):
        SemanticUnitBagOfWords([1, 2], n_units=1).fit(DOCS)
    with pytest.raises(ValueError, match="different lengths"):
        SemanticUnitBagOfWords({"cat": [1.0], "dog": [1.0, 2.0]}, n_units=1).fit(DOCS)
    with pytest.raises(ValueError, match="clustering"):
        SemanticUnitBagOfWords(VECTORS, clustering="dbscan").fit(DOCS)
    zero = dict(VECTORS, cat=[0.0, 0.0])
    assert "cat" not in SemanticUnitBagOfWords(zero, n_units=2).fit(DOCS).unit_of_word_


def test_polarity_shapes():
    docs = load_polarity().data
    est = SemanticUnitBagOfWords(PMIEmbedding(n_components=20, min_count=2, random_state=0),
                                 n_units=50, unknown="keep", random_state=0)
    X = est.fit_transform(docs)
    assert X.shape == (200, len(est.units_)) and est.n_clustered_ == 50
    assert X.sum() == BagOfWords().fit_transform(docs).sum()   # every token counted once


def test_words_pointing_the_same_way_leave_empty_kmeans_clusters_dropped():
    """Vectors in two directions cannot fill three k-means clusters: the empty one used to
    raise IndexError; the units are the clusters that hold words, with a warning."""
    vectors = {"glad": [1.0, 0.0], "happy": [2.0, 0.0], "pleased": [3.0, 0.0],
               "cat": [0.0, 1.0], "dog": [0.0, 5.0]}
    est = SemanticUnitBagOfWords(vectors, n_units=3, random_state=0)
    with pytest.warns(UserWarning, match=r"Only 2 of n_units=3 units.*1 cluster\(s\) empty"):
        X = est.fit_transform(DOCS)
    assert est.units_ == [["glad", "happy", "pleased"], ["dog", "cat"]]
    assert est.n_clustered_ == 2 and len(est.get_feature_names_out()) == X.shape[1] == 2
    np.testing.assert_array_equal(X.toarray(), [[1, 1], [2, 1], [2, 0], [0, 1]])
    np.testing.assert_array_equal(est.transform(DOCS).toarray(), X.toarray())


@pytest.mark.parametrize("vectors, match", [
    ({"zebra": [1.0, 0.0]}, r"No word of the corpus \(7 words, e.g. \['and', 'cat', 'dog'\]\)"),
    (dict(VECTORS, cat=[np.inf, 0.0]),
     r"vectors of 1 corpus word\(s\) hold NaN or inf \(e.g. \['cat'\]\)"),
    (dict(VECTORS, cat=[np.nan, 0.0], dog=[1.0, -np.inf]), r"2 corpus word\(s\).*'cat', 'dog'"),
])
def test_no_vector_or_a_non_finite_vector_is_a_clear_error(vectors, match):
    for clustering in ("kmeans", "agglomerative"):
        with pytest.raises(ValueError, match=match):
            SemanticUnitBagOfWords(vectors, n_units=1, clustering=clustering).fit(DOCS)
