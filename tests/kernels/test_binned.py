"""algorithm="binned": grid sums within the documented bound of the exact path."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import sparse

from nlpfeat.kernels import NadarayaWatsonClassifier, NadarayaWatsonRegressor
from nlpfeat.kernels._base import BINNED_MIN_SAMPLES

BOUND = 1e-6


def _pair(cls, X, y, **params):
    """The binned and the exact (brute) model fitted alike."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return (cls(algorithm="binned", **params).fit(X, y),
                cls(algorithm="brute", **params).fit(X, y))


def _check(binned, exact, Q, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if hasattr(binned, "classes_"):
            err = np.abs(binned.predict_proba(Q) - exact.predict_proba(Q)).max()
            assert err <= BOUND, err
        else:
            err = np.abs(binned.predict(Q) - exact.predict(Q)).max()
            assert err <= BOUND * np.std(y, axis=0).min(), err


def _data(rng, n, d, kind="normal"):
    if kind == "skewed":
        X = rng.lognormal(sigma=1.0, size=(n, d))
    elif kind == "clustered":
        centres = rng.normal(scale=10.0, size=(3, d))
        X = centres[rng.integers(0, 3, n)] + 0.1 * rng.normal(size=(n, d))
    else:
        X = rng.normal(size=(n, d))
    y = np.sin(2 * X[:, 0]) + 0.3 * rng.normal(size=n)
    return X, y


# d = 2 local linear with another kernel than the gaussian: the slow pass (up to 5 CPU-s
# each; the gaussian's case stays here)
@pytest.mark.parametrize("kernel, reg_type, d", [
    pytest.param(k, r, d, marks=pytest.mark.slow) if (d, r) == (2, "ll") and k != "gaussian"
    else (k, r, d)
    for d in (1, 2) for r in ("lc", "ll")
    for k in ("gaussian", "logistic", "sigmoid", "epanechnikov", "tophat", "laplacian")])
def test_binned_within_the_bound_of_the_exact_path(kernel, reg_type, d):
    rng = np.random.default_rng(d)
    X, y = _data(rng, 400, d)
    Q = np.vstack([rng.normal(size=(60, d)) * 1.5, [[8.0] * d]])    # some outside
    binned, exact = _pair(NadarayaWatsonRegressor, X, y, kernel=kernel, reg_type=reg_type,
                          bandwidth=0.4)
    assert binned.algorithm_ == "binned"
    _check(binned, exact, Q, y)


_SWEEP = dict(seed=st.integers(0, 10**6), kind=st.sampled_from(["normal", "skewed", "clustered"]),
              log_scale=st.floats(-2.5, 2.0), reg_type=st.sampled_from(["lc", "ll"]),
              kernel=st.sampled_from(["gaussian", "logistic"]))


@settings(max_examples=4, deadline=None)
@given(**_SWEEP)
def test_binned_bound_over_bandwidths_and_data_shapes(seed, kind, log_scale, reg_type, kernel):
    """From a bandwidth far below the data's spacing to one far larger than the data;
    skewed and clustered data; queries outside."""
    _sweep(seed, kind, log_scale, reg_type, kernel)


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(**_SWEEP)
def test_binned_bound_sweep_slow(seed, kind, log_scale, reg_type, kernel):
    _sweep(seed, kind, log_scale, reg_type, kernel)


def _sweep(seed, kind, log_scale, reg_type, kernel):
    rng = np.random.default_rng(seed)
    X, y = _data(rng, 300, 1, kind)
    h = float(np.std(X) * 10.0 ** log_scale)
    Q = np.concatenate([X[:40] + rng.normal(scale=h, size=(40, 1)),
                        [[X.min() - 3 * h], [X.max() + 50 * h]]])
    binned, exact = _pair(NadarayaWatsonRegressor, X, y, kernel=kernel, bandwidth=h,
                          reg_type=reg_type)
    _check(binned, exact, Q, y)


@pytest.mark.slow
def test_binned_tiny_bandwidth_on_a_capped_grid_stays_within_the_bound():
    """A bandwidth of a few grid steps: the grid cap lowers the nodes per bandwidth."""
    rng = np.random.default_rng(3)
    X, y = _data(rng, 2000, 2)
    h = float(np.ptp(X)) / 4000          # the default grid cannot hold 16 nodes per h
    binned, exact = _pair(NadarayaWatsonRegressor, X, y, bandwidth=h)
    _check(binned, exact, X[:50] + h / 3, y)


def test_binned_multi_output_and_three_features():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(600, 3))
    Y = np.column_stack([np.sin(X[:, 0]), X[:, 1] ** 2, rng.normal(size=600)])
    binned, exact = _pair(NadarayaWatsonRegressor, X, Y, bandwidth=0.8)
    Q = rng.normal(size=(30, 3))
    assert binned.predict(Q).shape == (30, 3)
    _check(binned, exact, Q, Y)


def test_binned_classifier_probabilities_within_1e_6():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(800, 2))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=800) > 0, "a", "b")
    y[:50] = "c"
    binned, exact = _pair(NadarayaWatsonClassifier, X, y, bandwidth=0.3)
    Q = np.vstack([rng.normal(size=(80, 2)), [[9.0, 9.0]]])
    _check(binned, exact, Q, y)
    assert np.array_equal(binned.predict(Q[:80]), exact.predict(Q[:80]))


def test_explicit_bins_trade_accuracy_for_speed():
    """A coarser grid errs more (no certificate against the target then), a finer less."""
    rng = np.random.default_rng(6)
    X, y = _data(rng, 3000, 1)
    Q = rng.normal(size=(200, 1))
    exact = NadarayaWatsonRegressor(bandwidth=0.2, algorithm="brute").fit(X, y).predict(Q)
    errors = [np.abs(NadarayaWatsonRegressor(bandwidth=0.2, algorithm="binned", bins=b)
                     .fit(X, y).predict(Q) - exact).max() for b in (100, 200, 800)]
    assert errors[0] > errors[1] > errors[2]
    assert errors[0] > BOUND and errors[2] < 1e-5
    per_feature = NadarayaWatsonRegressor(bandwidth=0.5, algorithm="binned", bins=[64, 32])
    assert per_feature.fit(rng.normal(size=(100, 2)), y[:100])._index.bins.tolist() == [64, 32]


@pytest.mark.parametrize("params, X, match", [
    ({"var_type": "cu"}, np.c_[np.arange(20.0), np.arange(20) % 2], "discrete"),
    ({}, sparse.random(20, 2, density=0.5, format="csr", random_state=0), "dense X"),
    ({"metric": "product"}, np.arange(40.0).reshape(20, 2), "euclidean"),
    ({"metric": "cosine"}, np.arange(1, 41.0).reshape(20, 2), "euclidean"),
    ({}, np.arange(80.0).reshape(20, 4), "at most 3"),
    ({"bandwidth": "loo-ard"}, np.arange(20.0)[:, None], "no binned form"),
    ({"bandwidth": "aic"}, np.arange(20.0)[:, None], "no binned form"),
    ({"bins": [10, 10]}, np.arange(20.0)[:, None], "bins must be"),
    ({"bins": 0}, np.arange(20.0)[:, None], "bins"),
])
def test_binned_refuses_what_it_cannot_bin(params, X, match):
    params = {"bandwidth": 1.0, **params}
    with pytest.raises(ValueError, match=match):
        NadarayaWatsonRegressor(algorithm="binned", **params).fit(X, np.arange(20.0))


@pytest.mark.parametrize("reg_type", ["lc", "ll"])
def test_binned_loo_picks_the_exact_choice_or_a_close_neighbour(reg_type):
    rng = np.random.default_rng(7)
    X, y = _data(rng, 700, 1)
    binned, exact = _pair(NadarayaWatsonRegressor, X, y, bandwidth="loo", reg_type=reg_type,
                          bandwidth_grid=12)
    np.testing.assert_allclose(binned.bandwidth_grid_, exact.bandwidth_grid_)
    pick = int(np.argmin(binned.loo_scores_))
    best = exact.loo_scores_.min()
    assert exact.loo_scores_[pick] <= best * 1.001
    np.testing.assert_allclose(binned.loo_scores_, exact.loo_scores_, rtol=1e-5)


@pytest.mark.slow   # 9 CPU-s; the regressor's LOO on the grid stays
def test_binned_loo_classifier_log_loss():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(600, 2))
    y = (X[:, 0] + 0.7 * rng.normal(size=600) > 0).astype(int)
    binned, exact = _pair(NadarayaWatsonClassifier, X, y, bandwidth="loo", bandwidth_grid=8)
    assert exact.loo_scores_[int(np.argmin(binned.loo_scores_))] <= exact.loo_scores_.min() \
        * 1.001


def test_auto_bins_large_low_dimensional_data_with_a_smooth_kernel():
    rng = np.random.default_rng(9)
    X, y = _data(rng, BINNED_MIN_SAMPLES, 1)
    reg = NadarayaWatsonRegressor(bandwidth=0.05).fit(X, y)
    assert reg.algorithm_ == "binned"
    W = reg.attention_weights(X[:3])            # weights: the exact path
    np.testing.assert_allclose(W.sum(axis=1), 1.0)
    np.testing.assert_allclose(W @ y, reg.predict(X[:3]), atol=BOUND * np.std(y))
    small = NadarayaWatsonRegressor(bandwidth=0.05).fit(X[:1000], y[:1000])
    compact = NadarayaWatsonRegressor("epanechnikov", bandwidth=0.05).fit(X, y)
    ard = NadarayaWatsonRegressor(bandwidth="loo-ard", bandwidth_grid=None)
    assert small.algorithm_ != "binned" and compact.algorithm_ != "binned"
    gaussian = __import__("nlpfeat").kernels.get_kernel("gaussian")
    assert not ard._binned_chosen(X, gaussian)
    # local linear: binned in d = 1; in d = 2 its certificate sends the queries exact
    X2 = np.column_stack([X, X[::-1]])
    ll = NadarayaWatsonRegressor(reg_type="ll", bandwidth=0.05)
    assert ll._binned_chosen(X, gaussian) and not ll._binned_chosen(X2, gaussian)


def test_binned_models_pickle_and_clone():
    import pickle

    from sklearn.base import clone

    rng = np.random.default_rng(10)
    X, y = _data(rng, 300, 2)
    reg = NadarayaWatsonRegressor(bandwidth=0.5, algorithm="binned", bins=40).fit(X, y)
    again = pickle.loads(pickle.dumps(reg))
    np.testing.assert_array_equal(again.predict(X[:20]), reg.predict(X[:20]))
    assert clone(reg).get_params()["bins"] == 40


def test_fit_on_a_dask_array_sums_partition_grids(dask_client):
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(11)
    X, y = _data(rng, 3000, 2)
    Q = rng.normal(size=(100, 2))
    ref = NadarayaWatsonRegressor(bandwidth="scott", algorithm="binned").fit(X, y)
    dist = NadarayaWatsonRegressor(bandwidth="scott").fit(
        da.from_array(X, chunks=(700, 2)), da.from_array(y, chunks=700))
    assert dist.algorithm_ == "binned"
    np.testing.assert_allclose(dist.bandwidth_, ref.bandwidth_, rtol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got, want = dist.predict(Q), ref.predict(Q)
    ok = ~np.isnan(got)
    assert ok.mean() > 0.9
    np.testing.assert_allclose(got[ok], want[ok], atol=1e-12)
    lazy = dist.predict(da.from_array(Q, chunks=30)).compute()
    np.testing.assert_array_equal(np.isnan(lazy), ~ok)
    clf = NadarayaWatsonClassifier(bandwidth=0.4).fit(da.from_array(X, chunks=(900, 2)),
                                                     np.where(y > 0, "p", "n"))
    mem = NadarayaWatsonClassifier(bandwidth=0.4, algorithm="binned").fit(
        X, np.where(y > 0, "p", "n"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        P, M = clf.predict_proba(Q), mem.predict_proba(Q)
    ok = ~np.isnan(P).any(axis=1)
    np.testing.assert_allclose(P[ok], M[ok], atol=1e-12)
    with pytest.raises(ValueError, match="dask array"):
        dist.attention_weights(Q)
    with pytest.raises(ValueError, match="not available when fitting on a dask"):
        NadarayaWatsonRegressor(bandwidth="loo").fit(da.from_array(X, chunks=(700, 2)), y)


def test_binned_predictions_outside_certified_range_warn_for_a_dask_fit():
    da = pytest.importorskip("dask.array")
    from nlpfeat.kernels._binned import BinnedRangeWarning

    X, y = np.linspace(0, 1, 200)[:, None], np.linspace(0, 1, 200)
    reg = NadarayaWatsonRegressor(bandwidth=0.05).fit(da.from_array(X, chunks=(50, 1)), y)
    with pytest.warns(BinnedRangeWarning, match="NaN"):
        out = reg.predict([[0.5], [40.0]])
    assert np.isfinite(out[0]) and np.isnan(out[1])


@pytest.mark.parametrize("scale", [1e-9, 1e9])
def test_binned_extreme_bandwidths_give_the_exact_result(scale):
    """A bandwidth no grid resolves runs exact; a huge one cuts the kernel at the grid."""
    rng = np.random.default_rng(12)
    X, y = _data(rng, 300, 2)
    Q = np.vstack([X[:20], [[1e3, -1e3]]])
    binned, exact = _pair(NadarayaWatsonRegressor, X, y, bandwidth=scale, reg_type="ll")
    _check(binned, exact, Q, y)
    if scale < 1:
        assert binned._index.sums is None


def _envelope_reference(grid, reg_type):
    """The error profile of :func:`_binned._envelope`, from its definition: per cell
    offset k, a point at eighths s_a of cell 0 and a query at eighths s_b of cell k, the
    binned kernel ``W(s_b)^T K(k + pb - pa) W(s_a)`` minus the exact kernel, maximised."""
    from nlpfeat.kernels._binned import _lagrange

    step = float(np.max(grid.delta / grid.h))
    P = grid.order + 1
    n_r = int(np.max(grid.R)) + P + 2
    W = _lagrange(np.arange(8) / 8, grid.order)
    kern = grid.kern
    base = lambda u: np.exp(kern.log_k(np.abs(u)) - kern.log_k(0.0))  # noqa: E731
    profs = [base] if reg_type == "lc" else [base, lambda u: u * base(u),
                                             lambda u: u * u * base(u)]
    ks = np.arange(-n_r, n_r + 1)
    err = np.zeros(ks.size)
    for prof in profs:
        for i, k in enumerate(ks):
            exact = prof((k + np.arange(8)[None, :] / 8 - np.arange(8)[:, None] / 8) * step)
            Kn = prof((k + np.arange(P)[None, :] - np.arange(P)[:, None]) * step)
            err[i] = max(err[i], np.abs(W @ Kn @ W.T - exact).max())
    wide = np.array([err[max(0, i - P):i + P + 1].max() for i in range(ks.size)])
    U = grid.offsets()
    radius = np.sqrt(np.einsum("...d,...d->...", U, U))
    return grid.d * np.interp(radius, np.abs(ks[n_r:]) * step, wide[n_r:])


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10**6), kernel=st.sampled_from(["gaussian", "logistic", "tricube"]),
       reg_type=st.sampled_from(["lc", "ll"]), d=st.integers(1, 2))
def test_error_envelope_matches_its_definition(seed, kernel, reg_type, d):
    # the envelope evaluates the kernel once on the lattice of offsets and measures k >= 0
    # only (the profile is even): the same maxima as the per-offset products
    from nlpfeat.kernels import get_kernel
    from nlpfeat.kernels._binned import EPS, _envelope, _Grid

    rng = np.random.default_rng(seed)
    span = rng.uniform(1.0, 10.0, size=d)
    bins = rng.integers(4, 60, size=d)
    g = _Grid(np.zeros(d), span, rng.uniform(0.05, 3.0), bins, get_kernel(kernel))
    got, ref = _envelope(g, reg_type) - EPS, _envelope_reference(g, reg_type)
    # differences only in the products' rounding (a few eps of the kernel's unit value)
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=64 * EPS)


def test_binned_loo_reuses_a_shared_grid_without_changing_a_score():
    # bandwidths whose grids stop at the minimum intervals share the spread rows (the
    # first here has a grid of its own): each score equals that bandwidth's searched alone
    from nlpfeat.kernels import get_kernel
    from nlpfeat.kernels._binned import default_bins
    from nlpfeat.kernels._engine import loo_grid

    rng = np.random.default_rng(11)
    X, y = _data(rng, 3000, 1)
    grid = np.array([[0.03], [0.2], [0.5], [1.5]])
    kern = get_kernel("gaussian")
    span = np.ptp(X, axis=0)
    assert len({tuple(default_bins(span, h, kern)) for h in grid[1:]}) == 1
    assert tuple(default_bins(span, grid[0], kern)) != tuple(default_bins(span, grid[1], kern))
    run = lambda g: loo_grid(X, y[:, None], kern, "euclidean", g, engine="numba",  # noqa: E731
                             binned=True)
    np.testing.assert_allclose(run(grid), [run(h[None])[0] for h in grid], rtol=1e-13)
