"""TopicModel(method="lsi", eig=p): document vectors U S^p on both backends."""
import numpy as np
import pytest
from sklearn.preprocessing import normalize

from nlpfeat.datasets import load_lee
from nlpfeat.text import TfidfVectorizer, TopicModel


@pytest.fixture(scope="module")
def lee_matrices():
    lee = load_lee()
    vec = TfidfVectorizer(stop_words="english").fit(lee.background)
    return vec.transform(lee.background), vec.transform(lee.test)


@pytest.mark.parametrize("backend", ["gensim", "sklearn"])
def test_eig_one_reproduces_the_classic_projection(lee_matrices, backend):
    X, X_test = lee_matrices
    default = TopicModel(20, method="lsi", backend=backend, random_state=0).fit(X)
    ones = TopicModel(20, method="lsi", backend=backend, random_state=0, eig=1.0).fit(X)
    np.testing.assert_array_equal(ones.transform(X_test), default.transform(X_test))
    np.testing.assert_allclose(default.transform(X_test), X_test @ default.components_.T,
                               atol=1e-12)
    assert default.singular_values_.shape == (20,)
    assert np.all(np.diff(default.singular_values_) <= 1e-9)


@pytest.mark.parametrize("backend", ["gensim", "sklearn"])
@pytest.mark.parametrize("p", [0.0, 0.5, 1.5])
def test_transform_is_x_v_s_to_the_p_minus_one(lee_matrices, backend, p):
    X, X_test = lee_matrices
    tm = TopicModel(10, method="lsi", backend=backend, random_state=0, eig=p).fit(X)
    expected = (X_test @ tm.components_.T) * tm.singular_values_ ** (p - 1)
    np.testing.assert_allclose(tm.transform(X_test), expected, atol=1e-12)


@pytest.mark.parametrize("backend", ["gensim", "sklearn"])
@pytest.mark.parametrize("p", [0.0, 0.5, 1.5])
def test_training_documents_get_u_times_s_to_the_p(backend, p):
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(30, 5)) @ rng.uniform(size=(5, 40))   # rank 5: the SVD is exact
    tm = TopicModel(5, method="lsi", backend=backend, random_state=0, eig=p).fit(X)
    U, s, _ = np.linalg.svd(X, full_matrices=False)
    expected = U[:, :5] * s[:5] ** p
    got = tm.transform(X)
    signs = np.sign(np.sum(got * expected, axis=0))        # singular vectors up to sign
    np.testing.assert_allclose(tm.singular_values_, s[:5], rtol=1e-8)
    np.testing.assert_allclose(got * signs, expected, atol=1e-8 * s[0] ** max(p, 0))


def test_eig_ignored_by_lda_and_rank_deficient_topics_stay_finite():
    X = np.array([[1.0, 0, 0], [2.0, 0, 0], [0, 1.0, 1.0]])
    lda = TopicModel(2, eig=0.0, random_state=0).fit(X)
    np.testing.assert_allclose(lda.transform(X).sum(axis=1), 1.0)
    assert not hasattr(lda, "singular_values_")
    lsi = TopicModel(3, method="lsi", eig=0.0, random_state=0).fit(X)     # rank 2
    Z = lsi.transform(X)
    assert np.isfinite(Z).all() and np.allclose(Z[:, 2], 0.0)
    np.testing.assert_allclose(np.linalg.norm(normalize(Z[:, :2]), axis=1), 1.0)
