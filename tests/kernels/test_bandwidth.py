"""Bandwidth selection (rules of thumb, LOO grid, LOO-ARD) and bad input."""
import numpy as np
import pytest
from scipy import sparse
from scipy.optimize import check_grad

from nlpfeat.datasets import make_nw_regression
from nlpfeat.kernels import (
    NadarayaWatsonClassifier,
    NadarayaWatsonRegressor,
    get_kernel,
)
from nlpfeat.kernels._bandwidth import _ard_objective, rule_of_thumb


def _task_2d(n=70, seed=1):
    rng = np.random.RandomState(seed)
    X = rng.uniform(0, 5, size=(n, 2))
    y = 2 * np.sin(X[:, 0]) + X[:, 1] ** 0.8 * (1 + 0.3 * X[:, 0]) + rng.normal(0, 0.5, n)
    return X, y


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_loo_grid_finds_statsmodels_cv_ls_bandwidth_textbook():
    kr = pytest.importorskip("statsmodels.nonparametric.kernel_regression")
    X, y = make_nw_regression(70, random_state=0)
    expected = kr.KernelReg(y, X, var_type="c", reg_type="lc", bw="cv_ls").bw[0]
    grid = np.geomspace(0.02, 2.0, 400)  # 1.2% spacing, not centred on the answer
    got = NadarayaWatsonRegressor(bandwidth="loo", bandwidth_grid=grid).fit(X, y).bandwidth_
    assert got == pytest.approx(expected, rel=0.02)


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_loo_grid_and_ard_find_statsmodels_cv_ls_bandwidths_2d():
    kr = pytest.importorskip("statsmodels.nonparametric.kernel_regression")
    X, y = _task_2d()
    expected = kr.KernelReg(y, X, var_type="cc", reg_type="lc", bw="cv_ls").bw
    axes = [np.geomspace(h / 1.37, h * 1.41, 30) for h in expected]  # ~2% spacing
    grid = np.array(np.meshgrid(*axes)).reshape(2, -1).T
    loo = NadarayaWatsonRegressor(bandwidth="loo", bandwidth_grid=grid).fit(X, y)
    np.testing.assert_allclose(loo.bandwidth_, expected, rtol=0.02)
    ard = NadarayaWatsonRegressor(bandwidth="loo-ard").fit(X, y)
    np.testing.assert_allclose(ard.bandwidth_, expected, rtol=0.02)


def test_rules_of_thumb():
    rng = np.random.RandomState(0)
    X = rng.normal(scale=[1.0, 3.0, 0.5], size=(200, 3))
    sigma = X.std(axis=0, ddof=1)
    scott = NadarayaWatsonRegressor(bandwidth="scott").fit(X, X[:, 0]).bandwidth_
    np.testing.assert_allclose(scott, sigma * 200 ** (-1 / 7))
    silverman = NadarayaWatsonRegressor(bandwidth="silverman").fit(X, X[:, 0]).bandwidth_
    np.testing.assert_allclose(silverman, sigma * (4 / 5) ** (1 / 7) * 200 ** (-1 / 7))
    x1 = X[:, :1]
    np.testing.assert_allclose(rule_of_thumb(x1, "silverman"), 1.0592 * sigma[0] * 200 ** -0.2,
                               rtol=1e-4)


@pytest.mark.parametrize("bandwidth", ["scott", "silverman", "loo", "loo-ard"])
@pytest.mark.parametrize("kernel", ["gaussian", "epanechnikov"])
def test_every_selected_bandwidth_is_strictly_positive(bandwidth, kernel):
    rng = np.random.RandomState(2)
    X = np.column_stack([rng.normal(size=30), np.full(30, 4.0), np.repeat([0.0, 1.0], 15)])
    for y in [rng.normal(size=30), np.full(30, 2.0)]:
        reg = NadarayaWatsonRegressor(kernel, bandwidth=bandwidth, on_empty="mean").fit(X, y)
        h = np.atleast_1d(reg.bandwidth_)
        assert h.shape == (3,) and np.all(np.isfinite(h)) and np.all(h > 0)


@pytest.mark.parametrize("kernel, metric, loss", [
    ("gaussian", "euclidean", "squared"), ("gaussian", "product", "log_loss"),
    ("laplacian", "euclidean", "squared"), ("sigmoid", "product", "squared"),
    ("logistic", "cosine", "squared"), ("biweight", "euclidean", "squared")])
def test_ard_gradient_matches_finite_differences(kernel, metric, loss):
    rng = np.random.RandomState(3)
    X = rng.uniform(0, 3, size=(35, 3))
    if loss == "log_loss":
        Y = np.eye(2)[(X[:, 0] + rng.normal(0, 0.3, 35) > 1.5).astype(int)]
    else:
        Y = np.column_stack([np.sin(X[:, 0]) + X[:, 1], X[:, 2]])
    theta = np.log([2.5]) if metric == "cosine" else np.log([1.5, 2.0, 2.5])
    args = (np.ones_like(theta), X, Y, get_kernel(kernel), metric, loss, 0.003)  # h0 = 1
    err = check_grad(lambda t: _ard_objective(t, *args)[0],
                     lambda t: _ard_objective(t, *args)[1], theta, epsilon=1e-6)
    assert err < 1e-5 * max(1.0, np.abs(_ard_objective(theta, *args)[1]).max())


def test_loo_ard_is_no_worse_than_its_starting_grid():
    X, y = _task_2d(n=60, seed=4)
    X = np.column_stack([X, np.random.RandomState(0).normal(size=60)])  # an irrelevant feature
    grid = NadarayaWatsonRegressor(bandwidth="loo").fit(X, y)
    ard = NadarayaWatsonRegressor(bandwidth="loo-ard").fit(X, y)
    ard_loss = NadarayaWatsonRegressor(bandwidth="loo", bandwidth_grid=[ard.bandwidth_]
                                       ).fit(X, y).loo_scores_[0]
    assert ard_loss <= grid.loo_scores_.min() + 1e-12
    assert ard.bandwidth_[2] > 3 * ard.bandwidth_[0]  # the irrelevant feature is smoothed out


def test_classifier_loo_minimises_log_loss():
    X, y = _task_2d(n=60, seed=5)
    labels = (y > np.median(y)).astype(int)
    clf = NadarayaWatsonClassifier(bandwidth="loo").fit(X, labels)
    best = clf.bandwidth_grid_[np.argmin(clf.loo_scores_)]
    np.testing.assert_allclose(clf.bandwidth_, best)
    assert np.all(clf.loo_scores_ > 0) and np.isfinite(clf.loo_scores_).all()


X_OK, Y_OK = np.arange(12.0).reshape(6, 2), np.arange(6.0)


@pytest.mark.parametrize("X, y, params, match", [
    (np.array([[0.0, np.nan]] + [[1.0, 2.0]] * 5), Y_OK, {}, "Input X contains NaN"),
    (np.array([[0.0, np.inf]] + [[1.0, 2.0]] * 5), Y_OK, {}, "Input X contains infinity"),
    (X_OK, np.r_[np.nan, Y_OK[1:]], {}, "Input y contains NaN"),
    (X_OK, np.r_[np.inf, Y_OK[1:]], {}, "Input y contains infinity"),
    (X_OK, Y_OK, {"bandwidth": 0.0}, "'bandwidth' parameter.*Got 0.0"),
    (X_OK, Y_OK, {"bandwidth": -1.0}, "'bandwidth' parameter.*Got -1.0"),
    (X_OK, Y_OK, {"bandwidth": np.nan}, "'bandwidth' parameter.*Got nan"),
    (X_OK, Y_OK, {"bandwidth": [1.0, -2.0]}, "strictly positive and finite"),
    (X_OK, Y_OK, {"bandwidth": [1.0, 2.0, 3.0]}, "3 values but 2 values are expected"),
    (X_OK, Y_OK, {"kernel": "gausian"}, "Unknown kernel 'gausian'. Valid kernels are.*'tophat'"),
    (X_OK[:2], Y_OK[:2], {"bandwidth": "loo"}, "at least 3 samples; got n_samples = 2"),
    (X_OK[:2], Y_OK[:2], {"bandwidth": "loo-ard"}, "at least 3 samples"),
    (np.empty((0, 2)), np.empty(0), {}, "0 sample"),
    (X_OK, Y_OK, {"bandwidth_grid": [1.0, -1.0]}, "strictly positive finite"),
    (X_OK, Y_OK, {"bandwidth_grid": np.ones((3, 5))}, r"shape \(n_grid, 2\)"),
    (X_OK, Y_OK, {"bandwidth": "loo-ard", "kernel": "tophat"}, "no derivative"),
    (X_OK, Y_OK, {"var_type": "c"}, "var_type has 1 codes.*X has 2 features"),
    (X_OK, Y_OK, {"algorithm": "tree"}, "algorithm='tree' needs a compact kernel"),
    (sparse.csr_matrix(X_OK), Y_OK, {"reg_type": "ll"}, "reg_type='ll' needs dense X"),
])
def test_bad_input_raises_a_helpful_value_error(X, y, params, match):
    with pytest.raises(ValueError, match=match):
        NadarayaWatsonRegressor(**params).fit(X, y)


def test_predict_with_wrong_number_of_features():
    reg = NadarayaWatsonRegressor(bandwidth=1.0).fit(X_OK, Y_OK)
    with pytest.raises(ValueError, match="X has 3 features, but NadarayaWatsonRegressor is "
                                         "expecting 2 features"):
        reg.predict(np.ones((2, 3)))
    with pytest.raises(ValueError, match="Input X contains NaN"):
        reg.predict([[np.nan, 1.0]])
    with pytest.raises(ValueError, match="0 sample"):
        reg.predict(np.empty((0, 2)))
