r"""TermWeighting: TF-IDF, SMART, Okapi BM25 and log-entropy weights of an existing count matrix.

The weighting half of :class:`~nlpfeat.text.TfidfVectorizer` (which counts, then delegates
here), as scikit-learn's ``TfidfTransformer`` is the weighting half of its
``TfidfVectorizer``. Every global weight is a function of per-term sums (document
frequency, occurrences, ``sum tf ln tf``), so ``partial_fit`` adds the sums of each batch
and equals ``fit`` on the stacked batches. The numeric core is the free functions of
:mod:`nlpfeat.text._vectorizers._schemes`.
"""
import inspect

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin

from nlpfeat._validation import (Interval, Real, StrOptions, check_2d, check_finite,
                                 check_is_fitted, fit_context, validate_data)
from nlpfeat.text._base._analyzer import warn_unused, warn_user
from nlpfeat.text._base._documents import is_one_shot
from nlpfeat.text._vectorizers._schemes import (
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

__all__ = ["TermWeighting", "WEIGHTING_PARAMETER_CONSTRAINTS"]

#: The weighting parameters, shared with TfidfVectorizer (which validates them at its fit).
WEIGHTING_PARAMETER_CONSTRAINTS = {
    "weighting": [StrOptions({"tfidf", "bm25", "logentropy"})],
    "norm": [StrOptions({"l1", "l2"}), None],
    "use_idf": ["boolean"],
    "smooth_idf": ["boolean"],
    "sublinear_tf": ["boolean"],
    "smartirs": [str, None],
    "k1": [Interval(Real, 0, None, closed="left")],
    "b": [Interval(Real, 0, 1, closed="both")],
    "epsilon": [Interval(Real, 0, None, closed="left")],
    "pivot": [Interval(Real, 0, None, closed="left"), None],
    "slope": [Interval(Real, 0, 1, closed="both")],
}


class TermWeighting(OneToOneFeatureMixin, TransformerMixin, BaseEstimator,
                    auto_wrap_output_keys=None):
    r"""Weight a document-term count matrix: TF-IDF, SMART, Okapi BM25 or log-entropy.

    The counts may come from any source (:class:`BagOfWords`, scikit-learn's
    ``CountVectorizer``, gensim's ``corpus2csc``, ...). With default settings the output
    equals scikit-learn's ``TfidfTransformer``; ``smartirs`` reproduces gensim's
    ``TfidfModel(smartirs=...)``, ``"bm25"`` gensim's ``OkapiBM25Model`` (with
    ``norm=None``) and ``"logentropy"`` gensim's ``LogEntropyModel``.
    :class:`TfidfVectorizer` is counting followed by this transformer, with the same
    parameter names and defaults.

    Parameters
    ----------
    weighting : {"tfidf", "bm25", "logentropy"}, default="tfidf"
        The weighting scheme.
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
        cosine, ``u`` pivoted unique, ``b`` pivoted character length (logarithms base 2;
        ``b`` needs the terms' lengths: ``fit(X, term_lengths=...)``). The local weights
        ``d`` and ``L`` are defined on counts: ``transform`` raises a ValueError for a
        stored value below 1 (e.g. weights from another step), where gensim returns NaN
        or infinite weights.
    k1, b, epsilon : float, default=1.5, 0.75, 0.25
        Okapi BM25 parameters (gensim's meaning; ``epsilon`` floors negative idfs).
    pivot : float >= 0 or None, default=None
        Pivot of pivoted length normalisation for ``smartirs`` (gensim's meaning): rows are
        divided by ``(1 - slope) * pivot + slope * old_norm``. ``None`` with normalisation
        ``u`` or ``b`` learns it from the training counts, as gensim does; ``pivot=0`` with
        ``slope=1`` is plain normalisation by ``old_norm``.
    slope : float in [0, 1], default=0.25
        Slope of pivoted normalisation.

    Attributes
    ----------
    idf_ : ndarray of shape (n_features,)
        The global weight of each term (idf, SMART global weight, BM25 idf or log-entropy
        weight; ones when ``use_idf=False``); 0 for a term absent from the training counts,
        except with scikit-learn's idf: ``ln(n + 1) + 1`` smoothed, ``inf`` (scikit-learn's
        value) with ``smooth_idf=False``, which warns at fit and makes ``transform`` raise
        a ValueError naming the term for a row that holds it. As scikit-learn's
        ``TfidfTransformer.idf_`` it may be set (scikit-learn's weighting only), and the
        transformer then transforms without ``fit``.
    pivot_ : float or None
        The pivot used with ``smartirs`` (None when rows are not pivot-normalised).
    avgdl_ : float
        Mean row sum of the training counts (``weighting="bm25"`` only).
    term_lengths_ : ndarray of shape (n_features,)
        Characters of each term (only with SMART normalisation ``b``).
    n_features_in_ : int
    feature_names_in_ : ndarray of str objects
        Column names, when ``X`` was a DataFrame.

    See Also
    --------
    TfidfVectorizer : Counting and this weighting in one estimator.

    Notes
    -----
    Counts must be non-negative and finite; explicit zeros are not occurrences. The output
    is a new CSR float64 matrix (the input is not modified) and, as in scikit-learn,
    ``set_output`` is not offered. Parameters that the chosen weighting does not use warn
    at ``fit`` when set to a value other than their default.

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
    >>> import numpy as np
    >>> from nlpfeat.text import TermWeighting
    >>> counts = np.array([[1, 0, 2], [0, 1, 1], [3, 1, 0]])
    >>> tw = TermWeighting().fit(counts)
    >>> tw.idf_.round(3)
    array([1.288, 1.288, 1.288])
    >>> tw.transform(counts).toarray().round(3)
    array([[0.447, 0.   , 0.894],
           [0.   , 0.707, 0.707],
           [0.949, 0.316, 0.   ]])
    >>> TermWeighting(smartirs="ltc").fit_transform(counts).toarray().round(3)
    array([[0.447, 0.   , 0.894],
           [0.   , 0.707, 0.707],
           [0.933, 0.361, 0.   ]])
    >>> TermWeighting("logentropy").fit(counts).idf_.round(3)
    array([0.594, 0.5  , 0.541])
    """

    _parameter_constraints = dict(WEIGHTING_PARAMETER_CONSTRAINTS)

    def __init__(self, weighting="tfidf", *, norm="l2", use_idf=True, smooth_idf=True,
                 sublinear_tf=False, smartirs=None, k1=1.5, b=0.75, epsilon=0.25, pivot=None,
                 slope=0.25):
        self.weighting = weighting
        self.norm = norm
        self.use_idf = use_idf
        self.smooth_idf = smooth_idf
        self.sublinear_tf = sublinear_tf
        self.smartirs = smartirs
        self.k1 = k1
        self.b = b
        self.epsilon = epsilon
        self.pivot = pivot
        self.slope = slope

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.positive_only = True
        tags.transformer_tags.preserves_dtype = ["float64"]
        return tags

    # ---- parameters --------------------------------------------------------------------
    def _check_params(self):
        """Settings that contradict each other raise; settings that are unused warn."""
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
        for name, reason in self._unused_params():
            warn_unused(name, reason)

    def _unused_params(self):
        """(parameter, reason) for each weighting option set to a value the weighting ignores."""
        if self.smartirs is not None:
            reason = f"smartirs={self.smartirs!r} is set (the SMART letters decide)"
            unused = ["norm", "use_idf", "smooth_idf", "sublinear_tf"]
            if self.pivot is None and resolve_smartirs(self.smartirs)[2] in "nc":
                unused.append("slope")
        elif self.weighting != "tfidf":
            reason = f"weighting={self.weighting!r} is not 'tfidf'"
            unused = ["use_idf", "smooth_idf", "sublinear_tf", "slope"]
        else:
            reason = "smartirs is None (pivoted normalisation is SMART's)"
            unused = ["slope"] if self.use_idf else ["slope", "smooth_idf"]
        found = [(name, reason) for name in unused if self._is_set(name)]
        if self.weighting != "bm25":
            found += [(name, f"weighting={self.weighting!r} is not 'bm25'")
                      for name in ("k1", "b", "epsilon") if self._is_set(name)]
        return found

    def _is_set(self, name):
        return getattr(self, name) != inspect.signature(TermWeighting).parameters[name].default

    def _smart_norm(self):
        """The SMART normalisation letter, or None without ``smartirs``."""
        return None if self.smartirs is None else resolve_smartirs(self.smartirs)[2]

    # ---- fitting -----------------------------------------------------------------------
    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, term_lengths=None):
        """Learn the global term weights from the counts ``X``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_documents, n_terms)
            Non-negative counts.
        y : ignored
        term_lengths : array-like of shape (n_terms,) or None, default=None
            Characters of each term, for SMART normalisation ``b`` only (default: the
            lengths of ``X``'s column names when it is a DataFrame).

        Returns
        -------
        self : TermWeighting
        """
        self._check_params()
        X = self._check_counts(X, reset=True)
        self._statistics = _count_statistics(X)
        self._fit_statistics(*self._statistics, term_lengths=self._lengths(term_lengths))
        return self

    @fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y=None, *, term_lengths=None):
        """Add the counts ``X`` (more documents, same columns) to the statistics and
        re-derive the weights: equal to ``fit`` on all the batches stacked.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_documents, n_terms)
        y : ignored
        term_lengths : array-like of shape (n_terms,) or None, default=None
            As in :meth:`fit` (the first batch's are kept).

        Returns
        -------
        self : TermWeighting
        """
        first = not hasattr(self, "_statistics")
        if first:
            self._check_params()
        X = self._check_counts(X, reset=first)
        batch = _count_statistics(X)
        if not first:
            batch = tuple(a + b for a, b in zip(self._statistics, batch))
        lengths = (self._lengths(term_lengths) if first or self._smart_norm() != "b"
                   else self.term_lengths_)
        self._fit_statistics(*batch, term_lengths=lengths, partial=True)
        self._statistics = batch
        return self

    def _fit_statistics(self, n_documents, df, totals, xlogx, term_lengths=None,
                        names=None, partial=False):
        """Set the fitted attributes from per-term sums (document frequencies ``df``,
        occurrences ``totals``, ``sum tf ln tf`` ``xlogx``), in column order.

        TfidfVectorizer calls this with the sums it streams, after ``_check_params``;
        ``names`` (a callable giving the column names, or None) names terms in messages.
        ``partial``: sums of ``partial_fit`` so far; a term they lack may come in a later
        batch, so its infinite unsmoothed idf is not warned about (``transform`` still
        refuses to weigh it).
        """
        self.n_features_in_ = df.size
        self.pivot_ = None
        if self.weighting == "bm25":
            idf = bm25_idf(df, n_documents, self.epsilon)
            self.avgdl_ = float(totals.sum()) / n_documents
        elif self.weighting == "logentropy":
            idf = log_entropy_from_sums(totals, xlogx, n_documents)
        elif self.smartirs is not None:
            idf = smart_global(df, n_documents, resolve_smartirs(self.smartirs)[1])
            self.pivot_ = self._fit_pivot(n_documents, df, totals, term_lengths)
        elif self.use_idf:
            idf = sklearn_idf(df, n_documents, self.smooth_idf)
            if not partial:
                _warn_infinite_idf(idf, names or self._column_names)
        else:
            idf = np.ones(df.size)
        self._idf = idf
        return self

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
        """Take the idf of another fitted transformer, as scikit-learn's TfidfTransformer."""
        if self.weighting != "tfidf" or self.smartirs is not None or not self.use_idf:
            raise ValueError(
                "`idf_` cannot be set here: it can be set only with scikit-learn's weighting "
                "(weighting='tfidf', smartirs=None, use_idf=True); fit the estimator instead."
            )
        value = np.array(value, dtype=np.float64)
        if value.ndim != 1 or np.isnan(value).any():
            raise ValueError(
                f"idf_ must be a 1-d array of numbers, one per term; got shape {value.shape}"
                f"{' with NaN' if value.ndim == 1 else ''}."
            )
        self._idf, self.pivot_, self.n_features_in_ = value, None, value.size

    def _column_names(self):
        """The names of the fitted columns (a DataFrame's), or None."""
        return getattr(self, "feature_names_in_", None)

    def _fit_pivot(self, n_documents, df, totals, term_lengths):
        """gensim's pivot: given, or learned for ``u`` (mean unique terms) / ``b`` (characters)."""
        norm_letter = self._smart_norm()
        if norm_letter == "b":
            self.term_lengths_ = _checked_lengths(term_lengths, df.size, self.smartirs)
        if self.pivot is not None:
            return float(self.pivot)
        if norm_letter == "u":
            return int(df.sum()) / n_documents
        if norm_letter == "b":
            return float(np.asarray(totals, dtype=np.float64) @ (self.term_lengths_ + 1.0)
                         ) / n_documents
        return None

    def _lengths(self, term_lengths):
        """``term_lengths``, or those of the DataFrame column names, when normalisation is
        ``b``."""
        if self._smart_norm() != "b" or term_lengths is not None:
            return term_lengths
        names = getattr(self, "feature_names_in_", None)
        return None if names is None else [len(str(name)) for name in names]

    # ---- transforming ------------------------------------------------------------------
    def transform(self, X):
        """Weight the counts ``X`` (a new matrix; ``X`` is not modified).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_documents, n_terms)
            Non-negative counts, in the columns of ``fit``.

        Returns
        -------
        X_weights : scipy.sparse.csr_matrix of shape (n_documents, n_terms), float64
        """
        check_is_fitted(self, "idf_")
        counts = sp.csr_matrix(self._check_counts(X, reset=False), dtype=np.float64, copy=True)
        counts.eliminate_zeros()
        return self._transform_in_place(counts)

    def _transform_in_place(self, counts, names=None):
        """Turn a fresh float64 CSR count matrix without explicit zeros into weights, reusing
        its arrays; TfidfVectorizer calls this on the counts it builds (``names``: as in
        ``_fit_statistics``)."""
        if self.weighting == "bm25":
            doc_length = np.asarray(counts.sum(axis=1)).ravel()
            X = bm25_weights(counts, self.idf_, doc_length, self.avgdl_, self.k1, self.b)
        elif self.weighting == "logentropy":
            counts.data = np.log1p(counts.data) * self.idf_[counts.indices]
            X = counts
        elif self.smartirs is not None:
            return self._weigh_smart(counts)
        else:
            X = counts
            if self.sublinear_tf:
                np.log(X.data, X.data)
                X.data += 1.0
            if self.use_idf:
                _check_no_infinite_weight(X, self.idf_, names or self._column_names)
                X.data *= self.idf_[X.indices]
        return X if self.norm is None else normalize_rows(X, self.norm)

    def _weigh_smart(self, counts):
        local, _, norm_letter = resolve_smartirs(self.smartirs)
        if norm_letter == "b" and self.pivot_ is not None:
            char_lengths = (self.term_lengths_ + 1.0)[counts.indices] * counts.data
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

    # ---- input -------------------------------------------------------------------------
    def _check_counts(self, X, reset):
        """``X`` as a CSR float64 matrix without duplicate entries (the caller's object
        when it already is one: it is read, never written); errors say what to fix."""
        if is_one_shot(X):     # numpy would see one object, and a second read nothing
            raise TypeError(
                f"TermWeighting weighs a count matrix, not a one-shot iterator "
                f"({type(X).__name__}); pass an array, a sparse matrix or a list of rows "
                f"(e.g. list(X)).")
        X = check_2d(X, "X", "(n_documents, n_terms)")
        if not reset and X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but TermWeighting is expecting "
                f"{self.n_features_in_} features as input (the terms it was fitted on); pass "
                f"counts of the same terms in the same column order (e.g. from the same "
                f"vectorizer)."
            )
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=reset,
                          ensure_all_finite=False, ensure_min_samples=1 if reset else 0)
        X = check_finite(X if sp.issparse(X) else sp.csr_matrix(X), "X")
        if not X.has_canonical_format:
            X = X.copy()
            X.sum_duplicates()
        if X.nnz and X.data.min() < 0:
            raise ValueError(
                f"Negative values in data passed to TermWeighting: X holds "
                f"{int((X.data < 0).sum())} negative value(s); term weighting needs "
                f"non-negative counts (occurrences of each term in each document)."
            )
        return X


def _count_statistics(X):
    """``(n_documents, df, totals, xlogx)`` of a CSR count matrix without duplicates."""
    n_terms = X.shape[1]
    occurs = X.data > 0
    terms, tf = X.indices[occurs], X.data[occurs]
    return (X.shape[0], np.bincount(terms, minlength=n_terms),
            np.bincount(terms, weights=tf, minlength=n_terms),
            np.bincount(terms, weights=tf * np.log(tf), minlength=n_terms))


def _checked_lengths(term_lengths, n_terms, smartirs):
    if term_lengths is None:
        raise ValueError(
            f"smartirs={smartirs!r} normalises by the characters of each document, which "
            f"needs the length of each term: pass fit(X, term_lengths=[len(t) for t in terms]) "
            f"or a DataFrame whose columns are the terms."
        )
    lengths = np.asarray(term_lengths, dtype=np.float64)
    if lengths.shape != (n_terms,) or not np.isfinite(lengths).all() or (lengths < 0).any():
        raise ValueError(
            f"term_lengths must hold one non-negative length per column ({n_terms}); got "
            f"shape {lengths.shape}."
        )
    return lengths


def _column_list(columns, names):
    """``'zebra', 'yak'`` (or ``column 2, column 5``): the first five of ``columns``."""
    terms = names()
    shown = [repr(str(terms[j])) if terms is not None else f"column {j}" for j in columns[:5]]
    return ", ".join(shown) + (", ..." if len(columns) > 5 else "")


def _warn_infinite_idf(idf, names):
    """scikit-learn's unsmoothed idf is inf for a term no training document holds: say so."""
    absent = np.flatnonzero(np.isinf(idf))
    if absent.size:
        warn_user(
            f"divide by zero in the idf of {absent.size} term(s) that no training document "
            f"holds ({_column_list(absent, names)}) with smooth_idf=False: their idf_ is inf, "
            f"as in scikit-learn, and transforming a document that holds one raises a "
            f"ValueError. Set smooth_idf=True, or remove these terms from the vocabulary.",
            RuntimeWarning,
        )


def _check_no_infinite_weight(X, idf, names):
    """Raise, naming the document and the terms, where an infinite idf meets a count (its
    weight, and the row's norm, would be inf or NaN)."""
    infinite = np.isinf(idf)
    if not infinite.any():
        return
    hit = np.flatnonzero(infinite[X.indices])
    if hit.size:
        row = int(np.searchsorted(X.indptr, hit[0], side="right")) - 1
        start, stop = X.indptr[row], X.indptr[row + 1]
        columns = X.indices[start:stop][infinite[X.indices[start:stop]]]
        raise ValueError(
            f"Document {row} holds {_column_list(columns, names)}, which has an infinite idf "
            f"(no training document holds it and smooth_idf=False, as in scikit-learn, whose "
            f"transform fails here): its weight is undefined. Fit with smooth_idf=True, or "
            f"remove the term from the vocabulary."
        )
