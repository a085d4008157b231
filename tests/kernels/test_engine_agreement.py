"""Issue 25: the two engines and every code path agree on ties, degenerate designs and scale.

- local linear leave-one-out scores of the compiled engine equal the numpy engine's (they
  were 1e31 where numpy gave 10: its weights were unnormalised and the rounding of the
  centred offsets became slopes);
- a local linear fit whose weighted rows sit at one point (repeated x, a constant feature)
  is the local constant fit, on predict, leave-one-out and ``loo-ard`` alike;
- a query with no training point in a compact kernel's support shares its weight among its
  nearest training points by one rule (:func:`nlpfeat.kernels._pairwise.tie_tolerance`) on
  every path: numpy and compiled predict, both leave-one-out paths, ``loo-ard``, the
  classifier, per-feature grids and mixed data;
- beyond the documented magnitudes (1e-100 .. 1e100) the result is correct or a clear
  ValueError: the rule of thumb at 1e-300, the global linear fit at a 1e300 bandwidth.
"""
import warnings

import numpy as np
import pytest
from scipy import sparse
from sklearn.linear_model import LinearRegression

from nlpfeat.kernels import (
    EmptySupportWarning,
    NadarayaWatsonClassifier,
    NadarayaWatsonRegressor,
    get_kernel,
)
from nlpfeat.kernels._bandwidth import _ard_objective, loo_grid, rule_of_thumb

ENGINES = ["numba", "numpy"]


def _fit(engine, X, y, est=NadarayaWatsonRegressor, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EmptySupportWarning)
        return est(engine=engine, algorithm="brute", **params).fit(X, y)


def _predict(model, Xq, method="predict"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EmptySupportWarning)
        return getattr(model, method)(Xq)


# ------------------------------------------------------------------ item 1: ll leave-one-out

@pytest.mark.parametrize("kernel", ["epanechnikov", "triangular", "tricube"])
def test_ll_loo_scores_of_compact_kernels_equal_the_numpy_engine(kernel):
    """The issue's setting (n 40, d 2, default grid): scores and selections agree."""
    for seed in range(8):
        rng = np.random.default_rng(seed)
        X, y = rng.normal(size=(40, 2)), 3.0 * rng.normal(size=40)
        got, ref = (_fit(e, X, y, kernel=kernel, bandwidth="loo", reg_type="ll")
                    for e in ENGINES)
        np.testing.assert_allclose(got.loo_scores_, ref.loo_scores_, rtol=1e-6)
        np.testing.assert_array_equal(got.bandwidth_, ref.bandwidth_)


# ------------------------------------------------------------ item 2: degenerate local designs

@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("kernel", ["gaussian", "epanechnikov"])
def test_ll_on_a_constant_feature_is_the_local_constant_fit(engine, kernel):
    y = np.random.default_rng(0).normal(size=20)
    model = _fit(engine, np.full((20, 1), 0.3), y, kernel=kernel, bandwidth=1.0, reg_type="ll")
    np.testing.assert_allclose(model.predict([[0.1], [0.7], [0.3]]), y.mean(), rtol=1e-12)


@pytest.mark.parametrize("engine", ENGINES)
def test_ll_on_repeated_rows_inside_the_support_is_their_mean(engine):
    """Two clusters of repeated 2-D rows; each query's support holds one of them."""
    X = np.repeat([[0.1, 0.7], [3.1, -2.3]], [7, 5], axis=0)
    y = np.random.default_rng(1).normal(size=12)
    model = _fit(engine, X, y, kernel="epanechnikov", bandwidth=1.0, reg_type="ll")
    np.testing.assert_allclose(model.predict([[0.5, 0.4], [2.9, -2.0]]),
                               [y[:7].mean(), y[7:].mean()], rtol=1e-12)


@pytest.mark.parametrize("engine", ENGINES)
def test_ll_loo_on_a_degenerate_design_is_the_local_constant_loo(engine):
    """Leave-one-out on repeated rows: each row is predicted by the mean of its copies."""
    X = np.repeat([[0.3], [5.3]], 10, axis=0)
    y = np.random.default_rng(2).normal(size=20)
    loo = np.concatenate([(y[:10].sum() - y[:10]) / 9, (y[10:].sum() - y[10:]) / 9])
    model = _fit(engine, X, y, kernel="gaussian", bandwidth="loo", reg_type="ll",
                 bandwidth_grid=[0.2, 0.5])
    np.testing.assert_allclose(model.loo_scores_, np.mean((y - loo) ** 2), rtol=1e-12)


def _grid_data(seed, n=12, d=2, top=5):
    """Integer-grid inputs (exact ties of distances) whose mean is not a round number."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, top, size=(n, d)).astype(float)
    X[0] += 1.0 / 3.0     # the centring rounds: equal distances in X differ in z
    return X, rng.integers(0, 3, size=n).astype(float)


def _ard_losses(h, X, y, kern, reg_type="lc"):
    """The ``loo-ard`` objective (loss, gradient) at bandwidths ``h``, numpy and compiled."""
    from nlpfeat.kernels import _compiled

    Y = y[:, None]
    return (_ard_objective(np.zeros(h.size), h, X, Y, kern, "euclidean", "squared", None,
                           reg_type),
            _compiled.ard_objective()(np.log(h), X, Y, kern, "euclidean", "squared", None,
                                      reg_type))


def test_loo_ard_ll_objective_equals_the_ll_loo_score_at_the_same_bandwidth():
    """``loo-ard``'s local linear fits (uncentred normal equations before) shrank the
    intercept of a degenerate design towards 0 instead of the local constant fit."""
    kern, h = get_kernel("epanechnikov"), np.array([0.6, 0.8])
    for seed in range(6):
        X, y = _grid_data(seed)
        score = loo_grid(X, y[:, None], kern, "euclidean", h[None], reg_type="ll")[0]
        for loss, _ in _ard_losses(h, X, y, kern, "ll"):
            np.testing.assert_allclose(loss, score, rtol=1e-10, err_msg=f"seed {seed}")


# ----------------------------------------------------- item 3: ties of the nearest-point rule

def _nearest_mean(Q, X, y, skip=None):
    """Mean target of each query's nearest rows by exact squared distances (grid data)."""
    D = ((Q[:, None, :] - X[None]) ** 2).sum(axis=-1)
    if skip is not None:
        D[np.arange(len(Q)), skip] = np.inf
    near = D <= D.min(axis=1, keepdims=True)
    return (near * y).sum(axis=1) / near.sum(axis=1)


@pytest.mark.parametrize("reg_type", ["lc", "ll"])
def test_empty_support_predictions_share_ties_on_both_engines(reg_type):
    """Queries half-way between grid points, with a support too small to reach any: the
    mean of the tied nearest points (``"ll"``: the local linear fit on them, the same on
    both engines)."""
    for seed in range(20):
        X, y = _grid_data(seed)
        Q = np.random.default_rng(seed).integers(0, 5, size=(30, 2)) + 0.5
        got, ref = (_predict(_fit(e, X, y, kernel="epanechnikov", bandwidth=0.3,
                                  reg_type=reg_type), Q) for e in ENGINES)
        expected = _nearest_mean(Q, X, y) if reg_type == "lc" else ref
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12, err_msg=f"seed {seed}")
        np.testing.assert_allclose(ref, expected, rtol=1e-12, atol=1e-12, err_msg=f"seed {seed}")


def test_empty_support_classifier_ties_are_shared_on_both_engines():
    for seed in range(10):
        X, y = _grid_data(seed)
        Q = np.random.default_rng(seed).integers(0, 5, size=(30, 2)) + 0.5
        expected = np.stack([_nearest_mean(Q, X, (y == c).astype(float))
                             for c in np.unique(y)], axis=1)
        for engine in ENGINES:
            model = _fit(engine, X, y, NadarayaWatsonClassifier, kernel="tophat",
                         bandwidth=0.2)
            np.testing.assert_allclose(_predict(model, Q, "predict_proba"), expected,
                                       rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kernel", ["epanechnikov", "tophat", "tricube"])
@pytest.mark.parametrize("grid", [[1 / 16, 1 / 8], [[1 / 16, 1 / 8], [1 / 8, 1 / 16]]],
                         ids=["ray", "per-feature"])
def test_empty_support_loo_scores_share_ties_on_both_engines(kernel, grid):
    """Grid bandwidths too small for any support: LOO is the nearest-other-point mean
    (a per-feature grid: nearest in the coordinates of each bandwidth). Powers of two
    keep the scaled grid exact for the reference."""
    grid = np.asarray(grid, dtype=float)
    for seed in range(10):
        X, y = _grid_data(seed)
        expected = []
        for h in (grid[:, None] if grid.ndim == 1 else grid):
            Zs = np.round(X * 3.0) / h        # exact: 3 x is an integer
            expected.append(np.mean((y - _nearest_mean(Zs, Zs, y, np.arange(len(X)))) ** 2))
        for engine in ENGINES:
            model = _fit(engine, X, y, kernel=kernel, bandwidth="loo", bandwidth_grid=grid)
            np.testing.assert_allclose(model.loo_scores_, expected, rtol=1e-12,
                                       err_msg=f"seed {seed}, engine {engine}")


def test_empty_support_loo_ard_objective_shares_ties_on_both_engines():
    kern, h = get_kernel("epanechnikov"), np.array([1 / 16, 1 / 32])
    for seed in range(10):
        X, y = _grid_data(seed)
        Zs = np.round(X * 3.0) / h
        expected = np.mean((y - _nearest_mean(Zs, Zs, y, np.arange(len(X)))) ** 2)
        for loss, grad in _ard_losses(h, X, y, kern):
            np.testing.assert_allclose(loss, expected, rtol=1e-12, err_msg=f"seed {seed}")
            np.testing.assert_allclose(grad, 0.0, atol=1e-12)


def test_mixed_data_empty_support_shares_ties():
    """A continuous and an unordered feature: the nearest rows among the query's category."""
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.integers(0, 6, size=30) + 1.0 / 3.0, rng.integers(0, 2, size=30)])
    y = rng.normal(size=30)
    Q = np.column_stack([np.arange(6) + 0.5 + 1.0 / 3.0, np.arange(6) % 2])
    expected = []
    for q in Q:
        same = X[:, 1] == q[1]
        d = np.abs(np.round((X[same, 0] - q[0]) * 2.0))   # exact half-integers, doubled
        expected.append(y[same][d == d.min()].mean())
    model = _fit("numpy", X, y, kernel="epanechnikov", bandwidth=[0.2, 0.0], var_type="cu")
    np.testing.assert_allclose(_predict(model, Q), expected, rtol=1e-12)


# ------------------------------------------------------------ item 6: beyond the contract

@pytest.mark.parametrize("scale", [1e-300, 1e-200, 1e200, 1e300])
def test_rule_of_thumb_is_scale_equivariant_beyond_the_range(scale):
    X = np.random.default_rng(4).normal(size=(40, 3))
    np.testing.assert_allclose(rule_of_thumb(X * scale), rule_of_thumb(X) * scale, rtol=1e-12)
    Xs = sparse.random(40, 5, density=0.4, random_state=0, format="csr")
    np.testing.assert_allclose(rule_of_thumb(Xs * scale), rule_of_thumb(Xs) * scale,
                               rtol=1e-12)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("kernel", ["gaussian", "epanechnikov"])
def test_loo_predictions_at_1e_minus_300_equal_those_at_unit_scale(engine, kernel):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = X @ [1.0, 2.0] + 0.3 * rng.normal(size=40)
    base = _fit(engine, X, y, kernel=kernel, bandwidth="loo")
    tiny = _fit(engine, X * 1e-300, y, kernel=kernel, bandwidth="loo")
    np.testing.assert_allclose(tiny.bandwidth_, base.bandwidth_ * 1e-300, rtol=1e-12)
    np.testing.assert_allclose(tiny.predict(X * 1e-300), base.predict(X), rtol=1e-9)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("bandwidth", [1e200, 1e300, [1e300, 2e300]])
def test_ll_with_a_huge_bandwidth_is_the_global_linear_fit(engine, bandwidth):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = X @ [1.0, 2.0] + 0.3 * rng.normal(size=40)
    Xq = rng.normal(size=(10, 2))
    model = _fit(engine, X, y, bandwidth=bandwidth, reg_type="ll")
    np.testing.assert_allclose(model.predict(Xq), LinearRegression().fit(X, y).predict(Xq),
                               rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("engine", ENGINES)
def test_ll_whose_scaled_inputs_underflow_is_a_clear_error(engine):
    """X spread 1e-10 and a 1e300 bandwidth: x / h is subnormal (precision lost)."""
    X = np.random.default_rng(0).normal(size=(10, 1)) * 1e-10
    with pytest.raises(ValueError, match="reg_type='ll' with a bandwidth about 1e308 times"):
        _fit(engine, X, X[:, 0], bandwidth=1e300, reg_type="ll")
    model = _fit(engine, X, X[:, 0], bandwidth=1e300)   # local constant: the mean, exactly
    np.testing.assert_allclose(model.predict(X), X[:, 0].mean(), rtol=1e-12)


# ------------------------------------------------- found by the property test of the engines

def test_numpy_squared_distances_of_close_pairs_have_no_cancellation():
    """The GEMM form gave equal rows far from the centre about 1e-16 |z|^2 instead of 0
    (here 4.5e-13), which a kernel of ``u`` (Laplacian) turns into 1e-6 relative errors
    of its weights."""
    from nlpfeat.kernels._pairwise import PairwiseScaled

    rng = np.random.default_rng(0)
    X = np.repeat(rng.normal(size=(5, 3)) * [1.0, 5.0, 0.3] + [0.0, 8.0, 0.0], 2, axis=0)
    pair = PairwiseScaled(X, 0.05)
    D2 = pair.sq_dist(pair.query(X))
    np.testing.assert_array_equal(D2[np.arange(0, 10, 2), np.arange(1, 10, 2)], 0.0)
    np.testing.assert_allclose(D2, ((X[:, None] - X[None]) ** 2).sum(axis=-1) / 0.05**2,
                               rtol=1e-12, atol=0)


def test_loo_ard_ll_with_underflowing_far_weights_is_finite():
    """Gaussian weights of 1e-300 beside ordinary offsets: ``S^+ m`` must not overflow
    (a regression guard of the centred ``loo-ard`` local linear objective)."""
    X, y = np.array([[0.0], [0.0], [4.0], [6.0], [1.875]]), np.zeros(5)
    for (loss, grad) in _ard_losses(np.array([0.0946949316606873]), X, y,
                                    get_kernel("gaussian"), "ll"):
        assert loss == 0.0 and np.isfinite(grad).all()


@pytest.mark.parametrize("kernel", ["gaussian", "laplacian", "logistic"])
def test_tiny_bandwidth_ties_are_shared_on_both_engines(kernel):
    """A kernel without compact support at a bandwidth 1e-8 of the grid spacing: the log
    weights are about -1e16, whose rounding decided between equidistant points (weights
    0.88 / 0.12 on one engine, 0.5 / 0.5 on the other)."""
    for seed in range(10):
        X, y = _grid_data(seed)
        Q = np.random.default_rng(seed).integers(0, 5, size=(30, 2)) + 0.5
        expected = _nearest_mean(Q, X, y)
        for engine in ENGINES:
            model = _fit(engine, X, y, kernel=kernel, bandwidth=1e-8)
            np.testing.assert_allclose(model.predict(Q), expected, rtol=1e-12, atol=1e-12,
                                       err_msg=f"seed {seed}, engine {engine}")


def test_tiny_bandwidth_loo_ties_are_shared_on_both_engines():
    """The same at the leave-one-out rows (a Laplacian grid far below the spacing)."""
    grid = np.array([1 / 2**27, 1 / 2**26])
    for seed in range(10):
        X, y = _grid_data(seed)
        Zs = np.round(X * 3.0)
        expected = np.mean((y - _nearest_mean(Zs, Zs, y, np.arange(len(X)))) ** 2)
        for engine in ENGINES:
            model = _fit(engine, X, y, kernel="laplacian", bandwidth="loo",
                         bandwidth_grid=grid)
            np.testing.assert_allclose(model.loo_scores_, expected, rtol=1e-12,
                                       err_msg=f"seed {seed}, engine {engine}")
