"""Issue 11, "Trust at the edges": kernel estimators at extreme scales, ties, empty supports."""
import re
import warnings

import numpy as np
import pytest
from sklearn.base import clone

from nlpfeat.attention import AttentionRegressor, SequenceAttentionRegressor
from nlpfeat.kernels import (
    EmptySupportWarning,
    Kernel,
    NadarayaWatsonClassifier,
    NadarayaWatsonRegressor,
    available_kernels,
    kernel_log_weights,
)

SCALES = [1e-100, 1e-50, 1.0, 1e50, 1e100]
COMPACT = ["epanechnikov", "biweight", "triweight", "tricube", "triangular", "tophat", "cosine"]


def _data(seed=0, n=40):
    rng = np.random.RandomState(seed)
    X = rng.uniform(0, 1, size=(n, 2))
    y = np.sin(3 * X.sum(axis=1)) + 0.1 * rng.normal(size=n)
    return X, y, rng.uniform(0, 1, size=(10, 2))


def _quiet_fit_predict(model, X, y, Xq, proba=False):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EmptySupportWarning)
        model.fit(X, y)
        return model.predict_proba(Xq) if proba else model.predict(Xq)


def _max_rel_change(preds):
    ref = preds[SCALES.index(1.0)]
    return max(float(np.max(np.abs(p - ref) / np.maximum(np.abs(ref), 1e-300))) for p in preds)


# --- point 1: on_empty="nan" in the classifier ------------------------------------------

def test_classifier_predict_raises_where_on_empty_nan_left_no_class():
    X, labels = np.array([[0.0], [1.0], [2.0], [3.0]]), ["a", "b", "a", "b"]
    clf = NadarayaWatsonClassifier("epanechnikov", bandwidth=0.1, on_empty="nan").fit(X, labels)
    assert np.isnan(clf.predict_proba([[0.5]])).all()
    with pytest.raises(ValueError, match="1 of 2 queries.*on_empty='nan'.*predict_proba"):
        clf.predict([[0.5], [1.0]])
    np.testing.assert_array_equal(clf.predict([[1.0], [2.02]]), ["b", "a"])
    mean = clone(clf).set_params(on_empty="mean").fit(X, ["a", "b", "a", "a"])
    np.testing.assert_allclose(mean.predict_proba([[0.5]]), [[0.75, 0.25]])
    assert mean.predict([[0.5]])[0] == "a"  # the most frequent class


# --- point 2: ties for the nearest point --------------------------------------------------

@pytest.mark.parametrize("metric", ["euclidean", "product"])
@pytest.mark.parametrize("reg_type", ["lc", "ll"])
def test_tree_and_brute_share_the_weight_of_tied_nearest_points(metric, reg_type):
    X = np.array([[0.0, 0.0], [2.0, 0.0], [1.0, 2.0], [5.0, 5.0]])
    y = np.array([0.0, 10.0, 4.0, 3.0])
    Xq = np.array([[1.0, 0.0], [1.0, 0.75]])  # tie of rows 0, 1; of rows 0, 1, 2 (at 1.25)
    preds = []
    for algorithm in ["tree", "brute"]:
        reg = NadarayaWatsonRegressor("epanechnikov", bandwidth=0.1, metric=metric, reg_type=reg_type,
                                      algorithm=algorithm)
        with pytest.warns(EmptySupportWarning):
            preds.append(reg.fit(X, y).predict(Xq))
            W = reg.attention_weights(Xq).toarray()
        np.testing.assert_allclose(W[0], [0.5, 0.5, 0, 0], atol=1e-15)
        np.testing.assert_allclose(W[1], [1 / 3, 1 / 3, 1 / 3, 0], atol=1e-15)
    # local constant: the mean of the tied targets; local linear: the line (plane)
    # through the tied points, evaluated at the query
    expected = [5.0, 14.0 / 3.0] if reg_type == "lc" else [5.0, 5.0 - 0.5 * 0.75]
    np.testing.assert_allclose(preds[0], expected, rtol=1e-12)
    np.testing.assert_allclose(preds[1], expected, rtol=1e-12)


# --- point 3: the numerical contract ----------------------------------------------------

@pytest.mark.parametrize("kernel", available_kernels())
@pytest.mark.parametrize("reg_type", ["lc", "ll"])
def test_tiny_bandwidth_gives_nearest_neighbour_at_any_magnitude(kernel, reg_type):
    X, y, _ = _data()
    Xq = X[:5] + 1e-3
    for h in [1e-150, 1e-160, 1e-200, 1e-300]:
        reg = NadarayaWatsonRegressor(kernel, bandwidth=h, reg_type=reg_type)
        np.testing.assert_allclose(_quiet_fit_predict(reg, X, y, Xq), y[:5], rtol=1e-12)
    big = NadarayaWatsonRegressor(kernel, bandwidth=1e-100, reg_type=reg_type)  # X ~ 1e100, h ~ 1e-100
    np.testing.assert_allclose(_quiet_fit_predict(big, X * 1e100, y, Xq * 1e100), y[:5],
                               rtol=1e-12)
    logw = kernel_log_weights(Xq, X, kernel=kernel, bandwidth=1e-200)
    np.testing.assert_allclose(np.exp(logw), np.eye(len(X))[:5], atol=0)


def test_bandwidth_beyond_float64_range_is_a_clear_error():
    X, y, _ = _data()
    with pytest.raises(ValueError, match="overflows float64.*larger bandwidth"):
        NadarayaWatsonRegressor(bandwidth=1e-300).fit(X * 1e10, y)


_CASES = [(k, m, r, b) for k in available_kernels() for m in ["euclidean", "product"]
          for r, b in [("lc", 0.3), ("ll", 0.5), ("lc", "scott"), ("lc", "loo")]] \
    + [(k, "cosine", "lc", b) for k in ["gaussian", "epanechnikov", "laplacian"]
       for b in [0.3, "silverman", "loo"]] \
    + [("gaussian", "euclidean", "ll", "loo"), ("gaussian", "product", "lc", "loo-ard"),
       ("laplacian", "euclidean", "lc", "loo-ard"), ("gaussian", "cosine", "lc", "loo-ard")]


@pytest.mark.parametrize("kernel, metric, reg_type, bandwidth", _CASES)
def test_nadaraya_watson_numerical_contract(kernel, metric, reg_type, bandwidth):
    """Finite outputs, convex combinations, and invariance when X and h are rescaled."""
    X, y, Xq = _data(seed=1)
    labels = (y > np.median(y)).astype(int)
    preds, probas = [], []
    for a in SCALES:
        s = 1.0 if metric == "cosine" else a   # cosine is invariant to the scale of X
        h = bandwidth if isinstance(bandwidth, str) else bandwidth * s
        reg = NadarayaWatsonRegressor(kernel, bandwidth=h, metric=metric, reg_type=reg_type, on_empty="mean")
        preds.append(_quiet_fit_predict(reg, X * a, y, Xq * a))
        if reg_type == "lc":
            clf = NadarayaWatsonClassifier(kernel, bandwidth=h, metric=metric, on_empty="mean")
            probas.append(_quiet_fit_predict(clf, X * a, labels, Xq * a, proba=True))
    for p in preds + probas:
        assert np.all(np.isfinite(p))
    if reg_type == "lc":
        for p in preds:
            assert np.all(p >= y.min() - 1e-12) and np.all(p <= y.max() + 1e-12)
        for p in probas:
            np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=1e-12)
    assert _max_rel_change(preds) <= 1e-9
    if probas:
        assert _max_rel_change(probas) <= 1e-9


@pytest.mark.parametrize("bandwidth", ["scott", "silverman", "loo"])
def test_rule_of_thumb_is_scale_equivariant_with_a_constant_feature(bandwidth):
    X, y, Xq = _data(seed=7)
    X[:, 1] = 5.0                       # constant in training, not in the queries
    Xq[:, 1] = np.linspace(4.0, 6.0, len(Xq))
    preds, hs = [], []
    for a in SCALES:
        reg = NadarayaWatsonRegressor(bandwidth=bandwidth).fit(X * a, y)
        preds.append(reg.predict(Xq * a))
        hs.append(reg.bandwidth_ / a)
    assert _max_rel_change(preds) <= 1e-9
    np.testing.assert_allclose(hs, [hs[2]] * len(SCALES), rtol=1e-12)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("score_func", ["gaussian", "additive", "scaled_dot"])
def test_attention_regressor_numerical_contract(score_func):
    X, y, Xq = _data(seed=2)
    preds = [AttentionRegressor(score_func, max_iter=3, random_state=0)
             .fit(X * a, y).predict(Xq * a) for a in SCALES]
    assert all(np.all(np.isfinite(p)) for p in preds)
    assert _max_rel_change(preds) <= 1e-9


def test_sequence_attention_regressor_numerical_contract():
    rng = np.random.RandomState(3)
    X = rng.uniform(size=(24, 4, 2))
    y = X[:, :, 0].max(axis=1)
    make = lambda: SequenceAttentionRegressor(max_iter=2, d_model=8, n_heads=2,  # noqa: E731
                                              dim_feedforward=8, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning after 2 epochs
        preds = [make().fit(X * a, y).predict(X[:5] * a) for a in SCALES]
    assert all(np.all(np.isfinite(p)) for p in preds)
    assert _max_rel_change(preds) <= 1e-9


def test_attention_standardisation_is_relative_to_each_feature():
    X, y, _ = _data(seed=4)
    X = X * np.array([1e-20, 1.0])   # the first feature varies, at a tiny magnitude
    reg = AttentionRegressor(max_iter=1, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reg.fit(X, y)
    np.testing.assert_allclose(reg.X_scale_, X.std(axis=0), rtol=1e-12)
    const = np.column_stack([np.full(len(X), 3.0e-30), X[:, 1]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # a constant column is scaled by its magnitude (scale-equivariant), zeros by the
        # largest magnitude of the other columns, data zero everywhere by 1
        assert reg.fit(const, y).X_scale_[0] == 3.0e-30
        const[:, 0] = 0.0
        assert reg.fit(const, y).X_scale_[0] == np.abs(const[:, 1]).max()
        assert reg.fit(np.zeros_like(const), y).X_scale_[0] == 1.0


def test_numerical_contract_is_one_wording_in_every_numeric_estimator():
    def words(cls):
        text = re.sub(r"\s+", " ", cls.__doc__)
        return re.search(r"Numerical contract:.*?never a silent NaN, infinity or mean\.",
                         text).group(0)

    texts = {words(cls) for cls in [NadarayaWatsonRegressor, NadarayaWatsonClassifier,
                                     AttentionRegressor, SequenceAttentionRegressor]}
    assert len(texts) == 1


# --- point 4: working_memory changes rounding only ---------------------------------------

@pytest.mark.parametrize("reg_type, kernel, bound", [("lc", "gaussian", 1e-12),
                                                     ("lc", "epanechnikov", 1e-12),
                                                     ("ll", "gaussian", 1e-8)])
def test_working_memory_changes_results_by_rounding_only(reg_type, kernel, bound):
    rng = np.random.RandomState(5)
    X, Xq = rng.uniform(size=(300, 2)), rng.uniform(size=(150, 2))
    y = np.sin(3 * X.sum(axis=1)) + 1.5
    ref = NadarayaWatsonRegressor(kernel, bandwidth="loo", reg_type=reg_type, bandwidth_grid=8,
                                  on_empty="mean").fit(X, y)
    for wm in [0.005, 0.1, 64.0]:
        other = clone(ref).set_params(working_memory=wm).fit(X, y)
        np.testing.assert_allclose(other.predict(Xq), ref.predict(Xq), rtol=bound)
        if reg_type == "lc":
            np.testing.assert_allclose(other.loo_scores_, ref.loo_scores_, rtol=bound)
        else:  # ill-conditioned local fits at small grid bandwidths amplify rounding
            near = ref.loo_scores_ <= 10 * ref.loo_scores_.min()
            np.testing.assert_allclose(other.loo_scores_[near], ref.loo_scores_[near],
                                       rtol=0, atol=1e-8 * np.var(y))
        np.testing.assert_allclose(other.bandwidth_, ref.bandwidth_, rtol=0)


# --- point 5: clear errors --------------------------------------------------------------

def test_clear_errors_for_user_mistakes():
    X, y, _ = _data()
    with pytest.raises(ValueError, match=r"bandwidth_grid .*1 invalid value.*nan at grid row 1"):
        NadarayaWatsonRegressor(bandwidth="loo", bandwidth_grid=[0.1, np.nan, 0.3]).fit(X, y)
    with pytest.raises(ValueError, match=r"X must be 2-D .* got 1-D input of shape \(40,\)"):
        NadarayaWatsonRegressor(bandwidth=0.5).fit(X[:, 0], y)
    reg = NadarayaWatsonRegressor(bandwidth=0.5).fit(X, y)
    with pytest.raises(ValueError, match=r"X must be 2-D .*reshape\(1, -1\)"):
        reg.predict([0.1, 0.2])
    mixed = np.array([1, "a"] * 20, dtype=object)
    with pytest.raises(TypeError, match=r"mixes class labels of kinds \['number', 'str'\]"):
        NadarayaWatsonClassifier(bandwidth=0.5).fit(X, mixed)
    with pytest.raises(ValueError, match=r"X must be 2-D"):
        AttentionRegressor(max_iter=1).fit(X[:, 0], y)


@pytest.mark.parametrize("radius", [0.0, -1.0, np.inf, np.nan])
def test_compact_kernel_radius_must_be_positive(radius):
    from nlpfeat.kernels import register_kernel
    with pytest.raises(ValueError, match="radius must be a positive finite number"):
        register_kernel("zz_bad_radius", lambda u: np.where(u < 1, 1.0, 0.0), compact=True,
                        radius=radius)
    assert "zz_bad_radius" not in available_kernels()


@pytest.mark.parametrize("X", [[[[1.0], [2.0]], [[1.0]]], [[1.0, 2.0], [1.0]],
                               [np.ones((3, 2)), np.ones((2, 2))]])
def test_sequence_regressor_rejects_ragged_sequences_in_its_own_words(X):
    with pytest.raises(ValueError, match="sequences of different lengths.*Pad or truncate"):
        SequenceAttentionRegressor(max_iter=1).fit(X, [1.0, 2.0])


def test_kernel_parameter_accepts_what_get_kernel_accepts():
    class DuckKernel:  # has log_k and k, but is neither a Kernel nor callable
        def log_k(self, u):
            return -u

        def k(self, u):
            return np.exp(-u)

    X, y, _ = _data()
    with pytest.raises(ValueError, match="'kernel' parameter .* must be"):
        NadarayaWatsonRegressor(kernel=DuckKernel(), bandwidth=1.0).fit(X, y)


def test_local_linear_never_reaches_an_internal_linalg_error():
    X, y, Xq = _data()
    for h in [1e-200, 1e-120, 1e-8]:
        reg = NadarayaWatsonRegressor("tophat", bandwidth=h, reg_type="ll", on_empty="nearest")
        assert np.all(np.isfinite(_quiet_fit_predict(reg, X, y, Xq)))


def test_kernel_object_named_like_a_builtin_takes_the_generic_loo_path():
    """Dispatch is on Kernel.family: a user Kernel called "gaussian" is not the Gaussian."""
    X, y, _ = _data(seed=6)
    fake = Kernel("gaussian", lambda u: -u - np.log(2.0), dlog_k_du=lambda u: -np.ones_like(u))
    assert fake.family is None
    for bw in ["loo", "loo-ard"]:
        got = NadarayaWatsonRegressor(fake, bandwidth=bw).fit(X, y)
        ref = NadarayaWatsonRegressor("laplacian", bandwidth=bw).fit(X, y)
        np.testing.assert_allclose(got.loo_scores_, ref.loo_scores_, rtol=1e-10)
        np.testing.assert_allclose(got.bandwidth_, ref.bandwidth_, rtol=1e-6)
