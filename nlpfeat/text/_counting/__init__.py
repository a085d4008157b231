"""The counting engine: vocabulary, term / pair / n-gram counts, token tables and merges.

No estimator and no scikit-learn here: the estimators of the other wings call these.
"""
