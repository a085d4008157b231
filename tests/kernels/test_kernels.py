"""The kernel registry and kernel_log_weights."""
import pickle

import numpy as np
import pytest
from scipy.integrate import trapezoid

from nlpfeat.kernels import (
    Kernel,
    available_kernels,
    get_kernel,
    kernel_log_weights,
    log_normalize,
    register_kernel,
)

BUILTIN = ["gaussian", "epanechnikov", "tophat", "triangular", "biweight", "triweight",
           "tricube", "cosine", "laplacian", "logistic", "sigmoid"]
COMPACT = {"epanechnikov", "tophat", "triangular", "biweight", "triweight", "tricube", "cosine"}


def test_registry_lists_every_builtin():
    assert set(BUILTIN) <= set(available_kernels())


@pytest.mark.parametrize("name", BUILTIN)
def test_kernel_is_a_density_with_the_right_support(name):
    kern = get_kernel(name)
    assert kern.compact == (name in COMPACT)
    u = np.linspace(-40, 40, 160_001)
    k = kern.k(u)
    np.testing.assert_allclose(trapezoid(k, u), 1.0, atol=5e-4)
    assert np.all(k >= 0) and np.all(np.isfinite(kern.log_k(u[k > 0])))
    if kern.compact:
        assert np.all(k[np.abs(u) > 1.0] == 0.0)
        assert np.all(np.isneginf(kern.log_k(np.array([1.5, 10.0]))))
    np.testing.assert_allclose(kern.log_k_sq(u[::1000] ** 2), kern.log_k(u[::1000]))
    np.testing.assert_allclose(kern.k_sq(u[::1000] ** 2), kern.k(u[::1000]), rtol=1e-13,
                               atol=1e-300)


def test_sigmoid_formula():
    u = np.linspace(0, 30, 7)
    np.testing.assert_allclose(get_kernel("sigmoid").k(u), 2 / (np.pi * (np.exp(u) + np.exp(-u))))


@pytest.mark.parametrize("name", [n for n in BUILTIN if n != "tophat"])
def test_log_kernel_derivative_matches_finite_differences(name):
    kern = get_kernel(name)
    u = np.array([0.1, 0.35, 0.6, 0.85])
    eps = 1e-6
    fd = (kern.log_k(u + eps) - kern.log_k(u - eps)) / (2 * eps)
    np.testing.assert_allclose(kern.dlog_k_du(u), fd, rtol=1e-5)


def test_gaussian_log_space_has_no_underflow():
    assert get_kernel("gaussian").log_k(1e5) == pytest.approx(-5e9 - 0.5 * np.log(2 * np.pi))
    assert get_kernel("laplacian").log_k(1e4) == pytest.approx(-1e4 - np.log(2))


def test_user_kernels_by_callable_and_by_registration():
    kern = get_kernel(lambda u: np.exp(-np.abs(u)) / 2)
    np.testing.assert_allclose(kern.k([0.0, 1.0]), get_kernel("laplacian").k([0.0, 1.0]))
    assert not kern.compact
    reg = register_kernel("zz_box2", lambda u: np.where(u <= 2, 0.25, 0.0), compact=True,
                          radius=2)
    assert get_kernel("zz_box2") is reg and reg.radius == 2.0
    assert "zz_box2" in available_kernels()
    assert isinstance(get_kernel(reg), Kernel)


def test_registered_kernels_pickle_by_name():
    kern = get_kernel("tricube")
    assert pickle.loads(pickle.dumps(kern)) is kern


def test_unknown_kernel_lists_valid_names():
    with pytest.raises(ValueError, match="Unknown kernel 'gausian'.*'gaussian'"):
        get_kernel("gausian")
    with pytest.raises(TypeError, match="kernel must be a str"):
        get_kernel(3.0)


def test_bad_user_kernel_is_rejected():
    with pytest.raises(ValueError, match="non-negative finite values"):
        get_kernel(lambda u: -np.ones_like(u))
    with pytest.raises(ValueError, match="non-negative finite values"):
        get_kernel(lambda u: 1.0)
    with pytest.raises(ValueError, match="positive at u=0"):
        get_kernel(lambda u: np.where(u > 0.5, 1.0, 0.0))
    with pytest.raises(ValueError, match="no derivative.*loo-ard"):
        get_kernel("tophat").dlog_k_du(0.5)


@pytest.mark.parametrize("metric", ["euclidean", "product", "cosine"])
@pytest.mark.parametrize("kernel", ["gaussian", "epanechnikov", "laplacian"])
def test_kernel_log_weights_rows_sum_to_one(metric, kernel):
    rng = np.random.RandomState(0)
    Q, X = rng.normal(size=(7, 3)), rng.normal(size=(20, 3))
    w = np.exp(kernel_log_weights(Q, X, kernel=kernel, bandwidth=0.7, metric=metric))
    assert np.all(w >= 0)
    np.testing.assert_allclose(w.sum(axis=1), 1.0)


def test_kernel_log_weights_matches_explicit_formula():
    rng = np.random.RandomState(1)
    Q, X, h = rng.normal(size=(4, 2)), rng.normal(size=(9, 2)), np.array([0.5, 2.0])
    L = kernel_log_weights(Q, X, kernel="epanechnikov", bandwidth=h, metric="product",
                           normalize=False)
    u = np.abs(Q[:, None, :] - X[None]) / h
    expected = np.where(u < 1, 0.75 * (1 - u**2), 0.0).prod(axis=2)
    np.testing.assert_allclose(np.exp(L), expected, atol=1e-15)


def test_tiny_bandwidth_degrades_to_nearest_neighbour():
    X = np.array([[0.0], [1.0], [3.0]])
    w = np.exp(kernel_log_weights([[0.9], [5.0]], X, bandwidth=1e-9))
    np.testing.assert_array_equal(w, [[0, 1, 0], [0, 0, 1]])
    w = np.exp(kernel_log_weights([[10.0]], X, kernel="epanechnikov", bandwidth=0.1))
    np.testing.assert_array_equal(w, [[0, 0, 1]])


def test_log_normalize_is_shift_invariant_and_finite():
    L = np.array([[1000.0, 999.0, -np.inf]])
    w1 = np.exp(log_normalize(L)[0])
    w2 = np.exp(log_normalize(L - 2000.0)[0])
    np.testing.assert_allclose(w1, w2)
    assert np.isfinite(w1).all() and w1.sum() == pytest.approx(1.0)


def test_kernel_log_weights_bad_input():
    with pytest.raises(ValueError, match="strictly positive"):
        kernel_log_weights([[0.0]], [[1.0]], bandwidth=0.0)
    with pytest.raises(ValueError, match="strictly positive"):
        kernel_log_weights([[0.0]], [[1.0]], bandwidth=np.nan)
    with pytest.raises(ValueError, match="2 values but 3 values are expected"):
        kernel_log_weights(np.zeros((1, 3)), np.zeros((2, 3)), bandwidth=[1.0, 2.0])
    with pytest.raises(ValueError, match="metric must be one of"):
        kernel_log_weights([[0.0]], [[1.0]], metric="manhattan")
    with pytest.raises(ValueError, match="same number of columns"):
        kernel_log_weights([[0.0, 1.0]], [[1.0]])
    with pytest.raises(ValueError, match="X_train contains 1 NaN"):
        kernel_log_weights([[0.0]], [[np.nan]])
    with pytest.raises(ValueError, match="must be 2-D"):
        kernel_log_weights([0.0], [[1.0]])


def test_builtin_names_cannot_be_replaced_and_user_kernels_unregister():
    from nlpfeat.kernels import register_kernel, unregister_kernel
    with pytest.raises(ValueError, match="built-in"):
        register_kernel("gaussian", lambda u: -u, log=True)
    with pytest.raises(ValueError, match="built-in"):
        unregister_kernel("gaussian")
    kern = register_kernel("test_half_gauss", lambda u: -0.5 * u * u, log=True)
    try:
        assert kern.family is None
        assert get_kernel("gaussian").family == "gaussian"
    finally:
        unregister_kernel("test_half_gauss")
    assert "test_half_gauss" not in available_kernels()
    with pytest.raises(KeyError, match="test_half_gauss"):
        unregister_kernel("test_half_gauss")


def test_user_kernel_named_gaussian_takes_the_generic_path():
    # A callable whose __name__ is "gaussian" must not borrow the built-in fast path.
    from nlpfeat.kernels import NadarayaWatsonRegressor, kernel_log_weights

    def gaussian(u):  # a Laplacian in disguise
        return np.exp(-u)

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 2)), rng.normal(size=40)
    Q = rng.normal(size=(5, 2))
    model = NadarayaWatsonRegressor(kernel=gaussian, bandwidth=0.7).fit(X, y)
    logw = kernel_log_weights(Q, X, kernel=gaussian, bandwidth=0.7)
    expected = np.exp(logw) @ y
    np.testing.assert_allclose(model.predict(Q), expected, rtol=1e-10)
