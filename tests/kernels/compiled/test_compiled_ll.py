"""Local linear fits (reg_type="ll") on the compiled engine against the numpy reference.

The compiled loops compute the numpy path's centred moments (weighted means of the
offsets and targets, then centred second moments) and solve the small systems with the
same ``pinv`` rule, so both engines agree to round-off wherever the local fits are well
posed: queries inside the data, bandwidths that put several points in every support, and
tiny bandwidths whose weights beyond the nearest point are exactly 0 (nearest-neighbour
fits, ties sharing the weight). A local fit that rests on weights like ``exp(-100)``
(a Laplacian kernel at a tiny bandwidth, a compact support holding two points) is an
ill-posed extrapolation: the numpy engine alone moves by orders of magnitude when the
bandwidth moves by 1e-13, so no engine parity is asked of it.
"""
import warnings

import numpy as np
import pytest

from nlpfeat.kernels import EmptySupportWarning, NadarayaWatsonRegressor, get_kernel

numba = pytest.importorskip("numba")

from nlpfeat.kernels import _compiled  # noqa: E402
from nlpfeat.kernels._bandwidth import _ard_objective, default_grid  # noqa: E402
from nlpfeat.kernels._engine import loo_grid  # noqa: E402

KERNELS = ["gaussian", "epanechnikov", "biweight", "triweight", "tricube", "triangular",
           "tophat", "cosine", "laplacian", "logistic", "sigmoid"]
TINY, HUGE = 1e-9, 1e4


def _data(n=200, d=2, k=2, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.uniform(0, 5, size=(n, d))
    Y = np.sin(X).sum(axis=1)[:, None] + rng.normal(scale=0.3, size=(n, k))
    return X, (Y[:, 0] if k == 1 else Y), rng.uniform(1, 4, size=(30, d))


def _assert_equal_engines(got, ref, tol=1e-12):
    """Equal to ``tol`` relative, or ``tol`` absolute near zero (targets are of order 1)."""
    np.testing.assert_allclose(got, ref, rtol=tol, atol=tol)


def _fit_both(X, y, **params):
    ref = NadarayaWatsonRegressor(engine="numpy", algorithm="brute", **params).fit(X, y)
    got = NadarayaWatsonRegressor(engine="numba", algorithm="brute", **params).fit(X, y)
    assert got._index.compiled is not None and ref._index.compiled is None
    return ref, got


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("metric", ["euclidean", "product"])
def test_predict_ll_is_compiled_and_equals_numpy_engine(kernel, metric):
    X, Y, Xq = _data()
    for h in [TINY, 1.5, [1.2, 2.0], HUGE]:    # nearest neighbour, normal, per feature, huge
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", EmptySupportWarning)
            ref, got = _fit_both(X, Y, kernel=kernel, bandwidth=h, metric=metric,
                                 reg_type="ll")
            expected = ref.predict(Xq)
            _assert_equal_engines(got.predict(Xq), expected)
    # a huge bandwidth fits one global least-squares plane, whatever the kernel
    plane = np.linalg.lstsq(np.c_[np.ones(len(X)), X], Y, rcond=None)[0]
    np.testing.assert_allclose(expected, np.c_[np.ones(len(Xq)), Xq] @ plane, atol=1e-3)


@pytest.mark.parametrize("kernel", ["gaussian", "epanechnikov", "sigmoid"])
def test_ll_attention_weights_are_the_kernel_weights_on_both_engines(kernel):
    X, Y, Xq = _data()
    ref, got = _fit_both(X, Y, kernel=kernel, bandwidth=0.8, reg_type="ll")
    W, W_ref = got.attention_weights(Xq), ref.attention_weights(Xq)
    if get_kernel(kernel).compact:
        W, W_ref = W.toarray(), W_ref.toarray()
    np.testing.assert_allclose(W, W_ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kernel", ["gaussian", "epanechnikov", "tophat", "laplacian"])
def test_ll_tiny_bandwidth_is_nearest_neighbour_and_ties_share_the_weight(kernel):
    X = np.array([[0.0], [1.0], [1.0], [3.0]])
    y = np.array([0.0, 1.0, 3.0, 10.0])
    # 0.9: the two points at 1 (y mean 2); 2.0: equidistant from 1, 1 and 3, the line
    # through (1, 2) and (3, 10) gives 6; -50: the point at 0; 3.0: a training point
    Xq = np.array([[0.9], [2.0], [-50.0], [3.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EmptySupportWarning)
        ref, got = _fit_both(X, y, kernel=kernel, bandwidth=1e-6, reg_type="ll")
        pred = got.predict(Xq)
        _assert_equal_engines(pred, ref.predict(Xq))
    np.testing.assert_allclose(pred, [2.0, 6.0, 0.0, 10.0], rtol=1e-12)


def test_ll_outside_compact_support_follows_on_empty():
    X, y, _ = _data(k=1)
    Xq = np.array([[50.0, 50.0], [2.0, 2.0]])
    for on_empty in ["nearest", "mean", "nan"]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", EmptySupportWarning)
            ref, got = _fit_both(X, y, kernel="biweight", bandwidth=0.8, reg_type="ll",
                                 on_empty=on_empty)
            expected = ref.predict(Xq)
            pred = got.predict(Xq)
        np.testing.assert_array_equal(np.isnan(pred), np.isnan(expected))
        _assert_equal_engines(pred[1], expected[1])
        if on_empty != "nan":
            _assert_equal_engines(pred, expected)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("metric", ["euclidean", "product"])
def test_loo_grid_ll_equals_numpy_engine(kernel, metric):
    X, Y, _ = _data(n=120)
    kern = get_kernel(kernel)
    ray = default_grid(np.array([0.5, 0.8]), 6)[3:] * 4    # shared distances, rescaled
    free = np.array([[1.0, 1.5], [2.0, 0.9], [TINY, 2 * TINY], [HUGE, HUGE]])  # per feature
    for grid in [ray, free]:
        for targets in [Y, Y[:, :1]]:
            args = (X, targets, kern, metric, grid)
            _assert_equal_engines(loo_grid(*args, reg_type="ll", engine="numba"),
                                  loo_grid(*args, reg_type="ll"))


@pytest.mark.parametrize("kernel", ["gaussian", "epanechnikov", "biweight", "triweight",
                                    "tricube", "triangular", "cosine", "laplacian",
                                    "logistic", "sigmoid"])
@pytest.mark.slow   # it compiles the local linear loo-ard loops (9 CPU-s into an empty cache)
@pytest.mark.parametrize("metric", ["euclidean", "product"])
def test_loo_ard_ll_objective_and_gradient_equal_numpy_engine(kernel, metric):
    X, Y, _ = _data(n=80)
    kern = get_kernel(kernel)
    objective = _compiled.ard_objective()
    thetas = [np.log([0.9, 1.4]), np.log([1.5, 2.5]), np.log([30.0, 50.0])]
    if metric == "euclidean" or kernel == "gaussian":
        thetas.append(np.log([1.2]))                              # one shared bandwidth
    # Compact kernels: dlog K/du diverges at the edge of the support, where the numpy
    # engine's distances (from a GEMM) carry their rounding; its own gradient moves by
    # up to 1e-11 when the training rows are merely permuted.
    grad_tol = 2e-11 if kern.compact else 1e-12
    for targets in [Y, Y[:, :1]]:
        for theta in thetas:
            ref_loss, ref_grad = _ard_objective(theta, np.ones(theta.size), X, targets, kern,
                                                metric, "squared", None, "ll")
            loss, grad = objective(theta, X, targets, kern, metric, "squared", None, "ll")
            np.testing.assert_allclose(loss, ref_loss, rtol=1e-12)
            # a gradient component near 0 is compared on the scale of the loss
            np.testing.assert_allclose(grad, ref_grad, rtol=grad_tol, atol=grad_tol * ref_loss)


def test_loo_ard_ll_working_memory_chunks_give_the_same_objective():
    X, Y, _ = _data(n=90)
    objective = _compiled.ard_objective()
    theta = np.log([0.9, 1.4])
    whole = objective(theta, X, Y, get_kernel("gaussian"), "euclidean", "squared", None, "ll")
    tiny = objective(theta, X, Y, get_kernel("gaussian"), "euclidean", "squared", 1e-3, "ll")
    # chunks change only the order in which the rows' sums are added
    np.testing.assert_allclose(tiny[0], whole[0], rtol=1e-14)
    np.testing.assert_allclose(tiny[1], whole[1], rtol=1e-14)


def test_loo_grid_and_loo_ard_run_ll_on_the_compiled_engine(monkeypatch):
    X, Y, _ = _data(n=60)
    calls = []
    grid, ard = _compiled.loo_grid, _compiled.ard_objective
    monkeypatch.setattr(_compiled, "loo_grid",
                        lambda *a, **k: calls.append("loo_grid") or grid(*a, **k))
    monkeypatch.setattr(_compiled, "ard_objective",
                        lambda *a, **k: calls.append("ard_objective") or ard(*a, **k))
    NadarayaWatsonRegressor(bandwidth="loo-ard", reg_type="ll", engine="numba").fit(X, Y)
    assert calls == ["loo_grid", "ard_objective"]


@pytest.mark.parametrize("bandwidth", ["loo", "loo-ard"])
def test_bandwidth_selection_ll_equals_numpy_engine(bandwidth):
    X, Y, Xq = _data(n=150)
    # a grid whose local fits are well posed (the default grid reaches 0.05 times Scott's
    # bandwidth, where the scores of either engine are rounding noise of 1e20)
    ref, got = _fit_both(X, Y, bandwidth=bandwidth, metric="product", reg_type="ll",
                         bandwidth_grid=np.geomspace(0.3, 3.0, 8))
    if bandwidth == "loo":
        _assert_equal_engines(got.loo_scores_, ref.loo_scores_)
        np.testing.assert_array_equal(got.bandwidth_, ref.bandwidth_)
        _assert_equal_engines(got.predict(Xq), ref.predict(Xq))
    else:   # L-BFGS on objectives equal to 1e-12: the same optimum to its tolerance
        np.testing.assert_allclose(got.bandwidth_, ref.bandwidth_, rtol=1e-6)
        np.testing.assert_allclose(got.predict(Xq), ref.predict(Xq), rtol=1e-6)


@pytest.mark.slow    # compiles the parallel LOO loops (25 CPU-s on an empty cache)
def test_ll_n_jobs_gives_identical_results():
    X, Y, Xq = _data(n=300, d=3)
    Xq = np.random.RandomState(2).uniform(1, 4, size=(101, 3))
    for bandwidth in ["loo", "loo-ard"]:
        one = NadarayaWatsonRegressor(bandwidth=bandwidth, reg_type="ll",
                                      engine="numba").fit(X, Y)
        two = NadarayaWatsonRegressor(bandwidth=bandwidth, reg_type="ll", engine="numba",
                                      n_jobs=2).fit(X, Y)
        np.testing.assert_array_equal(two.bandwidth_, one.bandwidth_)
        if bandwidth == "loo":
            np.testing.assert_array_equal(two.loo_scores_, one.loo_scores_)
        np.testing.assert_array_equal(two.predict(Xq), one.predict(Xq))


def test_ll_matches_statsmodels_on_the_compiled_engine():
    kr = pytest.importorskip("statsmodels.nonparametric.kernel_regression")
    X, y, Xq = _data(n=150, d=2, k=1)
    bw = np.array([0.7, 1.1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        model = kr.KernelReg(y, X, var_type="cc", reg_type="ll", bw=bw)
        expected = model.fit(Xq)[0]
        warnings.simplefilter("ignore", RuntimeWarning)
        cv = float(np.squeeze(model.cv_loo(bw, model._est_loc_linear)))
    reg = NadarayaWatsonRegressor(bandwidth=bw, metric="product", reg_type="ll",
                                  engine="numba").fit(X, y)
    assert reg._index.compiled is not None
    np.testing.assert_allclose(reg.predict(Xq), expected, rtol=1e-8)
    scores = loo_grid(X, y[:, None], get_kernel("gaussian"), "product", bw[None, :],
                      reg_type="ll", engine="numba")
    np.testing.assert_allclose(scores[0], cv, rtol=1e-8)
