"""The compiled (numba) engine against the numpy reference: same results to round-off."""
import warnings

import numpy as np
import pytest
from scipy import sparse

from nlpfeat.kernels import (
    EmptySupportWarning,
    NadarayaWatsonClassifier,
    NadarayaWatsonRegressor,
    available_kernels,
    get_kernel,
)

numba = pytest.importorskip("numba")

from nlpfeat.kernels import _compiled, _engine  # noqa: E402
from nlpfeat.kernels._bandwidth import _ard_objective, default_grid  # noqa: E402
from nlpfeat.kernels._compiled._fastexp import (  # noqa: E402
    fexp_array,
    fexp_ftz,
    fexp_ftz_poly,
    fexp_ftz_table,
)
from nlpfeat.kernels._engine import loo_grid  # noqa: E402

KERNELS = ["gaussian", "epanechnikov", "biweight", "triweight", "tricube", "triangular",
           "tophat", "cosine", "laplacian", "logistic", "sigmoid"]
RTOL = 1e-12


def _data(n=150, d=2, seed=0, n_query=40, k=1):
    rng = np.random.RandomState(seed)
    X = rng.uniform(0, 5, size=(n, d))
    y = np.sin(X).sum(axis=1)[:, None] + rng.normal(scale=0.3, size=(n, k))
    Xq = rng.uniform(-1, 6, size=(n_query, d))   # some queries outside the data
    return X, (y[:, 0] if k == 1 else y), Xq


def _pair(cls, **params):
    return cls(engine="numpy", **params), cls(engine="numba", **params)


def _assert_close(got, ref, rtol=RTOL):
    got, ref = np.asarray(got), np.asarray(ref)
    scale = np.maximum(np.abs(ref), np.finfo(np.float64).tiny)
    assert np.max(np.abs(got - ref) / scale) <= rtol


def test_fexp_within_two_ulp_of_np_exp_on_a_dense_grid():
    x = np.linspace(-745.0, 0.0, 4_000_001)
    got, ref = fexp_array(x, np.empty_like(x)), np.exp(x)
    assert np.max(np.abs(got - ref) / np.spacing(ref)) <= 2.0
    edge = fexp_array(np.array([0.0, -np.inf, -746.0, -745.2, -1e300]), np.empty(5))
    assert edge[0] == 1.0 and np.all(edge[1:] == 0.0)


@pytest.mark.parametrize("variant", [fexp_ftz_table, fexp_ftz_poly])
def test_flushed_exp_is_exact_above_minus_708_and_zero_below(variant):
    # both variants, whichever this CPU's kernels use (the table one with AVX-512)
    @numba.njit
    def flushed(x):
        out = np.empty_like(x)
        for i in range(x.size):
            out[i] = variant(x[i])
        return out

    x = np.linspace(-708.0, 0.0, 2_000_001)
    got, ref = flushed(x), np.exp(x)
    assert np.max(np.abs(got - ref) / np.spacing(ref)) <= 2.0
    assert np.all(flushed(np.array([-708.001, -745.0, -1e300, -np.inf])) == 0.0)


def test_kernels_use_the_exp_variant_of_the_target_cpu():
    from nlpfeat.kernels._compiled import _fastexp, _predict, _rows

    avx512 = _fastexp._avx512()
    assert fexp_ftz is (fexp_ftz_table if avx512 else fexp_ftz_poly)
    assert _rows.fexp is fexp_ftz and _predict.fexp is fexp_ftz
    assert _predict._LC_TILE == (512 if avx512 else 256)


def test_avx512_detection_follows_numbas_cpu_features(monkeypatch):
    from nlpfeat.kernels._compiled import _fastexp

    monkeypatch.setattr(numba.config, "CPU_FEATURES", "+64bit,+avx,+avx2,+fma,-avx512f")
    assert not _fastexp._avx512()
    monkeypatch.setattr(numba.config, "CPU_FEATURES", "+64bit,+avx2,+avx512f,+avx512vl")
    assert _fastexp._avx512()


def test_builtin_families_have_codes_and_user_kernels_do_not():
    assert sorted(KERNELS) == sorted(available_kernels())
    assert len({_compiled.family_code(get_kernel(k)) for k in KERNELS}) == len(KERNELS)
    assert _compiled.family_code(get_kernel(lambda u: np.exp(-u))) is None


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("metric", ["euclidean", "product"])
def test_predict_lc_matches_numpy_engine(kernel, metric):
    X, y, Xq = _data(d=3, k=2)
    # tiny (nearest neighbour, empty supports), moderate, per-feature and huge bandwidths
    for h in [1e-3, 0.7, [0.4, 1.0, 2.5], 1e4]:
        ref, got = _pair(NadarayaWatsonRegressor, kernel=kernel, bandwidth=h, metric=metric,
                         algorithm="brute", on_empty="nearest")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", EmptySupportWarning)
            expected = ref.fit(X, y).predict(Xq)
            _assert_close(got.fit(X, y).predict(Xq), expected)
        assert got._index.compiled is not None and ref._index.compiled is None


@pytest.mark.parametrize("d", [1, 2, 3, 4, 5, 7, 9])
@pytest.mark.parametrize("kernel", ["gaussian", "epanechnikov"])
def test_predict_one_output_matches_numpy_engine_for_any_number_of_features(d, kernel):
    # one output: the Gaussian's fused pass (distances by groups of features, weights,
    # sum and dot product at once); n_train spans several tiles with a partial last one;
    # n_query several query blocks with a partial last one; the last query, far from the
    # data, underflows (Gaussian) or has an empty support: redone in log space
    X, y, Xq = _data(n=1100, d=d, n_query=75)
    Xq = np.vstack([Xq, np.full((1, d), 40.0)])
    for h in [0.3 * np.sqrt(d), np.linspace(0.5, 2.0, d)]:
        ref, got = _pair(NadarayaWatsonRegressor, kernel=kernel, bandwidth=h,
                         metric="product", algorithm="brute")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", EmptySupportWarning)
            expected = ref.fit(X, y).predict(Xq)
            _assert_close(got.fit(X, y).predict(Xq), expected)
        assert got._index.compiled is not None


def test_wide_vectors_sets_the_llvm_attribute_with_avx512():
    from nlpfeat.kernels._compiled import _fastexp
    from nlpfeat.kernels._compiled._fastexp import wide_vectors

    @numba.njit
    def total(x):
        wide_vectors()
        s = 0.0
        for v in x:
            s += v
        return s

    assert total(np.arange(10.0)) == 45.0
    # asked for on AVX-512 CPUs only (on AVX2 it would split vectors and spill registers)
    llvm = total.inspect_llvm(total.signatures[0])
    assert ('"prefer-vector-width"="512"' in llvm) == _fastexp._avx512()


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("metric", ["euclidean", "product"])
def test_predict_ll_matches_numpy_engine(kernel, metric):
    # local linear fits where the normal equations are well conditioned (queries inside
    # the data): pinv of a near-singular matrix amplifies round-off in either engine
    X, y, _ = _data(n=200, d=2, k=2)
    Xq = np.random.RandomState(1).uniform(1, 4, size=(30, 2))
    for h in [1.5, [1.2, 2.0], 1e3]:
        ref, got = _pair(NadarayaWatsonRegressor, kernel=kernel, bandwidth=h, metric=metric,
                         reg_type="ll", algorithm="brute")
        _assert_close(got.fit(X, y).predict(Xq), ref.fit(X, y).predict(Xq), 1e-11)


def test_tiny_bandwidth_gives_nearest_neighbour_and_ties_share_the_weight():
    X = np.array([[0.0], [1.0], [1.0], [3.0]])
    y = np.array([0.0, 1.0, 3.0, 10.0])
    Xq = np.array([[0.9], [2.0], [-50.0]])   # 2.0: three training points equally near
    for kernel in ["gaussian", "laplacian", "epanechnikov", "tophat"]:
        ref, got = _pair(NadarayaWatsonRegressor, kernel=kernel, bandwidth=1e-6,
                         on_empty="nan" if kernel == "laplacian" else "nearest")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", EmptySupportWarning)
            expected = ref.fit(X, y).predict(Xq)
            pred = got.fit(X, y).predict(Xq)
        _assert_close(pred, expected)
        np.testing.assert_allclose(pred, [2.0, 14.0 / 3.0, 0.0], rtol=1e-12)


@pytest.mark.parametrize("kernel", ["gaussian", "epanechnikov", "cosine", "sigmoid"])
@pytest.mark.parametrize("metric", ["euclidean", "product"])
def test_attention_weights_match_numpy_engine(kernel, metric):
    X, y, Xq = _data(d=2)
    Xq = np.vstack([Xq, [[50.0, 50.0]]])      # no training point in a compact support
    for h in [0.5, 1e-3]:
        ref, got = _pair(NadarayaWatsonRegressor, kernel=kernel, bandwidth=h, metric=metric,
                         algorithm="brute", on_empty="mean")
        W_ref, W = ref.fit(X, y).attention_weights(Xq), got.fit(X, y).attention_weights(Xq)
        assert sparse.issparse(W) == sparse.issparse(W_ref) == get_kernel(kernel).compact
        if sparse.issparse(W):
            W, W_ref = W.toarray(), W_ref.toarray()
        # rows sum to 1: 1e-12 relative to the row; a weight of 1e-200 carries the
        # round-off of its exponent (the numpy engine's distances come from a GEMM)
        np.testing.assert_allclose(W, W_ref, rtol=RTOL, atol=RTOL)
        np.testing.assert_allclose(W.sum(axis=1), 1.0, rtol=1e-12)


def test_classifier_predict_proba_matches_numpy_engine():
    X, _, Xq = _data(n=200, d=2)
    y = np.array(["a", "b", "c"])[(X[:, 0] + X[:, 1] > 5).astype(int) + (X[:, 0] > 4)]
    for kernel in ["gaussian", "biweight", "logistic"]:
        for bandwidth in [0.4, "loo"]:
            ref, got = _pair(NadarayaWatsonClassifier, kernel=kernel, bandwidth=bandwidth,
                             algorithm="brute", on_empty="mean")
            _assert_close(got.fit(X, y).predict_proba(Xq), ref.fit(X, y).predict_proba(Xq))
            np.testing.assert_allclose(got.bandwidth_, ref.bandwidth_, rtol=RTOL)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("metric", ["euclidean", "product"])
def test_loo_grid_matches_numpy_engine(kernel, metric):
    X, y, _ = _data(n=90, d=2, k=2)
    kern = get_kernel(kernel)
    ray = default_grid(np.array([0.5, 0.8]), 6)          # shared distances, rescaled
    free = np.array([[0.3, 0.9], [1.0, 0.2], [0.01, 0.02], [3.0, 3.0]])  # per feature
    Yc = np.eye(3)[np.random.RandomState(0).randint(0, 3, len(X))]
    for grid in [ray, free]:
        for Y, loss in [(y, "squared"), (Yc, "log_loss")]:
            args = (X, Y, kern, metric, grid)
            _assert_close(loo_grid(*args, loss=loss, engine="numba"), loo_grid(*args, loss=loss),
                          1e-11)
    conditioned = default_grid(np.array([0.5, 0.8]), 4) * 40   # ll: h from 1 to 160
    args = (X, y, kern, metric, conditioned)
    _assert_close(loo_grid(*args, reg_type="ll", engine="numba"),
                  loo_grid(*args, reg_type="ll"), 1e-10)


@pytest.mark.parametrize("kernel", ["gaussian", "epanechnikov", "tricube", "cosine",
                                    "laplacian", "logistic"])
@pytest.mark.parametrize("metric", ["euclidean", "product"])
def test_loo_ard_objective_and_gradient_match_numpy_engine(kernel, metric):
    X, y, _ = _data(n=80, d=2)
    Yc = np.eye(2)[(X[:, 0] > 2.5).astype(int)]
    kern = get_kernel(kernel)
    objective = _compiled.ard_objective()
    for Y, loss in [(y[:, None], "squared"), (Yc, "log_loss")]:
        for theta in [np.log([0.6, 1.1]), np.log([0.02, 0.05]), np.log([30.0, 50.0])]:
            # the numpy objective takes t = log(h / h0); here h0 = 1, so t = log h
            ref_loss, ref_grad = _ard_objective(theta, np.ones(2), X, Y, kern, metric, loss,
                                                None)
            got_loss, got_grad = objective(theta, X, Y, kern, metric, loss, None)
            _assert_close(got_loss, ref_loss)
            # a gradient near 0 (huge bandwidths) is compared on the scale of the loss
            np.testing.assert_allclose(got_grad, ref_grad, rtol=1e-10, atol=RTOL * ref_loss)


def test_loo_ard_fit_matches_numpy_engine():
    X, y, Xq = _data(n=120, d=3)
    ref, got = _pair(NadarayaWatsonRegressor, bandwidth="loo-ard", metric="product")
    expected = ref.fit(X, y).predict(Xq)
    np.testing.assert_allclose(got.fit(X, y).bandwidth_, ref.bandwidth_, rtol=1e-6)
    np.testing.assert_allclose(got.predict(Xq), expected, rtol=1e-6)


@pytest.mark.slow    # compiles the parallel LOO loops (25 CPU-s on an empty cache)
def test_n_jobs_gives_identical_results():
    X, y, Xq = _data(n=300, d=3, n_query=101)
    one = NadarayaWatsonRegressor(bandwidth="loo", engine="numba").fit(X, y)
    two = NadarayaWatsonRegressor(bandwidth="loo", engine="numba", n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(two.loo_scores_, one.loo_scores_)
    np.testing.assert_array_equal(two.predict(Xq), one.predict(Xq))
    np.testing.assert_array_equal(two.attention_weights(Xq), one.attention_weights(Xq))


def test_user_kernel_sparse_and_cosine_run_on_numpy():
    X, y, Xq = _data(d=2)
    reg = NadarayaWatsonRegressor(kernel=lambda u: np.exp(-u), bandwidth=0.5,
                                  engine="numba").fit(X, y)
    assert reg.engine_ == "numba" and reg._index.compiled is None
    ref = NadarayaWatsonRegressor(kernel=lambda u: np.exp(-u), bandwidth=0.5, engine="numpy")
    np.testing.assert_array_equal(reg.predict(Xq), ref.fit(X, y).predict(Xq))
    for params, data in [({"metric": "cosine"}, X), ({}, sparse.csr_matrix(X))]:
        reg = NadarayaWatsonRegressor(bandwidth=0.5, engine="numba", **params).fit(data, y)
        assert reg._index.compiled is None


def test_engine_resolution():
    X, y, _ = _data(n=20)
    assert NadarayaWatsonRegressor(bandwidth=1.0).fit(X, y).engine_ == "numba"
    assert NadarayaWatsonRegressor(bandwidth=1.0, engine="numpy").fit(X, y).engine_ == "numpy"
    with pytest.raises(ValueError, match="engine"):
        NadarayaWatsonRegressor(engine="cuda").fit(X, y)


def test_numba_is_required_so_auto_means_numba_without_a_warning():
    # numba is a required dependency: "auto" is "numba", never a warned fallback, and
    # "numpy" is a reference switch that computes the same predictions
    X, y, Xq = _data(n=40)
    assert [_engine.resolve_engine(e) for e in _engine.ENGINES] == ["numba", "numba", "numpy"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        auto = NadarayaWatsonRegressor(bandwidth=1.0).fit(X, y)
    assert auto.engine_ == "numba" and auto._index.compiled is not None
    ref = NadarayaWatsonRegressor(bandwidth=1.0, engine="numpy").fit(X, y)
    assert ref._index.compiled is None
    np.testing.assert_allclose(auto.predict(Xq), ref.predict(Xq), rtol=1e-12)
    assert not hasattr(_engine, "_numba_available")
