"""The convex-hull statements of docs/concepts.rst, for Nadaraya-Watson, checked on numbers.

Local constant predictions are weighted means with non-negative weights summing to one, so
they lie in [min y, max y]; local linear fits extrapolate a trend and leave that range; the
SVM "sigmoid" kernel tanh(a <x, y> + c) is no smoothing kernel: its weights can be negative
and its weighted mean leaves the range too.
"""
import numpy as np
import pytest

from nlpfeat.kernels import NadarayaWatsonRegressor, get_kernel


@pytest.mark.filterwarnings("ignore::nlpfeat.kernels.EmptySupportWarning")  # far queries
@pytest.mark.parametrize("kernel", ["gaussian", "epanechnikov", "laplacian", "sigmoid"])
@pytest.mark.parametrize("seed", range(3))
def test_local_constant_predictions_lie_in_the_range_of_the_targets(kernel, seed):
    rng = np.random.default_rng(seed)
    X, y = rng.uniform(0, 1, size=(30, 1)), rng.normal(size=30)
    queries = np.linspace(-2.0, 3.0, 101)[:, None]         # far outside the data too
    pred = NadarayaWatsonRegressor(kernel, bandwidth=0.4, reg_type="lc").fit(X, y).predict(
        queries)
    assert pred.min() >= y.min() - 1e-12 and pred.max() <= y.max() + 1e-12


def test_local_linear_predictions_leave_the_range_of_the_targets():
    X = np.linspace(0.0, 1.0, 20)[:, None]
    y = 2.0 * X[:, 0]                                      # targets in [0, 2]
    ll = NadarayaWatsonRegressor(bandwidth=0.3, reg_type="ll").fit(X, y)
    np.testing.assert_allclose(ll.predict([[1.5], [-0.5]]), [3.0, -1.0], rtol=1e-9)
    lc = NadarayaWatsonRegressor(bandwidth=0.3, reg_type="lc").fit(X, y)
    assert 1.5 < lc.predict([[1.5]])[0] <= 2.0             # the local constant stays inside


def test_the_svm_sigmoid_kernel_cannot_weight_a_mean():
    """tanh(a <x, x_i> + c) takes negative values: its normalised weights put the mean far
    outside the targets' range; the registry's "sigmoid" (sech density) keeps it inside."""
    X = np.array([-1.0, 0.0, 0.5, 1.0, 2.0])
    y = np.array([1.0, 0.0, 0.0, 0.0, 0.0])
    query = 0.4
    w = np.tanh(1.0 * query * X + 0.3)                     # the SVM kernel, a = 1, c = 0.3
    assert (w < 0).any()
    svm_mean = w @ y / w.sum()
    assert not y.min() <= svm_mean <= y.max()
    sech = get_kernel("sigmoid").k(np.abs(query - X))
    assert y.min() <= sech @ y / sech.sum() <= y.max()
    with pytest.raises(ValueError, match="non-negative"):
        get_kernel(lambda u: np.tanh(1.0 - u))            # negative beyond u = 1: refused
