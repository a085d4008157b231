"""Bag of words: the counting vectorizer every nlpfeat text vectorizer is built on.

``CountingVectorizerMixin`` is the fit/transform skeleton shared by ``BagOfWords``,
``PositionalBagOfWords`` and ``TfidfVectorizer``: documents -> features (``TextMixin``) ->
counts, a chunk at a time (``count_chunks``) -> statistics (``TermCounts``) -> vocabulary
pruned from the statistics (``prune_mask``).
"""
import copy
from collections.abc import Mapping
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin

from nlpfeat._chunking import check_working_memory
from nlpfeat._docstrings import fill_doc
from nlpfeat._params import estimator_params
from nlpfeat._validation import (HasMethods, Integral, Interval, Real, RealNotInt, StrOptions,
                                 check_array, check_is_fitted, fit_context)
from nlpfeat.text._base._analyzer import TEXT_PARAMETER_CONSTRAINTS
from nlpfeat.text._base._analyzer import warn_unused, warn_user
from nlpfeat.text._base._documents import check_corpus_nonempty
from nlpfeat.text._base._options import TextOptions
from nlpfeat.text._counting._term_counts import TermCounts, chunk_tokens, count_terms
from nlpfeat.text._counting._vocabulary import (
    CsrBuilder,
    check_df_bounds,
    check_vocabulary,
    prune_mask,
    remap_columns,
    terms_in_column_order,
)
from nlpfeat.text._dask import (
    bag_term_counts,
    is_dask_bag,
    splitting,
    strip_line_break,
    transform_bag,
)
from nlpfeat.text._vectorizers._schemes import normalize_rows

__all__ = [
    "BagOfWords", "CountingVectorizerMixin", "COUNTING_PARAMETER_CONSTRAINTS", "finish_counts",
]

_DF_CONSTRAINT = [
    Interval(RealNotInt, 0, 1, closed="both"),  # a proportion of the documents
    Interval(Integral, 1, None, closed="left"),  # a number of documents
]

COUNTING_PARAMETER_CONSTRAINTS = {
    **TEXT_PARAMETER_CONSTRAINTS,
    "min_df": _DF_CONSTRAINT,
    "max_df": _DF_CONSTRAINT,
    "max_features": [Interval(Integral, 1, None, closed="left"), None],
    "vocabulary": [Mapping, HasMethods("__iter__"), None],
    "binary": ["boolean"],
    "dtype": "no_validation",  # checked by numpy when the matrix is cast
    "working_memory": [Interval(Real, 0, None, closed="neither"), None],
    "verbose": ["verbose"],
}

#: ``n_jobs`` of the vectorizers that count on threads (BagOfWords, TfidfVectorizer).
N_JOBS_CONSTRAINT = {"n_jobs": [Integral, None]}


@splitting
def count_vectorizer_partition(estimator, docs):
    """The :class:`TermCounts` of one partition of a Dask bag (on a worker)."""
    fixed = None if estimator.vocabulary is None else check_vocabulary(estimator.vocabulary)
    counts = TermCounts(fixed, xlogx=estimator._needs_xlogx())
    return count_terms(estimator._iter_docs(map(strip_line_break, docs)), counts,
                       analyze=estimator._feature_fn(),
                       working_memory=estimator.working_memory,
                       text_pass=estimator._text_pass_options())


@fill_doc
@estimator_params
class CountingVectorizerMixin(TextOptions):
    """Fit/transform skeleton: documents -> pruned document-term counts and ``vocabulary_``."""

    binary: Any = False
    norm: Any = None
    min_df: Any = 1
    max_df: Any = 1.0
    max_features: Any = None
    vocabulary: Any = None
    dtype: Any = np.int64
    working_memory: Any = None
    verbose: Any = 0

    def _check_params_at_fit(self):
        self._check_text_params()
        check_working_memory(self.working_memory)
        check_df_bounds(self.min_df, self.max_df)
        try:
            np.dtype(self.dtype)
        except TypeError:
            raise ValueError(
                f"dtype={self.dtype!r} is not a numpy dtype; use e.g. np.int64 or np.float64."
            ) from None
        if self.vocabulary is not None:
            for name, is_set in (("min_df", self.min_df != 1), ("max_df", self.max_df != 1.0),
                                 ("max_features", self.max_features is not None)):
                if is_set:
                    warn_unused(name, "'vocabulary' is fixed (nothing is pruned)")

    def _text_pass_options(self, *, lower_tokens=True):
        """The compiled pass's options (see :meth:`TextMixin._text_pass_options`); the
        counting vectorizers lower each distinct token rather than whole documents, and
        count word n-grams and character n-grams on the pass."""
        return super()._text_pass_options(lower_tokens=lower_tokens, ngrams=True, chars=True)

    def _n_jobs(self):
        return getattr(self, "n_jobs", None)

    def _threads(self):
        """Threads of ``n_jobs`` (joblib's meaning: None is 1, -1 every core)."""
        from joblib import effective_n_jobs

        return effective_n_jobs(self._n_jobs())

    def _needs_xlogx(self):
        """Whether the statistics must include ``sum tf ln tf`` (log-entropy weights)."""
        return False

    #: dtype of the counts that ``_finish`` receives
    _count_dtype = np.int64

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Learn the vocabulary (and the weights, if any) of the documents ``X``.

        Parameters
        ----------
        X : iterable of documents or dask.bag.Bag
            Consumed once.
        y : ignored

        Returns
        -------
        self : estimator
        """
        self._fit_counts(X, keep_matrix=False)
        self._fit_weights()
        return self

    @fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y=None):
        """Add the documents ``X`` to the statistics, then re-derive the vocabulary (and the
        weights, if any) from all of them.

        See "Streaming" in the Notes of :class:`BagOfWords`: ``fit(X)`` equals
        ``partial_fit`` over any split of ``X``. A batch that fails (the error names the
        document) changes nothing.

        Parameters
        ----------
        X : iterable of documents or dask.bag.Bag
            One batch of the corpus.
        y : ignored

        Returns
        -------
        self : estimator
            With the statistics of every batch so far.
        """
        self._partial_fit_counts(X)
        self._fit_weights(partial=True)
        return self

    @fit_context(prefer_skip_nested_validation=True)
    def fit_transform(self, X, y=None):
        """Learn the vocabulary (and the weights) and return the document-feature matrix,
        in one pass over ``X``.

        Parameters
        ----------
        X : iterable of documents or dask.bag.Bag
        y : ignored

        Returns
        -------
        X_features : scipy.sparse.csr_matrix of shape (n_documents, n_features)
            Counts (weights for :class:`TfidfVectorizer`); a ``dask.array`` of CSR blocks
            when ``X`` is a dask bag (see ``transform``).
        """
        if is_dask_bag(X):
            return self.fit(X).transform(X)
        counts = self._fit_counts(X, dtype=self._count_dtype)
        self._fit_weights()
        return self._finish(counts)

    def transform(self, X):
        """Count (and weigh) the features of ``X`` in the fitted vocabulary; unseen ones are
        ignored.

        Parameters
        ----------
        X : iterable of documents or dask.bag.Bag

        Returns
        -------
        X_features : scipy.sparse.csr_matrix of shape (n_documents, n_features)
            For a dask bag, a ``dask.array`` with one CSR block per partition (rows in the
            bag's order, row counts unknown until computed), as dask-ml's
            ``CountVectorizer``; ``.compute()`` gives the CSR matrix.
        """
        self._check_fitted()
        if is_dask_bag(X):
            return transform_bag(self, X)
        return self._finish(self._transform_counts(X, dtype=self._count_dtype))

    def _fit_weights(self, partial=False):
        """Learn what follows counting from the statistics (TfidfVectorizer: the weights);
        ``partial``: the statistics so far of ``partial_fit``, which later batches extend."""

    def _check_fitted(self):
        """Raise NotFittedError before ``transform`` reads anything (a fixed vocabulary is
        enough for counting)."""

    def _finish(self, counts):
        """The output from fresh counts: cast to ``dtype`` and row-normalised by ``norm``."""
        return finish_counts(counts, norm=self.norm, dtype=self.dtype)

    def _fit_counts(self, X, dtype=np.int64, keep_matrix=True):
        """Count ``X`` a chunk at a time, learn (or check) the vocabulary and prune it.

        Sets ``vocabulary_``, ``fixed_vocabulary_`` and the statistics that ``partial_fit``
        accumulates; returns the pruned document-term matrix (None if not ``keep_matrix``).
        """
        self._check_params_at_fit()
        counts = self._new_term_counts()
        builder = CsrBuilder(dtype) if keep_matrix else None
        if is_dask_bag(X):
            counts = bag_term_counts(self, X, count_vectorizer_partition)
        else:
            count_terms(self._iter_docs(X), counts, analyze=self._feature_fn(),
                        working_memory=self.working_memory, builder=builder,
                        text_pass=self._text_pass_options(), n_jobs=self._n_jobs())
        check_corpus_nonempty(counts.n_documents)
        sorting = []

        def columns_known(new_of_old, n_columns):
            # with threads, the matrix's columns are sorted while vocabulary_ is built
            if builder is not None and self._threads() > 1:
                from concurrent.futures import ThreadPoolExecutor

                pool = ThreadPoolExecutor(1)
                sorting.append(pool.submit(self._matrix, builder, counts, new_of_old,
                                           n_columns))
                pool.shutdown(wait=False)          # the thread ends with its task

        new_of_old = self._learn_vocabulary(counts, strict=True, columns_known=columns_known)
        self._term_counts = counts
        if builder is None:
            return None
        if sorting:
            return sorting[0].result()
        return self._matrix(builder, counts, new_of_old, len(self.vocabulary_))

    def _matrix(self, builder, counts, new_of_old, n_columns):
        """The fitted document-term matrix from the chunks of ``builder``: its columns
        renumbered by ``new_of_old`` (None: unmoved) and sorted."""
        X = builder.to_csr(counts.n_terms)
        if self.binary:
            X.data.fill(1)
        if new_of_old is not None:
            X = remap_columns(X, new_of_old, n_columns, n_jobs=self._threads())
        elif not X.has_sorted_indices:       # rows of a learning pass, columns unmoved
            X.sort_indices()
        return X

    def _new_term_counts(self):
        fixed = None if self.vocabulary is None else check_vocabulary(self.vocabulary)
        if fixed is not None:
            self._warn_upper_case(fixed)
        return TermCounts(fixed, xlogx=self._needs_xlogx())

    def _partial_fit_counts(self, X):
        """Add the counts of the batch ``X`` to the statistics, then re-derive the vocabulary.

        The batch is counted apart and merged only once it is read completely, so a batch
        that fails (the error names the document) leaves the estimator as it was.
        """
        first = not hasattr(self, "_term_counts")
        if first:
            self._check_params_at_fit()
        batch = self._new_term_counts()
        if is_dask_bag(X):
            batch = bag_term_counts(self, X, count_vectorizer_partition)
        else:
            count_terms(self._iter_docs(X), batch, analyze=self._feature_fn(),
                        working_memory=self.working_memory,
                        text_pass=self._text_pass_options(), n_jobs=self._n_jobs())
        if first:
            check_corpus_nonempty(batch.n_documents)
            counts = batch
        else:
            counts = self._term_counts.merge(batch)
        self._learn_vocabulary(counts, strict=False)
        self._term_counts = counts
        return counts

    def _learn_vocabulary(self, counts, strict, columns_known=None):
        """Set ``vocabulary_`` from the statistics ``counts``: sorted terms, then pruned.

        Returns the new column of each term id of ``counts`` (-1 when pruned), or None with
        a fixed vocabulary. With ``strict=False`` (``partial_fit``) a vocabulary that
        pruning empties is kept empty instead of raising: later batches may fill it.
        ``columns_known(new_of_old, n_columns)`` is called, when given and the vocabulary
        is learned, before its dict is built.
        """
        self._lookup = self._column_ids = None     # derived from the vocabulary below
        self._vocabulary_is_fixed = not counts.learn
        if not counts.learn:
            self.vocabulary_ = dict(counts.vocabulary)
            return None
        if not counts.n_terms:
            if strict:
                raise ValueError(
                    "Empty vocabulary: the documents produced no features. They may hold only "
                    f"stop words (stop_words={self.stop_words!r}) or tokens that the tokenizer "
                    f"(tokenizer={self.tokenizer!r}, token_pattern={self.token_pattern!r}) "
                    f"drops."
                )
            self.vocabulary_ = {}
            return np.full(0, -1, dtype=np.intp)
        by_id, ids = counts.sorted_ids()
        df = counts.df[ids]
        try:
            keep = prune_mask(df, df if self.binary else counts.totals[ids], counts.n_documents,
                              min_df=self.min_df, max_df=self.max_df,
                              max_features=self.max_features)
        except ValueError:
            if strict:
                raise
            keep = np.zeros(len(ids), dtype=bool)
        kept = np.flatnonzero(keep)
        self._column_ids = ids[kept]          # the id in ``counts`` of each column
        new_of_old = np.full(counts.n_terms, -1, dtype=np.intp)
        new_of_old[ids[kept]] = np.arange(kept.size)
        if columns_known is not None:
            columns_known(new_of_old, kept.size)
        ints = list(counts.vocabulary.values())
        if kept.size == len(ids) and _is_range(ints):
            # terms in order of first appearance (their ids), as scikit-learn's, each with
            # its sorted column: read in order, no lookup of a term; the statistics' ids
            # 0 .. n - 1 are the same int objects: shared, not made
            self.vocabulary_ = dict(zip(by_id, map(ints.__getitem__, new_of_old.tolist())))
        elif kept.size == len(ids):             # the statistics' order, renumbered
            self.vocabulary_ = dict(counts.vocabulary)
            self.vocabulary_.update(zip(map(by_id.__getitem__, ids.tolist()), range(kept.size)))
        else:
            self.vocabulary_ = dict(zip(map(by_id.__getitem__, ids[kept].tolist()),
                                        range(kept.size)))
        return new_of_old

    def _column_statistics(self):
        """``(n_documents, df, totals, xlogx)`` of the fitted columns, in column order."""
        counts = self._term_counts
        ids = getattr(self, "_column_ids", None)
        if ids is not None:
            pass
        elif counts.learn:
            ids = np.fromiter(map(counts.vocabulary.__getitem__,
                                  terms_in_column_order(self.vocabulary_)),
                              dtype=np.intp, count=len(self.vocabulary_))
        else:
            ids = np.arange(counts.n_terms)
        df = counts.df[ids]
        if self.binary:
            return counts.n_documents, df, df, np.zeros(df.size)
        xlogx = None if counts.xlogx is None else counts.xlogx[ids]
        return counts.n_documents, df, counts.totals[ids], xlogx

    def _warn_upper_case(self, vocabulary):
        """Warn about terms of a fixed vocabulary that lowercased documents cannot produce."""
        if not self.lowercase or getattr(self, "preprocessor", None) is not None:
            return
        if callable(self.analyzer):
            return
        upper = [term for term in vocabulary if isinstance(term, str) and term != term.lower()]
        if upper:
            warn_user(
                f"Upper case characters found in vocabulary while 'lowercase' is True. These "
                f"entries will not be matched with any documents: {upper[:5]!r}. Lowercase "
                f"them, or set lowercase=False."
            )

    def _fitted_vocabulary(self):
        """``vocabulary_``; a fixed ``vocabulary`` is checked and stored at first use, as in
        scikit-learn, so that ``transform`` and ``get_feature_names_out`` work without ``fit``."""
        if not hasattr(self, "vocabulary_"):
            if self.vocabulary is None:
                check_is_fitted(self, "vocabulary_")
            self.vocabulary_ = check_vocabulary(self.vocabulary)
            self._vocabulary_is_fixed = True
        return self.vocabulary_

    @property
    def fixed_vocabulary_(self):
        """Whether the columns are the user's ``vocabulary`` (True) or learnt by ``fit``.

        Set with ``vocabulary_``; before it, the ``vocabulary`` parameter decides, so the
        flag is defined wherever scikit-learn's is (scikit-learn sets it at the first use of
        the vocabulary, even in a call that then raises ``NotFittedError``) without an
        unfitted estimator looking fitted to ``check_is_fitted``.
        """
        if hasattr(self, "vocabulary_"):
            return self._vocabulary_is_fixed
        return self.vocabulary is not None

    def _transform_counts(self, X, dtype=np.int64):
        """Count ``X`` against the fitted vocabulary a chunk at a time (unseen features are
        ignored); the matrix is assembled without a second copy."""
        vocabulary = self._fitted_vocabulary()
        if not vocabulary:
            raise ValueError(
                f"The vocabulary is empty: the documents given to partial_fit so far leave no "
                f"term after pruning (min_df={self.min_df!r}, max_df={self.max_df!r}, "
                f"max_features={self.max_features!r}). Feed more documents or loosen these."
            )
        builder = CsrBuilder(dtype)
        from nlpfeat.text._counting._text_pass import term_chunks   # numba: on use

        for chunk in term_chunks(self._iter_docs(X), self._transform_lookup(), learn=False,
                                 analyze=self._feature_fn(),
                                 chunk_tokens=chunk_tokens(self.working_memory),
                                 working_memory=self.working_memory,
                                 options=self._text_pass_options(), n_jobs=self._n_jobs()):
            builder.append(chunk)
        counts = builder.to_csr(len(vocabulary))
        if self.binary:
            counts.data.fill(1)
        return counts

    def __nlpfeat_worker_copy__(self):
        """A copy for a Dask worker's ``transform``: the lookup built here once, not on
        every worker, and without the statistics that only ``partial_fit`` reads."""
        self._transform_lookup()
        light = copy.copy(self)
        light.__dict__.pop("_term_counts", None)
        return light

    def _transform_lookup(self):
        """``vocabulary_`` as a dict ordered as the terms first appeared in the fitted corpus.

        ``transform`` looks up every feature in it. ``vocabulary_`` is built in sorted term
        order, which scatters the frequent terms over the hash table's entries; in order of
        appearance the frequent terms come first and stay in cache (figures in
        ``benchmarks/RESULTS.md``). Built once per fit. After a fit on a Dask bag the order
        is the same, from the first appearance of each term kept through the merges
        (``TermCounts.first_seen``), not the order of the merged shards.
        """
        lookup = getattr(self, "_lookup", None)
        if lookup is not None:
            return lookup
        vocabulary = self._fitted_vocabulary()
        counts, column_ids = getattr(self, "_term_counts", None), getattr(self, "_column_ids",
                                                                           None)
        if counts is None or column_ids is None or not counts.learn:
            return vocabulary
        first = getattr(counts, "first_seen", None)
        order = np.argsort(column_ids if first is None else first[column_ids],
                           kind="stable")                   # columns in order of appearance
        terms_by_id = counts.terms_by_id()      # learned ids count up in order of appearance
        self._lookup = dict(zip(map(terms_by_id.__getitem__, column_ids[order].tolist()),
                                order.tolist()))
        return self._lookup

    def get_feature_names_out(self, input_features=None):
        """Feature names (the terms) in column order.

        %(feature_names_sections)s
        """
        return np.asarray(terms_in_column_order(self._fitted_vocabulary()), dtype=object)

    def inverse_transform(self, X):
        """The terms of each row of a document-term matrix: those with a nonzero entry.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_documents, n_terms)

        Returns
        -------
        terms : list of ndarray of str objects
            One array per row, terms in column order.
        """
        vocabulary = self._fitted_vocabulary()
        X = check_array(X, accept_sparse="csr", ensure_min_samples=0, ensure_all_finite=False)
        if X.shape[1] != len(vocabulary):
            raise ValueError(
                f"X has {X.shape[1]} columns but this vectorizer has {len(vocabulary)} features; "
                f"pass a matrix returned by its transform."
            )
        if X.shape[0] == 0:
            return []
        terms = np.empty(len(vocabulary), dtype=object)
        terms[:] = terms_in_column_order(vocabulary)
        if sp.issparse(X):
            X = sp.csr_matrix(X, copy=True)
            X.eliminate_zeros()
            X.sort_indices()
            return np.split(terms[X.indices], X.indptr[1:-1])
        rows, columns = np.nonzero(X)
        return np.split(terms[columns], np.searchsorted(rows, np.arange(1, X.shape[0])))


def _is_range(ints):
    """Whether the list ``ints`` is ``0, 1, ..., len(ints) - 1``."""
    return np.array_equal(np.fromiter(ints, np.int64, len(ints)), np.arange(len(ints)))


def finish_counts(counts, *, norm, dtype):
    """Cast counts to ``dtype`` and normalise rows; a norm needs floats (float64 by default)."""
    if norm is None:
        return counts.astype(dtype, copy=False)
    if not np.issubdtype(np.dtype(dtype), np.floating):
        dtype = np.float64
    return normalize_rows(counts.astype(dtype, copy=False), norm)


@fill_doc
@estimator_params
class BagOfWords(CountingVectorizerMixin, TransformerMixin, BaseEstimator,
                 auto_wrap_output_keys=None):
    """Convert documents to a sparse matrix of feature counts (bag of words or n-grams).

    The nlpfeat counterpart of scikit-learn's ``CountVectorizer`` (same matrix and feature
    names with equivalent settings), with CJK-aware tokenization, named tokenizers, stemming,
    Chinese stop words and optional row normalisation.

    Parameters
    ----------
    %(token_options)s
    %(ngram_options)s
    %(accent_options)s
    binary : bool, default=False
        Record presence (1) instead of counts.
    norm : {"l1", "l2"} or None, default=None
        Normalise each row: ``"l1"`` gives term frequencies, ``"l2"`` unit Euclidean length.
    min_df, max_df : float in [0, 1] or int, default=1 and 1.0
        Keep terms found in at least ``min_df`` and at most ``max_df`` documents (a float is a
        proportion of the documents). Ignored with a fixed ``vocabulary``.
    max_features : int or None, default=None
        Keep only the ``max_features`` terms most frequent over the corpus.
    vocabulary : mapping or iterable of str, default=None
        Fixed term -> column mapping (or list of terms, columns in list order; a set is
        sorted); ``None`` learns it from the corpus. A fixed vocabulary needs no ``fit``:
        ``transform`` and ``get_feature_names_out`` check and store it at first use.
    dtype : numpy dtype, default=np.int64
        Type of the returned matrix (float64 when ``norm`` is set and ``dtype`` is integral).
    working_memory : float or None, default=None
        MiB of temporary memory for counting one chunk of documents; ``None`` is nlpfeat's
        default budget (4 MiB, as for every chunked computation). ``fit`` and ``transform``
        read the corpus once, a chunk at a time, so their peak memory is this budget plus
        the model (vocabulary and per-term counts) plus the output, not the corpus.
    n_jobs : int or None, default=None
        Threads that tokenize and count chunks of documents at once (joblib's meaning:
        None is 1, -1 every core); the output is the same for every ``n_jobs``. With the
        default word analyzer (see Notes) the documents take nlpfeat's compiled text pass,
        which releases the GIL; other settings count in Python, on one thread.
    %(verbose)s

    Attributes
    ----------
    vocabulary_ : dict
        Term -> column index (columns in sorted term order when learned).
    %(fixed_vocabulary_attribute)s

    See Also
    --------
    TfidfVectorizer : Reweight the counts by inverse document frequency.
    PositionalBagOfWords : Count (position, term) pairs.

    Notes
    -----
    Like scikit-learn's vectorizers, the output is sparse and ``set_output`` is not offered.

    **Streaming.** ``X`` may be any iterable of documents, e.g. a lazily read
    :class:`nlpfeat.datasets.Corpus`; it is read once. ``fit`` keeps only per-term
    statistics (document frequency and number of occurrences), never the document-term
    matrix. The vocabulary is never pruned while counting (gensim's ``prune_at``), so
    every result is exact; its memory is part of the model. ``partial_fit`` adds a batch to these statistics (they are sums, so ``fit`` on
    a corpus and ``partial_fit`` over any split of it give the same vocabulary, bit for
    bit); after each batch the vocabulary is re-derived from all the statistics so far:
    terms sorted, then ``min_df``, ``max_df`` and ``max_features`` applied to the
    accumulated counts, exactly as ``fit`` applies them to the whole corpus. A term pruned
    after one batch may come back after the next. If pruning leaves no term yet,
    ``vocabulary_`` is empty and ``transform`` raises until more batches are given. A
    ``dask.bag.Bag`` of documents (e.g. ``dask.bag.read_text("corpus-*.txt.gz")``; one
    trailing line break of each document is removed) is accepted by ``fit``,
    ``partial_fit``, ``fit_transform`` and ``transform`` (``pip install "nlpfeat[dask]"``):
    the partitions are counted on the workers and merged by a tree reduction, so the
    fitted estimator is the same in-memory estimator as a single-machine fit; ``transform``
    returns a ``dask.array`` of CSR blocks.
    **Compiled text pass.** With the default tokenizer and pattern (or scikit-learn's,
    ``(?u)\\b\\w\\w+\\b``), ``analyzer="word"``, any
    ``ngram_range``, no stemmer or preprocessor and ``strip_accents`` None or
    named, documents are tokenized and counted by compiled code (no Python object per
    token), with exactly the tokens, lowercasing and stop words of the Python path; so are
    the character n-grams of ``analyzer="char"`` and ``"char_wb"`` (no preprocessor,
    ``strip_accents`` None or named; a ``str`` only per distinct n-gram); other
    settings take the Python path.
    Settings that make a parameter unused (``stop_words`` with ``analyzer="char"``, a
    ``preprocessor`` with a callable ``analyzer``, ...) raise a ``UserWarning`` at ``fit``.

    Examples
    --------
    >>> from nlpfeat.text import BagOfWords
    >>> bow = BagOfWords()
    >>> X = bow.fit_transform(["the fat cat sat on the mat", "我爱NLP和machine learning"])
    >>> bow.get_feature_names_out().tolist()
    ['cat', 'fat', 'learning', 'machine', 'mat', 'nlp', 'on', 'sat', 'the', '和', '我', '爱']
    >>> X.toarray()
    array([[1, 1, 0, 0, 1, 0, 1, 1, 2, 0, 0, 0],
           [0, 0, 1, 1, 0, 1, 0, 0, 0, 1, 1, 1]])
    """

    _parameter_constraints = {
        **COUNTING_PARAMETER_CONSTRAINTS,
        "norm": [StrOptions({"l1", "l2"}), None],
        **N_JOBS_CONSTRAINT,
    }
    n_jobs: Any = None
