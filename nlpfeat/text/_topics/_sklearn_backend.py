"""scikit-learn backend of :class:`~nlpfeat.text.TopicModel`.

``method="lda"`` wraps ``LatentDirichletAllocation`` (batch variational Bayes), ``"nmf"``
wraps ``NMF`` and ``"lsi"`` wraps ``TruncatedSVD`` (randomized). Every backend object has
the same small interface: ``fit(X)``, ``components_``, ``transform(X)`` and, for LDA,
``perplexity(X)``; ``X`` is a CSR float64 document-term matrix.
"""
from sklearn.decomposition import NMF, LatentDirichletAllocation, TruncatedSVD

__all__ = ["SklearnTopicBackend"]


class SklearnTopicBackend:
    """Fit one scikit-learn decomposition with TopicModel's parameter names.

    Parameter mapping: ``n_topics`` -> ``n_components``; ``max_iter`` -> ``max_iter``
    (LDA, NMF) or ``n_iter`` (TruncatedSVD power iterations); ``alpha`` ->
    ``doc_topic_prior``; ``eta`` -> ``topic_word_prior``; ``None`` keeps scikit-learn's
    default (LDA 10 epochs, priors 1 / n_topics; NMF 200 iterations; SVD 5 iterations).
    """

    def __init__(self, method, n_topics, *, max_iter, alpha, eta, random_state, params):
        self.method = method
        kwargs = {"n_components": n_topics, "random_state": random_state}
        if method == "lda":
            kwargs.update(doc_topic_prior=alpha, topic_word_prior=eta, learning_method="batch")
            if max_iter is not None:
                kwargs["max_iter"] = max_iter
            cls = LatentDirichletAllocation
        elif method == "nmf":
            cls = NMF
            if max_iter is not None:
                kwargs["max_iter"] = max_iter
        else:
            cls = TruncatedSVD
            if max_iter is not None:
                kwargs["n_iter"] = max_iter
        kwargs.update(params)
        self.model = cls(**kwargs)

    def fit(self, X, verbose=0):
        """Fit on the CSR matrix ``X`` (``verbose`` is not passed on: scikit-learn's
        decompositions print their progress to stdout, which is the user's output)."""
        self.model.fit(X)
        self.n_iter_ = getattr(self.model, "n_iter_", getattr(self.model, "n_iter", 1))
        return self

    @property
    def components_(self):
        return self.model.components_

    @property
    def singular_values_(self):
        return self.model.singular_values_

    def transform(self, X):
        return self.model.transform(X)

    def perplexity(self, X):
        return float(self.model.perplexity(X))
