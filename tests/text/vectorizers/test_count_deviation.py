"""CountDeviation: expectation and variance by hand, zero-length documents, G against scipy."""
import pickle

import numpy as np
import pytest
from scipy.stats import power_divergence
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline

from nlpfeat.datasets import load_lee, load_polarity
from nlpfeat.text import BagOfWords, CountDeviation

# 10 tokens: x 4, y 3, z 2, w 1 -> rates 0.4, 0.3, 0.2, 0.1
FIT = ["x x y z", "x y w", "x y z"]


def test_rates_and_vocabulary_by_hand():
    dev = CountDeviation(max_features=3, token_pattern=r"\w").fit(FIT)
    assert dev.get_feature_names_out().tolist() == ["x", "y", "z"]
    np.testing.assert_allclose(dev.rates_, [0.4, 0.3, 0.2])
    assert dev.n_tokens_ == 10


@pytest.mark.parametrize("statistic, expected", [
    # document "y y y y w" (n = 5): E = 2, 1.5, 1; counts x 0, y 4, z 0
    ("poisson", [(0 - 2) / np.sqrt(2), (4 - 1.5) / np.sqrt(1.5), (0 - 1) / np.sqrt(1)]),
    ("binomial", [(0 - 2) / np.sqrt(2 * 0.6), (4 - 1.5) / np.sqrt(1.5 * 0.7),
                  (0 - 1) / np.sqrt(1 * 0.8)]),
    ("g", [-2 * 5 * np.log(5 / 3), 2 * (4 * np.log(4 / 1.5) + 1 * np.log(1 / 3.5)),
           -2 * 5 * np.log(5 / 4)]),
])
def test_hand_computed_values(statistic, expected):
    dev = CountDeviation(max_features=3, statistic=statistic, token_pattern=r"\w").fit(FIT)
    np.testing.assert_allclose(dev.transform(["y y y y w"]), [expected], rtol=1e-12)


def test_absent_frequent_word_negative_rare_word_near_zero():
    docs = load_polarity().data
    dev = CountDeviation(max_features=500).fit(docs)
    Z = dev.transform(docs)
    names = dev.get_feature_names_out().tolist()
    tokens = [dev.build_analyzer()(d) for d in docs]
    n = np.array([len(t) for t in tokens], dtype=float)
    the, rare = names.index("the"), int(np.argmin(dev.rates_))
    absent = np.array(["the" not in t for t in tokens])
    assert 20 < absent.sum() < 190
    np.testing.assert_allclose(Z[absent, the], -np.sqrt(n[absent] * dev.rates_[the]))
    assert (Z[absent & (n >= 25), the] < -1.0).all()
    absent_rare = np.array([names[rare] not in t for t in tokens])
    assert absent_rare.sum() >= 190
    assert (Z[absent_rare, rare] < 0).all() and np.abs(Z[absent_rare, rare]).max() < 0.25


def test_zero_length_document_gets_zeros():
    dev = CountDeviation(max_features=3, token_pattern=r"\w").fit(FIT)
    for statistic in ("poisson", "binomial", "g"):
        Z = dev.set_params(statistic=statistic).transform(["", "!!", "x"])
        np.testing.assert_array_equal(Z[:2], 0.0)
        assert np.isfinite(Z).all() and Z[2, 0] > 0


def test_word_of_rate_one_gets_zero_under_binomial():
    dev = CountDeviation(statistic="binomial").fit(["aa aa", "aa"])
    np.testing.assert_array_equal(dev.transform(["aa aa aa", "bb"]), [[0.0], [0.0]])


@pytest.mark.parametrize("doc_index", range(0, 50, 7))
def test_g_equals_scipy_power_divergence_per_word(doc_index):
    lee = load_lee()
    dev = CountDeviation(max_features=200, statistic="g").fit(lee.background)
    doc = lee.test[doc_index]
    got = dev.transform([doc])[0]
    tokens = dev.build_analyzer()(doc)
    n = len(tokens)
    for j, word in enumerate(dev.get_feature_names_out()):
        x, e = tokens.count(word), n * dev.rates_[j]
        g, _ = power_divergence([x, n - x], [e, n - e], lambda_="log-likelihood")
        assert got[j] == pytest.approx(np.sign(x - e) * g, rel=1e-9, abs=1e-12)


def test_poisson_limit_of_binomial_for_rare_words():
    lee = load_lee()
    Zp = CountDeviation(max_features=300).fit(lee.background).transform(lee.test)
    Zb = CountDeviation(max_features=300, statistic="binomial").fit(lee.background)
    rates = Zb.rates_
    Zb = Zb.transform(lee.test)
    np.testing.assert_allclose(Zb * np.sqrt(1 - rates), Zp, rtol=1e-12, atol=1e-12)


def test_ties_and_vocabulary_match_bag_of_words_max_features():
    docs = load_polarity().data
    dev = CountDeviation(max_features=100).fit(docs)
    bow = BagOfWords(max_features=100).fit(docs)
    assert dev.vocabulary_ == bow.vocabulary_


def test_sklearn_protocol(assert_best_is_argmax):
    docs = load_polarity().data
    est = CountDeviation(max_features=50, statistic="g")
    assert clone(est).get_params() == est.get_params()
    with pytest.raises(NotFittedError):
        est.transform(docs)
    fitted = clone(est).fit(iter(docs))
    again = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(again.transform(docs), fitted.transform(docs))
    np.testing.assert_array_equal(est.fit_transform(docs), fitted.transform(docs))
    y = load_polarity().target
    grid = GridSearchCV(make_pipeline(CountDeviation(), LogisticRegression(max_iter=500)),
                        {"countdeviation__statistic": ["poisson", "g"]}, cv=2).fit(docs, y)
    assert_best_is_argmax(grid)


def test_bad_input():
    with pytest.raises(ValueError, match="statistic"):
        CountDeviation(statistic="z").fit(FIT)
    with pytest.raises(ValueError, match="no tokens"):
        CountDeviation().fit(["", "!"])
    with pytest.raises(ValueError, match="string object received"):
        CountDeviation().fit("x y z")


@pytest.mark.parametrize("statistic", ["poisson", "binomial", "g"])
def test_fit_transform_reads_a_generator_once(statistic):
    """fit_transform was fit then transform: a generator was consumed by fit and the
    output had no rows. Now it is one pass."""
    docs = load_polarity().data[:50]
    expected = CountDeviation(max_features=20, statistic=statistic).fit(docs).transform(docs)
    gen = (doc for doc in docs)
    got = CountDeviation(max_features=20, statistic=statistic).fit_transform(gen)
    assert list(gen) == [] and got.shape == expected.shape == (50, 20)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
