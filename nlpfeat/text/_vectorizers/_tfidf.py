"""TF-IDF and its relatives (SMART schemes, Okapi BM25, log-entropy) as one text vectorizer:
counting (``CountingVectorizerMixin``) followed by :class:`TermWeighting`."""
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.exceptions import NotFittedError

from nlpfeat._docstrings import fill_doc
from nlpfeat._params import estimator_params
from nlpfeat._validation import check_is_fitted
from nlpfeat.text._base._analyzer import warn_user
from nlpfeat.text._counting._vocabulary import terms_in_column_order
from nlpfeat.text._vectorizers._bow import (
    COUNTING_PARAMETER_CONSTRAINTS,
    N_JOBS_CONSTRAINT,
    CountingVectorizerMixin,
)
from nlpfeat.text._vectorizers._term_weighting import (
    WEIGHTING_PARAMETER_CONSTRAINTS,
    TermWeighting,
)

__all__ = ["TfidfVectorizer"]


@fill_doc
@estimator_params
class TfidfVectorizer(CountingVectorizerMixin, TransformerMixin, BaseEstimator,
                      auto_wrap_output_keys=None):
    """Convert documents to a sparse matrix of TF-IDF (or SMART, BM25, log-entropy) weights.

    Counting as :class:`BagOfWords`, then weighting as :class:`TermWeighting`, as
    scikit-learn's ``TfidfVectorizer`` is ``CountVectorizer`` then ``TfidfTransformer``.
    With default settings the output equals scikit-learn's ``TfidfVectorizer``; ``smartirs``
    reproduces gensim's ``TfidfModel(smartirs=...)``, ``weighting="bm25"`` gensim's
    ``OkapiBM25Model`` (with ``norm=None``) and ``weighting="logentropy"`` gensim's
    ``LogEntropyModel``. All text options of :class:`BagOfWords` apply.

    Parameters
    ----------
    input, encoding, decode_error, lowercase, tokenizer, token_pattern, stemmer, stop_words, \
ngram_range, analyzer, strip_accents, preprocessor, binary, min_df, max_df, max_features, \
vocabulary, working_memory, n_jobs, verbose
        As in :class:`BagOfWords` (``binary=True`` uses presence as the term frequency).
    dtype : {np.float64, np.float32}, default=np.float64
        Type of the returned matrix and of ``idf_`` (weights are computed in float64). An
        integer dtype would truncate the weights: it warns and float64 is used, as in
        scikit-learn.
    weighting, norm, use_idf, smooth_idf, sublinear_tf, smartirs, k1, b, epsilon, pivot, slope
        As in :class:`TermWeighting`, which this vectorizer applies to its counts (the
        pivot of SMART normalisation ``u``/``b`` is learned from the training corpus, with
        the terms' characters for ``b``).

    Attributes
    ----------
    vocabulary_ : dict
        Term -> column index.
    %(fixed_vocabulary_attribute)s
    idf_ : ndarray of shape (n_terms,)
        The global weight of each term (idf, SMART global weight, BM25 idf or log-entropy
        weight; ones when ``use_idf=False``), in ``dtype`` when it is a float type. With
        scikit-learn's weighting it may be set (as in scikit-learn) on an estimator with a
        fixed ``vocabulary``, which then transforms without ``fit``. With
        ``smooth_idf=False`` a ``vocabulary`` term that no training document holds gets
        scikit-learn's idf, ``inf``: ``fit`` warns and ``transform`` raises a ValueError
        naming the term for a document that holds it.
    pivot_ : float or None
        The pivot used with ``smartirs`` (None when rows are not pivot-normalised).
    avgdl_ : float
        Mean document length in tokens of the vocabulary (``weighting="bm25"`` only).
    weighting_ : TermWeighting
        The fitted weighting of the counts, which holds the global weights.

    See Also
    --------
    TermWeighting : The weighting alone, for counts from any source.

    Notes
    -----
    ``fit``, ``partial_fit`` and ``transform`` stream their corpus as :class:`BagOfWords`
    does (see its Notes): the global weights are computed from per-term sums (document
    frequencies, occurrences and, for log-entropy, ``sum tf ln tf``), so ``fit`` equals
    ``partial_fit`` over any split of the corpus, bit for bit except the log-entropy
    weights, whose float sums may differ in the last bits.

    Parameters that the chosen weighting does not use (``sublinear_tf`` with
    ``weighting="bm25"``, ``k1`` with ``weighting="tfidf"``, ``norm`` with ``smartirs``, ...)
    warn at ``fit`` when set to a value other than their default. The output is sparse and,
    as in scikit-learn, ``set_output`` is not offered.

    The weightings' formulas are in the Notes of :class:`TermWeighting`.

    Examples
    --------
    >>> from nlpfeat.text import TfidfVectorizer
    >>> docs = ["the cat sat", "the dog sat", "the cat ran"]
    >>> tfidf = TfidfVectorizer().fit(docs)
    >>> tfidf.get_feature_names_out().tolist()
    ['cat', 'dog', 'ran', 'sat', 'the']
    >>> tfidf.idf_.round(3)
    array([1.288, 1.693, 1.693, 1.288, 1.   ])
    >>> tfidf.transform(["the cat"]).toarray().round(3)
    array([[0.79 , 0.   , 0.   , 0.   , 0.613]])
    >>> TfidfVectorizer(smartirs="nfc").fit_transform(docs).toarray().round(3)[0]
    array([0.707, 0.   , 0.   , 0.707, 0.   ])
    """

    _parameter_constraints = {
        **COUNTING_PARAMETER_CONSTRAINTS,
        **WEIGHTING_PARAMETER_CONSTRAINTS,
        **N_JOBS_CONSTRAINT,
    }
    _count_dtype = np.float64

    dtype: Any = np.float64  # overrides the shared default
    norm: Any = "l2"  # overrides the shared default
    use_idf: Any = True
    smooth_idf: Any = True
    sublinear_tf: Any = False
    smartirs: Any = None
    weighting: Any = "tfidf"
    k1: Any = 1.5
    b: Any = 0.75
    epsilon: Any = 0.25
    pivot: Any = None
    slope: Any = 0.25
    n_jobs: Any = None

    def _check_params_at_fit(self):
        super()._check_params_at_fit()
        self._new_weighting()._check_params()
        self._output_dtype(warn=True)

    def _new_weighting(self):
        """The unfitted :class:`TermWeighting` of this vectorizer's weighting parameters."""
        return TermWeighting(**{name: getattr(self, name)
                                for name in TermWeighting._get_param_names()})

    def _output_dtype(self, warn=False):
        """``dtype`` if it is a float type; float64 otherwise (with a warning at ``fit``)."""
        try:
            dtype = np.dtype(self.dtype)
        except TypeError:
            raise ValueError(
                f"dtype={self.dtype!r} is not a numpy dtype; use np.float64 or np.float32."
            ) from None
        if np.issubdtype(dtype, np.floating):
            return dtype
        if warn:
            warn_user(
                f"TfidfVectorizer returns floating-point weights and dtype={dtype.name} would "
                f"truncate them; only a floating-point 'dtype' should be used. np.float64 is "
                f"used instead."
            )
        return np.dtype(np.float64)

    @property
    def idf_(self):
        try:
            weighting = self.weighting_
        except AttributeError:
            # scikit-learn's error; it is also an AttributeError, so hasattr is False
            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet: it has no idf_. "
                f"Call 'fit' first (or set idf_ with a fixed vocabulary)."
            ) from None
        return weighting.idf_.astype(self._output_dtype(), copy=False)

    @idf_.setter
    def idf_(self, value):
        weighting = self._new_weighting()
        weighting.idf_ = value           # checks that the weighting takes a set idf_
        vocabulary = self._fitted_vocabulary()
        if weighting.idf_.shape != (len(vocabulary),):
            raise ValueError(
                f"idf_ must be a 1-d array with one value per vocabulary term "
                f"({len(vocabulary)}); got shape {weighting.idf_.shape}."
            )
        self.weighting_ = weighting

    @property
    def pivot_(self):
        return self._fitted_weighting_attribute("pivot_")

    @property
    def avgdl_(self):
        return self._fitted_weighting_attribute("avgdl_")

    def _fitted_weighting_attribute(self, name):
        try:
            return getattr(self.weighting_, name)
        except AttributeError:
            raise AttributeError(
                f"{type(self).__name__!r} object has no attribute {name!r}"
            ) from None

    def _needs_xlogx(self):
        return self.weighting == "logentropy"

    def _check_fitted(self):
        check_is_fitted(self, "idf_")

    def _fit_weights(self, partial=False):
        """Fit ``weighting_`` on the statistics of the fitted columns."""
        weighting = self._new_weighting()
        lengths = None
        if weighting._smart_norm() == "b":
            terms = terms_in_column_order(self.vocabulary_)
            lengths = np.fromiter(map(len, terms), dtype=np.float64, count=len(terms))
        self.weighting_ = weighting._fit_statistics(*self._column_statistics(),
                                                    term_lengths=lengths, names=self._terms,
                                                    partial=partial)

    def _terms(self):
        """The terms in column order (for messages that name them)."""
        return terms_in_column_order(self.vocabulary_)

    def _finish(self, counts):
        """Weigh a fresh float64 count matrix in place; cast to the output dtype."""
        weights = self.weighting_._transform_in_place(counts, names=self._terms)
        return weights.astype(self._output_dtype(), copy=False)
