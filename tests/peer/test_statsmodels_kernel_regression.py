"""Peer suite: what statsmodels' own ``test_kernel_regression.py`` checks, against statsmodels.

statsmodels' tests (``statsmodels/nonparametric/tests/test_kernel_regression.py``) fit
``KernelReg`` on simulated data sets and compare bandwidths, fitted means and R^2 with R's
``np`` package. Here the same data sets are recomputed from the same seeds and
:class:`~nlpfeat.kernels.NadarayaWatsonRegressor` (Gaussian product kernel on continuous
variables, ``metric="product"``) is compared with statsmodels' own output:

- local constant and local linear fitted means at fixed bandwidths (statsmodels' values
  and its ``bw_cv_ls`` constants), to 1e-8;
- the least-squares cross-validation criterion ``cv_ls`` (``KernelReg.cv_loo``) against
  ``loo_scores_``, and the bandwidth that minimises it: statsmodels' ``cv_ls`` bandwidth
  against ``bandwidth="loo-ard"`` (local constant; a continuous search, like statsmodels')
  and, for local linear, ``loo-ard`` too, and statsmodels' optimum must be a local
  minimum of our criterion;
- R^2 as ``KernelReg.r_squared`` defines it, from our fitted means.

Mixed data (``var_type`` with "o" ordered and "u" unordered codes: Wang-van Ryzin and
Aitchison-Aitken kernels), on statsmodels' Italy GDP data (its ``test_ordered_lc_cvls``)
and its mixed-type examples (``test_mixed_mfx_ll_cvls``; the base data with its ordered
draws ``o``, ``o2``):

- fitted means at fixed bandwidths, local constant and local linear, to 1e-8;
- ``loo_scores_`` against ``cv_loo``, including a category seen once (the
  leave-one-out fit counts the categories of the other rows, as statsmodels does);
- ``bandwidth="loo-ard"`` against statsmodels' ``cv_ls`` bandwidths, within 2% where
  statsmodels' Nelder-Mead ends inside the valid range (discrete bandwidths in [0, 1]);
  where it ends outside it, or in a worse local minimum, our criterion is lower;
- ``bandwidth="aic"``: the criterion (``aic_``) equals ``KernelReg.aic_hurvich`` at the
  same bandwidth to 1e-8, and the bandwidth is within 2% of statsmodels' ``bw="aic"``.

Left out, and why:

- marginal effects (``mfx``, the local slopes) and the significance tests
  (``sig_test``): nlpfeat returns the intercept of the local fit only;
- ``KernelCensoredReg`` and statsmodels' ``efficient`` (subsampled) bandwidth search:
  no counterpart.
"""
import warnings

import numpy as np
import pytest

from nlpfeat.kernels import NadarayaWatsonRegressor

kr = pytest.importorskip("statsmodels.nonparametric.kernel_regression")


def _statsmodels(y, X, reg_type, bw, var_type=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # "After 0.17" default change
        warnings.simplefilter("ignore", RuntimeWarning)  # 0/0 inside its slope estimate
        return kr.KernelReg(y, X, var_type=var_type or "c" * X.shape[1], reg_type=reg_type,
                            bw=bw)


def _cv_loo(model, h, reg_type):
    """statsmodels' cv_ls criterion (its local constant path also computes slopes, 0/0)."""
    func = model._est_loc_constant if reg_type == "lc" else model._est_loc_linear
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(np.squeeze(model.cv_loo(np.atleast_1d(np.asarray(h, dtype=float)), func)))


def _r_squared(y, yhat):
    """``KernelReg.r_squared``'s definition (its y_bar is the mean of the fitted values)."""
    y_bar = yhat.mean()
    return (((y - y_bar) * (yhat - y_bar)).sum()) ** 2 / (
        ((y - y_bar) ** 2).sum() * ((yhat - y_bar) ** 2).sum())


@pytest.fixture(scope="module")
def base_data():
    """``KernelRegressionTestBase.setup_class``: y = 0.3 + 1.2 c1 + 3.7 c2 + noise."""
    rs = np.random.RandomState(123456)
    nobs = 60
    rs.binomial(2, 0.7, size=(nobs, 1))   # o, o2: the discrete variables, drawn for the seed
    rs.binomial(3, 0.7, size=(nobs, 1))
    c1 = rs.normal(size=(nobs, 1))
    c2 = rs.normal(10, 1, size=(nobs, 1))
    rs.normal(10, 2, size=(nobs, 1))      # c3
    noise = rs.normal(size=(nobs, 1))
    y = (0.3 + 1.2 * c1 + 3.7 * c2 + noise).ravel()
    return np.column_stack([c1, c2]), y


@pytest.fixture(scope="module")
def mfx_data():
    """``test_continuous_mfx_ll_cvls``: three continuous variables, 200 rows."""
    rs = np.random.RandomState(1234)
    nobs = 200
    C1 = rs.normal(size=(nobs,))
    C2 = rs.normal(2, 1, size=(nobs,))
    C3 = rs.beta(0.5, 0.2, size=(nobs,))
    noise = rs.normal(size=(nobs,))
    Y = 3 + 1.2 * C1 + 3.7 * C2 + 2.3 * C3 + noise
    return np.column_stack([C1, C2, C3]), Y


@pytest.mark.parametrize("reg_type, bw", [("lc", [0.6163835, 0.1649656]),   # R's cv_ls bw
                                          ("ll", [1.717891, 2.449415]),
                                          ("lc", [0.3, 0.9]), ("ll", [0.8, 0.5])])
def test_fitted_means_and_r_squared_at_fixed_bandwidths(base_data, reg_type, bw):
    X, y = base_data
    model = _statsmodels(y, X, reg_type, np.array(bw))
    expected = model.fit()[0]
    ours = NadarayaWatsonRegressor(bandwidth=bw, metric="product", reg_type=reg_type)
    got = ours.fit(X, y).predict(X)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-8)
    assert _r_squared(y, got) == pytest.approx(model.r_squared(), rel=1e-10)


def test_local_linear_fitted_means_three_variables(mfx_data):
    X, Y = mfx_data
    bw = np.array([0.96075, 0.5682, 0.29835])   # statsmodels' bw_cv_ls constant
    expected = _statsmodels(Y, X, "ll", bw).fit()[0]
    got = NadarayaWatsonRegressor(bandwidth=bw, metric="product", reg_type="ll").fit(X, Y)
    np.testing.assert_allclose(got.predict(X), expected, rtol=1e-10, atol=1e-8)


@pytest.mark.parametrize("reg_type", ["lc", "ll"])
def test_leave_one_out_criterion_equals_cv_loo(base_data, reg_type):
    X, y = base_data
    model = _statsmodels(y, X, reg_type, np.array([0.5, 0.4]))
    grid = np.array([[0.5, 0.4], [0.9, 0.3], [1.7, 2.4]])
    ours = NadarayaWatsonRegressor(bandwidth="loo", metric="product", reg_type=reg_type,
                                   bandwidth_grid=grid).fit(X, y)
    expected = [_cv_loo(model, h, reg_type) for h in grid]
    np.testing.assert_allclose(ours.loo_scores_, expected, rtol=1e-10)


def test_cv_ls_bandwidth_local_constant(base_data):
    """statsmodels' cv_ls optimum (R: [0.616, 0.165]) and ours minimise one criterion."""
    X, y = base_data
    model = _statsmodels(y, X, "lc", "cv_ls")
    ours = NadarayaWatsonRegressor(bandwidth="loo-ard", metric="product").fit(X, y)
    np.testing.assert_allclose(ours.bandwidth_, model.bw, rtol=2e-2)
    np.testing.assert_allclose(ours.bandwidth_, [0.6163835, 0.1649656], atol=1e-2)  # R's np
    assert _cv_loo(model, ours.bandwidth_, "lc") <= _cv_loo(model, model.bw, "lc") * (1 + 1e-6)
    np.testing.assert_allclose(ours.predict(X[:5]),
                               [31.49157, 37.29536, 43.72332, 40.58997, 36.80711], atol=2e-2)


def test_cv_ls_bandwidth_local_linear_loo_ard(base_data):
    """loo-ard for local linear fits (analytic gradient through the local fits)."""
    X, y = base_data
    model = _statsmodels(y, X, "ll", "cv_ls")
    ours = NadarayaWatsonRegressor(bandwidth="loo-ard", metric="product", reg_type="ll")
    ours.fit(X, y)
    np.testing.assert_allclose(ours.bandwidth_, model.bw, rtol=2e-2)
    np.testing.assert_allclose(ours.bandwidth_, [1.717891, 2.449415], rtol=1e-3)  # R's np
    assert _cv_loo(model, ours.bandwidth_, "ll") <= _cv_loo(model, model.bw, "ll") * (1 + 1e-6)


def test_cv_ls_bandwidth_local_linear_is_a_minimum_of_our_criterion(base_data):
    X, y = base_data
    model = _statsmodels(y, X, "ll", "cv_ls")
    np.testing.assert_allclose(model.bw, [1.717891, 2.449415], atol=1e-2)  # R's np
    steps = np.array([[1, 1], [0.95, 1], [1.05, 1], [1, 0.95], [1, 1.05]])
    ours = NadarayaWatsonRegressor(bandwidth="loo", metric="product", reg_type="ll",
                                   bandwidth_grid=steps * model.bw).fit(X, y)
    assert np.argmin(ours.loo_scores_) == 0
    assert ours.loo_scores_[0] == pytest.approx(
        _cv_loo(model, model.bw, "ll"), rel=1e-10)


# --- mixed data: ordered ("o") and unordered ("u") variables -------------------------


@pytest.fixture(scope="module")
def italy():
    """statsmodels' Italy GDP data (R's np package, first 50 rows): year is ordered."""
    base = pytest.importorskip("statsmodels.nonparametric.tests.test_kernel_regression")
    data = base.KernelRegressionTestBase
    data.setup_class()
    return np.asarray(data.Italy_year, dtype=float)[:, None], np.asarray(data.Italy_gdp, float)


@pytest.fixture(scope="module")
def base_mixed():
    """``KernelRegressionTestBase``: y2 = 0.3 + 1.2 c1 + 3.7 c2 + o + noise, with o, o2."""
    rs = np.random.RandomState(123456)
    nobs = 60
    o = rs.binomial(2, 0.7, size=(nobs, 1))
    o2 = rs.binomial(3, 0.7, size=(nobs, 1))
    c1 = rs.normal(size=(nobs, 1))
    c2 = rs.normal(10, 1, size=(nobs, 1))
    rs.normal(10, 2, size=(nobs, 1))      # c3
    noise = rs.normal(size=(nobs, 1))
    y2 = (0.3 + 1.2 * c1 + 3.7 * c2 + o + noise).ravel()
    return np.column_stack([c1, c2, o, o2]).astype(float), y2


@pytest.fixture(scope="module")
def mixed_mfx():
    """``test_mixed_mfx_ll_cvls``: two continuous variables and an ordered one, 200 rows."""
    rs = np.random.RandomState(1234)
    nobs = 200
    ovals = rs.binomial(2, 0.5, size=(nobs,))
    C1 = rs.normal(size=(nobs,))
    C2 = rs.normal(2, 1, size=(nobs,))
    noise = rs.normal(size=(nobs,))
    Y = 3 + 1.2 * C1 + 3.7 * C2 + 2.3 * ovals + noise
    return np.column_stack([C1, C2, ovals]).astype(float), Y


def _mixed_case(name, italy, base_mixed, mixed_mfx):
    if name == "italy":
        return (*italy, "o")
    if name == "mfx":
        return (*mixed_mfx, "cco")
    X, y = base_mixed
    return (X[:, :3], y, "cco") if name == "base_cco" else (X, y, "ccou")


@pytest.mark.parametrize("reg_type", ["lc", "ll"])
@pytest.mark.parametrize("name, bw", [
    ("italy", [0.1390096]),                          # R's cv_ls bandwidth
    ("italy", [0.0]), ("italy", [1.0 - 1e-9]),
    ("mfx", [1.04726, 1.67485, 0.39852]),            # statsmodels' bw_cv_ls constant
    ("base_cco", [0.5, 0.3, 0.05]),
    ("base_ccou", [0.55, 0.27, 0.8, 0.9]), ("base_ccou", [3.0, 1.2, 0.9, 0.2])])
def test_mixed_fitted_means_at_fixed_bandwidths(italy, base_mixed, mixed_mfx, name, bw,
                                                reg_type):
    X, y, var_type = _mixed_case(name, italy, base_mixed, mixed_mfx)
    expected = _statsmodels(y, X, reg_type, np.array(bw), var_type).fit()[0]
    got = NadarayaWatsonRegressor(bandwidth=bw, var_type=var_type, reg_type=reg_type)
    got = got.fit(X, y).predict(X)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-8)


@pytest.mark.parametrize("reg_type", ["lc", "ll"])
def test_mixed_leave_one_out_criterion_equals_cv_loo(base_mixed, reg_type):
    X, y = base_mixed
    X = X.copy()
    X[7, 3] = 5.0      # a category of the unordered variable seen once
    grid = np.array([[0.5, 0.3, 0.4, 0.3], [0.9, 0.4, 0.1, 0.8], [2.0, 1.0, 0.7, 0.05]])
    model = _statsmodels(y, X, reg_type, grid[0], "ccou")
    ours = NadarayaWatsonRegressor(bandwidth="loo", var_type="ccou", reg_type=reg_type,
                                   bandwidth_grid=grid).fit(X, y)
    expected = [_cv_loo(model, h, reg_type) for h in grid]
    # local linear: rounding amplified by the conditioning of the small local fits
    np.testing.assert_allclose(ours.loo_scores_, expected, rtol=1e-10 if reg_type == "lc" else 1e-8)


@pytest.mark.parametrize("reg_type", ["lc", "ll"])
def test_italy_ordered_loo_ard_equals_cv_ls(italy, reg_type):
    X, y = italy
    model = _statsmodels(y, X, reg_type, "cv_ls", "o")
    ours = NadarayaWatsonRegressor(bandwidth="loo-ard", var_type="o", reg_type=reg_type)
    ours.fit(X, y)
    np.testing.assert_allclose(ours.bandwidth_, model.bw[0], rtol=2e-2)
    assert _cv_loo(model, ours.bandwidth_, reg_type) <= \
        _cv_loo(model, model.bw, reg_type) * (1 + 1e-6)
    if reg_type == "lc":
        assert ours.bandwidth_ == pytest.approx(0.1390096, abs=1e-3)  # R's np
        assert ours.predict(X[:1])[0] == pytest.approx(6.190486, abs=1e-3)


# statsmodels 0.15's cv_ls bandwidths (KernelReg(y, X, var_type, reg_type, bw="cv_ls").bw,
# recomputed on these data: 5 to 35 s each, so stored) and where each ended.
_CV_LS = {
    ("base_cco", "lc"): [0.5320509281097416, 0.27572024938576445, 0.48656393866444786],
    ("base_ccou", "lc"): [0.5447030524319881, 0.271555107766676, 0.790939536867959,
                          0.9294155162250384],
    ("base_ccou", "ll"): [2.992528981051887, 1.1866579522124512, 0.8835583561706811,
                          0.19680058764420563],
    # the ordered bandwidth ends outside [0, 1] (1.005):
    ("base_cco", "ll"): [0.41054703455332997, 1.8778958993191837, 1.0050979512559532],
    # statsmodels' own bw_cv_ls constant [1.04726, 1.67485, 0.39852]; a local minimum
    # worse than the global linear fit that loo-ard finds (huge continuous bandwidths):
    ("mfx", "ll"): [1.047263637434284, 1.6748581167020296, 0.39851909093337323],
}


@pytest.mark.parametrize("name, reg_type", list(_CV_LS))
def test_mixed_loo_ard_against_cv_ls(italy, base_mixed, mixed_mfx, name, reg_type):
    X, y, var_type = _mixed_case(name, italy, base_mixed, mixed_mfx)
    sm_bw = np.array(_CV_LS[name, reg_type])
    model = _statsmodels(y, X, reg_type, sm_bw, var_type)
    ours = NadarayaWatsonRegressor(bandwidth="loo-ard", var_type=var_type, reg_type=reg_type)
    ours.fit(X, y)
    ours_cv, sm_cv = _cv_loo(model, ours.bandwidth_, reg_type), _cv_loo(model, sm_bw, reg_type)
    discrete = np.array([code != "c" for code in var_type])
    if np.all((sm_bw[discrete] >= 0) & (sm_bw[discrete] <= 1)) and name != "mfx":
        np.testing.assert_allclose(ours.bandwidth_, sm_bw, rtol=2e-2)
        assert ours_cv <= sm_cv * (1 + 1e-6)
    else:
        assert ours_cv < sm_cv * (1 - 1e-3)
    assert np.all((ours.bandwidth_[discrete] >= 0) & (ours.bandwidth_[discrete] <= 1))


def _aic_hurvich(model, h):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(np.squeeze(model.aic_hurvich(np.atleast_1d(np.asarray(h, float)))))


def test_aic_bandwidth_continuous_local_constant():
    """statsmodels' ``test_continuous_lc_aic``: its bandwidth [0.3988, 0.5093]."""
    rs = np.random.RandomState(1234)
    nobs = 200
    C1 = rs.normal(size=(nobs,))
    C2 = rs.normal(2, 1, size=(nobs,))
    noise = rs.normal(size=(nobs,))
    Y = 0.3 + 1.2 * C1 - 0.9 * C2 + noise
    X = np.column_stack([C1, C2])
    ours = NadarayaWatsonRegressor(bandwidth="aic", metric="product").fit(X, Y)
    sm_bw = np.array([0.3987821, 0.50933458])
    np.testing.assert_allclose(ours.bandwidth_, sm_bw, rtol=2e-2)
    model = _statsmodels(Y, X, "lc", sm_bw)
    assert ours.aic_ == pytest.approx(_aic_hurvich(model, ours.bandwidth_), rel=1e-10, abs=1e-8)
    assert ours.aic_ <= _aic_hurvich(model, sm_bw) + 1e-10


@pytest.mark.parametrize("reg_type", ["lc", "ll"])
@pytest.mark.parametrize("name", ["italy", "base_ccou", "mfx"])
def test_aic_criterion_equals_aic_hurvich(italy, base_mixed, mixed_mfx, name, reg_type):
    X, y, var_type = _mixed_case(name, italy, base_mixed, mixed_mfx)
    ours = NadarayaWatsonRegressor(bandwidth="aic", var_type=var_type, reg_type=reg_type)
    ours.fit(X, y)
    model = _statsmodels(y, X, reg_type, np.atleast_1d(ours.bandwidth_), var_type)
    assert ours.aic_ == pytest.approx(_aic_hurvich(model, ours.bandwidth_), rel=1e-10, abs=1e-8)
    # a minimum: moving any bandwidth by 5% (inside its range) does not lower it
    h = np.atleast_1d(ours.bandwidth_)
    for f in range(h.size):
        for step in (0.95, 1.05):
            moved = h.copy()
            moved[f] *= step
            if var_type[f] != "c":  # statsmodels: 0/0 at an ordered bandwidth of 1
                moved[f] = min(moved[f], 1.0 - 1e-9)
            assert _aic_hurvich(model, moved) >= ours.aic_ - 1e-9


def test_italy_aic_bandwidth_equals_statsmodels(italy):
    X, y = italy
    model = _statsmodels(y, X, "lc", "aic", "o")
    ours = NadarayaWatsonRegressor(bandwidth="aic", var_type="o").fit(X, y)
    np.testing.assert_allclose(ours.bandwidth_, model.bw[0], rtol=2e-2)
