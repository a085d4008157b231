"""algorithm="binned" for the polynomial kernels: exact sums (moments of strips), equal to
the exact path up to rounding, each query's rounding bounded."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_binned import _data

from nlpfeat.kernels import NadarayaWatsonRegressor, get_kernel
from nlpfeat.kernels._binned_poly import PolySums, kernel_moments

#: Rounding-level agreement with the exact path (in units of std(y)): far below the
#: documented 1e-6 that the interpolated grids certify.
ROUNDING = 1e-9


def _reference_sums(X, V, Q, h, p, reg_type):
    """Kernel sums (m, nk, 1 + k) by brute force in numpy: ``(1 - |t|^2)_+^p`` times
    the moments ``t^g`` of :func:`kernel_moments`, ``t = (x - q) / h``."""
    T = (X[None, :, :] - Q[:, None, :]) / h
    u2 = (T ** 2).sum(axis=-1)
    K = np.where(u2 < 1.0, np.clip(1.0 - u2, 0.0, None) ** p, 0.0)
    cols = np.hstack([np.ones((len(X), 1)), V])
    out = []
    for g in kernel_moments(X.shape[1], reg_type):
        Kg = K * np.prod(T ** g, axis=-1)
        out.append(Kg @ cols)
    return np.stack(out, axis=1)


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10**6), d=st.integers(1, 3),
       kernel=st.sampled_from(["epanechnikov", "biweight", "triweight"]),
       reg_type=st.sampled_from(["lc", "ll"]), log_scale=st.floats(-1.5, 1.5))
def test_poly_sums_match_brute_force_within_their_bound(seed, d, kernel, reg_type, log_scale):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(300, d)) * rng.uniform(0.5, 3.0, size=d)
    V = rng.normal(size=(300, 2))
    Q = np.vstack([rng.normal(size=(40, d)) * 2.0, X[:5]])
    h = np.std(X, axis=0) * 10.0 ** log_scale
    kern = get_kernel(kernel)
    sums = PolySums(X, V, kern, h, None, reg_type, np.ones(2))
    S, E = sums._sums(Q)
    R = _reference_sums(X, V, Q, h, sums.p, reg_type)
    err = np.abs(S - R)
    assert (err <= E).all(), (err / np.maximum(E, 1e-300)).max()
    # the bound itself is rounding-sized against the sums' scale
    assert (E <= 1e-8 * (1.0 + np.abs(R).max())).all()


_DATA = dict(seed=st.integers(0, 10**6), kind=st.sampled_from(["normal", "skewed", "clustered"]),
             log_scale=st.floats(-3.0, 2.5), reg_type=st.sampled_from(["lc", "ll"]),
             kernel=st.sampled_from(["epanechnikov", "biweight", "triweight"]),
             d=st.integers(1, 2))


@settings(max_examples=10, deadline=None)
@given(**_DATA)
def test_poly_binned_equals_the_exact_path_to_rounding(seed, kind, log_scale, reg_type, kernel,
                                                       d):
    """Tiny (a query's support empty: ``on_empty``) to huge bandwidths, skewed and
    clustered data, queries far outside the data."""
    rng = np.random.default_rng(seed)
    X, y = _data(rng, 300, d, kind)
    h = float(np.std(X) * 10.0 ** log_scale)
    Q = np.vstack([X[:30] + rng.normal(scale=h, size=(30, d)),
                   [X.min(axis=0) - 3 * h], [X.max(axis=0) + 50 * h]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        params = dict(kernel=kernel, bandwidth=h, reg_type=reg_type)
        binned = NadarayaWatsonRegressor(algorithm="binned", **params).fit(X, y)
        exact = NadarayaWatsonRegressor(algorithm="brute", **params).fit(X, y)
        got, want = binned.predict(Q), exact.predict(Q)
    np.testing.assert_allclose(got, want, rtol=0, atol=ROUNDING * np.std(y))


def test_poly_binned_certifies_the_queries_inside_the_data():
    """The queries inside dense data run on the moments, not on the exact path."""
    rng = np.random.default_rng(1)
    X, y = _data(rng, 5000, 2, "normal")
    Q = rng.uniform(-1.0, 1.0, size=(300, 2))
    for reg_type in ("lc", "ll"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = NadarayaWatsonRegressor("epanechnikov", bandwidth=0.3, reg_type=reg_type,
                                            algorithm="binned").fit(X, y)
            exact = NadarayaWatsonRegressor("epanechnikov", bandwidth=0.3, reg_type=reg_type,
                                            algorithm="brute").fit(X, y)
            got = model.predict(Q)
        assert model._index.n_exact_ == 0
        np.testing.assert_allclose(got, exact.predict(Q), rtol=0, atol=ROUNDING * np.std(y))


@pytest.mark.parametrize("d", [1, 2])
def test_poly_binned_loo_scores_equal_the_exact_scores(d):
    rng = np.random.default_rng(2)
    X, y = _data(rng, 600, d, "normal")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        params = dict(kernel="biweight", bandwidth="loo", bandwidth_grid=8)
        binned = NadarayaWatsonRegressor(algorithm="binned", **params).fit(X, y)
        exact = NadarayaWatsonRegressor(algorithm="brute", **params).fit(X, y)
    np.testing.assert_allclose(binned.loo_scores_, exact.loo_scores_, rtol=1e-9)
    np.testing.assert_array_equal(binned.bandwidth_, exact.bandwidth_)


def test_poly_binned_explicit_bins_set_the_strips():
    rng = np.random.default_rng(3)
    X, y = _data(rng, 400, 2, "normal")
    Q = rng.normal(size=(50, 2))
    exact = NadarayaWatsonRegressor("epanechnikov", bandwidth=0.4,
                                    algorithm="brute").fit(X, y).predict(Q)
    for bins in (1, 7, [40, 3]):
        model = NadarayaWatsonRegressor("epanechnikov", bandwidth=0.4, algorithm="binned",
                                        bins=bins).fit(X, y)
        np.testing.assert_allclose(model.predict(Q), exact, rtol=0, atol=ROUNDING * np.std(y))
    assert model._index.bins.tolist() == [40, 3]


def test_poly_binned_classifier_probabilities_and_pickle():
    import pickle

    from nlpfeat.kernels import NadarayaWatsonClassifier

    rng = np.random.default_rng(4)
    X = rng.normal(size=(500, 2))
    y = (X[:, 0] + 0.5 * rng.normal(size=500) > 0).astype(int)
    binned = NadarayaWatsonClassifier("biweight", bandwidth=0.5, algorithm="binned").fit(X, y)
    exact = NadarayaWatsonClassifier("biweight", bandwidth=0.5, algorithm="brute").fit(X, y)
    P = binned.predict_proba(X[:50])
    np.testing.assert_allclose(P, exact.predict_proba(X[:50]), rtol=0, atol=ROUNDING)
    assert binned._index.n_exact_ == 0
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(binned)).predict_proba(X[:50]), P)
