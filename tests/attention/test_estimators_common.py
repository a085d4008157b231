"""scikit-learn's estimator checks on the attention estimators (2-D mode), in full."""
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from nlpfeat.attention import AttentionRegressor, SequenceAttentionRegressor

# Small models and few epochs keep the ~50 checks per estimator fast; the checks exercise
# the API (clone, pickle, dtypes, shapes, errors, determinism), not the fit quality.
ESTIMATORS = [
    AttentionRegressor(max_iter=10, random_state=0),
    AttentionRegressor("additive", n_heads=2, d_k=4, max_iter=10, learning_rate=5e-2,
                       random_state=0),
    SequenceAttentionRegressor(n_layers=1, d_model=8, n_heads=2, dim_feedforward=16,
                               max_iter=10, learning_rate=3e-2, random_state=0),
]


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible(estimator, check):
    check(estimator)
