"""PMIEmbedding: word vectors from the truncated SVD of a (shifted) PPMI matrix."""
import dataclasses
import warnings
from typing import Any

import numpy as np
import scipy.linalg
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
)
from sklearn.preprocessing import normalize
from sklearn.utils import check_random_state

from nlpfeat._deprecation import DEPRECATED, deprecated_constraint, renamed_param
from nlpfeat._docstrings import fill_doc
from nlpfeat._params import estimator_params
from nlpfeat._validation import (Integral, Interval, Options, Real, StrOptions, check_is_fitted,
                                 fit_context)
from nlpfeat.text._base._analyzer import TOKEN_PARAMETER_CONSTRAINTS
from nlpfeat.text._base._documents import check_corpus_nonempty, is_one_shot
from nlpfeat.text._base._options import TokenOptions
from nlpfeat.text._counting._pair_counts import PairCounts, counting_limit, doc_chunks
from nlpfeat.text._counting._pair_merge import UpperCounts, count_upper_pairs
from nlpfeat.text._counting._term_counts import chunk_tokens
from nlpfeat.text._counting._vocabulary import count_chunks, document_error
from nlpfeat.text._dask import (
    bag_term_counts,
    is_dask_bag,
    strip_line_break,
    transform_bag,
)
from nlpfeat.text._kernel_features._pooling import KernelAttentionPooling
from nlpfeat.text._semantics._ppmi_operator import PPMIOperator
from nlpfeat.text._vectorizers._schemes import sklearn_idf

__all__ = ["PMIEmbedding"]


def _count_partition(estimator, docs):
    """The :class:`PairCounts` of one partition of a dask bag (on a worker)."""
    return estimator._update_counts(estimator._new_counts(), map(strip_line_break, docs))

class _DocumentTokens:
    """``(doc, index) -> tokens`` by the estimator's token function; an error names the
    document."""

    def __init__(self, tokens):
        self.tokens = tokens

    def __call__(self, doc, index):
        try:
            return self.tokens(doc)
        except Exception as exc:
            error = document_error(exc, index)
            if error is exc:
                raise
            raise error from exc


_N_OVERSAMPLES = 10


def randomized_svd(A, n_components, *, n_iter=5, random_state=None, dtype=np.float64):
    """Top singular values and left singular vectors of a sparse matrix.

    Randomized subspace iteration (Halko, Martinsson and Tropp 2011, algorithm 4.4) with
    ``n_components + 10`` probe vectors and LU-normalised power iterations, as in
    scikit-learn's ``randomized_svd``. The power iterations only find a basis ``Q`` of the
    dominant subspace, whose error is set by the spectrum and ``n_iter`` (a few percent
    on the trailing singular values of a PPMI matrix), not by rounding; they run in
    float32, which halves the memory traffic of the sparse products that dominate the
    time. The Rayleigh-Ritz step (``B = Q^T A`` and the SVD of ``B``) then runs in
    ``dtype``, so with float64 the returned values are the exact singular triplets of
    ``Q Q^T A`` to float64 precision.

    Parameters
    ----------
    A : sparse matrix of shape (n_rows, n_cols)
    n_components : int
    %(token_options)s
    n_iter : int, default=5
    random_state : RandomState instance
    dtype : {np.float64, np.float32}, default=np.float64

    Returns
    -------
    U : ndarray of shape (n_rows, n_components), dtype ``dtype``
        Signs fixed as scikit-learn's ``svd_flip`` does (largest entry of each column
        positive).
    S : ndarray of shape (n_components,), descending
    """
    A = A.tocsr()
    A32 = A.astype(np.float32)
    At32 = A32.T.tocsr()

    def rmatmul(X):
        return (At32 if X.dtype == np.float32 else A.T) @ X

    return operator_svd(lambda X: A32 @ X, rmatmul, A.shape, n_components, n_iter=n_iter,
                        random_state=random_state, dtype=dtype)


def _triangular_factor(M, block=4096):
    """``R`` of the QR factorisation of a tall ``M`` (n, m), a block of rows at a time
    (no copy of ``M``): ``M^T M = R^T R``, so ``M`` and ``R`` share singular values and
    right singular vectors."""
    R = M[:0]
    for start in range(0, len(M), block):
        R = scipy.linalg.qr(np.concatenate([R, M[start : start + block]]), mode="r",
                            overwrite_a=True, check_finite=False)[0][: M.shape[1]].copy()
    return R


def operator_svd(matmul, rmatmul, shape, n_components, *, n_iter=5, random_state=None,
                 dtype=np.float64):
    """:func:`randomized_svd` of a matrix given by its products ``A @ X`` and ``A.T @ X``.

    ``matmul`` and ``rmatmul`` take a dense C-ordered ``X`` (float32 in the power
    iterations, ``dtype`` in the Rayleigh-Ritz step) and return the product in its dtype.
    Beyond the products, memory holds a few dense ``(n, n_components + 10)`` blocks: the
    basis ``Q`` and ``B^T = A^T Q`` in ``dtype``, whose small triangular factor is taken a
    block of rows at a time, never a full-size SVD workspace.
    """
    rng = check_random_state(random_state)
    n_random = min(n_components + _N_OVERSAMPLES, min(shape))
    Y = matmul(rng.standard_normal((shape[1], n_random)).astype(np.float32))
    for _ in range(n_iter):                  # the products' outputs are factorised in place
        Y = scipy.linalg.lu(Y, permute_l=True, overwrite_a=True, check_finite=False)[0]
        Y = scipy.linalg.lu(rmatmul(Y), permute_l=True, overwrite_a=True,
                            check_finite=False)[0]
        Y = matmul(Y)
    Y = Y.astype(dtype, order="F")             # LAPACK's layout: the QR runs in place
    Q = scipy.linalg.qr(Y, mode="economic", overwrite_a=True, check_finite=False)[0]
    del Y
    Q = np.ascontiguousarray(Q)                # rows contiguous for the products
    Bt = rmatmul(Q)                            # (n_cols, n_random) = B^T
    R = _triangular_factor(Bt)                 # Bt = Qb R
    del Bt
    _, S, Vb = np.linalg.svd(R)                # B = Q^T A = Vb^T S (Qb W)^T
    U = Q @ Vb.T[:, :n_components]
    del Q
    # scikit-learn's svd_flip (largest entry of each column positive), a column at a time:
    # svd_flip itself makes two full-size copies of U
    top = [np.abs(U[:, c]).argmax() for c in range(U.shape[1])]
    U *= np.sign(U[top, np.arange(U.shape[1])])
    return U.astype(dtype, copy=False), S[:n_components].astype(dtype, copy=False)



@fill_doc
@estimator_params
class PMIEmbedding(ClassNamePrefixFeaturesOutMixin, TokenOptions, TransformerMixin,
                   BaseEstimator):
    """Word embeddings from the truncated SVD of the positive PMI matrix (PPMI-SVD).

    ``fit`` counts word-context co-occurrences in a window, turns them into (shifted) PPMI
    with smoothed context counts, and keeps the top ``n_components`` singular directions,
    ``W = U_k S_k^eig``. ``transform`` pools the vectors of each document's words into one
    document vector.

    Parameters
    ----------
    n_components : int, default=100
        Dimension of the word vectors; must be below the vocabulary size.
    window : int, default=5
        Largest distance, in tokens, between a word and a context word (on each side; as
        gensim's ``Word2Vec(window=)``).
    min_count : int, default=5
        Words seen fewer times are dropped from the vocabulary.
    alpha : float, default=0.75
        Context-distribution smoothing (see :func:`nlpfeat.text.pmi`). Must be > 0.
    eig : float, default=0.5
        Weight of the singular values: ``W = U S^eig`` (0: ``U`` alone, 1: ``U S``);
        0.5 also scores best on Lee's document benchmark (``benchmarks/RESULTS.md``).
    shift : float, default=1
        Shifted PPMI ``max(PMI - log shift, 0)``; 1 means no shift.
    context_weighting : {"uniform", "harmonic"}, default="uniform"
        Weight of a context at distance d: 1 or 1/d.
    pooling : {"mean", "tfidf", "attention"}, default="mean"
        Document vector: the mean of its word vectors (one term per occurrence), their
        idf-weighted mean, or kernel attention pooling
        (:class:`nlpfeat.text.KernelAttentionPooling` with its default parameters over
        these vectors, fitted on the training documents).
    dtype : {np.float64, np.float32}, default=np.float64
        Precision of ``embeddings_`` and of the SVD's final Rayleigh-Ritz step (the
        projection ``Q^T A`` and the small dense SVD). The power iterations, which only
        find the subspace ``Q`` and whose error is the randomized method's (a few percent
        on the trailing singular values), run in float32 either way: that halves the
        memory traffic of the sparse products that dominate ``fit``, and the singular
        values equal scikit-learn's float64 ``randomized_svd`` with the same seed to
        about 1e-6 relative (see ``benchmarks/RESULTS.md``).
    n_iter : int, default=5
        Power iterations of the randomized SVD (scikit-learn's ``TruncatedSVD`` default);
        each costs two sparse products and sharpens the trailing singular vectors (figures
        in ``benchmarks/RESULTS.md``).
    random_state : int, RandomState instance or None, default=None
        Seeds the randomized SVD.
    working_memory : float, default=None
        MiB per chunk of co-occurrence counting (and per bucket of its merge); None
        follows scikit-learn's ``working_memory`` configuration when set, else 64 MiB, as
        for :func:`~nlpfeat.text.cooccurrence`. Pooling documents (``transform``) resolves
        it the same way with nlpfeat's 4 MiB default (see :mod:`nlpfeat._chunking`).
    prune_at : int or None, default=None
        Largest vocabulary kept while counting (gensim's ``prune_at``; see
        :func:`~nlpfeat.text.cooccurrence`): bounds the memory of a corpus with an
        unbounded number of rare words, at the price of approximate counts near the
        pruning threshold. None (the default) never prunes: every count is exact.
    %(verbose)s
    weighting : default="deprecated"
        The former name of ``context_weighting`` (``weighting`` is the TF-IDF scheme of
        :class:`~nlpfeat.text.TermWeighting`): still accepted with a ``FutureWarning``,
        removed in 0.3.

    Attributes
    ----------
    vocabulary_ : dict
        Word -> row of ``embeddings_`` (sorted words).
    embeddings_ : ndarray of shape (n_words, n_components)
        The word vectors ``U_k S_k^eig``.
    singular_values_ : ndarray of shape (n_components,)
    idf_ : ndarray of shape (n_words,)
        Smoothed inverse document frequencies ``log((1 + n) / (1 + df)) + 1``, for
        ``pooling="tfidf"``.
    attention_ : KernelAttentionPooling
        The pooling fitted on the training documents (``pooling="attention"`` only).

    See Also
    --------
    cooccurrence, pmi, gensim.models.Word2Vec

    Notes
    -----
    The defaults follow Levy, Goldberg and Dagan (2015): smoothing ``alpha = 0.75``
    helped every method; ``eig = 0.5`` (symmetric weighting) beat the textbook
    ``U S``; and shifting PPMI, which mimics skip-gram's ``k`` negative samples and helps
    the sparse PPMI vectors, hurt SVD, so ``shift=1`` here.

    **Streaming.** ``fit`` reads ``X`` once, a chunk of documents at a time (see
    :func:`~nlpfeat.text.cooccurrence`), and ``transform`` pools a chunk at a time, so a
    corpus on disk (:class:`nlpfeat.datasets.Corpus`) is never held in memory. ``fit``
    counts in two passes over a temporary copy of the token ids (4 bytes per token, on
    disk): the words, then the pairs of the words kept by ``min_count`` only, spilled
    to bucket files and merged once, in linear time (see
    :func:`~nlpfeat.text.cooccurrence`). Peak memory is the chunk budget plus the
    model: the vocabulary, the upper triangle of the symmetric counts of the kept words
    (8 bytes per stored pair; the PPMI matrix is never built: the SVD's products compute
    it from the counts on the fly) and at most four dense ``n_words x (n_components +
    10)`` float64 blocks for the SVD (its basis and the projection); the peak measured on
    a 100M-token corpus is in ``benchmarks/RESULTS.md``.
    ``pooling="attention"`` is the exception: it holds the training documents' token
    lists. ``partial_fit`` adds batches (counts are sums; it keeps a table of every
    distinct pair, 16 bytes each, rare words included), and a ``dask.bag.Bag`` of
    documents is counted per partition on the workers and merged by a tree reduction, to
    the same counts as one machine's ``fit``, bit for bit; ``prune_at`` also counts in
    one pass.

    References
    ----------
    .. [1] O. Levy, Y. Goldberg and I. Dagan, "Improving Distributional Similarity with
       Lessons Learned from Word Embeddings", TACL 3, 2015.

    Examples
    --------
    >>> from nlpfeat.text import PMIEmbedding
    >>> docs = ["the cat sat on the mat", "the dog sat on the rug",
    ...         "a cat and a dog", "the mat and the rug"]
    >>> emb = PMIEmbedding(n_components=2, window=2, min_count=1, random_state=0).fit(docs)
    >>> emb.embeddings_.shape
    (8, 2)
    >>> emb.transform(["the cat", "a dog"]).shape
    (2, 2)
    """

    _parameter_constraints = {
        **TOKEN_PARAMETER_CONSTRAINTS,
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "window": [Interval(Integral, 1, None, closed="left")],
        "min_count": [Interval(Integral, 1, None, closed="left")],
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "eig": [Interval(Real, None, None, closed="neither")],
        "shift": [Interval(Real, 1, None, closed="left")],
        "context_weighting": [StrOptions({"uniform", "harmonic"})],
        "weighting": deprecated_constraint([StrOptions({"uniform", "harmonic"})]),
        "pooling": [StrOptions({"mean", "tfidf", "attention"})],
        "dtype": [Options(type, {np.float64, np.float32})],
        "n_iter": [Interval(Integral, 0, None, closed="left")],
        "random_state": ["random_state"],
        "working_memory": [Interval(Real, 0, None, closed="neither"), None],
        "prune_at": [Interval(Integral, 1, None, closed="left"), None],
        "verbose": ["verbose"],
    }

    n_components: Any = dataclasses.field(default=100, kw_only=False)
    window: Any = 5
    min_count: Any = 5
    alpha: Any = 0.75
    eig: Any = 0.5
    shift: Any = 1
    context_weighting: Any = "uniform"
    pooling: Any = "mean"
    dtype: Any = np.float64
    n_iter: Any = 5
    random_state: Any = None
    working_memory: Any = None
    prune_at: Any = None
    verbose: Any = 0
    weighting: Any = DEPRECATED

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Learn word vectors from the documents ``X``.

        Parameters
        ----------
        X : iterable of str (or of list of str with ``input="tokens"``), or dask.bag.Bag
            Read once, a chunk at a time: a list, a generator, a lazily read
            :class:`nlpfeat.datasets.Corpus`, or a ``dask.bag.Bag`` counted on its workers.
        y : None
            Ignored.

        Returns
        -------
        self : PMIEmbedding
        """
        self._check_text_params()
        if self.pooling == "attention":
            self._check_not_bag(X, "fit with pooling='attention'")
            docs = self._token_lists(X)
            self._embed(*self._count_pairs(docs, token_lists=True))
            self._fit_attention(docs)
        else:
            self._embed(*self._count_pairs(X))
            self.__dict__.pop("attention_", None)
        self.__dict__.pop("_pair_counts", None)     # fit keeps no counts (see partial_fit)
        return self

    @fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y=None):
        """Add the co-occurrence counts of the batch ``X``, then recompute the vectors.

        The counts (and word and document frequencies) are sums, so ``fit`` on a corpus
        and ``partial_fit`` over any split of it give the same counts, bit for bit, and
        the same vectors (to rounding, up to sign); ``min_count`` is applied to the summed
        frequencies. The counts of all batches are kept (the pair table: 16 bytes per
        distinct pair of the words seen so far, rare ones included), and ``fit`` discards
        them, so a ``partial_fit`` continues only from earlier ``partial_fit`` calls. If
        the words seen so far are too few for ``n_components``, the counts are kept,
        the estimator stays unfitted and a warning asks for more batches.

        %(partial_fit_sections)s
        """
        self._check_text_params()
        first = not hasattr(self, "_pair_counts")
        if first:
            if hasattr(self, "embeddings_"):
                raise ValueError(
                    "This PMIEmbedding was fitted by fit, which keeps no co-occurrence "
                    "counts; partial_fit continues only from earlier partial_fit calls. "
                    "Call fit on all the documents, or clone(estimator) and feed every "
                    "batch to partial_fit.")
        if self.pooling == "attention":
            raise ValueError("partial_fit does not support pooling='attention' (the pooling "
                             "is fitted on the training documents, which partial_fit does "
                             "not keep); use pooling='mean' or 'tfidf', or fit.")
        batch = self._count(X)            # a batch that fails leaves the estimator as it was
        counts = batch if first else self._pair_counts.merge(batch)
        self._pair_counts = counts
        n_words = int(np.count_nonzero(counts.freq >= self.min_count))
        if n_words > self.n_components:
            matrix, vocabulary = counts.matrix(self.min_count)
            upper = UpperCounts.from_symmetric(matrix)
            del matrix
            self._embed(upper, vocabulary, counts)
            return self
        for name in ("vocabulary_", "embeddings_", "singular_values_", "idf_"):
            self.__dict__.pop(name, None)
        warnings.warn(f"{n_words} words seen at least min_count={self.min_count} times so far, "
                      f"not more than n_components={self.n_components}: no vectors yet. The "
                      f"counts are kept; feed more batches to partial_fit before transform.",
                      UserWarning, stacklevel=2)
        return self

    @fit_context(prefer_skip_nested_validation=True)
    def fit_transform(self, X, y=None):
        """Learn the word vectors and pool each document's.

        A list or a re-iterable corpus (e.g. a :class:`nlpfeat.datasets.Corpus`) is read
        twice, a chunk at a time: to count, then to pool. A one-shot iterator, open files
        (``input="file"``) and ``pooling="attention"`` are tokenized once and their token
        lists held in memory. A dask bag is counted on its workers, then pooled there
        (``fit(bag).transform(bag)``: read twice; not with ``pooling="attention"``).

        Parameters
        ----------
        X : iterable of str (or of list of str with ``input="tokens"``), or dask.bag.Bag
        y : None
            Ignored.

        Returns
        -------
        vectors : ndarray of shape (n_documents, n_components)
            A lazy ``dask.array`` for a bag (see :meth:`transform`).
        """
        if is_dask_bag(X):
            self._check_not_bag(X, "fit_transform with pooling='attention'")
            return self.fit(X).transform(X)
        if is_one_shot(X) or self.input == "file" or self.pooling == "attention":
            self._check_text_params()
            docs = self._token_lists(X)
            self._embed(*self._count_pairs(docs, token_lists=True))
            if self.pooling == "attention":
                self._fit_attention(docs)
            self.__dict__.pop("_pair_counts", None)
            return self._pool(docs, input="tokens")
        self.fit(X)
        return self.transform(X)

    def _check_not_bag(self, X, what):
        if is_dask_bag(X) and self.pooling == "attention":
            raise TypeError(f"{what} does not take a dask bag: attention pooling learns "
                            f"from every document's tokens at once, gathered on this "
                            f"machine. Use pooling='mean' or 'tfidf' on a bag.")

    def _new_counts(self):
        weighting = renamed_param(self, "weighting", "context_weighting")
        return PairCounts(self.window, weighting=weighting, document_frequency=True,
                          prune_at=self.prune_at)

    def _token_stream(self, X):
        """Each document's token list, read lazily; an error names the document."""
        tokens = _DocumentTokens(self._token_fn())
        for i, doc in enumerate(self._iter_docs(X)):
            yield tokens(doc, i)

    def _count_pairs(self, X, *, token_lists=False):
        """What ``fit`` counts: (:class:`UpperCounts` of the kept words, their vocabulary,
        the term statistics).

        The documents are read once (token lists already made, and checked, when
        ``token_lists``). Counting runs in two passes over a temporary copy of the token
        ids (:func:`~nlpfeat.text._counting._pair_merge.count_upper_pairs`): the terms, then the
        pairs of the words kept by ``min_count`` only, in linear time. A dask bag and
        ``prune_at`` count in one pass (:class:`PairCounts`: partitions merged, pruned
        while counting).
        """
        if is_dask_bag(X) or self.prune_at is not None:
            counts = (self._new_counts().update(X, working_memory=self.working_memory,
                                                check_tokens=False)
                      if token_lists else self._count(X))
            check_corpus_nonempty(counts.n_documents)
            matrix, vocabulary = counts.matrix(self.min_count, release=True)
            upper = UpperCounts.from_symmetric(matrix)
            del matrix
            return upper, vocabulary, counts
        terms = self._new_counts()
        # string documents whose options the compiled tokenizer honours go to the counts
        # untokenized (numbered without a str per token), else their token lists
        options = None if token_lists else self._text_pass_options()
        if options is None:
            stream = X if token_lists else self._token_stream(X)
            text = None
        else:
            stream = self._iter_docs(X)
            text = (options, _DocumentTokens(self._token_fn()))
        upper, vocabulary = count_upper_pairs(
            doc_chunks(stream, self.window, self.working_memory, check_tokens=False,
                       text=text is not None),
            terms, min_count=self.min_count, limit=counting_limit(self.working_memory),
            check_terms=lambda terms: check_corpus_nonempty(terms.n_documents), text=text)
        return upper, vocabulary, terms

    def _count(self, X):
        """The :class:`PairCounts` of ``X``: streamed a chunk at a time, or, for a dask
        bag, counted per partition on the workers and merged by a tree reduction."""
        if is_dask_bag(X):
            counts = bag_term_counts(self, X, _count_partition)
        else:
            counts = self._update_counts(self._new_counts(), X)
        check_corpus_nonempty(counts.n_documents)
        return counts

    def _update_counts(self, counts, X):
        """``counts`` updated with the documents ``X``: string documents numbered by the
        compiled pass where the text options allow it exactly (not with ``prune_at``,
        whose counts depend on the chunks' boundaries), else token lists."""
        options = None if self.prune_at is not None else self._text_pass_options()
        if options is None:
            return counts.update(self._token_stream(X), working_memory=self.working_memory,
                                 check_tokens=False)
        return counts.update(self._iter_docs(X), working_memory=self.working_memory,
                             check_tokens=False,
                             text=(options, _DocumentTokens(self._token_fn())))

    def _embed(self, upper, vocabulary, terms):
        """Vocabulary, PPMI-SVD vectors and idf from the symmetric counts ``upper`` of the
        words of ``vocabulary`` and the term statistics ``terms`` (df, documents).

        The PPMI matrix is never built: the SVD's products compute it on the fly from
        the counts (:class:`~nlpfeat.text._semantics._ppmi_operator.PPMIOperator`)."""
        rng = check_random_state(self.random_state)
        n_words = len(vocabulary)
        if self.n_components >= n_words:
            raise ValueError(
                f"n_components={self.n_components} must be smaller than the vocabulary size "
                f"({n_words} words seen at least min_count={self.min_count} times). Lower "
                f"n_components, lower min_count or fit on a larger corpus.")
        scores = PPMIOperator(upper, self.alpha, self.shift)
        U, S = operator_svd(scores.matmul, scores.rmatmul, scores.shape, self.n_components,
                            n_iter=self.n_iter, random_state=rng, dtype=self.dtype)
        del scores
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            U *= S**self.eig                                # (n_words, n_components)
        embeddings = U
        if not np.isfinite(embeddings).all():
            raise ValueError(
                f"eig={self.eig} overflows the singular-value weights S**eig (singular values "
                f"from {S.min():.3g} to {S.max():.3g}); use an eig between 0 and 1, as Levy "
                f"et al. (2015) do, or fewer n_components when some singular values are 0.")
        self.vocabulary_ = vocabulary
        self.singular_values_ = S
        self.embeddings_ = embeddings
        df = terms.df[terms.selected_ids(vocabulary)]
        self.idf_ = sklearn_idf(df, terms.n_documents, smooth_idf=True)

    def _fit_attention(self, docs):
        # the tokens are processed already: no lowercase
        self.attention_ = KernelAttentionPooling(
            self, input="tokens", lowercase=False,
            working_memory=self.working_memory).fit(docs)

    @property
    def _n_features_out(self):
        return self.n_components

    def transform(self, X):
        """Pool the word vectors of each document into one vector.

        Parameters
        ----------
        X : iterable of str (or of list of str with ``input="tokens"``), or dask.bag.Bag
            Read once, a chunk at a time (``pooling="attention"`` holds its token lists,
            and takes no bag).

        Returns
        -------
        vectors : ndarray of shape (n_documents, n_components)
            Zero for a document without any known word. For a dask bag, a lazy
            ``dask.array`` with one block per partition (rows in the bag's order; the
            fitted model is sent to each worker once).
        """
        check_is_fitted(self, "embeddings_")
        if is_dask_bag(X):
            self._check_not_bag(X, "transform with pooling='attention'")
            return transform_bag(self, X)
        if self.pooling == "attention":
            return self._pool(self._token_lists(X), input="tokens")
        return self._pool(X, input=self.input)

    def _pool(self, X, *, input):
        """Document vectors of ``X`` (token lists when ``input="tokens"``), built a chunk of
        documents at a time: weights (counts, times idf) normalised to sum 1, times the
        word vectors."""
        if self.pooling == "attention":
            if not X:
                return np.zeros((0, self.embeddings_.shape[1]))
            return self.attention_.transform(X)
        docs = X if input == "tokens" else self._iter_docs(X)
        analyze = None if input == "tokens" else self._token_fn()
        blocks = [np.zeros((0, self.embeddings_.shape[1]), dtype=self.embeddings_.dtype)]
        for chunk in count_chunks(docs, self.vocabulary_, learn=False, analyze=analyze,
                                  chunk_tokens=chunk_tokens(self.working_memory)):
            weights = chunk.to_csr(len(self.vocabulary_), dtype=np.float64)
            if self.pooling == "tfidf":
                weights = weights.multiply(self.idf_).tocsr()
            weights = normalize(weights, norm="l1")         # rows: convex weights (or 0)
            blocks.append(np.asarray(weights @ self.embeddings_))
        return np.concatenate(blocks) if len(blocks) > 2 else blocks[-1]

    def _unit_vectors(self):
        return normalize(self.embeddings_)

    def _row(self, word):
        try:
            return self.vocabulary_[word]
        except KeyError:
            raise KeyError(f"word {word!r} is not in the vocabulary of this PMIEmbedding "
                           f"({len(self.vocabulary_)} words seen at least "
                           f"min_count={self.min_count} times).") from None

    def most_similar(self, word, topn=10):
        """The ``topn`` words with the highest cosine similarity to ``word``.

        Parameters
        ----------
        word : str
        topn : int, default=10

        Returns
        -------
        neighbours : list of (str, float)
            Best first, ``word`` itself excluded (gensim's format).

        Raises
        ------
        KeyError
            If ``word`` is not in the vocabulary.
        """
        check_is_fitted(self, "embeddings_")
        row = self._row(word)
        unit = self._unit_vectors()
        sims = unit @ unit[row]
        sims[row] = -np.inf
        topn = min(int(topn), len(sims) - 1)
        best = np.argpartition(-sims, topn - 1)[:topn] if topn > 0 else np.empty(0, int)
        best = best[np.argsort(-sims[best], kind="stable")]
        words = np.empty(len(self.vocabulary_), dtype=object)
        words[list(self.vocabulary_.values())] = list(self.vocabulary_)
        return [(words[i], float(sims[i])) for i in best]

    def similarity(self, word1, word2):
        """Cosine similarity of two words' vectors (KeyError for an unknown word)."""
        check_is_fitted(self, "embeddings_")
        a, b = self.embeddings_[self._row(word1)], self.embeddings_[self._row(word2)]
        norm = np.linalg.norm(a) * np.linalg.norm(b)
        return float(a @ b / norm) if norm > 0 else 0.0

    def to_keyedvectors(self):
        """The word vectors as gensim ``KeyedVectors`` (needs gensim)."""
        check_is_fitted(self, "embeddings_")
        from gensim.models import KeyedVectors

        kv = KeyedVectors(vector_size=self.embeddings_.shape[1])
        kv.add_vectors(list(self.vocabulary_), self.embeddings_)
        return kv
