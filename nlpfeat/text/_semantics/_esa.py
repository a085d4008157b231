"""ExplicitSemanticAnalysis: a document as its similarity to each document of a concept corpus.

Gabrilovich and Markovitch (2007) represent a text by its TF-IDF cosine similarity to each
Wikipedia article (a "concept"). The concept corpus can be any collection of documents from
the same domain; on Lee's news benchmark the 300 background articles serve (see
``benchmarks/quality_lee.py``). The numeric core is three free functions on sparse matrices:
the concept-side pruning of the inverted index, the per-row top-k, and the chunked product.
"""
import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin, clone

from nlpfeat._chunking import gen_row_chunks, map_chunks
from nlpfeat._deprecation import DEPRECATED, deprecated_constraint, renamed_param
from nlpfeat._persist import PlainStateMixin
from nlpfeat._validation import (HasMethods, Integral, Interval, Real, StrOptions, check_is_fitted,
                                 fit_context, validate_data)
from nlpfeat.text._base._documents import ReadOnceMixin, check_not_bag, reiterable
from nlpfeat.text._vectorizers._schemes import normalize_rows
from nlpfeat.text._vectorizers._tfidf import TfidfVectorizer

__all__ = ["ExplicitSemanticAnalysis", "prune_inverted_index", "top_k_per_row"]


def top_k_per_row(S, k):
    """Keep the ``k`` largest entries of each row of a sparse matrix (ties: lower column first).

    Parameters
    ----------
    S : sparse matrix of shape (n_rows, n_cols)
    k : int or None
        None keeps every stored entry.

    Returns
    -------
    pruned : scipy.sparse.csr_matrix of shape (n_rows, n_cols), explicit zeros dropped

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from nlpfeat.text._semantics._esa import top_k_per_row
    >>> top_k_per_row(sp.csr_matrix([[0.1, 0.5, 0.3], [0.2, 0.0, 0.2]]), 1).toarray()
    array([[0. , 0.5, 0. ],
           [0.2, 0. , 0. ]])
    """
    S = sp.csr_matrix(S, dtype=np.float64, copy=True)
    S.eliminate_zeros()
    S.sort_indices()
    if k is None:
        return S
    rows = np.repeat(np.arange(S.shape[0]), np.diff(S.indptr))
    order = np.lexsort((S.indices, -S.data, rows))     # by row, value descending, column
    rank = np.arange(S.nnz) - S.indptr[rows[order]]     # rank of each entry within its row
    keep = np.sort(order[rank < k])
    out = sp.csr_matrix((S.data[keep], S.indices[keep], np.r_[0, np.cumsum(
        np.minimum(np.diff(S.indptr), k))]), shape=S.shape)
    return out


def prune_inverted_index(C, window, drop):
    """Gabrilovich and Markovitch's pruning of each term's list of concepts.

    For each term (column of ``C``) the concepts are ranked by weight, highest first; a
    window of ``window`` consecutive concepts slides down the list, and the list is cut
    after the first window whose first and last weights differ by less than
    ``drop`` times the term's highest weight (the flat tail of weakly associated concepts,
    which adds noise and cost). A term with fewer than ``window`` concepts is kept whole.

    Parameters
    ----------
    C : sparse matrix of shape (n_concepts, n_terms)
        Non-negative concept-term weights.
    window : int
    drop : float
        Fraction of the term's highest weight.

    Returns
    -------
    pruned : scipy.sparse.csr_matrix of shape (n_concepts, n_terms)

    Examples
    --------
    >>> import numpy as np
    >>> from nlpfeat.text._semantics._esa import prune_inverted_index
    >>> C = np.array([[1.0], [0.5], [0.49], [0.48]])          # one term, four concepts
    >>> prune_inverted_index(C, window=2, drop=0.05).toarray().ravel()
    array([1. , 0.5, 0. , 0. ])
    """
    C = sp.csc_matrix(C, dtype=np.float64, copy=True)
    C.eliminate_zeros()
    counts = np.diff(C.indptr)
    cols = np.repeat(np.arange(C.shape[1]), counts)
    order = np.lexsort((C.indices, -C.data, cols))        # by term, weight descending
    data = C.data[order]
    rank = np.arange(C.nnz) - C.indptr[cols]              # cols is sorted already
    has_window = rank + window - 1 < counts[cols]
    end = np.minimum(np.arange(C.nnz) + window - 1, max(C.nnz - 1, 0))
    top = data[C.indptr[cols]] if C.nnz else data
    fires = has_window & (data - data[end] < drop * top)
    cut = counts.copy()                                   # keep ranks <= first firing rank
    np.minimum.at(cut, cols[fires], rank[fires] + 1)
    keep = rank < cut[cols]
    pruned = sp.csc_matrix((data[keep], C.indices[order][keep], np.r_[0, np.cumsum(
        np.minimum(counts, cut))]), shape=C.shape)
    return pruned.tocsr()


def explicit_semantic_vectors(D, C, topn, *, working_memory=None, n_jobs=None):
    """Cosine similarity of each row of ``D`` to each row of ``C``, top ``topn`` per row.

    Parameters
    ----------
    D : sparse matrix of shape (n_documents, n_terms), rows of unit L2 norm (or zero)
    C : sparse matrix of shape (n_concepts, n_terms), rows of unit L2 norm (or zero)
    topn : int or None
    working_memory : float, default=None
        MiB per chunk of documents (counted as dense rows of ``n_concepts`` floats).
    n_jobs : int, default=None
        Threads over the chunks (scipy's sparse product releases the GIL); the result
        does not depend on it.

    Returns
    -------
    vectors : scipy.sparse.csr_matrix of shape (n_documents, n_concepts)
    """
    Ct = sp.csc_matrix(C.T)                               # (n_terms, n_concepts)
    chunks = map_chunks(lambda rows: top_k_per_row(D[rows] @ Ct, topn),
                        gen_row_chunks(D.shape[0], 8 * C.shape[0], working_memory),
                        n_jobs=n_jobs)
    if not chunks:
        return sp.csr_matrix((0, C.shape[0]))
    return sp.vstack(chunks, format="csr")


class ExplicitSemanticAnalysis(PlainStateMixin, ReadOnceMixin, TransformerMixin,
                               BaseEstimator,
                               auto_wrap_output_keys=None):
    """Explicit semantic analysis: a document as its similarity to each concept document.

    ``fit`` weights a concept corpus (one document per concept: Wikipedia articles in the
    original, any in-domain collection here) with ``vectorizer``; ``transform`` weights each
    document the same way and returns its cosine similarity to every concept, keeping the
    ``topn`` largest per document. The output is a sparse (n_documents, n_concepts)
    matrix whose columns are named by the concepts (so ``set_output`` is not offered, as by
    scikit-learn's vectorizers).

    Parameters
    ----------
    vectorizer : estimator, "passthrough" or None, default=None
        Weights both sides: fitted on the concept corpus (``fit_transform``, one pass, so
        a generator of documents works), then applied to the documents. ``None`` means
        ``TfidfVectorizer()``; any nlpfeat or scikit-learn vectorizer fits (e.g.
        ``TfidfVectorizer(weighting="logentropy", stop_words="english")``).
        ``"passthrough"``: ``fit`` takes the weighted concept-term matrix itself and
        ``transform`` a document-term matrix with the same columns.
    document_vectorizer : estimator or None, default=None
        A different weighting for the documents than for the concepts (e.g. binary or
        BM25 queries against TF-IDF concepts). It is given the concept vocabulary
        (``vocabulary=``) and fitted on the concept corpus, which is then read into a
        list once. ``None``: ``vectorizer`` weights both sides.
    topn : int or None, default=100
        Concepts kept per document (the largest similarities; ties go to the lower
        column). ``None`` keeps all of them.
    prune_window : int or None, default=None
        Concept-side pruning of the inverted index (Gabrilovich and Markovitch 2007, who
        used 100): each term keeps its concepts down to the first window of
        ``prune_window`` concepts whose weights fall by less than ``prune_drop`` of the
        term's highest weight. ``None`` keeps every concept of every term.
    prune_drop : float, default=0.05
        The threshold of ``prune_window``, a fraction in (0, 1).
    concept_names : array-like of str or None, default=None
        One name per concept (e.g. article titles), the output's feature names;
        ``None`` names them ``concept0``, ``concept1``, ...
    norm : {"l2", "l1"} or None, default=None
        Normalisation of the output rows; ``None`` keeps the cosine similarities.
    working_memory : float, default=None
        MiB per chunk of documents in ``transform``; None follows scikit-learn's
        ``working_memory`` configuration when set, else nlpfeat's 4 MiB.
    n_jobs : int, default=None
        Threads over the chunks of documents in ``transform`` (None: 1, -1: all cores);
        the result does not depend on it.
    verbose : int, default=0
        With 1 or more, the vectorizers (when they take ``verbose``, as nlpfeat's do) show
        a progress bar on stderr over the concept documents read, then over the
        documents of each ``transform``.
    top_k : int or None, default="deprecated"
        The former name of ``topn`` (nlpfeat's name for a top-k count everywhere): still
        accepted with a ``FutureWarning``, removed in 0.3.

    Attributes
    ----------
    vectorizer_ : estimator
        The fitted ``vectorizer`` (absent with ``"passthrough"``).
    document_vectorizer_ : estimator
        The fitted ``document_vectorizer`` (when given).
    concepts_ : scipy.sparse.csr_matrix of shape (n_concepts, n_terms)
        The concept vectors, rows of unit L2 norm, after pruning.
    concept_names_ : ndarray of str objects, shape (n_concepts,)
    n_features_in_ : int
        Number of terms (``vectorizer="passthrough"`` only).

    See Also
    --------
    TfidfVectorizer : The default weighting.
    SimilarityEnsemble : Average ESA with other similarity models.

    Notes
    -----
    With unit vectors :math:`d` (document) and :math:`c_j` (concept ``j``), the output is
    :math:`e_j = d \\cdot c_j` for the ``topn`` largest :math:`e_j`, zero elsewhere; the
    similarity of two documents is then the cosine of their :math:`e`. On Lee's benchmark,
    with the 300 background articles as concepts, TF-IDF weights (stop words removed,
    Porter stems) and ``topn=100``, it correlates 0.664 with people over all 1,225
    pairs, against 0.606 for log-entropy LSI; with the weighting and ``topn`` chosen on
    half of the pairs and scored on the other half, 0.656 (``benchmarks/quality_lee.py``).
    Concepts from another domain help less: the 250 Wikipedia articles of
    ``load_wiki_sample`` as concepts give 0.34.

    References
    ----------
    .. [1] E. Gabrilovich and S. Markovitch, "Computing Semantic Relatedness using
       Wikipedia-based Explicit Semantic Analysis", IJCAI 2007.

    Examples
    --------
    >>> from nlpfeat.text import ExplicitSemanticAnalysis
    >>> concepts = ["a cat or a dog is a pet", "stocks and bonds are investments",
    ...             "the dog barked at the cat"]
    >>> esa = ExplicitSemanticAnalysis(topn=2, concept_names=["pets", "finance", "barking"])
    >>> X = esa.fit(concepts).transform(["my dog likes the cat", "bonds pay interest",
    ...                                  "a pet bird"])
    >>> esa.get_feature_names_out().tolist()
    ['pets', 'finance', 'barking']
    >>> X.toarray().round(2)
    array([[0.39, 0.  , 0.8 ],
           [0.  , 0.45, 0.  ],
           [0.49, 0.  , 0.  ]])
    """

    _parameter_constraints = {
        "vectorizer": [HasMethods(["fit_transform", "transform"]),
                       StrOptions({"passthrough"}), None],
        "document_vectorizer": [HasMethods(["fit", "transform"]), None],
        "topn": [Interval(Integral, 1, None, closed="left"), None],
        "top_k": deprecated_constraint([Interval(Integral, 1, None, closed="left"), None]),
        "prune_window": [Interval(Integral, 2, None, closed="left"), None],
        "prune_drop": [Interval(Real, 0, 1, closed="neither")],
        "concept_names": ["array-like", None],
        "norm": [StrOptions({"l1", "l2"}), None],
        "working_memory": [Interval(Real, 0, None, closed="neither"), None],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
    }

    def __init__(self, vectorizer=None, *, document_vectorizer=None, topn=100,
                 prune_window=None, prune_drop=0.05, concept_names=None, norm=None,
                 working_memory=None, n_jobs=None, verbose=0, top_k=DEPRECATED):
        self.vectorizer = vectorizer
        self.document_vectorizer = document_vectorizer
        self.topn = topn
        self.prune_window = prune_window
        self.prune_drop = prune_drop
        self.concept_names = concept_names
        self.norm = norm
        self.working_memory = working_memory
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.top_k = top_k

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        passthrough = isinstance(self.vectorizer, str) and self.vectorizer == "passthrough"
        tags.input_tags.sparse = passthrough
        tags.input_tags.two_d_array = passthrough
        tags.input_tags.string = not passthrough
        return tags

    def _verbose(self, vectorizer):
        """``vectorizer`` (a clone) showing bars when this estimator's ``verbose`` asks
        for them and it takes ``verbose``; otherwise as the user set it."""
        if self.verbose and "verbose" in vectorizer.get_params(deep=False):
            vectorizer.set_params(verbose=self.verbose)
        return vectorizer

    def _passthrough(self):
        return isinstance(self.vectorizer, str) and self.vectorizer == "passthrough"

    @fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None):
        """Weight the concept corpus ``X`` (one document, or matrix row, per concept).

        Parameters
        ----------
        X : iterable of documents, or {array-like, sparse matrix} of shape \
(n_concepts, n_terms) with ``vectorizer="passthrough"``
        y : None
            Ignored.

        Returns
        -------
        self : ExplicitSemanticAnalysis
        """
        for name in ("vectorizer_", "document_vectorizer_"):
            self.__dict__.pop(name, None)
        renamed_param(self, "top_k", "topn")                # warns now, read by transform
        if self._passthrough():
            if self.document_vectorizer is not None:
                raise ValueError("document_vectorizer needs a vectorizer that reads text; "
                                 "with vectorizer='passthrough' weight the document matrix "
                                 "yourself, or set document_vectorizer=None.")
            C = validate_data(self, X, accept_sparse="csr", dtype=np.float64)
        else:
            if isinstance(X, str):
                raise TypeError("ExplicitSemanticAnalysis.fit takes an iterable of concept "
                                "documents, not a single string; wrap it in a list.")
            check_not_bag(X, "ExplicitSemanticAnalysis")    # its concepts_ are held here
            if self.document_vectorizer is not None:
                X = reiterable(X, caller="ExplicitSemanticAnalysis")   # used twice
            self.vectorizer_ = self._verbose(clone(self.vectorizer if self.vectorizer
                                                   is not None else TfidfVectorizer()))
            C = self.vectorizer_.fit_transform(X)
            if self.document_vectorizer is not None:
                self.document_vectorizer_ = self._verbose(clone(
                    self.document_vectorizer).set_params(
                    vocabulary=self.vectorizer_.vocabulary_)).fit(X)
        if C.shape[0] == 0:
            raise ValueError("Empty concept corpus: X holds no concepts; pass at least one "
                             "concept document (or matrix row) to fit on.")
        C = normalize_rows(sp.csr_matrix(C, dtype=np.float64), "l2", copy=True)
        if self.prune_window is not None:
            if C.nnz and C.data.min() < 0:
                raise ValueError("prune_window needs non-negative concept weights; got a "
                                 f"minimum of {C.data.min():.3g}. Use prune_window=None.")
            C = prune_inverted_index(C, self.prune_window, self.prune_drop)
        self.concepts_ = C
        self.concept_names_ = self._names(C.shape[0])
        return self

    def _names(self, n_concepts):
        if self.concept_names is None:
            return np.asarray([f"concept{j}" for j in range(n_concepts)], dtype=object)
        names = np.asarray([str(name) for name in self.concept_names], dtype=object)
        if names.shape != (n_concepts,):
            raise ValueError(f"concept_names has {len(names)} names for {n_concepts} "
                             f"concepts; give one name per concept document.")
        return names

    def _document_matrix(self, X):
        if self._passthrough():
            D = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False,
                              ensure_min_samples=0)
        else:
            if isinstance(X, str):
                raise TypeError("ExplicitSemanticAnalysis.transform takes an iterable of "
                                "documents, not a single string; wrap it in a list.")
            check_not_bag(X, "ExplicitSemanticAnalysis")
            weigh = getattr(self, "document_vectorizer_", self.vectorizer_)
            D = weigh.transform(X)
        if D.shape[1] != self.concepts_.shape[1]:
            raise ValueError(f"Mismatched vocabularies: the documents are weighted over "
                             f"{D.shape[1]} terms but the concepts over "
                             f"{self.concepts_.shape[1]}. The document vectorizer must use "
                             f"the concept vocabulary (its 'vocabulary' parameter).")
        return normalize_rows(sp.csr_matrix(D, dtype=np.float64), "l2", copy=True)

    def transform(self, X):
        """Similarity of each document of ``X`` to each concept, ``topn`` kept per document.

        Parameters
        ----------
        X : iterable of documents, or {array-like, sparse matrix} of shape \
(n_documents, n_terms) with ``vectorizer="passthrough"``

        Returns
        -------
        vectors : scipy.sparse.csr_matrix of shape (n_documents, n_concepts)
            Zero rows for documents without a term of the concept vocabulary.
        """
        check_is_fitted(self, "concepts_")
        topn = renamed_param(self, "top_k", "topn")
        E = explicit_semantic_vectors(self._document_matrix(X), self.concepts_, topn,
                                      working_memory=self.working_memory, n_jobs=self.n_jobs)
        return E if self.norm is None else normalize_rows(E, self.norm)

    def get_feature_names_out(self, input_features=None):
        """The concept names, in column order.

        Returns
        -------
        names : ndarray of str objects, shape (n_concepts,)
        """
        check_is_fitted(self, "concepts_")
        return self.concept_names_.copy()
