"""nlpfeat: classical NLP features and kernel regression as scikit-learn estimators."""
__version__ = "0.1.0"
