"""TopicModel: LDA, NMF and LSI topic models (gensim or scikit-learn) scored by coherence.

One estimator in front of two libraries: the backend modules map TopicModel's parameter
names onto each library's (``_topics_gensim.py``, ``_topics_sklearn.py``); this module
handles the input (a document-term matrix or token lists), the words, and the coherence
that ``score`` reports so that ``GridSearchCV`` selects the number of topics by it.
"""
from collections.abc import Mapping, Sized
from collections.abc import Set as AbstractSet
from numbers import Number

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils.metaestimators import available_if

from nlpfeat._chunking import gen_row_chunks
from nlpfeat._deprecation import DEPRECATED, renamed_value
from nlpfeat._validation import (Integral, Interval, Real, StrOptions, check_is_fitted,
                                 fit_context, validate_data)
from nlpfeat.text._base._analyzer import check_not_dataframe
from nlpfeat.text._base._documents import (
    check_corpus_nonempty,
    check_corpus_type,
    column_documents,
    iter_documents,
    reiterable,
)
from nlpfeat.text._counting._vocabulary import (
    check_vocabulary,
    count_matrix,
    terms_in_column_order,
)
from nlpfeat.text._dask import is_dask_bag
from nlpfeat.text._topics._coherence import (
    DEFAULT_WINDOW_SIZE,
    coherence_values,
    top_word_ids,
)
from nlpfeat.text._topics._gensim_backend import GensimTopicBackend
from nlpfeat.text._topics._sklearn_backend import SklearnTopicBackend
from nlpfeat.text._vectorizers._bow import BagOfWords

__all__ = ["TopicModel"]

_BACKENDS = {"gensim": GensimTopicBackend, "sklearn": SklearnTopicBackend}
#: Topic-model methods and backends, the defaults first.
METHODS = ("lda", "nmf", "lsi")
BACKENDS = tuple(_BACKENDS)
_LSI_MAX_VALUE = 1e150    # gensim's LSI squares X's values: beyond ~1e154 they overflow
#: Bytes per non-zero of a block of rows while its topics are inferred (gensim's bag of
#: words holds a tuple of two Python numbers per non-zero).
_BYTES_PER_NONZERO = 120


def _reiterable(X):
    """``reiterable(X)``, but a dask bag as it is (iterating it would compute it here), a
    column of documents (pandas or polars Series) as a list and a DataFrame of text
    rejected (iterating one yields its column names)."""
    if is_dask_bag(X):
        return X
    if hasattr(X, "columns") and np.asarray(X[:1]).dtype.kind not in "biuf":
        check_not_dataframe(X)
    return reiterable(column_documents(X))


def _is_texts(X):
    """True for a dask bag or an iterable of text documents (``str`` or ``bytes``, e.g. a
    ``Corpus``)."""
    if is_dask_bag(X):
        return True
    if sp.issparse(X) or hasattr(X, "__array__") or isinstance(X, (str, bytes)):
        return False
    try:
        return isinstance(next(iter(X), None), (str, bytes))
    except TypeError:
        return False


_NO_DOCUMENT = object()


def _is_tokens(X):
    """True for token lists (``[["a", "b"], ...]``) and for documents that are neither rows
    of numbers nor text (dicts, sets, None: the token-list rule of ``iter_documents`` names
    them); False for matrices, including a list of rows of numbers."""
    if sp.issparse(X) or hasattr(X, "__array__") or isinstance(X, str):
        return False
    first = next((doc for doc in X if not isinstance(doc, Sized) or len(doc)), _NO_DOCUMENT)
    if first is _NO_DOCUMENT:  # only empty documents: token lists with no token (not a
        return all(isinstance(doc, (list, tuple)) for doc in X)  # 0-column matrix)
    if isinstance(first, (Mapping, AbstractSet)) or not hasattr(first, "__getitem__"):
        return not isinstance(first, Number)      # a number: a 1-D list, not a matrix
    return isinstance(first[0], str)


def _is_empty(X):
    """True for a corpus without documents given as a list or tuple (``[]``)."""
    return isinstance(X, (list, tuple)) and len(X) == 0


def _is_lda(model):
    return model.method == "lda"


class TopicModel(TransformerMixin, BaseEstimator):
    """Topic model (LDA, NMF or LSI) on a gensim or scikit-learn backend, scored by coherence.

    ``fit`` learns ``n_components`` topics from a document-term count matrix (e.g. from
    ``BagOfWords``), from token lists, or from text documents (e.g. a lazily read
    :class:`nlpfeat.datasets.Corpus` or a ``dask.bag.Bag``; see Notes); ``transform``
    gives the document-topic matrix;
    ``score(X)`` is the mean coherence of the topics on ``X``, so that
    ``GridSearchCV(TopicModel(), {"n_components": [5, 10, 20]})`` picks the most coherent model.

    Parameters
    ----------
    n_components : int, default=10
        Number of topics, between 1 and the vocabulary size.
    method : {"lda", "nmf", "lsi"}, default="lda"
        Latent Dirichlet allocation (probabilistic; ``transform`` rows sum to 1),
        non-negative matrix factorisation, or latent semantic indexing (truncated SVD; also
        takes signed weights such as centred TF-IDF).
    backend : {"gensim", "sklearn"}, default="gensim"
        gensim ``LdaModel`` / ``Nmf`` / ``LsiModel`` or scikit-learn
        ``LatentDirichletAllocation`` / ``NMF`` / ``TruncatedSVD``.
    max_iter : int, default=None
        Passes over the corpus: gensim ``passes`` (LDA, NMF) or ``power_iters`` (LSI);
        scikit-learn ``max_iter`` (LDA, NMF) or ``n_iter`` (LSI). ``None`` keeps the
        library's default (gensim 1 pass, 2 power iterations; scikit-learn 10 LDA epochs,
        200 NMF iterations, 5 SVD iterations).
    alpha : float, default=None
        LDA's document-topic Dirichlet prior (gensim ``alpha``, scikit-learn
        ``doc_topic_prior``); ``None`` = 1 / n_components in both. Ignored by NMF and LSI.
    eta : float, default=None
        LDA's topic-word Dirichlet prior (gensim ``eta``, scikit-learn ``topic_word_prior``);
        ``None`` = 1 / n_components in both. Ignored by NMF and LSI.
    random_state : int, RandomState instance or None, default=None
        Seeds the backend; an int makes ``fit`` and ``transform`` deterministic.
    coherence : {"c_npmi", "u_mass", "c_uci", "c_v"}, default="c_npmi"
        Measure of ``coherence_`` and ``score`` (every one is higher-is-better; see
        :func:`~nlpfeat.text.topic_coherence`). On a matrix, probabilities come from boolean
        documents; on token lists, from sliding windows (gensim's default sizes).
    topn : int, default=10
        Top words per topic used by ``top_words`` and the coherence.
    vocabulary : dict or array-like of str, default=None
        The words of the matrix columns (a vectorizer's ``vocabulary_`` or
        ``get_feature_names_out()``); a fixed vocabulary for token lists.
    backend_params : dict, default=None
        Further keyword arguments for the backend's model (e.g. ``{"chunksize": 500,
        "iterations": 100}`` for gensim ``LdaModel``, ``{"learning_method": "online"}``).
    eig : float, default=1.0
        LSI only: the singular-value power ``p`` of the document vectors ``U S^p``
        (``transform`` returns ``X V S^(p-1)``; 1 is the classic LSI projection ``X V``,
        0 whitens the topics, as ``PMIEmbedding``'s ``eig`` does for words). On Lee's
        benchmark (log-entropy weights, 200 topics, fitted on the 300 background articles)
        ``p=1`` correlates 0.606 with people over all pairs and ``p=1.5`` 0.623; with ``p``
        and ``n_components`` chosen on half of the pairs and scored on the other half, 0.610
        against 0.598 for ``p=1`` (``benchmarks/quality_lee.py``). Ignored by LDA and NMF.
    verbose : int, default=0
        With 1 or more, progress bars on stderr: over the text documents counted (as
        :class:`BagOfWords`'s) and, with ``backend="gensim"``, over the documents of each
        LDA pass and of LSI's pass (scikit-learn's models and gensim's NMF show none).

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        Topic-word weights: LDA's variational pseudo-counts (lambda), NMF's H, LSI's
        right singular vectors.
    singular_values_ : ndarray of shape (n_components,)
        LSI only: the singular values (zero for topics beyond the rank of ``X``).
    coherence_ : ndarray of shape (n_components,)
        Coherence of each topic on the training data.
    vocabulary_ : dict
        Word -> column, when the words are known (token input, ``vocabulary``, or a
        DataFrame's columns).
    model_ : object
        The fitted gensim or scikit-learn model.
    n_iter_ : int
        Passes (iterations) the backend ran.
    n_features_in_ : int
        Number of columns seen in ``fit`` (matrix input).

    Notes
    -----
    **Text documents and streaming.** An iterable of ``str`` documents (a list, a
    generator, a :class:`nlpfeat.datasets.Corpus`) or a ``dask.bag.Bag`` of them is
    counted by :class:`BagOfWords` with its default analysis (lowercase, the CJK-aware
    regexp tokenizer; put your own vectorizer in a Pipeline for other options): a chunk at
    a time, or per partition on the Dask workers, so the token lists are never held and
    the sparse count matrix is the memory bound. The coherence of such a corpus is then
    measured on boolean documents, as for a matrix. gensim's LDA reads that matrix as a
    stream of bag-of-words blocks; scikit-learn's ``LatentDirichletAllocation`` and
    ``NMF`` and gensim's ``Nmf`` and ``LsiModel`` need the whole matrix in memory (they
    get it as it is, or transposed). ``transform`` infers the topics a block of rows at a
    time (scikit-learn's NMF excepted: its stopping rule spans all rows).

    See Also
    --------
    topic_coherence : The coherence measures.
    coherence_scorer : Rank scikit-learn topic models in a Pipeline by coherence.

    Examples
    --------
    >>> from nlpfeat.text import TopicModel
    >>> docs = [["cat", "dog", "pet"], ["cat", "dog", "pet", "vet"], ["dog", "cat", "pet"],
    ...         ["bank", "loan", "stock"], ["loan", "bank", "stock", "fund"]] * 4
    >>> tm = TopicModel(n_components=2, backend="sklearn", topn=3, random_state=0).fit(docs)
    >>> sorted(sorted(words) for words in tm.top_words())
    [['bank', 'loan', 'stock'], ['cat', 'dog', 'pet']]
    >>> tm.transform(docs[:1]).sum(axis=1).round(6)
    array([1.])
    >>> tm.coherence_.round(2)
    array([1., 1.])
    """

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "method": [StrOptions(set(METHODS))],
        "backend": [StrOptions(set(BACKENDS))],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "alpha": [Interval(Real, 0, None, closed="neither"), None],
        "eta": [Interval(Real, 0, None, closed="neither"), None],
        "random_state": ["random_state"],
        "coherence": [StrOptions(set(DEFAULT_WINDOW_SIZE))],
        "topn": [Interval(Integral, 2, None, closed="left")],
        "vocabulary": [dict, "array-like", None],
        "backend_params": [dict, None],
        "eig": [Interval(Real, None, None, closed="neither")],
        "verbose": ["verbose"],
    }

    def __init__(self, n_components=10, *, method="lda", backend="gensim", max_iter=None,
                 alpha=None, eta=None, random_state=None, coherence="c_npmi", topn=10,
                 vocabulary=None, backend_params=None, eig=1.0, verbose=0):
        self.n_components = n_components
        self.method = method
        self.backend = backend
        self.max_iter = max_iter
        self.alpha = alpha
        self.eta = eta
        self.random_state = random_state
        self.coherence = coherence
        self.topn = topn
        self.vocabulary = vocabulary
        self.backend_params = backend_params
        self.eig = eig
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.positive_only = self.method != "lsi"
        return tags

    # ---- input -----------------------------------------------------------------------
    def _matrix(self, X, reset):
        """(CSR float64 document-term matrix, token lists or None) of any accepted input.

        ``X`` must have been passed through ``reiterable`` (a generator is read once).
        """
        if not (sp.issparse(X) or hasattr(X, "__array__") or is_dask_bag(X)):
            check_corpus_type(X)         # a single string, or no iterable at all
        if _is_empty(X):
            if reset:
                check_corpus_nonempty(0)
            n_features = getattr(self, "n_features_in_", self.components_.shape[1])
            return sp.csr_matrix((0, n_features)), []
        if _is_texts(X):
            return self._count_texts(X, reset), None
        if _is_tokens(X):
            texts = list(iter_documents(X, input="tokens", caller="TopicModel",
                                        verbose=self.verbose))
            if reset:
                fixed = None if self.vocabulary is None else self._fixed_vocabulary()
                Xc, self.vocabulary_ = count_matrix(texts, fixed)
            else:
                if not hasattr(self, "vocabulary_"):
                    raise ValueError("This TopicModel was fitted on a matrix without words; "
                                     "pass a matrix, or give vocabulary= to map tokens.")
                Xc, _ = count_matrix(texts, self.vocabulary_)
            if reset:
                self.n_features_in_ = Xc.shape[1]
            return sp.csr_matrix(Xc, dtype=np.float64), texts
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=reset,
                          ensure_min_samples=1 if reset else 0)
        if reset:
            names = getattr(self, "feature_names_in_", None)
            if self.vocabulary is not None:
                self.vocabulary_ = self._fixed_vocabulary()
                if len(self.vocabulary_) != X.shape[1]:
                    raise ValueError(
                        f"vocabulary has {len(self.vocabulary_)} words but X has "
                        f"{X.shape[1]} columns; pass the words of X's columns, in column "
                        f"order (the vectorizer's vocabulary_ or get_feature_names_out()).")
            elif names is not None:
                self.vocabulary_ = {str(w): j for j, w in enumerate(names)}
            elif hasattr(self, "vocabulary_"):
                del self.vocabulary_
        return sp.csr_matrix(X), None

    def _count_texts(self, X, reset):
        """Document-term counts of text documents, streamed through :class:`BagOfWords`
        (its default analysis; a chunk at a time, or per partition of a dask bag)."""
        if reset:
            fixed = None if self.vocabulary is None else self._fixed_vocabulary()
            counter = BagOfWords(vocabulary=fixed, dtype=np.float64, verbose=self.verbose)
            counter.fit(X)
            self.vocabulary_ = counter.vocabulary_
        elif not hasattr(self, "vocabulary_"):
            raise ValueError("This TopicModel was fitted on a matrix without words; pass a "
                             "matrix, or give vocabulary= to map the documents' words.")
        else:
            counter = BagOfWords(vocabulary=self.vocabulary_, dtype=np.float64,
                                 verbose=self.verbose)
        Xc = counter.transform(X)
        if is_dask_bag(X):
            Xc = Xc.compute()
        if reset:
            self.n_features_in_ = Xc.shape[1]
        return sp.csr_matrix(Xc)

    def _fixed_vocabulary(self):
        if isinstance(self.vocabulary, dict):
            return check_vocabulary(self.vocabulary)
        return check_vocabulary([str(w) for w in self.vocabulary])

    def _check_values(self, X):
        if self.method != "lsi" and X.nnz and X.data.min() < 0:
            raise ValueError(f"Negative values in data passed to TopicModel "
                             f"(min {X.data.min():.3g}): method={self.method!r} needs "
                             f"non-negative counts (BagOfWords); use method='lsi' for "
                             f"signed weights.")
        n_samples, n_features = X.shape
        if n_features < 2:
            raise ValueError(f"TopicModel needs at least 2 words (columns) to find topics and "
                             f"score their coherence, which compares pairs of words; got "
                             f"n_features={n_features}. Fit on a larger vocabulary (e.g. a "
                             f"lower min_df in the vectorizer).")
        if self.n_components > n_features:
            raise ValueError(f"n_components={self.n_components} exceeds the vocabulary size "
                             f"(n_features={n_features}); choose n_components <= {n_features} "
                             f"or keep more words (e.g. a lower min_df in the vectorizer).")
        if (self.method == "lsi" and self.backend == "gensim" and X.nnz
                and np.abs(X.data).max() > _LSI_MAX_VALUE):
            raise ValueError(f"X holds values up to {np.abs(X.data).max():.3g}, too large for "
                             f"gensim's LsiModel (its products overflow float64 to inf); "
                             f"rescale X (e.g. divide by its largest value) or use "
                             f"backend='sklearn'.")
        limit = min(n_samples, n_features)
        if self.method == "lsi" and self.n_components > limit:
            raise ValueError(f"method='lsi' finds at most min(n_samples={n_samples}, "
                             f"n_features={n_features}) = {limit} topics; got "
                             f"n_components={self.n_components}. Choose n_components <= {limit}.")

    def __getstate__(self):
        state = dict(super().__getstate__())
        if "_backend" in state and state.get("model_") is state["_backend"].model:
            del state["model_"]                  # the backend's model, saved once, there
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        if "_backend" in state and "model_" not in state:
            self.model_ = self._backend.model

    # ---- fitting ---------------------------------------------------------------------
    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Learn the topics of ``X`` (document-term matrix or token lists) and their coherence.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features), list of list of \
                str, iterable of str (or bytes) or dask.bag.Bag
            Token lists are sequences of tokens in text order: a dict or a set as a
            document is a TypeError, as for every text estimator.
        y : None
            Ignored.

        Returns
        -------
        self : TopicModel
        """
        Xc, texts = self._matrix(_reiterable(X), reset=True)
        self._check_values(Xc)
        backend = _BACKENDS[self.backend](
            self.method, self.n_components, max_iter=self.max_iter, alpha=self.alpha,
            eta=self.eta, random_state=check_random_state(self.random_state),
            params=self.backend_params or {})
        self._backend = backend.fit(Xc, verbose=self.verbose)
        self.model_ = backend.model
        self.components_ = np.asarray(backend.components_, dtype=np.float64)
        self.n_iter_ = int(backend.n_iter_)
        if self.method == "lsi":
            self.singular_values_ = np.asarray(backend.singular_values_, dtype=np.float64)
        elif hasattr(self, "singular_values_"):
            del self.singular_values_
        self.coherence_ = self._coherence(Xc if texts is None else texts, self.coherence)
        return self

    def transform(self, X):
        """Document-topic matrix of ``X`` (LDA: each row a distribution, summing to 1).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or list of list of str

        Returns
        -------
        doc_topic : ndarray of shape (n_samples, n_components)
        """
        check_is_fitted(self)
        Xc, _ = self._matrix(_reiterable(X), reset=False)
        if Xc.shape[0] == 0:
            return np.zeros((0, self.n_components))
        if self.method != "lsi" and Xc.nnz and Xc.data.min() < 0:
            self._check_values(Xc)
        Z = self._doc_topics(Xc)
        if self.method == "lsi" and self.eig != 1:            # X V S^(p-1) = U S^p
            s = self.singular_values_
            Z *= np.power(s, self.eig - 1, out=np.zeros_like(s), where=s > 0)
        return Z

    def _doc_topics(self, Xc):
        """The backend's document-topic matrix, built a block of rows at a time (each
        document's topics do not depend on the others'), except scikit-learn's NMF, whose
        stopping rule looks at all rows at once."""
        if self.backend == "sklearn" and self.method == "nmf":
            return np.asarray(self._backend.transform(Xc), dtype=np.float64)
        Z = np.empty((Xc.shape[0], self.n_components))
        row_bytes = 8 * self.n_components + _BYTES_PER_NONZERO * Xc.nnz // max(Xc.shape[0], 1)
        for rows in gen_row_chunks(Xc.shape[0], row_bytes):
            Z[rows] = self._backend.transform(Xc[rows])
        return Z

    @fit_context(prefer_skip_nested_validation=True)
    def fit_transform(self, X, y=None):
        """Fit, then return the document-topic matrix of ``X`` (a generator is read once).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or list of list of str
        y : None
            Ignored.

        Returns
        -------
        doc_topic : ndarray of shape (n_samples, n_components)
        """
        X = _reiterable(X)
        return self.fit(X).transform(X)

    @available_if(_is_lda)
    def perplexity(self, X):
        """Perplexity exp(-bound / n_words) of ``X`` under the LDA model (lower is better).

        Both backends' variational bounds; they are close but not equal (gensim fits
        online, scikit-learn in batches).
        """
        check_is_fitted(self)
        Xc, _ = self._matrix(_reiterable(X), reset=False)
        self._check_values(Xc)
        return self._backend.perplexity(Xc)

    # ---- words and coherence -----------------------------------------------------------
    def _words(self):
        if hasattr(self, "vocabulary_"):
            return terms_in_column_order(self.vocabulary_)
        return [f"x{j}" for j in range(self.components_.shape[1])]

    def top_words(self, topn=None, *, n=DEPRECATED):
        """The ``topn`` (default: the estimator's) highest-weighted words of each topic.

        Best first; LSI topics rank words by absolute weight (gensim's ``show_topic``
        convention).

        Parameters
        ----------
        topn : int or None, default=None
            Words per topic; None uses the ``topn`` parameter.
        n : default="deprecated"
            The former name of ``topn``: still accepted with a ``FutureWarning``, removed
            in 0.3.

        Returns
        -------
        topics : list of list of str
            Words from ``vocabulary_``, or ``"x<column>"`` when the words are unknown.
        """
        topn = renamed_value(n, topn, old="n", new="topn", default=None,
                             owner="TopicModel.top_words")
        check_is_fitted(self)
        words = self._words()
        return [[words[j] for j in row]
                for row in top_word_ids(self.components_, topn or self.topn)]

    def get_feature_names_out(self, input_features=None):
        """Output names ``topic0``, ``topic1``, ...

        Returns
        -------
        names : ndarray of str objects
        """
        check_is_fitted(self)
        return np.asarray([f"topic{k}" for k in range(self.n_components)], dtype=object)

    def _coherence(self, corpus, measure):
        ids = top_word_ids(self.components_, min(self.topn, self.components_.shape[1]))
        if isinstance(corpus, list):
            return coherence_values(ids, corpus, measure=measure, vocabulary=self.vocabulary_)
        return coherence_values(ids, corpus, measure=measure)

    def score(self, X, y=None):
        """Mean coherence (``coherence`` measure) of the topics on ``X``; higher is better.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or list of list of str
            Boolean documents for a matrix, sliding windows for token lists.
        y : None
            Ignored.

        Returns
        -------
        score : float
        """
        check_is_fitted(self)
        Xc, texts = self._matrix(_reiterable(X), reset=False)
        return float(self._coherence(Xc if texts is None else texts, self.coherence).mean())
