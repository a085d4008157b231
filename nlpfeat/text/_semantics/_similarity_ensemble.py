"""SimilarityEnsemble: the average of several models' z-scored cosine similarities.

Different representations (sparse TF-IDF, BM25, explicit semantic analysis, LSI, word
vectors) make different errors on a similarity benchmark; the mean of their similarities,
each standardised so that no model dominates by its spread, beats every member on Lee's
benchmark (``benchmarks/quality_lee.py``). The estimator takes *pairs* as samples, so that
``GridSearchCV`` can choose members and their settings on some rated pairs and score the
others: the protocol of the quality benchmarks. The numeric core is :func:`zscore_average`.
"""
from collections.abc import Iterator

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, clone
from sklearn.preprocessing import normalize

from nlpfeat._validation import check_is_fitted, fit_context
from nlpfeat.text._base._documents import check_not_bag

__all__ = ["SimilarityEnsemble", "zscore_average"]


def zscore_average(similarities, *, weights=None, reference=None):
    """Weighted mean of the rows of ``similarities``, each standardised first.

    Parameters
    ----------
    similarities : array-like of shape (n_models, n_pairs)
        One row of pair similarities per model.
    weights : array-like of shape (n_models,), default=None
        Non-negative weights (normalised to sum 1); None weighs the models equally.
    reference : array-like of int or bool, default=None
        The pairs whose mean and standard deviation standardise each row (e.g. the
        training pairs); None uses every pair. A model constant on them gets weight 0.

    Returns
    -------
    average : ndarray of shape (n_pairs,)

    Examples
    --------
    >>> from nlpfeat.text._semantics._similarity_ensemble import zscore_average
    >>> zscore_average([[0.1, 0.2, 0.3], [10.0, 30.0, 20.0]]).round(3)
    array([-1.225,  0.612,  0.612])
    """
    S = np.atleast_2d(np.asarray(similarities, dtype=np.float64))
    ref = S if reference is None else S[:, np.asarray(reference)]
    mean, scale = _moments(ref)
    w = _weights(weights, S.shape[0])
    return (w / scale) @ (S - mean[:, None]) if S.shape[0] else np.zeros(S.shape[1])


def _moments(S):
    """Mean and standard deviation of each row (an all-constant row gets scale inf)."""
    mean, scale = S.mean(axis=1), S.std(axis=1)
    return mean, np.where(scale > 0, scale, np.inf)


def _weights(weights, n_models):
    if weights is None:
        return np.full(n_models, 1.0 / max(n_models, 1))
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (n_models,) or not np.all(np.isfinite(w)) or w.min() < 0 or w.sum() == 0:
        raise ValueError(f"weights must be {n_models} non-negative finite numbers, not all "
                         f"zero (one per model that is not 'drop'); got {weights!r}.")
    return w / w.sum()


def _key(item):
    """A hashable stand-in for a document: a str as it is, a token list as a tuple."""
    return item if isinstance(item, (str, bytes)) else tuple(item)


def _pairs(X):
    """(distinct items in first-seen order, left indices, right indices) of a pair list."""
    check_not_bag(X, "SimilarityEnsemble")
    if isinstance(X, (str, bytes)) or isinstance(X, Iterator):
        raise TypeError("SimilarityEnsemble takes a sequence of (document, document) pairs, "
                        f"not {type(X).__name__}; pass a list of 2-tuples.")
    pairs = list(X)
    if not pairs or any(isinstance(p, (str, bytes)) or len(p) != 2 for p in pairs):
        raise ValueError("SimilarityEnsemble takes a non-empty sequence of pairs, each a "
                         "(document, document) 2-tuple; e.g. [('a cat', 'a dog'), ...].")
    index, items = {}, []
    for a, b in pairs:
        for item in (a, b):
            if _key(item) not in index:
                index[_key(item)] = len(items)
                items.append(list(item) if isinstance(item, tuple) else item)
    left = np.fromiter((index[_key(a)] for a, _ in pairs), dtype=np.intp, count=len(pairs))
    right = np.fromiter((index[_key(b)] for _, b in pairs), dtype=np.intp, count=len(pairs))
    return items, left, right


def _unit_rows(model, items):
    Z = model.transform(items)
    return normalize(sp.csr_matrix(Z, dtype=np.float64) if sp.issparse(Z)
                     else np.asarray(Z, dtype=np.float64))


def _pair_cosines(Z, left, right):
    if sp.issparse(Z):
        return np.asarray(Z[left].multiply(Z[right]).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", Z[left], Z[right])


class SimilarityEnsemble(BaseEstimator):
    """Average several models' z-scored cosine similarities of document (or word) pairs.

    Each member maps documents to vectors (any transformer or Pipeline: TF-IDF, BM25,
    :class:`ExplicitSemanticAnalysis`, LSI, pooled word vectors); the similarity of a
    pair under a member is the cosine of its two vectors. ``fit`` fits every member on
    ``corpus`` and learns each member's mean and standard deviation of similarity over the
    training pairs; ``predict`` returns the weighted mean of the standardised similarities
    and ``score`` its Pearson correlation with human ratings. Pairs are the samples, so
    ``GridSearchCV`` selects members (``"drop"`` removes one) and their parameters
    (``"esa__topn"``) on some rated pairs and scores the others.

    Parameters
    ----------
    models : list of (str, estimator or "drop")
        The members, each with ``fit`` and ``transform``. A word is a one-token document:
        with ``PMIEmbedding(input="tokens")`` members, pairs of ``[word]`` lists compare
        word vectors.
    weights : list of float or None, default=None
        One non-negative weight per member that is not ``"drop"``; None: equal weights.
    corpus : sequence of documents or None, default=None
        What the members are fitted on (e.g. Lee's background articles, or the text of a
        word-similarity study). None: the distinct documents of the training pairs (the
        members never see the ratings either way). It must be a sequence: a one-shot
        iterator would be spent by the first fit.

    Attributes
    ----------
    models_ : list of (str, estimator)
        The fitted members (``"drop"`` left out).
    weights_ : ndarray of shape (n_models,)
        The members' weights, summing to 1.
    mean_ : ndarray of shape (n_models,)
        Each member's mean similarity over the training pairs.
    scale_ : ndarray of shape (n_models,)
        Each member's standard deviation over the training pairs (inf for a member
        constant on them, which then counts 0).

    See Also
    --------
    zscore_average : The numeric core, for similarities computed once.
    ExplicitSemanticAnalysis : A strong member.

    Notes
    -----
    For pair :math:`(a, b)` and members :math:`m` with weights :math:`w_m` (summing to 1),
    :math:`s(a, b) = \\sum_m w_m (\\cos_m(a, b) - \\mu_m) / \\sigma_m`. With one member
    the ranking of pairs is that member's. On Lee's benchmark, log-entropy vectors and
    two ESA models (TF-IDF and log-entropy concepts, ``topn=100``) averaged this way
    correlate 0.709 with people over all pairs, every member alone at most 0.664; with
    the members chosen on half of the pairs and scored on the other half, 0.698
    (``benchmarks/quality_lee.py``).

    Examples
    --------
    >>> from nlpfeat.text import (ExplicitSemanticAnalysis, SimilarityEnsemble,
    ...                           TfidfVectorizer)
    >>> corpus = ["the cat and the dog are pets", "a dog chased a cat",
    ...           "stocks and bonds are investments", "bonds pay interest"]
    >>> pairs = [("my cat", "my dog"), ("my cat", "stock prices"),
    ...          ("bonds", "stocks and bonds")]
    >>> ens = SimilarityEnsemble([("tfidf", TfidfVectorizer()),
    ...                           ("esa", ExplicitSemanticAnalysis(topn=2))], corpus=corpus)
    >>> ens.fit(pairs).predict(pairs).round(2)
    array([ 0.08, -1.05,  0.97])
    >>> ens.set_params(esa__topn=1).get_params()["esa__topn"]
    1
    """

    _parameter_constraints = {
        "models": [list],
        "weights": ["array-like", None],
        "corpus": "no_validation",           # checked in fit: a sequence, not an iterator
    }

    def __init__(self, models, *, weights=None, corpus=None):
        self.models = models
        self.weights = weights
        self.corpus = corpus

    # ---- parameters: the members and theirs, as in scikit-learn's FeatureUnion ----------
    def get_params(self, deep=True):
        params = super().get_params(deep=False)
        if not deep:
            return params
        for name, model in self.models:
            params[name] = model
            if hasattr(model, "get_params"):
                params.update({f"{name}__{key}": value
                               for key, value in model.get_params(deep=True).items()})
        return params

    def set_params(self, **params):
        if "models" in params:
            self.models = params.pop("models")
        names = [name for name, _ in self.models]
        for name in [key for key in params if key in names]:
            self.models = [(n, params.pop(name) if n == name else m) for n, m in self.models]
        nested = {}
        for key in [key for key in params if "__" in key]:
            name, sub = key.split("__", 1)
            if name in names:
                nested.setdefault(name, {})[sub] = params.pop(key)
        for name, sub in nested.items():
            dict(self.models)[name].set_params(**sub)
        return super().set_params(**params)

    def _members(self):
        names = [name for name, _ in self.models] if all(
            isinstance(m, tuple) and len(m) == 2 for m in self.models) else None
        if not self.models or names is None:
            raise ValueError("models must be a non-empty list of (name, estimator) tuples; "
                             f"got {self.models!r}.")
        if len(set(names)) != len(names) or any("__" in n for n in names):
            raise ValueError(f"model names must be unique and contain no '__'; got {names}.")
        members = [(n, m) for n, m in self.models if not (isinstance(m, str) and m == "drop")]
        bad = [n for n, m in members if not (hasattr(m, "fit") and hasattr(m, "transform"))]
        if bad or not members:
            raise ValueError(f"every model needs fit and transform (or is 'drop'), and at "
                             f"least one must remain; check {bad or names}.")
        return members

    # ---- fitting and scoring ------------------------------------------------------------
    @fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None):
        """Fit the members on ``corpus`` and standardise them on the pairs ``X``.

        Parameters
        ----------
        X : sequence of (document, document)
            Training pairs (strings, or token lists for members with ``input="tokens"``).
        y : None
            Ignored: no member sees the ratings.

        Returns
        -------
        self : SimilarityEnsemble
        """
        members = self._members()
        if isinstance(self.corpus, Iterator):
            raise TypeError("corpus must be a sequence (list) of documents, not a one-shot "
                            "iterator: every fit (e.g. each GridSearchCV split) reads it.")
        items, left, right = _pairs(X)
        corpus = items if self.corpus is None else self.corpus
        self.models_ = [(name, clone(model).fit(corpus)) for name, model in members]
        self.weights_ = _weights(self.weights, len(members))
        self.mean_, self.scale_ = _moments(self._member_similarities(items, left, right))
        return self

    def _member_similarities(self, items, left, right):
        """(n_models, n_pairs) cosine similarity of each pair under each member."""
        return np.vstack([_pair_cosines(_unit_rows(model, items), left, right)
                          for _, model in self.models_])

    def _combine(self, S):
        return (self.weights_ / self.scale_) @ (S - self.mean_[:, None])

    def predict(self, X):
        """Ensemble similarity of each pair (a weighted mean of z-scores).

        Parameters
        ----------
        X : sequence of (document, document)

        Returns
        -------
        similarity : ndarray of shape (n_pairs,)
        """
        check_is_fitted(self, "models_")
        return self._combine(self._member_similarities(*_pairs(X)))

    def similarity(self, A, B=None):
        """Ensemble similarity of every document of ``A`` with every document of ``B``.

        Parameters
        ----------
        A : sequence of documents
        B : sequence of documents, default=None
            None compares ``A`` with itself.

        Returns
        -------
        similarity : ndarray of shape (len(A), len(B))
        """
        check_is_fitted(self, "models_")
        A = list(A)
        B = A if B is None else list(B)
        out = 0.0
        for (_, model), w, mean, scale in zip(self.models_, self.weights_, self.mean_,
                                              self.scale_):
            Za, Zb = _unit_rows(model, A), _unit_rows(model, B)
            S = Za @ Zb.T
            S = S.toarray() if sp.issparse(S) else np.asarray(S)
            out = out + w * (S - mean) / scale
        return np.asarray(out, dtype=np.float64)

    def score(self, X, y):
        """Pearson correlation of ``predict(X)`` with the ratings ``y`` (higher is better).

        Parameters
        ----------
        X : sequence of (document, document)
        y : array-like of shape (n_pairs,)

        Returns
        -------
        r : float
        """
        y = np.asarray(y, dtype=np.float64)
        pred = self.predict(X)
        if y.shape != pred.shape:
            raise ValueError(f"y has shape {y.shape}; expected one rating per pair, "
                             f"{pred.shape}.")
        if pred.std() == 0 or y.std() == 0:
            raise ValueError("Pearson correlation is undefined: the predictions or the "
                             "ratings are constant over these pairs.")
        return float(np.corrcoef(pred, y)[0, 1])
