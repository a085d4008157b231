"""The float64 fast path of input validation: same results and messages as scikit-learn's."""
import warnings

import numpy as np
import pytest

from nlpfeat import _validation
from nlpfeat.kernels import NadarayaWatsonClassifier, NadarayaWatsonRegressor


def _data(n=40, d=3, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(n, d))
    return X, X.sum(axis=1), rng.uniform(size=(7, d))


def test_plain_float64_input_skips_check_array(monkeypatch):
    X, y, Xq = _data()
    expected = NadarayaWatsonRegressor(bandwidth=0.5, engine="numpy").fit(X, y).predict(Xq)
    clf = NadarayaWatsonClassifier(bandwidth=0.5).fit(X, (y > 1.5).astype(int))
    proba = clf.predict_proba(Xq)

    def refuse(*args, **kwargs):
        raise AssertionError("the full validation ran")

    monkeypatch.setattr(_validation, "validate_data", refuse)
    for y_fit in [y, y[:, None]]:
        reg = NadarayaWatsonRegressor(bandwidth=0.5, engine="numpy").fit(X, y_fit)
        assert reg.n_features_in_ == 3
        np.testing.assert_array_equal(reg.predict(Xq).ravel(), expected)
    np.testing.assert_array_equal(clf.predict_proba(Xq), proba)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_input_gets_scikit_learns_message(bad):
    X, y, Xq = _data()
    reg = NadarayaWatsonRegressor(bandwidth=0.5).fit(X, y)
    Xq[2, 1] = bad
    with pytest.raises(ValueError, match="Input X contains (NaN|infinity)"):
        reg.predict(Xq)
    X[0, 0] = bad
    with pytest.raises(ValueError, match="Input X contains (NaN|infinity)"):
        NadarayaWatsonRegressor(bandwidth=0.5).fit(X, y)
    X[0, 0], y[3] = 0.5, bad
    with pytest.raises(ValueError, match="Input y contains (NaN|infinity)"):
        NadarayaWatsonRegressor(bandwidth=0.5).fit(X, y)


def test_wrong_number_of_features_or_rows_is_rejected():
    X, y, Xq = _data()
    reg = NadarayaWatsonRegressor(bandwidth=0.5).fit(X, y)
    with pytest.raises(ValueError, match="X has 2 features, but NadarayaWatsonRegressor is "
                                         "expecting 3 features"):
        reg.predict(Xq[:, :2])
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        NadarayaWatsonRegressor(bandwidth=0.5).fit(X, y[:-1])


def test_feature_names_are_kept_and_checked_as_scikit_learn_does():
    pd = pytest.importorskip("pandas")
    X, y, Xq = _data()
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    reg = NadarayaWatsonRegressor(bandwidth=0.5).fit(frame, y)
    assert list(reg.feature_names_in_) == ["a", "b", "c"]
    with pytest.warns(UserWarning, match="X does not have valid feature names"):
        reg.predict(Xq)
    reg.fit(X, y)                        # refitted on an ndarray: the names are dropped
    assert not hasattr(reg, "feature_names_in_")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reg.predict(Xq)
