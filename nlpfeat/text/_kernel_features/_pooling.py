"""Kernel attention pooling: document vectors as Nadaraya-Watson averages of token vectors.

Each document is a set of keys (its token vectors, which are also the values) and one
query (its mean vector, idf-weighted mean, or a fixed vector). The document vector is
``sum_i w_i v_i`` with ``w_i`` the normalised kernel of ``||q - v_i|| / h``: attention
pooling with a fixed kernel. The tokens of all documents are concatenated into one array
and every per-document reduction runs over document offsets (in the kernels' segment
loops, :mod:`nlpfeat.kernels._shared`); the only Python loop is over chunks of documents
sized by ``working_memory``.
"""
import dataclasses
import warnings
from typing import Any

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    clone,
)

from nlpfeat._chunking import chunk_n_rows
from nlpfeat._docstrings import fill_doc
from nlpfeat._params import estimator_params
from nlpfeat._validation import (HasMethods, Interval, Real, StrOptions, check_finite,
                                 check_is_fitted, fit_context)
from nlpfeat.kernels._shared import (
    ENGINES,
    attention_pool,
    check_bandwidth,
    dimension_scale,
    get_kernel,
    query_distances,
    resolve_engine,
    rule_of_thumb,
    segment_distances,
    segment_ids,
    segment_kernel_weights,
)
from nlpfeat.text._base._analyzer import TOKEN_PARAMETER_CONSTRAINTS
from nlpfeat.text._base._documents import check_corpus_nonempty, reiterable
from nlpfeat.text._base._options import TokenOptions
from nlpfeat.text._kernel_features._segments import lookup_ids, segment_chunks
from nlpfeat.text._kernel_features._token_vectors import resolve_embeddings
from nlpfeat.text._vectorizers._schemes import sklearn_idf

__all__ = ["KernelAttentionPooling"]



class _LongDocument:
    """The token ids of one document longer than the memory budget, read in spans.

    Its float64 vectors, ``(n_tokens, d)``, are never held at once: each pass over the
    document (the mean query, the distances, the weighted sum) takes ``span`` tokens'
    vectors at a time, so the working memory is ``span * d`` floats plus ``O(n_tokens)``.
    """

    def __init__(self, embeddings, ids, span):
        self.embeddings, self.ids, self.span = embeddings, ids, span

    def spans(self):
        """Yield (token slice, float64 vectors of those tokens)."""
        for start in range(0, len(self.ids), self.span):
            rows = slice(start, start + self.span)
            yield rows, np.asarray(self.embeddings[self.ids[rows]], dtype=np.float64)


def _long_distances(doc, *, query=None, token_weights=None, scale=None):
    """The kernels' ``query_distances`` of a :class:`_LongDocument`, one span at a time."""
    if query is None:                           # the (weighted) mean vector, summed by spans
        total, weight = np.zeros(doc.embeddings.shape[1]), 0.0
        for rows, vectors in doc.spans():
            tw = np.ones(len(vectors)) if token_weights is None else token_weights[rows]
            total += tw @ vectors
            weight += tw.sum()
        query = total / weight
    dist = np.empty(len(doc.ids))
    for rows, vectors in doc.spans():
        dist[rows] = query_distances(vectors, np.zeros(1, dtype=np.int64), query=query,
                                     scale=scale)
    return dist


def _long_attention_pool(doc, kernel, bandwidth, *, query=None, token_weights=None):
    """The kernels' ``attention_pool`` of a :class:`_LongDocument`: (pooled (1, d), weights)."""
    dist = _long_distances(doc, query=query, token_weights=token_weights,
                           scale=dimension_scale(bandwidth))
    weights = segment_kernel_weights(dist, np.zeros(1, dtype=np.int64), kernel, bandwidth)
    pooled = np.zeros(doc.embeddings.shape[1])
    for rows, vectors in doc.spans():
        pooled += weights[rows] @ vectors
    return pooled[None, :], weights


@fill_doc
@estimator_params
class KernelAttentionPooling(TokenOptions, ClassNamePrefixFeaturesOutMixin, TransformerMixin,
                             BaseEstimator):
    """Document vectors by kernel (Nadaraya-Watson) attention over their token vectors.

    Each document's known tokens are keys and values; its query is its mean vector, its
    idf-weighted mean vector, or a fixed vector. The document vector is the attention
    average of the token vectors, with weights a normalised kernel of the distance between
    the query and each token vector, normalised in log space (log-sum-exp).

    With ``input="tokens"`` (each document a list of tokens, the gensim convention) only
    ``lowercase``, ``stop_words`` and ``stemmer`` of the text options apply; pass
    ``lowercase=False`` for case-sensitive embeddings.

    Parameters
    ----------
    embeddings : mapping, gensim KeyedVectors or estimator
        Token vectors: a dict ``token -> vector``, a gensim ``KeyedVectors`` (or a model
        with ``.wv``), or an nlpfeat estimator exposing ``vocabulary_`` (token -> row) and
        ``embeddings_`` (matrix). An estimator that is not fitted yet (no ``embeddings_``)
        is cloned and fitted on the documents given to ``fit``, so its parameters can be
        grid-searched (``embeddings__<param>``).
    %(token_options)s
    query : {"mean", "idf"} or array-like of shape (d,), default="mean"
        ``"mean"``: the mean of the document's known token vectors (one term per
        occurrence); ``"idf"``: their mean weighted by the inverse document frequency
        ``log((1 + n) / (1 + df)) + 1`` learned at ``fit`` (scikit-learn's smooth idf);
        an array: the same fixed query for every document.
    kernel : str, Kernel or callable, default="gaussian"
        A kernel of :mod:`nlpfeat.kernels` (see ``available_kernels()``) or ``k(u)``.
    bandwidth : float, array-like of shape (d,), {"median", "scott", "silverman"}, \
            default="median"
        Scale of the distances, the temperature of the attention: a huge bandwidth gives
        the plain mean of the token vectors, a tiny one the token nearest the query. An
        array gives one bandwidth per dimension. ``"median"``: the median distance between
        the training tokens and their document's query (the median heuristic: a typical
        token sits at ``u = 1``); ``"scott"`` / ``"silverman"``: the normal-reference rule
        (per dimension) on the vectors of the distinct known tokens of the training
        documents, which in high dimension gives sharply peaked weights.
    working_memory : float or None, default=None
        MiB that one chunk of token vectors may use (None: the package default); a
        document longer than that is read span by span.
    engine : {"auto", "numba", "numpy"}, default="auto"
        ``"numba"``: each document's attention (query, distances, kernel, normalisation,
        weighted sum) in one compiled pass over its tokens, for the built-in kernels (a
        user's kernel, and documents longer than ``working_memory``, run on numpy);
        ``"numpy"``: the reference implementation; ``"auto"``: numba. numba is a required
        dependency, so ``"numpy"`` is a reference switch, not a fallback. Both engines
        agree to round-off (1e-12 relative in the tests).

    Attributes
    ----------
    vocabulary_ : mapping of str to int
        Token -> row of ``embeddings_`` (shared with the given embeddings, not copied).
    embeddings_ : ndarray of shape (n_tokens_in_vocabulary, d)
        The token vectors (the given matrix, not copied; computations run in float64).
    embeddings_estimator_ : estimator
        The fitted clone, when ``embeddings`` was an unfitted estimator.
    idf_ : ndarray of shape (n_tokens_in_vocabulary,)
        Inverse document frequency of every embedded token (only for ``query="idf"``).
    query_vector_ : ndarray of shape (d,)
        The fixed query (only when ``query`` is an array).
    bandwidth_ : float or ndarray of shape (d,)
        The bandwidth used.
    engine_ : str
        "numba" or "numpy", as resolved from ``engine``.

    See Also
    --------
    nlpfeat.kernels.NadarayaWatsonRegressor : the same weights, with training points as keys.
    LocallyWeightedBagOfWords : kernel weights over token positions instead of vectors.

    Notes
    -----
    For a document with known token vectors :math:`v_1, \\dots, v_n` and query :math:`q`,

    .. math:: \\mathrm{pool}(d) = \\sum_i w_i v_i, \\qquad
              w_i = \\frac{K(\\lVert q - v_i \\rVert / h)}{\\sum_j K(\\lVert q - v_j \\rVert / h)}.

    With the Gaussian kernel :math:`w = \\mathrm{softmax}(-\\lVert q - v_i \\rVert^2 / 2h^2)`:
    attention with a negative squared-distance score. The output lies in the convex hull of
    the document's token vectors. Where a compact kernel leaves every token of a document
    outside its support, the nearest token(s) share the weight (the small-bandwidth limit).
    Unknown tokens are skipped; a document without any known token gets a zero vector, and
    ``transform`` warns once, counting such documents. Text input sets no
    ``n_features_in_`` (as scikit-learn's vectorizers).

    Examples
    --------
    >>> from nlpfeat.text import KernelAttentionPooling
    >>> emb = {"good": [1.0, 0.0], "bad": [-1.0, 0.0], "film": [0.0, 1.0]}
    >>> pool = KernelAttentionPooling(emb, bandwidth=0.5, input="tokens").fit([["good", "film"]])
    >>> print(np.round(pool.transform([["good", "good", "film"], ["bad", "oov"]]), 3))
    [[ 0.884  0.116]
     [-1.     0.   ]]
    >>> [np.round(w, 3) for w in pool.attention_weights([["good", "good", "film"]])]
    [array([0.442, 0.442, 0.116])]
    >>> pool.get_feature_names_out()
    array(['kernelattentionpooling0', 'kernelattentionpooling1'], dtype=object)
    """

    _parameter_constraints = {
        "embeddings": "no_validation",  # checked by resolve_embeddings in fit
        "query": [StrOptions({"mean", "idf"}), "array-like"],
        "kernel": [str, callable, HasMethods(["log_k", "k"])],
        "bandwidth": [Interval(Real, 0, None, closed="neither"),
                      StrOptions({"median", "scott", "silverman"}), "array-like"],
        "working_memory": [Interval(Real, 0, None, closed="neither"), None],
        "engine": [StrOptions(set(ENGINES))],
        **TOKEN_PARAMETER_CONSTRAINTS,
    }

    embeddings: Any = dataclasses.field(kw_only=False)
    query: Any = "mean"
    kernel: Any = "gaussian"
    bandwidth: Any = "median"
    working_memory: Any = None
    engine: Any = "auto"

    def _needs_fitting(self):
        emb = self.embeddings
        return (hasattr(emb, "fit") and not hasattr(emb, "embeddings_")
                and not hasattr(getattr(emb, "wv", emb), "key_to_index"))

    @fit_context(prefer_skip_nested_validation=False)  # embeddings may be fitted here
    def fit(self, X, y=None):
        """Resolve the embeddings and learn the idf weights and the bandwidth.

        Parameters
        ----------
        X : iterable of documents
            Lists of tokens (``input="tokens"``) or strings / files.
        y : None
            Ignored.

        Returns
        -------
        self : KernelAttentionPooling
        """
        self._fit(X)
        return self

    def fit_transform(self, X, y=None):
        """Fit, then return the document vectors (documents are tokenized once).

        Returns
        -------
        X_new : ndarray of shape (n_documents, d)
        """
        return self._pool(*self._fit_tokens(X))[0]

    @fit_context(prefer_skip_nested_validation=False)
    def _fit_tokens(self, X, y=None):
        return self._fit(X)

    def _fit(self, X):
        self._check_text_params()
        if self._needs_fitting():
            X = reiterable(X)  # read twice: by the estimator and below
            self.embeddings_estimator_ = clone(self.embeddings).fit(X)
            source = self.embeddings_estimator_
        else:
            source = self.embeddings
        docs = self._token_lists(X)
        check_corpus_nonempty(len(docs))
        self.vocabulary_, self.embeddings_ = resolve_embeddings(source)
        n_vocab, d = self.embeddings_.shape
        ids, offsets, positions = lookup_ids(docs, self.vocabulary_)
        get_kernel(self.kernel)  # unknown names raise here, listing the valid ones
        self.engine_ = resolve_engine(self.engine)
        if isinstance(self.query, str):
            if self.query == "idf":
                self.idf_ = _smooth_idf(ids, offsets, n_vocab)
        else:
            self.query_vector_ = self._check_query(d)
        self.bandwidth_ = self._fit_bandwidth(ids, offsets, d)
        self._n_features_out = d
        return docs, ids, offsets, positions

    def _check_query(self, d):
        q = np.asarray(self.query, dtype=np.float64)
        if q.ndim != 1 or q.shape[0] != d:
            raise ValueError(
                f"query has shape {q.shape} but the embeddings have {d} dimensions; pass a "
                f"vector of length {d}, or query='mean' / 'idf'."
            )
        return check_finite(q, "query")

    def _fit_bandwidth(self, ids, offsets, d):
        if _is_str(self.bandwidth, "median"):
            query = getattr(self, "query_vector_", None)
            # the distances the engine will weigh, so that the median token sits at u = 1
            # exactly (a compact kernel's edge) on either engine
            kern = get_kernel(self.kernel)
            dist = np.concatenate([np.zeros(0)] + [
                _long_distances(vectors, query=query, token_weights=idf)
                if isinstance(vectors, _LongDocument) else
                segment_distances(vectors, starts, kern, query=query, token_weights=idf,
                                  engine=self.engine_)
                for _, _, vectors, starts, idf in self._chunks(ids, offsets)])
            dist = dist[dist > 0]
            if dist.size == 0:
                raise ValueError(
                    "bandwidth='median' needs a known token at a positive distance from its "
                    "document's query; every distance is 0 (one-token documents?). Pass a "
                    "float bandwidth.")
            return float(np.median(dist))
        if isinstance(self.bandwidth, str):
            seen = np.unique(ids)
            if seen.size < 2:
                raise ValueError(
                    f"bandwidth={self.bandwidth!r} needs at least 2 distinct known tokens in "
                    f"the training documents; got {seen.size}. Pass a float bandwidth."
                )
            keys = np.asarray(self.embeddings_[seen], dtype=np.float64)
            return rule_of_thumb(keys, self.bandwidth, "euclidean")
        return check_bandwidth(self.bandwidth, d, "euclidean")

    def transform(self, X):
        """Pool each document's token vectors into one vector.

        %(transform_parameters)s

        Returns
        -------
        X_new : ndarray of shape (n_documents, d)
            Zero rows for documents without any known token (with one warning).
        """
        check_is_fitted(self, "embeddings_")
        docs = self._token_lists(X)
        return self._pool(docs, *lookup_ids(docs, self.vocabulary_))[0]

    def attention_weights(self, X, *, per_head=False, return_tokens=False):
        """Attention weight of every token of every document.

        Parameters
        ----------
        X : iterable of documents
        per_head : bool, default=False
            Give each document's array a leading heads axis of length 1 (one kernel is one
            head), as ``attention_weights(X, per_head=True)`` of every nlpfeat estimator.
        return_tokens : bool, default=False
            Also return the (processed) tokens the weights belong to.

        Returns
        -------
        weights : list of ndarray
            One array per document, aligned with its tokens (shape ``(n_tokens,)``, or
            ``(1, n_tokens)`` with ``per_head``): unknown tokens get 0, and the weights of a
            document with a known token sum to 1.
        tokens : list of list of str
            Only with ``return_tokens=True``.
        """
        check_is_fitted(self, "embeddings_")
        docs = self._token_lists(X)
        _, token_weights = self._pool(docs, *lookup_ids(docs, self.vocabulary_), warn=False)
        if per_head:
            token_weights = [w[np.newaxis] for w in token_weights]
        return (token_weights, docs) if return_tokens else token_weights

    def _chunks(self, ids, offsets):
        """Yield (documents with a known token, token slice, float64 vectors, starts, idf).

        A document longer than the budget comes alone, as a :class:`_LongDocument` that
        reads its vectors span by span, instead of its vectors.
        """
        d, lengths = self.embeddings_.shape[1], np.diff(offsets)
        idf = getattr(self, "idf_", None) if _is_str(self.query, "idf") else None
        row_bytes = 8 * (4 * d + 8)
        span = chunk_n_rows(row_bytes, max(int(offsets[-1]), 1), self.working_memory)
        for first, stop in segment_chunks(offsets, row_bytes, self.working_memory):
            lo, hi = offsets[first], offsets[stop]
            if hi > lo:
                rows = first + np.flatnonzero(lengths[first:stop])
                chunk_ids = ids[lo:hi]
                vectors = (_LongDocument(self.embeddings_, chunk_ids, span) if hi - lo > span
                           else np.asarray(self.embeddings_[chunk_ids], np.float64))
                yield (rows, slice(lo, hi), vectors, offsets[rows] - lo,
                       None if idf is None else idf[chunk_ids])

    def _pool(self, docs, ids, offsets, positions, *, warn=True):
        """Pooled vectors (n_docs, d) and per-document weight arrays aligned with ``docs``."""
        n_docs, d = len(docs), self.embeddings_.shape[1]
        pooled, weights = np.zeros((n_docs, d)), np.zeros(len(ids))
        kern, lengths = get_kernel(self.kernel), np.diff(offsets)
        query = getattr(self, "query_vector_", None)
        for rows, tokens, vectors, starts, idf in self._chunks(ids, offsets):
            if isinstance(vectors, _LongDocument):         # one document, span by span
                pooled[rows], weights[tokens] = _long_attention_pool(
                    vectors, kern, self.bandwidth_, query=query, token_weights=idf)
            else:
                pooled[rows], weights[tokens] = attention_pool(
                    vectors, starts, kern, self.bandwidth_, query=query, token_weights=idf,
                    engine=self.engine_)
        n_empty = int(np.count_nonzero(lengths == 0))
        if warn and n_empty:
            warnings.warn(
                f"{n_empty} of {n_docs} document(s) have no token in the embeddings' "
                f"vocabulary; their vectors are all zeros. Check the tokenization options "
                f"(lowercase, tokenizer) against the embeddings' keys.", UserWarning,
                stacklevel=4)
        return pooled, _per_document(weights, docs, offsets, positions)


def _is_str(value, name):
    return isinstance(value, str) and value == name


def _smooth_idf(ids, offsets, n_vocab):
    """Smooth idf ``log((1 + n) / (1 + df)) + 1`` of every embedded token."""
    n_docs = len(offsets) - 1
    pairs = np.unique(segment_ids(offsets) * np.int64(n_vocab) + ids)  # (doc, token), once
    df = np.bincount(pairs % n_vocab, minlength=n_vocab)
    return sklearn_idf(df, n_docs, smooth_idf=True)


def _per_document(weights, docs, offsets, positions):
    """Scatter the known tokens' weights into one zero-padded array per document."""
    lengths = np.fromiter(map(len, docs), dtype=np.int64, count=len(docs))
    starts = np.concatenate(([0], np.cumsum(lengths)))
    full = np.zeros(starts[-1])
    full[starts[segment_ids(offsets)] + positions] = weights
    return np.split(full, starts[1:-1])
