"""TF-IDF and its relatives (SMART schemes, Okapi BM25, log-entropy) as one text vectorizer."""
import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

from nlpfeat._validation import Interval, Real, StrOptions, check_is_fitted, fit_context
from nlpfeat.text._analyzer import warn_unused, warn_user
from nlpfeat.text._bow import COUNTING_PARAMETER_CONSTRAINTS, CountingVectorizerMixin
from nlpfeat.text._dask import is_dask_bag, transform_bag
from nlpfeat.text._vocabulary import terms_in_column_order
from nlpfeat.text._weighting import (
    bm25_idf,
    bm25_weights,
    log_entropy_from_sums,
    normalize_rows,
    pivoted_normalize,
    resolve_smartirs,
    row_of_entries,
    sklearn_idf,
    smart_global,
    smart_local,
)

__all__ = ["TfidfVectorizer"]


class TfidfVectorizer(CountingVectorizerMixin, TransformerMixin, BaseEstimator,
                      auto_wrap_output_keys=None):
    r"""Convert documents to a sparse matrix of TF-IDF (or SMART, BM25, log-entropy) weights.

    With default settings the output equals scikit-learn's ``TfidfVectorizer``; ``smartirs``
    reproduces gensim's ``TfidfModel(smartirs=...)``, ``weighting="bm25"`` gensim's
    ``OkapiBM25Model`` (with ``norm=None``) and ``weighting="logentropy"`` gensim's
    ``LogEntropyModel``. All text options of :class:`BagOfWords` apply.

    Parameters
    ----------
    input, encoding, decode_error, strip_accents, lowercase, preprocessor, tokenizer, token_pattern, stemmer, stop_words, ngram_range, analyzer, binary, min_df, max_df, max_features, vocabulary, working_memory
        As in :class:`BagOfWords` (``binary=True`` uses presence as the term frequency).
    dtype : {np.float64, np.float32}, default=np.float64
        Type of the returned matrix and of ``idf_`` (weights are computed in float64). An
        integer dtype would truncate the weights: it warns and float64 is used, as in
        scikit-learn.
    norm : {"l1", "l2"} or None, default="l2"
        Row normalisation after weighting (unused when ``smartirs`` is set: its third letter
        decides, and a ``norm`` other than the default warns).
    use_idf, smooth_idf, sublinear_tf : bool, default=True, True, False
        scikit-learn's options for ``weighting="tfidf"`` without ``smartirs``.
    smartirs : str or None, default=None
        gensim's SMART triple (local, global, normalisation letters), e.g. ``"ntc"``, ``"ltc"``,
        ``"Lpc"``. Local: ``b`` binary, ``n``/``t`` raw, ``a`` augmented, ``l`` logarithm,
        ``d`` double logarithm, ``L`` log average; global: ``n``/``x`` none, ``f`` idf, ``t``
        zero-corrected idf, ``p`` probabilistic idf; normalisation: ``n``/``x`` none, ``c``
        cosine, ``u`` pivoted unique, ``b`` pivoted character length (logarithms base 2).
    weighting : {"tfidf", "bm25", "logentropy"}, default="tfidf"
        The weighting scheme.
    k1, b, epsilon : float, default=1.5, 0.75, 0.25
        Okapi BM25 parameters (gensim's meaning; ``epsilon`` floors negative idfs).
    pivot : float >= 0 or None, default=None
        Pivot of pivoted length normalisation for ``smartirs`` (gensim's meaning): rows are
        divided by ``(1 - slope) * pivot + slope * old_norm``. ``None`` with normalisation
        ``u`` or ``b`` learns it from the training corpus, as gensim does; ``pivot=0`` with
        ``slope=1`` is plain normalisation by ``old_norm``.
    slope : float in [0, 1], default=0.25
        Slope of pivoted normalisation.

    Attributes
    ----------
    vocabulary_ : dict
        Term -> column index.
    fixed_vocabulary_ : bool
    idf_ : ndarray of shape (n_terms,)
        The global weight of each term (idf, SMART global weight, BM25 idf or log-entropy
        weight; ones when ``use_idf=False``), in ``dtype`` when it is a float type. With
        scikit-learn's weighting it may be set (as in scikit-learn) on an estimator with a
        fixed ``vocabulary``, which then transforms without ``fit``.
    pivot_ : float or None
        The pivot used with ``smartirs`` (None when rows are not pivot-normalised).
    avgdl_ : float
        Mean document length in tokens of the vocabulary (``weighting="bm25"`` only).

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

    scikit-learn's weighting (the default): :math:`w_{td} = tf_{td} \cdot idf_t`,
    :math:`idf_t = \ln\frac{1 + n}{1 + df_t} + 1`, then each row is scaled to unit L2 norm.
    Okapi BM25: :math:`w_{td} = idf_t \frac{tf_{td}(k_1 + 1)}{tf_{td} + k_1(1 - b + b|d|/avgdl)}`
    with :math:`idf_t = \ln(n - df_t + 0.5) - \ln(df_t + 0.5)`. Log-entropy:
    :math:`w_{td} = \ln(1 + tf_{td})\,(1 + \sum_j p_{tj}\ln p_{tj} / \ln(n + 1))`,
    :math:`p_{tj} = tf_{tj}/\sum_j tf_{tj}`.

    References
    ----------
    .. [1] Salton, G. and Buckley, C. (1988). Term-weighting approaches in automatic text
       retrieval. *Information Processing & Management*, 24(5), 513-523.
    .. [2] Singhal, A., Buckley, C. and Mitra, M. (1996). Pivoted document length
       normalization. *SIGIR*.
    .. [3] Robertson, S. E. et al. (1995). Okapi at TREC-3. *NIST Special Publication 500-226*.

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
        "norm": [StrOptions({"l1", "l2"}), None],
        "use_idf": ["boolean"],
        "smooth_idf": ["boolean"],
        "sublinear_tf": ["boolean"],
        "smartirs": [str, None],
        "weighting": [StrOptions({"tfidf", "bm25", "logentropy"})],
        "k1": [Interval(Real, 0, None, closed="left")],
        "b": [Interval(Real, 0, 1, closed="both")],
        "epsilon": [Interval(Real, 0, None, closed="left")],
        "pivot": [Interval(Real, 0, None, closed="left"), None],
        "slope": [Interval(Real, 0, 1, closed="both")],
    }

    def __init__(
        self,
        *,
        input="content",
        encoding="utf-8",
        decode_error="strict",
        strip_accents=None,
        lowercase=True,
        preprocessor=None,
        tokenizer="regexp",
        token_pattern=None,
        stemmer=None,
        stop_words=None,
        ngram_range=(1, 1),
        analyzer="word",
        binary=False,
        dtype=np.float64,
        norm="l2",
        use_idf=True,
        smooth_idf=True,
        sublinear_tf=False,
        smartirs=None,
        weighting="tfidf",
        k1=1.5,
        b=0.75,
        epsilon=0.25,
        pivot=None,
        slope=0.25,
        min_df=1,
        max_df=1.0,
        max_features=None,
        vocabulary=None,
        working_memory=None,
    ):
        self.input = input
        self.encoding = encoding
        self.decode_error = decode_error
        self.strip_accents = strip_accents
        self.lowercase = lowercase
        self.preprocessor = preprocessor
        self.tokenizer = tokenizer
        self.token_pattern = token_pattern
        self.stemmer = stemmer
        self.stop_words = stop_words
        self.ngram_range = ngram_range
        self.analyzer = analyzer
        self.binary = binary
        self.dtype = dtype
        self.norm = norm
        self.use_idf = use_idf
        self.smooth_idf = smooth_idf
        self.sublinear_tf = sublinear_tf
        self.smartirs = smartirs
        self.weighting = weighting
        self.k1 = k1
        self.b = b
        self.epsilon = epsilon
        self.pivot = pivot
        self.slope = slope
        self.min_df = min_df
        self.max_df = max_df
        self.max_features = max_features
        self.vocabulary = vocabulary
        self.working_memory = working_memory

    def _check_params_at_fit(self):
        super()._check_params_at_fit()
        if self.smartirs is not None:
            scheme = resolve_smartirs(self.smartirs)
            if self.weighting != "tfidf":
                raise ValueError(
                    f"smartirs={self.smartirs!r} defines a tf-idf scheme and cannot be combined "
                    f"with weighting={self.weighting!r}; set smartirs=None or weighting='tfidf'."
                )
            pivoted = self.pivot is not None or scheme[2] in "ub"
            if pivoted and self.pivot == 0 and self.slope == 0:
                raise ValueError(
                    "pivot=0 with slope=0 divides every row by 0; set slope > 0 or pivot > 0."
                )
        elif self.pivot is not None:
            raise ValueError(
                f"pivot={self.pivot!r} applies to SMART weighting only; set smartirs (e.g. 'ntc') "
                f"or pivot=None."
            )
        for name, reason in self._unused_weighting_params():
            warn_unused(name, reason)
        self._output_dtype(warn=True)

    def _unused_weighting_params(self):
        """(parameter, reason) for each weighting option set to a value the weighting ignores."""
        if self.smartirs is not None:
            scheme = resolve_smartirs(self.smartirs)
            reason = f"smartirs={self.smartirs!r} is set (the SMART letters decide)"
            set_here = [("norm", self.norm != "l2"), ("use_idf", not self.use_idf),
                        ("smooth_idf", not self.smooth_idf), ("sublinear_tf", self.sublinear_tf)]
            if self.pivot is None and scheme[2] in "nc":
                set_here.append(("slope", self.slope != 0.25))
        elif self.weighting != "tfidf":
            reason = f"weighting={self.weighting!r} is not 'tfidf'"
            set_here = [("use_idf", not self.use_idf), ("smooth_idf", not self.smooth_idf),
                        ("sublinear_tf", self.sublinear_tf), ("slope", self.slope != 0.25)]
        else:
            reason = "smartirs is None (pivoted normalisation is SMART's)"
            set_here = [("slope", self.slope != 0.25)]
            if not self.use_idf:
                set_here.append(("smooth_idf", not self.smooth_idf))
        unused = [(name, reason) for name, is_set in set_here if is_set]
        if self.weighting != "bm25":
            unused += [(name, f"weighting={self.weighting!r} is not 'bm25'")
                       for name, value, default in (("k1", self.k1, 1.5), ("b", self.b, 0.75),
                                                    ("epsilon", self.epsilon, 0.25))
                       if value != default]
        return unused

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
            return self._idf
        except AttributeError:
            raise AttributeError(
                f"{type(self).__name__!r} object has no attribute 'idf_' (it is not fitted)"
            ) from None

    @idf_.setter
    def idf_(self, value):
        if self.weighting != "tfidf" or self.smartirs is not None or not self.use_idf:
            raise ValueError(
                "`idf_` cannot be set here: it can be set only with scikit-learn's weighting "
                "(weighting='tfidf', smartirs=None, use_idf=True); fit the estimator instead."
            )
        value = np.asarray(value, dtype=np.float64)
        vocabulary = self._fitted_vocabulary()
        if value.shape != (len(vocabulary),):
            raise ValueError(
                f"idf_ must be a 1-d array with one value per vocabulary term "
                f"({len(vocabulary)}); got shape {value.shape}."
            )
        self._idf = value.astype(self._output_dtype(), copy=False)

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Learn the vocabulary and the global term weights of ``X`` (consumed once).

        Parameters
        ----------
        X : iterable of documents
        y : ignored

        Returns
        -------
        self : TfidfVectorizer
        """
        self._fit_counts(X, keep_matrix=False)
        self._fit_weights()
        return self

    @fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y=None):
        """Add the documents ``X`` to the statistics; re-derive vocabulary and weights.

        See the Notes and :meth:`BagOfWords.partial_fit`.

        Parameters
        ----------
        X : iterable of documents
        y : ignored

        Returns
        -------
        self : TfidfVectorizer
        """
        self._partial_fit_counts(X)
        self._fit_weights()
        return self

    def _needs_xlogx(self):
        return self.weighting == "logentropy"

    @fit_context(prefer_skip_nested_validation=True)
    def fit_transform(self, X, y=None):
        """Learn vocabulary and weights, and return the weighted matrix (one pass over ``X``).

        Parameters
        ----------
        X : iterable of documents
        y : ignored

        Returns
        -------
        X_weights : scipy.sparse.csr_matrix of shape (n_documents, n_terms)
            A ``dask.array`` of CSR blocks when ``X`` is a dask bag.
        """
        if is_dask_bag(X):
            return self.fit(X).transform(X)
        counts = self._fit_counts(X, dtype=np.float64)
        self._fit_weights()
        return self._weigh(counts)

    def transform(self, X):
        """Weight the term counts of ``X`` (features outside the vocabulary are ignored).

        Parameters
        ----------
        X : iterable of documents

        Returns
        -------
        X_weights : scipy.sparse.csr_matrix of shape (n_documents, n_terms)
            A ``dask.array`` of CSR blocks when ``X`` is a dask bag.
        """
        check_is_fitted(self, "idf_")
        if is_dask_bag(X):
            return transform_bag(self, X)
        return self._weigh(self._transform_counts(X, dtype=np.float64))

    def _fit_weights(self):
        """Global weights (and pivot, avgdl) from the statistics of the fitted columns."""
        n_documents, df, totals, xlogx = self._column_statistics()
        self.pivot_ = None
        if self.weighting == "bm25":
            idf = bm25_idf(df, n_documents, self.epsilon)
            self.avgdl_ = float(totals.sum()) / n_documents
        elif self.weighting == "logentropy":
            idf = log_entropy_from_sums(totals, xlogx, n_documents)
        elif self.smartirs is not None:
            scheme = resolve_smartirs(self.smartirs)
            idf = smart_global(df, n_documents, scheme[1])
            self.pivot_ = self._fit_pivot(scheme[2], n_documents, df, totals)
        elif self.use_idf:
            idf = sklearn_idf(df, n_documents, self.smooth_idf)
        else:
            idf = np.ones(df.size)
        self._idf = idf.astype(self._output_dtype(), copy=False)

    def _fit_pivot(self, norm_letter, n_documents, df, totals):
        """gensim's pivot: given, or learned for ``u`` (mean unique terms) / ``b`` (characters)."""
        if self.pivot is not None:
            return float(self.pivot)
        if norm_letter == "u":
            return int(df.sum()) / n_documents
        if norm_letter == "b":
            return float(totals.astype(np.float64) @ (self._term_lengths() + 1.0)) / n_documents
        return None

    def _term_lengths(self):
        terms = terms_in_column_order(self.vocabulary_)
        return np.fromiter(map(len, terms), dtype=np.float64, count=len(terms))

    def _weigh(self, counts):
        """Turn a fresh float64 count matrix into weights, in place."""
        if self.weighting == "bm25":
            doc_length = np.asarray(counts.sum(axis=1)).ravel()
            X = bm25_weights(counts, self.idf_, doc_length, self.avgdl_, self.k1, self.b)
        elif self.weighting == "logentropy":
            counts.data = np.log1p(counts.data) * self.idf_[counts.indices]
            X = counts
        elif self.smartirs is not None:
            return self._weigh_smart(counts).astype(self._output_dtype(), copy=False)
        else:
            X = counts
            if self.sublinear_tf:
                np.log(X.data, X.data)
                X.data += 1.0
            if self.use_idf:
                X.data *= self.idf_[X.indices]
        if self.norm is not None:
            X = normalize_rows(X, self.norm)
        return X.astype(self._output_dtype(), copy=False)

    def _weigh_smart(self, counts):
        local, _, norm_letter = resolve_smartirs(self.smartirs)
        if norm_letter == "b" and self.pivot_ is not None:
            char_lengths = (self._term_lengths() + 1.0)[counts.indices] * counts.data
            old_norm = np.bincount(row_of_entries(counts), weights=char_lengths,
                                   minlength=counts.shape[0])
        X = smart_local(counts, local)
        X.data *= self.idf_[X.indices]
        X.eliminate_zeros()  # gensim drops terms whose global weight is 0
        if self.pivot_ is None:
            return normalize_rows(X, "l2") if norm_letter == "c" else X
        if norm_letter == "u":
            old_norm = np.diff(X.indptr).astype(np.float64)
        elif norm_letter in "nc":
            old_norm = np.sqrt(np.bincount(row_of_entries(X), weights=X.data**2,
                                           minlength=X.shape[0]))
        return pivoted_normalize(X, old_norm, self.pivot_, self.slope)
