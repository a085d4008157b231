"""The locally weighted bag of words (lowbow) of Lebanon, Mao and Dillon (JMLR 2007).

A document is a curve in the simplex: at each of ``n_positions`` points ``mu_j`` of
[0, 1] it has a *local* word histogram, the tokens weighted by a kernel of the distance
between their relative position and ``mu_j``. The tokens of all documents are
concatenated; the weights of a chunk of documents form one dense (tokens x positions)
block normalised per document in log space (the kernels' segment loops), summed per
(document, term) into that chunk's CSR rows, which are joined at the end.
"""
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin

from nlpfeat._chunking import chunk_n_rows
from nlpfeat._deprecation import DEPRECATED, deprecated_constraint, renamed_param
from nlpfeat._docstrings import fill_doc
from nlpfeat._params import estimator_params
from nlpfeat._validation import Integral, Interval, Real, StrOptions, check_is_fitted, fit_context
from nlpfeat.kernels._shared import (
    ENGINES,
    TIE_RTOL,
    Kernel,
    get_kernel,
    position_weights,
    resolve_engine,
    segment_ids,
)
from nlpfeat.text._base._analyzer import (
    TOKEN_PARAMETER_CONSTRAINTS,
    check_not_dataframe,
)
from nlpfeat.text._base._documents import OnePassFitMixin, check_corpus_nonempty
from nlpfeat.text._base._options import TokenOptions
from nlpfeat.text._counting._vocabulary import (
    check_df_bounds,
    check_vocabulary,
    count_matrix,
    prune_vocabulary,
    terms_in_column_order,
)
from nlpfeat.text._kernel_features._segments import lookup_ids, segment_chunks
from nlpfeat.text._vectorizers._bow import COUNTING_PARAMETER_CONSTRAINTS

__all__ = ["LocallyWeightedBagOfWords", "position_grid"]


def position_grid(n_positions):
    """The evenly spaced points ``mu_j`` of [0, 1]: ``linspace(0, 1, n)``, or [0.5] for n = 1.

    Examples
    --------
    >>> from nlpfeat.text._kernel_features._lowbow import position_grid
    >>> position_grid(3), position_grid(1)
    (array([0. , 0.5, 1. ]), array([0.5]))
    """
    return np.linspace(0.0, 1.0, n_positions) if n_positions > 1 else np.array([0.5])


@fill_doc
@estimator_params
class LocallyWeightedBagOfWords(TokenOptions, OnePassFitMixin, TransformerMixin,
                                BaseEstimator,
                                auto_wrap_output_keys=None):
    """Locally weighted bag of words: kernel-smoothed word histograms along each document.

    At ``n_positions`` evenly spaced points ``mu_j`` of [0, 1] (``linspace(0, 1, n)``;
    0.5 alone for one point) each document gets a local histogram of its tokens, each
    token weighted by a kernel of the distance between its relative position and
    ``mu_j``; every local histogram sums to 1. A huge bandwidth gives the l1-normalised
    bag of words at every point; a small one, the words near ``mu_j``.

    Only word unigrams are used (positions of n-grams are not defined), so there is no
    ``ngram_range``.
    The output is a sparse matrix, so ``set_output`` is not offered (as scikit-learn's
    vectorizers).

    Parameters
    ----------
    %(token_options)s
    n_positions : int, default=5
        Number of points ``mu_j`` along the document.
    kernel : str, Kernel or callable, default="gaussian"
        A kernel of :mod:`nlpfeat.kernels` (see ``available_kernels()``) or ``k(u)``.
    bandwidth : float, default=0.2
        Kernel scale in units of the document length (the paper's sigma).
    combine : {"concat", "mean"}, default="concat"
        How the local histograms make the features: ``"concat"``, side by side, features
        ``"p<j>|<term>"``; ``"mean"``, their average, features ``"<term>"`` (sums to 1 per
        document). Not ``pooling``, which in nlpfeat pools token vectors into a document
        vector (:class:`PMIEmbedding`, :class:`KernelAttentionPooling`).
    min_df, max_df, max_features, vocabulary
        Vocabulary options, as in ``BagOfWords`` / scikit-learn's ``CountVectorizer``.
    working_memory : float or None, default=None
        MiB that one chunk of the (tokens x positions) weights may use; a document longer
        than that is weighted span by span. Each chunk becomes rows of the output at once,
        so the peak memory of ``transform`` follows this budget: about twice it, plus the
        output, its values once more while the rows are joined, and the token ids (and,
        from text, the tokens of the document being read).
    engine : {"auto", "numba", "numpy"}, default="auto"
        ``"numba"``: the kernel weights (distances, log kernel, normalisation per document
        and point) in one compiled pass, for the built-in kernels (a user's kernel, and
        documents longer than ``working_memory``, run on numpy); ``"numpy"``: the
        reference implementation; ``"auto"``: numba. numba is a required dependency, so
        ``"numpy"`` is a reference switch, not a fallback. Both engines agree to
        round-off (1e-12 in the tests). Most of
        the time of ``transform`` goes to grouping tokens by term and building the
        sparse matrix, which both engines share.
    %(verbose)s
    pooling : default="deprecated"
        The former name of ``combine``: still accepted with a ``FutureWarning``, removed
        in 0.3.

    Attributes
    ----------
    vocabulary_ : dict of str to int
        Term -> index within each local histogram.
    fixed_vocabulary_ : bool
        Whether ``vocabulary`` was given.
    positions_ : ndarray of shape (n_positions,)
        The points ``mu_j``.
    engine_ : str
        "numba" or "numpy", as resolved from ``engine``.

    See Also
    --------
    KernelAttentionPooling : kernel weights over token vectors instead of positions.

    Notes
    -----
    The paper (Definition 3) integrates the document's step function (token ``t`` of a
    document of length :math:`L` covers :math:`((t-1)/L, t/L]`) against a kernel
    restricted to [0, 1] and renormalised there, :math:`K_{\\mu,\\sigma}`, so that every
    local histogram :math:`\\gamma_\\mu(y) = \\int_0^1 \\phi(y, s) K_{\\mu,\\sigma}(s)\\,ds`
    sums to 1. Here the integral is taken by the midpoint rule: token :math:`t`
    (0-based) sits at :math:`s_t = (t + 0.5)/L` and

    .. math:: \\gamma_{\\mu_j}(y)_w = \\sum_{t: y_t = w} \\frac{K(|s_t - \\mu_j| / h)}
              {\\sum_{t'} K(|s_{t'} - \\mu_j| / h)},

    normalised in log space; the sum over the document's tokens plays the role of the
    renormalisation over [0, 1]. Where a compact kernel covers no token midpoint the
    nearest token(s) share the weight, as the exact integral does in that limit. The
    paper's additive smoothing of the histograms (its ``c``) is left out: the output stays
    sparse. Documents are their sequences of in-vocabulary tokens (out-of-vocabulary tokens
    are dropped before positions are taken, as stop words are); a document without any
    known token gets an all-zero row.

    References
    ----------
    G. Lebanon, Y. Mao and J. Dillon, "The locally weighted bag of words framework for
    document representation", Journal of Machine Learning Research 8:2405-2441, 2007.

    Examples
    --------
    >>> from nlpfeat.text import LocallyWeightedBagOfWords
    >>> docs = ["good plot, bad ending", "bad start, good ending"]
    >>> lowbow = LocallyWeightedBagOfWords(n_positions=2, kernel="tophat", bandwidth=0.4)
    >>> X = lowbow.fit_transform(docs)
    >>> lowbow.get_feature_names_out()[:3]
    array(['p0|bad', 'p0|ending', 'p0|good'], dtype=object)
    >>> print(X.toarray().round(2))
    [[0.  0.  0.5 0.5 0.  0.5 0.5 0.  0.  0. ]
     [0.5 0.  0.  0.  0.5 0.  0.5 0.5 0.  0. ]]
    """

    _parameter_constraints = {
        "n_positions": [Interval(Integral, 1, None, closed="left")],
        "kernel": [str, callable, Kernel],
        "bandwidth": [Interval(Real, 0, None, closed="neither")],
        "combine": [StrOptions({"concat", "mean"})],
        "pooling": deprecated_constraint([StrOptions({"concat", "mean"})]),
        **{name: COUNTING_PARAMETER_CONSTRAINTS[name]
           for name in ("min_df", "max_df", "max_features", "vocabulary")},
        "working_memory": [Interval(Real, 0, None, closed="neither"), None],
        "engine": [StrOptions(set(ENGINES))],
        "verbose": ["verbose"],
        **TOKEN_PARAMETER_CONSTRAINTS,
    }

    n_positions: Any = 5
    kernel: Any = "gaussian"
    bandwidth: Any = 0.2
    combine: Any = "concat"
    min_df: Any = 1
    max_df: Any = 1.0
    max_features: Any = None
    vocabulary: Any = None
    working_memory: Any = None
    engine: Any = "auto"
    verbose: Any = 0
    pooling: Any = DEPRECATED

    @fit_context(prefer_skip_nested_validation=True)
    def fit_transform(self, X, y=None):
        """Learn the vocabulary and return the lowbow matrix (documents tokenized once).

        Returns
        -------
        X_new : scipy.sparse.csr_matrix of shape (n_documents, n_features_out)
        """
        return self._lowbow(self._fit(X))

    def _fit(self, X):
        self._check_text_params()
        get_kernel(self.kernel)  # unknown names raise here, listing the valid ones
        renamed_param(self, "pooling", "combine")     # warns now, read by transform
        check_df_bounds(self.min_df, self.max_df)
        docs = self._token_lists(X)
        check_corpus_nonempty(len(docs))
        self.fixed_vocabulary_ = self.vocabulary is not None
        if self.fixed_vocabulary_:
            self.vocabulary_ = check_vocabulary(self.vocabulary)
        else:
            counts, vocabulary = count_matrix(docs)
            if not vocabulary:
                raise ValueError(
                    f"Empty vocabulary: the documents produced no tokens. They may hold only "
                    f"stop words (stop_words={self.stop_words!r}) or tokens that the tokenizer "
                    f"(tokenizer={self.tokenizer!r}, token_pattern={self.token_pattern!r}) "
                    f"drops.")
            self.vocabulary_ = prune_vocabulary(
                counts, vocabulary, min_df=self.min_df, max_df=self.max_df,
                max_features=self.max_features)[1]
        self.positions_ = position_grid(self.n_positions)
        self.engine_ = resolve_engine(self.engine)
        return docs

    def transform(self, X):
        """Local histograms of each document.

        Parameters
        ----------
        X : iterable of str (or of token lists with ``input="tokens"``)

        Returns
        -------
        X_new : scipy.sparse.csr_matrix of shape (n_documents, n_features_out)
            ``n_positions * n_terms`` columns (``combine="concat"``) or ``n_terms``.
        """
        check_is_fitted(self, "vocabulary_")
        check_not_dataframe(X)
        tokens = self._token_fn()           # one document's tokens held at a time
        return self._lowbow(map(tokens, self._iter_docs(X)))

    def _lowbow(self, docs):
        """The lowbow matrix of ``docs`` (an iterable of token lists, read once), built a
        chunk of documents at a time: each chunk's (tokens x positions) weights fit
        ``working_memory`` and become CSR rows at once, so that besides the output only
        one chunk's work and the token ids are held."""
        ids, offsets, _ = lookup_ids(docs, self.vocabulary_)
        kern, mu, n_terms = get_kernel(self.kernel), self.positions_, len(self.vocabulary_)
        combine = renamed_param(self, "pooling", "combine")
        n_cols = len(mu) * n_terms if combine == "concat" else n_terms
        row_bytes = 8 * 8 * len(mu)
        span = chunk_n_rows(row_bytes, max(int(offsets[-1]), 1), self.working_memory)
        # every index (column or entry count, at most n_positions per token) fits this
        index_dtype = np.int32 if max(n_cols, len(mu) * len(ids)) < 2**31 else np.int64
        counts, indices, values = [], [], []
        for first, stop in segment_chunks(offsets, row_bytes, self.working_memory):
            chunk_ids = ids[offsets[first]:offsets[stop]]
            if len(chunk_ids) > span:        # one document longer than the budget: by spans
                rows = _long_document_row(chunk_ids, mu, kern, self.bandwidth, n_terms,
                                          combine, span, index_dtype)
            else:
                rows = _histogram_rows(chunk_ids, offsets[first:stop + 1] - offsets[first],
                                       mu, kern, self.bandwidth, n_terms, n_cols, combine,
                                       self.engine_, index_dtype)
            counts.append(rows[0])
            indices.extend(rows[1])
            values.extend(rows[2])
        return _stack_rows(counts, indices, values, (len(offsets) - 1, n_cols), index_dtype)

    def get_feature_names_out(self, input_features=None):
        """Output feature names: ``"p<j>|<term>"`` (``combine="concat"``) or ``"<term>"``.

        Parameters
        ----------
        input_features : None
            Ignored (text input has no input feature names).

        Returns
        -------
        feature_names_out : ndarray of str objects
        """
        check_is_fitted(self, "vocabulary_")
        terms = terms_in_column_order(self.vocabulary_)
        if renamed_param(self, "pooling", "combine") == "mean":
            return np.asarray(terms, dtype=object)
        return np.asarray([f"p{j}|{term}" for j in range(len(self.positions_)) for term in terms],
                          dtype=object)


def _histogram_rows(ids, offsets, mu, kernel, bandwidth, n_terms, n_cols, pooling, engine,
                   index_dtype):
    """(entries per row, [column indices], [values]) of the CSR rows of a chunk of
    documents.

    Tokens are grouped by (document, term) first, so that each entry is summed once
    (``np.add.reduceat`` along the contiguous token axis); scipy's conversion to CSR (a
    stable counting sort by row) then puts each row's entries in column order.
    """
    w = position_weights(offsets, mu, kernel, bandwidth, engine=engine)  # (n_pos, n_tokens)
    doc = segment_ids(offsets)
    order = np.argsort(doc * np.int64(n_terms) + ids, kind="stable")
    key = doc[order] * np.int64(n_terms) + ids[order]
    group = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if key.size else key
    w = np.add.reduceat(w[:, order], group, axis=1) if key.size else w  # (n_pos, n_pairs)
    rows, cols, data = _entries(doc[order][group], ids[order][group], w, len(mu), n_terms,
                                pooling)
    block = sp.csr_matrix((data, (rows, cols)), shape=(len(offsets) - 1, n_cols))
    return np.diff(block.indptr), [block.indices.astype(index_dtype, copy=False)], [block.data]


def _entries(pair_doc, pair_term, w, n_positions, n_terms, pooling):
    """(rows, cols, data) of the non-zero weights ``w`` (n_positions, n_pairs) of the
    (document, term) pairs, sorted by document then term."""
    if pooling == "mean":
        w = w.mean(axis=0)
        keep = w > 0
        return pair_doc[keep], pair_term[keep], w[keep]
    keep = w > 0  # column j * n_terms + term: histogram j, then term
    return (np.broadcast_to(pair_doc, w.shape)[keep],
            (np.arange(n_positions)[:, None] * n_terms + pair_term)[keep], w[keep])


def _long_document_row(ids, mu, kernel, bandwidth, n_terms, pooling, span, index_dtype):
    """:func:`_histogram_rows` of one document longer than the budget, ``span`` tokens
    (``span * n_positions`` for one position) at a time.

    Each position's largest log kernel value, nearest token and normaliser come first,
    from (n_positions x span) blocks; then the weights, one position at a time, are
    summed per term of the document: its histogram at that position, the CSR entries of
    columns ``j * n_terms + term`` in column order. Nothing of size (n_positions x
    n_tokens) is ever held.
    """
    n = len(ids)
    terms, term_of_token = np.unique(ids, return_inverse=True)
    every = np.arange(len(mu))

    def distances(rows, js):                        # (positions js, tokens of the span)
        return np.abs(mu[js, None] - (np.arange(rows.start, rows.stop) + 0.5)[None, :] / n)

    top, nearest = np.full(len(mu), -np.inf), np.full(len(mu), np.inf)
    for rows in _spans(n, span):
        dist = distances(rows, every)
        top = np.maximum(top, kernel.log_k(dist / bandwidth).max(axis=1))
        nearest = np.minimum(nearest, dist.min(axis=1))
    empty = ~np.isfinite(top)      # no token in a compact kernel's support: nearest ones share
    top[empty] = 0.0

    def weights(rows, js):         # as segment_softmax, before the division by the sum
        dist = distances(rows, js)
        log_k = kernel.log_k(dist / bandwidth)
        fallback = np.where(dist <= nearest[js, None] * (1.0 + TIE_RTOL), 0.0, -np.inf)
        return np.exp(np.where(empty[js, None], fallback, log_k) - top[js, None])

    total = sum(weights(rows, every).sum(axis=1) for rows in _spans(n, span))
    histograms = (sum(np.bincount(term_of_token[rows], weights=weights(rows, [j])[0],
                                  minlength=len(terms)) for rows in _spans(n, span * len(mu)))
                  / total[j] for j in every)
    if pooling == "mean":
        histograms = [sum(histograms) / len(mu)]
    indices, data = [], []
    for j, h in enumerate(histograms):
        keep = h > 0                  # column j * n_terms + term: histogram j, then term
        indices.append((j * n_terms * (pooling != "mean") + terms[keep]).astype(index_dtype))
        data.append(h[keep])
    return np.array([sum(map(len, data))]), indices, data


def _spans(n, span):
    return [slice(start, min(start + span, n)) for start in range(0, n, span)]


def _stack_rows(counts, indices, values, shape, index_dtype):
    """One CSR matrix of ``shape`` from consecutive rows: their entry counts and the
    pieces of their column indices and values, each row's entries in column order.

    The index pieces are in the dtype scipy keeps, and they are released before the
    values are joined: the peak is the output plus its values once more.
    """
    indptr = np.zeros(shape[0] + 1, dtype=index_dtype)
    np.cumsum(np.concatenate(counts) if counts else [], out=indptr[1:])
    joined_indices = _joined(indices, index_dtype)
    data = _joined(values, np.float64)
    X = sp.csr_matrix((data, joined_indices, indptr), shape=shape)
    X.has_sorted_indices = True      # entries are unique and in column order within rows
    return X


def _joined(pieces, dtype):
    """The pieces as one array (the one piece itself); the list is emptied."""
    joined = (pieces[0] if len(pieces) == 1 else
              np.concatenate(pieces) if pieces else np.zeros(0, dtype))
    pieces.clear()
    return joined.astype(dtype, copy=False)
