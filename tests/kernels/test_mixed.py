"""Mixed continuous / discrete features (``var_type``), loo-ard for local linear fits, AIC.

Parity with statsmodels' ``KernelReg`` lives in tests/peer/test_statsmodels_kernel_regression.py;
here: the kernels' definitions, limits, gradients and bad input.
"""
import pickle

import numpy as np
import pytest
from scipy import sparse
from scipy.optimize import approx_fprime
from sklearn.base import clone

from nlpfeat.kernels import (
    NadarayaWatsonClassifier,
    NadarayaWatsonRegressor,
    _bandwidth,
    _mixed,
    get_kernel,
)


@pytest.fixture(scope="module")
def data():
    rs = np.random.RandomState(0)
    n = 80
    X = np.column_stack([rs.normal(size=n), rs.normal(size=n), rs.binomial(3, 0.5, size=n),
                         rs.randint(0, 3, size=n)]).astype(float)
    y = X[:, 0] ** 2 + X[:, 2] + (X[:, 3] == 1) + 0.3 * rs.normal(size=n)
    return X, y


def test_wang_ryzin_and_aitchison_aitken_weights_by_hand():
    X = np.array([[0.0, 0.0], [1.0, 1.0], [3.0, 2.0], [1.0, 2.0]])
    y = np.arange(4.0)
    q = np.array([[1.0, 2.0]])
    h_o, h_u = 0.3, 0.4
    reg = NadarayaWatsonRegressor(bandwidth=[h_o, h_u], var_type="ou").fit(X, y)
    d = np.abs(X[:, 0] - q[0, 0])
    wr = np.where(d == 0, 1 - h_o, 0.5 * (1 - h_o) * h_o**d)       # Wang-van Ryzin
    aa = np.where(X[:, 1] == q[0, 1], 1 - h_u, h_u / (3 - 1))      # 3 categories
    expected = wr * aa / np.sum(wr * aa)
    np.testing.assert_allclose(reg.attention_weights(q)[0], expected, rtol=1e-14)
    assert reg.predict(q)[0] == pytest.approx(expected @ y, rel=1e-14)


def test_continuous_codes_equal_the_product_metric(data):
    X, y = data
    Xc = X[:, :2]
    ours = NadarayaWatsonRegressor(bandwidth=[0.4, 0.7], var_type="cc").fit(Xc, y)
    ref = NadarayaWatsonRegressor(bandwidth=[0.4, 0.7], metric="product").fit(Xc, y)
    np.testing.assert_allclose(ours.predict(Xc), ref.predict(Xc), rtol=1e-12)


def test_zero_unordered_bandwidth_keeps_to_the_category(data):
    X, y = data
    reg = NadarayaWatsonRegressor(bandwidth=[0.5, 0.5, 0.3, 0.0], var_type="ccou").fit(X, y)
    W = reg.attention_weights(X[:5])
    same = X[:5, 3, None] == X[None, :, 3]
    assert np.all(W[~same] == 0) and np.allclose(W.sum(axis=1), 1.0)


def test_zero_ordered_bandwidth_unseen_code_gets_the_nearest_codes():
    """The h -> 0 limit: rows with the fewest mismatches, by their other factors."""
    X = np.array([[0.0, 0.0], [0.5, 0.0], [0.0, 2.0], [2.0, 2.0], [0.0, 5.0]])
    y = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    reg = NadarayaWatsonRegressor(bandwidth=[1.0, 0.0], var_type="co").fit(X, y)
    W = reg.attention_weights([[0.0, 1.0]])[0]       # codes 0 and 2 both at distance 1
    assert np.all(W[4] == 0)
    k = np.exp(-0.5 * X[:4, 0] ** 2)
    np.testing.assert_allclose(W[:4], k / k.sum(), rtol=1e-14)
    W = reg.attention_weights([[0.0, 4.0]])[0]       # code 5 is nearest
    np.testing.assert_array_equal(W, [0, 0, 0, 0, 1])
    assert np.isfinite(reg.predict([[0.0, 100.0]])).all()


def test_ordered_bandwidth_one_is_defined():
    X = np.array([[0.0], [1.0], [3.0]])
    reg = NadarayaWatsonRegressor(bandwidth=[1.0], var_type="o").fit(X, [0.0, 1.0, 2.0])
    np.testing.assert_allclose(reg.attention_weights([[1.0]])[0], [0.25, 0.5, 0.25])


@pytest.mark.parametrize("reg_type", ["lc", "ll"])
@pytest.mark.parametrize("var_type", ["ccou", "ou"])
def test_mixed_loo_gradient_matches_finite_differences(data, var_type, reg_type):
    X, y = data
    Xs = X[:, -len(var_type):] if var_type == "ou" else X
    h0 = np.array([0.5, 0.7, 0.3, 0.4])[-len(var_type):]
    kern = get_kernel("gaussian")
    theta = _mixed.to_theta(h0, h0, var_type) + 0.1

    def f(t):
        return _mixed._mixed_objective(t, h0, Xs, y[:, None], kern, var_type, reg_type,
                                       "squared", None)

    grad = f(theta)[1]
    numeric = approx_fprime(theta, lambda t: f(t)[0], 1e-6)
    np.testing.assert_allclose(grad, numeric, rtol=1e-4, atol=1e-7)


@pytest.mark.parametrize("metric", ["product", "euclidean"])
@pytest.mark.parametrize("kernel", ["gaussian", "logistic"])
def test_local_linear_loo_gradient_matches_finite_differences(data, metric, kernel):
    X, y = data
    Xc = X[:, :2]
    h0 = np.array([0.5, 0.7])
    kern = get_kernel(kernel)

    def f(t):
        return _bandwidth._ard_objective(t, h0, Xc, y[:, None], kern, metric, "squared",
                                         None, "ll")

    theta = np.array([0.1, -0.2])
    numeric = approx_fprime(theta, lambda t: f(t)[0], 1e-6)
    np.testing.assert_allclose(f(theta)[1], numeric, rtol=1e-4, atol=1e-7)


def test_local_linear_loo_ard_is_a_minimum_of_the_loo_criterion(data):
    X, y = data
    Xc = X[:, :2]
    reg = NadarayaWatsonRegressor(bandwidth="loo-ard", reg_type="ll", metric="product")
    h = reg.fit(Xc, y).bandwidth_
    steps = np.array([[1, 1], [0.95, 1], [1.05, 1], [1, 0.95], [1, 1.05]])
    grid = NadarayaWatsonRegressor(bandwidth="loo", reg_type="ll", metric="product",
                                   bandwidth_grid=steps * h).fit(Xc, y)
    assert np.argmin(grid.loo_scores_) == 0


def test_mixed_loo_ard_lowers_the_criterion_and_stays_in_range(data):
    X, y = data
    reg = NadarayaWatsonRegressor(bandwidth="loo-ard", var_type="ccou").fit(X, y)
    h = reg.bandwidth_
    assert np.all(h[:2] > 0) and np.all((h[2:] >= 0) & (h[2:] <= 1))
    at_h = NadarayaWatsonRegressor(bandwidth="loo", var_type="ccou",
                                   bandwidth_grid=h[None, :]).fit(X, y).loo_scores_[0]
    assert at_h < reg.loo_scores_.min()


def test_classifier_uses_the_same_weights(data):
    X, _ = data
    labels = np.where(X[:, 3] == 1, "one", "other")
    h = [0.5, 0.5, 0.3, 0.2]
    clf = NadarayaWatsonClassifier(bandwidth=h, var_type="ccou").fit(X, labels)
    reg = NadarayaWatsonRegressor(bandwidth=h, var_type="ccou").fit(X, labels == "one")
    np.testing.assert_allclose(clf.predict_proba(X[:7])[:, 0], reg.predict(X[:7]), rtol=1e-12)
    fitted = NadarayaWatsonClassifier(bandwidth="loo-ard", var_type="ccou").fit(X, labels)
    assert fitted.bandwidth_[3] < 0.05 and fitted.score(X, labels) == 1.0


def test_aic_attribute_and_classifier_rejects_it(data):
    X, y = data
    assert NadarayaWatsonRegressor(bandwidth=1.0).fit(X[:, :2], y).aic_ is None
    reg = NadarayaWatsonRegressor(bandwidth="aic", var_type="ccou").fit(X, y)
    assert np.isfinite(reg.aic_)
    with pytest.raises(ValueError, match="bandwidth='aic' is a regression criterion"):
        NadarayaWatsonClassifier(bandwidth="aic").fit(X, y > 1)


def test_clone_pickle_and_input_untouched(data):
    X, y = data
    X0 = X.copy()
    reg = NadarayaWatsonRegressor(bandwidth="loo", var_type="ccou", reg_type="ll").fit(X, y)
    np.testing.assert_array_equal(X, X0)
    assert clone(reg).var_type == "ccou"
    again = pickle.loads(pickle.dumps(reg))
    np.testing.assert_array_equal(again.predict(X[:5]), reg.predict(X[:5]))


X_BAD = np.array([[0.1, 0.0], [0.5, 1.0], [0.9, 2.0], [1.3, 1.0]])
Y_BAD = np.array([0.0, 1.0, 2.0, 1.0])


@pytest.mark.parametrize("X, params, match", [
    (X_BAD, {"var_type": "cou"}, "var_type has 3 codes.*X has 2 features"),
    (X_BAD, {"var_type": "cx"}, r"only contain 'c'.*\['x'\]"),
    (np.c_[X_BAD[:, 0], [0.0, 1.5, 2.0, 1.0]], {"var_type": "co"},
     "feature 1 as ordered.*non-integer value 1.5"),
    (np.c_[X_BAD[:, 0], [0.0, 1.5, 2.0, 1.0]], {"var_type": "cu"}, "non-integer value 1.5"),
    (X_BAD, {"var_type": "cu", "bandwidth": [0.5, 1.5]}, r"feature 1.*must be in \[0, 1\]"),
    (X_BAD, {"var_type": "cu", "bandwidth": [-0.5, 0.5]}, "feature 0.*strictly positive"),
    (X_BAD, {"var_type": "cu", "bandwidth": 0.5}, "one value per feature"),
    (X_BAD, {"var_type": "cu", "bandwidth": "scott"}, "rule for continuous features"),
    (X_BAD, {"var_type": "cu", "metric": "cosine"}, "needs dense X, metric"),
    (X_BAD, {"var_type": "cu", "algorithm": "tree", "kernel": "epanechnikov"},
     "algorithm 'auto' or 'brute'"),
    (sparse.csr_matrix(X_BAD), {"var_type": "cu"}, "needs dense X"),
    (X_BAD, {"var_type": "cu", "bandwidth": "loo", "bandwidth_grid": [0.5, 0.7]},
     r"shape \(n_grid, 2\)"),
])
def test_bad_mixed_input_raises_a_clear_value_error(X, params, match):
    with pytest.raises(ValueError, match=match):
        NadarayaWatsonRegressor(**params).fit(X, Y_BAD)


def test_bad_queries_raise_a_clear_value_error():
    reg = NadarayaWatsonRegressor(bandwidth=[0.5, 0.3], var_type="cu").fit(X_BAD, Y_BAD)
    with pytest.raises(ValueError, match=r"categories \[0.0, 1.0, 2.0\].*code 7.0"):
        reg.predict([[0.0, 7.0]])
    with pytest.raises(ValueError, match=r"categories \[0.0, 1.0, 2.0\].*code -1.0"):
        reg.attention_weights([[0.0, -1.0]])
    ordered = NadarayaWatsonRegressor(bandwidth=[0.5, 0.3], var_type="co").fit(X_BAD, Y_BAD)
    with pytest.raises(ValueError, match="non-integer value 0.5"):
        ordered.predict([[0.0, 0.5]])
    assert np.isfinite(ordered.predict([[0.0, 7.0]])).all()   # ordered: any integer code
    with pytest.raises(TypeError, match="var_type"):
        NadarayaWatsonRegressor(var_type=["c", "o"]).fit(X_BAD, Y_BAD)


def test_local_linear_loo_grid_with_tiny_grid_bandwidths_is_finite(data):
    """The default grid reaches 0.05 x Scott: local designs of spread ~1e-300 (pinv of
    such a matrix overflowed in 1 / s)."""
    X, y = data
    reg = NadarayaWatsonRegressor(bandwidth="loo", reg_type="ll", metric="product")
    reg.fit(X[:, :2], y)
    assert np.all(np.isfinite(reg.loo_scores_))


def test_aic_on_too_few_samples_raises():
    with pytest.raises(ValueError, match="AIC is undefined.*n = 3 samples"):
        NadarayaWatsonRegressor(bandwidth="aic").fit([[0.0], [1.0], [2.0]], [0.0, 1.0, 0.5])
