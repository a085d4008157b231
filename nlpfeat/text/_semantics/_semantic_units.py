"""Semantic units: count clusters of similar words instead of words.

Language says one thing many ways (glad, happy, pleased; 高兴, 开心, 愉快). Clustering word
vectors merges such words into one unit and shrinks the feature space. Distributional
vectors (PMI, word2vec) group *substitutable* words, which includes antonyms ("a good/bad
person"), so the units must be inspected: ``units_`` lists them.
"""
import dataclasses
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.utils import check_random_state

from nlpfeat._deprecation import DEPRECATED, deprecated_constraint, renamed_param
from nlpfeat._docstrings import fill_doc
from nlpfeat._params import estimator_params
from nlpfeat._validation import Integral, Interval, StrOptions, check_is_fitted, fit_context
from nlpfeat.text._base._analyzer import (
    TOKEN_PARAMETER_CONSTRAINTS,
    warn_user,
)
from nlpfeat.text._base._documents import OnePassFitMixin, check_corpus_nonempty
from nlpfeat.text._base._options import TokenOptions
from nlpfeat.text._counting._vocabulary import count_matrix, terms_in_column_order
from nlpfeat.text._semantics._pmi_embedding import PMIEmbedding

__all__ = ["SemanticUnitBagOfWords"]



def _lookup(embedding, words):
    """(words found, their vectors) for a fitted PMIEmbedding, KeyedVectors or mapping."""
    if hasattr(embedding, "embeddings_") and hasattr(embedding, "vocabulary_"):
        index, table = embedding.vocabulary_, embedding.embeddings_
    elif hasattr(embedding, "key_to_index") and hasattr(embedding, "vectors"):
        index, table = embedding.key_to_index, embedding.vectors       # gensim KeyedVectors
    elif isinstance(embedding, Mapping):
        found = [w for w in words if w in embedding]
        vectors = [np.asarray(embedding[w], dtype=np.float64).ravel() for w in found]
        if len({v.shape for v in vectors}) > 1:
            raise ValueError("The embedding's vectors have different lengths; expected one "
                             "length for every word.")
        return found, np.array(vectors, dtype=np.float64).reshape(len(found), -1 if found else 0)
    else:
        raise TypeError(
            f"embedding must be a PMIEmbedding, a gensim KeyedVectors, a mapping of word -> "
            f"vector, or None; got {type(embedding).__name__}.")
    found = [w for w in words if w in index]
    rows = np.fromiter((index[w] for w in found), dtype=np.intp, count=len(found))
    return found, np.asarray(table, dtype=np.float64)[rows]


def _cluster(unit_vectors, n_units, method, rng):
    """Cluster labels of the rows of ``unit_vectors`` (unit length) by cosine similarity.

    k-means leaves clusters empty when the rows point in fewer than ``n_units``
    directions; scikit-learn's warning is left out, the caller drops those clusters and
    says so.
    """
    if method == "kmeans":
        from sklearn.cluster import KMeans
        from sklearn.exceptions import ConvergenceWarning

        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "Number of distinct clusters",
                                    ConvergenceWarning)
            # on unit vectors, squared Euclidean distance is 2 - 2 cos
            return KMeans(n_clusters=n_units, random_state=rng).fit_predict(unit_vectors)
    from sklearn.cluster import AgglomerativeClustering

    return AgglomerativeClustering(n_clusters=n_units, metric="cosine",
                                   linkage="average").fit_predict(unit_vectors)


@fill_doc
@estimator_params
class SemanticUnitBagOfWords(TokenOptions, OnePassFitMixin, TransformerMixin, BaseEstimator,
                             auto_wrap_output_keys=None):
    """Count semantic units (clusters of word vectors) per document (sparse).

    ``fit`` looks up the vector of every word of the corpus, clusters the words into
    ``n_units`` units by cosine similarity, and ``transform`` counts, per document, the
    tokens that fall in each unit. Words of the corpus without a vector are dropped or kept
    as units of their own.

    The output is a sparse matrix, so ``set_output`` is not offered (as scikit-learn's
    vectorizers).

    Parameters
    ----------
    embeddings : PMIEmbedding, gensim KeyedVectors, mapping of str to vector or None, \
default=None
        Where the word vectors come from. A fitted :class:`~nlpfeat.text.PMIEmbedding`,
        a gensim ``KeyedVectors`` or a ``{word: vector}`` mapping is used as is; an unfitted
        ``PMIEmbedding`` is cloned and fitted on the training documents' tokens (after this
        estimator's tokenizer, lowercasing, stop words and stemmer); None fits
        ``PMIEmbedding(random_state=random_state)`` so.
    %(token_options)s
    n_units : int, default=100
        Number of clusters of words with a vector. k-means leaves clusters empty when the
        vectors point in fewer directions; those are dropped, with a warning.
    clustering : {"kmeans", "agglomerative"}, default="kmeans"
        k-means on the unit-length vectors (spherical k-means' assignment) or agglomerative
        clustering with average linkage on cosine distance.
    unknown : {"drop", "keep"}, default="drop"
        Tokens of words that have no vector: ignored, or counted as units of their own
        (one per such word of the training corpus).
    topn : int, default=3
        Words (most frequent first) in each unit's feature name, ``good/bad/great``.
    random_state : int, RandomState instance or None, default=None
        Seeds k-means and the PMIEmbedding fitted when ``embeddings`` is None.
    dtype : numpy dtype, default=np.int64
    %(verbose)s
    embedding, n_top_words : default="deprecated"
        The former names of ``embeddings`` (spelled as in
        :class:`~nlpfeat.text.KernelAttentionPooling`) and ``topn`` (nlpfeat's name for a
        top-k count): still accepted with a ``FutureWarning``, removed in 0.3.

    Attributes
    ----------
    units_ : list of list of str
        The words of each unit (column), most frequent in the training corpus first.
    unit_of_word_ : dict
        Word -> column.
    n_clustered_ : int
        Number of units that are clusters (the first columns); with ``unknown="keep"`` the
        others are single unknown words.
    embeddings_estimator_ : PMIEmbedding
        The embedding fitted here (only when ``embeddings`` is None or unfitted); its
        former name ``embedding_`` still works, with a ``FutureWarning``.

    See Also
    --------
    PMIEmbedding : Word vectors from PPMI and a truncated SVD.
    BagOfWords : Counts of words.

    Notes
    -----
    PMI (and word2vec) vectors are close for words used in the same contexts, which
    includes antonyms: in a corpus that writes "a good person" as often as "a bad
    person", good and bad may fall in one unit, and polarity is lost. Check ``units_``.

    scikit-learn's ``clone`` (used by ``cross_val_score``, ``GridSearchCV``) returns an
    *unfitted* copy of an estimator parameter, so a fitted ``PMIEmbedding`` passed as
    ``embeddings`` is refitted on each training fold there; pass
    ``embeddings.to_keyedvectors()`` or a ``{word: vector}`` dict to keep fixed vectors.

    Examples
    --------
    >>> from nlpfeat.text import SemanticUnitBagOfWords
    >>> vectors = {"glad": [1.0, 0.1], "happy": [0.9, 0.0], "pleased": [1.0, 0.0],
    ...            "cat": [0.0, 1.0], "dog": [0.1, 0.9]}
    >>> units = SemanticUnitBagOfWords(vectors, n_units=2, clustering="agglomerative")
    >>> X = units.fit_transform(["happy cat", "glad and pleased dog", "glad"])
    >>> units.get_feature_names_out().tolist()
    ['glad/happy/pleased', 'cat/dog']
    >>> X.toarray()
    array([[1, 1],
           [2, 1],
           [1, 0]])
    """

    _parameter_constraints = {
        **TOKEN_PARAMETER_CONSTRAINTS,
        "embeddings": "no_validation",      # checked in fit: duck-typed
        "embedding": "no_validation",
        "n_units": [Interval(Integral, 1, None, closed="left")],
        "clustering": [StrOptions({"kmeans", "agglomerative"})],
        "unknown": [StrOptions({"drop", "keep"})],
        "topn": [Interval(Integral, 1, None, closed="left")],
        "n_top_words": deprecated_constraint([Interval(Integral, 1, None, closed="left")]),
        "random_state": ["random_state"],
        "dtype": "no_validation",
        "verbose": ["verbose"],
    }

    embeddings: Any = dataclasses.field(default=None, kw_only=False)
    n_units: Any = 100
    clustering: Any = "kmeans"
    unknown: Any = "drop"
    topn: Any = 3
    random_state: Any = None
    dtype: Any = np.int64
    verbose: Any = 0
    embedding: Any = DEPRECATED
    n_top_words: Any = DEPRECATED

    @property
    def embedding_(self):
        """Deprecated name of ``embeddings_estimator_``."""
        value = self.embeddings_estimator_
        warnings.warn("SemanticUnitBagOfWords: the attribute 'embedding_' was renamed "
                      "'embeddings_estimator_'; the old name will be removed in 0.3.",
                      FutureWarning, stacklevel=2)
        return value

    def _vectors(self, docs, words, rng):
        embedding = renamed_param(self, "embedding", "embeddings")
        if embedding is None:
            embedding = PMIEmbedding(random_state=rng)
        if isinstance(embedding, PMIEmbedding) and not hasattr(embedding, "embeddings_"):
            self.embeddings_estimator_ = clone(embedding).set_params(
                input="tokens", lowercase=False, stop_words=None, stemmer=None).fit(docs)
            embedding = self.embeddings_estimator_
        return _lookup(embedding, words)

    def _fit(self, X):
        self._check_text_params()
        renamed_param(self, "n_top_words", "topn")     # warns now, read by the names
        rng = check_random_state(self.random_state)
        docs = self._token_lists(X)
        check_corpus_nonempty(len(docs))
        counts, vocabulary = count_matrix(docs)
        if not vocabulary:
            raise ValueError("Empty vocabulary: the documents produced no tokens.")
        words = terms_in_column_order(vocabulary)
        freq = np.asarray(counts.sum(axis=0)).ravel()
        found, unit_vectors = self._unit_vectors(docs, words, rng)
        labels = _cluster(unit_vectors, self.n_units, self.clustering, rng)
        word_freq = freq[np.fromiter(map(vocabulary.__getitem__, found), dtype=np.intp,
                                     count=len(found))]
        units = self._order_units(found, labels, word_freq)
        self.n_clustered_ = len(units)
        if self.unknown == "keep":
            have = set(found)
            missing = [w for w in words if w not in have]
            order = np.argsort(-freq[[vocabulary[w] for w in missing]], kind="stable")
            units += [[missing[i]] for i in order]
        self.units_ = units
        self.unit_of_word_ = {w: j for j, unit in enumerate(units) for w in unit}
        return docs

    def _unit_vectors(self, docs, words, rng):
        """(corpus words with a non-zero vector, their vectors scaled to unit length)."""
        found, vectors = self._vectors(docs, words, rng)
        if not found:
            raise ValueError(
                f"No word of the corpus ({len(words)} words, e.g. {words[:3]}) has a vector "
                f"in the embedding; check that the text options (lowercase, stemmer, "
                f"tokenizer) produce the embedding's words.")
        finite = np.isfinite(vectors).all(axis=1)
        if not finite.all():
            bad = [w for w, ok in zip(found, finite) if not ok]
            raise ValueError(
                f"The embedding's vectors of {len(bad)} corpus word(s) hold NaN or inf "
                f"(e.g. {bad[:3]}); expected finite vectors. Fix or drop those vectors.")
        norms = np.linalg.norm(vectors, axis=1)
        known = norms > 0                                    # a zero vector has no direction
        found = [w for w, k in zip(found, known) if k]
        if self.n_units > len(found):
            raise ValueError(
                f"n_units={self.n_units} exceeds the {len(found)} words of the corpus that "
                f"have a (non-zero) vector in the embedding; lower n_units or use an "
                f"embedding that covers more of the corpus.")
        return found, vectors[known] / norms[known, None]

    def _order_units(self, words, labels, word_freq):
        """Units as word lists (most frequent word first), most frequent unit first; the
        clusters left empty (k-means, on fewer directions than ``n_units``) are dropped."""
        by_word = np.lexsort((np.array(words, dtype=object).astype(str), -word_freq))
        units = [[] for _ in range(self.n_units)]
        for i in by_word:
            units[labels[i]].append(words[i])
        totals = np.bincount(labels, weights=word_freq, minlength=self.n_units)
        order = sorted((j for j in range(self.n_units) if units[j]),
                       key=lambda j: (-totals[j], units[j][0]))
        if len(order) < self.n_units:
            warn_user(f"Only {len(order)} of n_units={self.n_units} units are not empty: "
                      f"the word vectors point in fewer directions than n_units, so "
                      f"{self.clustering} left {self.n_units - len(order)} cluster(s) "
                      f"empty, which are dropped (the output has {len(order)} unit "
                      f"column(s)). Lower n_units to silence this.")
        return [units[j] for j in order]

    def _count(self, docs):
        """Unit counts: word counts times the (word, unit) assignment matrix."""
        index = {w: i for i, w in enumerate(self.unit_of_word_)}
        words, _ = count_matrix(docs, index)
        columns = np.fromiter(self.unit_of_word_.values(), dtype=np.intp,
                              count=len(self.unit_of_word_))
        assign = sp.csr_matrix((np.ones(columns.size, dtype=np.int64), columns,
                                np.arange(columns.size + 1)),
                               shape=(columns.size, len(self.units_)))
        return (words @ assign).tocsr().astype(self.dtype)

    @fit_context(prefer_skip_nested_validation=True)
    def fit_transform(self, X, y=None):
        """Cluster the words of ``X`` and count the units of each document (one pass).

        %(fit_transform_parameters)s

        Returns
        -------
        X_units : scipy.sparse.csr_matrix of shape (n_documents, n_units_out)
        """
        return self._count(self._fit(X))

    def transform(self, X):
        """Count the units of each document of ``X`` (words outside every unit are ignored).

        %(transform_parameters)s

        Returns
        -------
        X_units : scipy.sparse.csr_matrix of shape (n_documents, n_units_out)
        """
        check_is_fitted(self, "unit_of_word_")
        return self._count(self._token_lists(X))

    def get_feature_names_out(self, input_features=None):
        """Each unit's ``topn`` most frequent words joined by ``/``.

        %(feature_names_sections)s
        """
        check_is_fitted(self, "unit_of_word_")
        topn = renamed_param(self, "n_top_words", "topn")
        return np.asarray(["/".join(unit[:topn]) for unit in self.units_],
                          dtype=object)
