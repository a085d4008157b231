"""SimilarityEnsemble and zscore_average: one member keeps its ranking, the average is of
z-scores, members are parameters for GridSearchCV, word pairs work, errors are clear."""
import pickle
from itertools import combinations

import numpy as np
import pytest
from scipy.stats import rankdata
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, ShuffleSplit
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import normalize

from nlpfeat.datasets import load_lee
from nlpfeat.text import (
    ExplicitSemanticAnalysis,
    PMIEmbedding,
    SimilarityEnsemble,
    TfidfVectorizer,
    TopicModel,
)
from nlpfeat.text._semantics._similarity_ensemble import zscore_average

TEXT = dict(stop_words="english")


@pytest.fixture(scope="module")
def lee():
    data = load_lee()
    pairs = list(combinations(data.test, 2))        # the order of similarity_upper
    return data, pairs


def _cosines(model, corpus, docs):
    Z = model.fit(corpus).transform(docs)
    Z = normalize(Z.toarray() if hasattr(Z, "toarray") else Z)
    return (Z @ Z.T)[np.triu_indices(len(docs), k=1)]


def test_one_member_keeps_the_members_ranking(lee):
    data, pairs = lee
    ens = SimilarityEnsemble([("tfidf", TfidfVectorizer(**TEXT))], corpus=data.background)
    got = ens.fit(pairs).predict(pairs)
    cos = _cosines(TfidfVectorizer(**TEXT), data.background, data.test)
    np.testing.assert_array_equal(rankdata(got), rankdata(cos))
    np.testing.assert_allclose(got, (cos - cos.mean()) / cos.std(), atol=1e-12)
    assert ens.score(pairs, data.similarity_upper) == pytest.approx(
        np.corrcoef(cos, data.similarity_upper)[0, 1], abs=1e-12)


def test_average_of_zscores_and_similarity_matrix(lee):
    data, pairs = lee
    members = [("tfidf", TfidfVectorizer(**TEXT)),
               ("esa", ExplicitSemanticAnalysis(TfidfVectorizer(**TEXT), topn=50))]
    ens = SimilarityEnsemble(members, weights=[1.0, 3.0], corpus=data.background).fit(pairs)
    sims = np.vstack([_cosines(clone(m), data.background, data.test) for _, m in members])
    expected = zscore_average(sims, weights=[1.0, 3.0])
    np.testing.assert_allclose(ens.predict(pairs), expected, atol=1e-12)
    np.testing.assert_allclose(ens.mean_, sims.mean(axis=1), atol=1e-12)
    np.testing.assert_allclose(ens.scale_, sims.std(axis=1), atol=1e-12)
    S = ens.similarity(data.test)
    assert S.shape == (50, 50)
    np.testing.assert_allclose(S[np.triu_indices(50, k=1)], expected, atol=1e-12)
    np.testing.assert_allclose(S, S.T, atol=1e-12)


def test_zscore_average_by_hand():
    S = np.array([[0.1, 0.2, 0.3, 0.6], [10.0, 30.0, 20.0, 40.0], [5.0, 5.0, 5.0, 5.0]])
    z = (S[:2] - S[:2].mean(axis=1, keepdims=True)) / S[:2].std(axis=1, keepdims=True)
    np.testing.assert_allclose(zscore_average(S, weights=[1, 1, 1]), z.sum(axis=0) / 3)
    ref = [0, 1, 2]
    zr = (S[:2] - S[:2, ref].mean(axis=1, keepdims=True)) / S[:2, ref].std(axis=1,
                                                                          keepdims=True)
    np.testing.assert_allclose(zscore_average(S[:2], reference=ref), zr.mean(axis=0))


def test_grid_search_over_members_and_their_parameters(lee, assert_best_is_argmax):
    data, pairs = lee
    ens = SimilarityEnsemble([("tfidf", TfidfVectorizer(**TEXT)),
                              ("esa", ExplicitSemanticAnalysis(TfidfVectorizer(**TEXT)))],
                             corpus=data.background)
    grid = GridSearchCV(ens, {"esa__topn": [20, 100], "tfidf": [TfidfVectorizer(), "drop"]},
                        cv=ShuffleSplit(2, test_size=0.5, random_state=0))
    grid.fit(pairs, data.similarity_upper)
    assert_best_is_argmax(grid)
    assert len(grid.cv_results_["mean_test_score"]) == 4
    assert 0.3 < grid.best_score_ < 1.0
    best = grid.best_estimator_
    assert best.get_params()["esa__topn"] == grid.best_params_["esa__topn"]


def test_members_can_be_pipelines_and_params_round_trip(lee):
    data, pairs = lee
    lsi = make_pipeline(TfidfVectorizer(**TEXT), TopicModel(20, method="lsi", random_state=0))
    ens = SimilarityEnsemble([("lsi", lsi), ("tfidf", TfidfVectorizer(**TEXT))],
                             corpus=data.background)
    params = ens.get_params()
    assert params["lsi__topicmodel__eig"] == 1.0
    ens.set_params(lsi__topicmodel__eig=0.5)
    assert lsi.get_params()["topicmodel__eig"] == 0.5
    fitted = ens.fit(pairs[:300])
    restored = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(restored.predict(pairs[300:]), fitted.predict(pairs[300:]))
    assert not hasattr(clone(fitted), "models_")


def test_word_pairs_with_embeddings():
    docs = [["cat", "dog", "pet", "food"], ["dog", "cat", "vet"], ["stock", "bond", "bank"],
            ["bank", "loan", "stock"], ["pet", "cat", "food"], ["loan", "bond", "fund"]] * 5
    members = [(f"w{w}", PMIEmbedding(3, window=w, min_count=1, input="tokens",
                                      random_state=0)) for w in (1, 2)]
    pairs = [(["cat"], ["dog"]), (["cat"], ["bank"]), (["stock"], ["bond"]),
             (["pet"], ["loan"])]
    ens = SimilarityEnsemble(members, corpus=docs).fit(pairs)
    sims = np.vstack([[m.similarity(a[0], b[0]) for a, b in pairs]
                      for _, m in ens.models_])
    np.testing.assert_allclose(ens.predict(pairs), zscore_average(sims), atol=1e-10)


@pytest.mark.parametrize("params,X,error,message", [
    ({"models": []}, [("a", "b")], ValueError, "non-empty list"),
    ({"models": [("a", "drop")]}, [("a", "b")], ValueError, "at least one must remain"),
    ({"models": [("a", TfidfVectorizer()), ("a", TfidfVectorizer())]}, [("a", "b")],
     ValueError, "unique"),
    ({"models": [("a", TfidfVectorizer())], "weights": [1.0, 2.0]}, [("aa bb", "bb cc")],
     ValueError, "weights must be 1"),
    ({"models": [("a", TfidfVectorizer())], "weights": [-1.0]}, [("aa bb", "bb cc")],
     ValueError, "non-negative"),
    ({"models": [("a", TfidfVectorizer())]}, [("a", "b", "c")], ValueError, "2-tuple"),
    ({"models": [("a", TfidfVectorizer())]}, "ab", TypeError, "sequence of"),
    ({"models": [("a", TfidfVectorizer())], "corpus": iter(["a b"])}, [("a", "b")],
     TypeError, "one-shot iterator"),
])
def test_bad_input_raises_clear_errors(params, X, error, message):
    with pytest.raises(error, match=message):
        SimilarityEnsemble(**params).fit(X)


def test_score_checks_y():
    pairs = [("aa bb", "bb cc"), ("aa", "cc")]
    ens = SimilarityEnsemble([("a", TfidfVectorizer())]).fit(pairs)
    with pytest.raises(ValueError, match="one rating per pair"):
        ens.score(pairs, [1.0])
    with pytest.raises(ValueError, match="constant"):
        ens.score(pairs, [1.0, 1.0])


def test_without_corpus_members_fit_on_the_pairs_documents_and_moments_on_train_pairs(lee):
    data, pairs = lee
    train, test = pairs[:600], pairs[600:]
    ens = SimilarityEnsemble([("tfidf", TfidfVectorizer(**TEXT))]).fit(train)
    docs = list(dict.fromkeys(doc for pair in train for doc in pair))
    assert ens.models_[0][1].vocabulary_ == TfidfVectorizer(**TEXT).fit(docs).vocabulary_
    vec = TfidfVectorizer(**TEXT).fit(docs)

    def cos(ps):
        return np.array([(normalize(vec.transform([a])) @ normalize(vec.transform([b])).T)
                         .toarray()[0, 0] for a, b in ps])

    train_cos = cos(train)
    np.testing.assert_allclose(ens.predict(test[:20]),
                               (cos(test[:20]) - train_cos.mean()) / train_cos.std(),
                               atol=1e-12)
