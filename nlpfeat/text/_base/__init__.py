"""The text options every estimator shares: documents, tokenizers, analyzers, ``TextMixin``."""
