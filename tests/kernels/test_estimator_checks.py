"""scikit-learn's estimator checks, in full, for the Nadaraya-Watson estimators."""
from sklearn.utils.estimator_checks import parametrize_with_checks

from nlpfeat.kernels import NadarayaWatsonClassifier, NadarayaWatsonRegressor


@parametrize_with_checks(
    [
        NadarayaWatsonRegressor(),
        NadarayaWatsonRegressor(bandwidth="silverman", reg_type="ll"),
        NadarayaWatsonClassifier(),
        NadarayaWatsonClassifier(kernel="tricube", bandwidth=2.0, algorithm="tree"),
    ]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
