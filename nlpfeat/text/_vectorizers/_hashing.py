"""Feature hashing of documents: scikit-learn's ``HashingVectorizer``, on compiled passes.

Documents -> features (``TextOptions``: the same options as every nlpfeat vectorizer) ->
spans of one UTF-8 buffer per chunk (``_chunk_spans``) -> MurmurHash3 and the sums of
each row, compiled (``nlpfeat.text._counting._murmur``) -> CSR, then scikit-learn's own
``normalize``. Nothing is learnt: ``fit`` only checks the parameters.
"""
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin

from nlpfeat._docstrings import fill_doc
from nlpfeat._params import estimator_params
from nlpfeat._validation import (
    Integral,
    Interval,
    StrOptions,
    fit_context,
    validate_parameters,
)
from nlpfeat.text._base._analyzer import (
    TEXT_PARAMETER_CONSTRAINTS,
    check_encoding,
    check_ngram_range,
    collapse_white_space,
    padded_words,
)
from nlpfeat.text._base._documents import check_not_bag
from nlpfeat.text._base._options import TextOptions
from nlpfeat.text._counting._chunks import document_chunks
from nlpfeat.text._counting._spans import encode_texts, spans_of_token_lists
from nlpfeat.text._base._analyzer import text_pass_options
from nlpfeat.text._vectorizers._schemes import normalize_rows

__all__ = ["HashingVectorizer"]

#: code points (tokens with ``input="tokens"``) of one chunk of documents, times the
#: number of n-gram lengths: about as many features, 24 bytes each in the compiled pass
_CHUNK_SIZE = 1 << 18
_INT32_MAX = np.iinfo(np.int32).max


@fill_doc
@estimator_params
class HashingVectorizer(TextOptions, TransformerMixin, BaseEstimator,
                        auto_wrap_output_keys=None):
    """Convert documents to a sparse matrix of hashed feature counts (the hashing trick).

    The nlpfeat counterpart of scikit-learn's ``HashingVectorizer``, equal to it bit for
    bit with equivalent settings (``.data``, ``.indices`` and ``.indptr``). Each feature
    (word n-gram, character n-gram or an analyzer's string) is hashed with the signed
    32-bit MurmurHash3 of its UTF-8 bytes (seed 0) into column ``abs(hash) % n_features``;
    no vocabulary is kept, so memory does not grow with the corpus and nothing needs
    fitting: what a user with an unbounded vocabulary, a stream or parallel workers
    reaches for. Distinct features may share a column (a collision); ``alternate_sign``
    makes collisions cancel on average instead of adding up. Hashing and the sums of each
    row run in compiled code, a chunk of documents at a time.

    The text options are the shared ones of :mod:`nlpfeat.text`; pass
    ``token_pattern=r"(?u)\\b\\w\\w+\\b"`` for scikit-learn's tokens on CJK text too, and
    ``analyzer="char_wb"`` follows scikit-learn's white-space rules.

    Parameters
    ----------
    %(token_options)s
    %(ngram_options)s
    %(accent_options)s
    n_features : int, default=2**20
        Number of columns; ``1 <= n_features < 2**31 - 1``. Small values give more
        collisions; a power of two spreads the columns evenly.
    binary : bool, default=False
        Every stored entry becomes 1 (before normalisation), also one whose signs cancelled.
    norm : {"l1", "l2"} or None, default="l2"
        Normalise each row (scikit-learn's ``normalize``).
    alternate_sign : bool, default=True
        Add ``-1`` instead of ``1`` for a feature whose hash is negative, so that
        collisions cancel in expectation (inner products are preserved on average).
    dtype : numpy dtype, default=np.float64
        Type of the matrix: a float or signed integer type (float64 with ``norm`` and an
        integer type, as scikit-learn's ``normalize`` returns).
    %(verbose)s

    See Also
    --------
    BagOfWords : Counts with a learnt vocabulary (feature names, pruning, inverse_transform).

    Notes
    -----
    Stateless: ``fit`` and ``partial_fit`` only check the parameters (``fit`` also warns
    about unused options, as every nlpfeat vectorizer) and never read ``X``, so
    ``fit_transform`` of a one-shot iterator reads it once; ``transform`` works on an
    unfitted estimator (its ``requires_fit`` tag is False). There is no
    ``get_feature_names_out`` (the columns have no names) nor ``inverse_transform``, as
    in scikit-learn. Two of scikit-learn's outcomes are clear errors here: an empty
    corpus is a ValueError (scikit-learn raises ``StopIteration``), and an unsigned,
    boolean or non-numeric ``dtype`` is a ValueError (scikit-learn stores ``-1`` in it).

    Examples
    --------
    >>> from nlpfeat.text import HashingVectorizer
    >>> hv = HashingVectorizer(n_features=8, norm=None)
    >>> X = hv.transform(["the cat sat on the mat", "the dog"])
    >>> X.shape
    (2, 8)
    >>> X.toarray()
    array([[ 0.,  0.,  0., -1.,  1.,  0., -2.,  0.],
           [ 0.,  0.,  0.,  0.,  0., -1., -1.,  0.]])
    """

    _parameter_constraints = {
        **TEXT_PARAMETER_CONSTRAINTS,
        "n_features": [Interval(Integral, 1, _INT32_MAX, closed="left")],
        "binary": ["boolean"],
        "norm": [StrOptions({"l1", "l2"}), None],
        "alternate_sign": ["boolean"],
        "dtype": "no_validation",  # checked in _check_params
        "verbose": ["verbose"],
    }

    n_features: Any = 2**20
    binary: Any = False
    norm: Any = "l2"
    alternate_sign: Any = True
    dtype: Any = np.float64
    verbose: Any = 0

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Check the parameters (and warn about unused ones); ``X`` is not read.

        Parameters
        ----------
        X : iterable of documents
            Not read: a one-shot iterator is still whole for ``transform``.
        y : ignored

        Returns
        -------
        self : HashingVectorizer
        """
        _check_not_one_string(X)
        self._check_text_params()
        self._check_params()
        return self

    @fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y=None):
        """Check the parameters, as scikit-learn's ``partial_fit``; ``X`` is not read.

        %(partial_fit_sections)s
        """
        return self

    def fit_transform(self, X, y=None):
        """``fit(X).transform(X)``, reading ``X`` once (``fit`` does not read it).

        %(fit_transform_parameters)s

        Returns
        -------
        X_features : scipy.sparse.csr_matrix of shape (n_documents, n_features)
        """
        return self.fit(X, y).transform(X)

    def transform(self, X):
        """Hash the features of each document of ``X`` into a row of ``n_features`` columns.

        Parameters
        ----------
        X : iterable of documents
            Read once, a chunk at a time; fitting is not needed.

        Returns
        -------
        X_features : scipy.sparse.csr_matrix of shape (n_documents, n_features)
            Columns sorted in each row, signs summed per column (an entry whose signs
            cancel is stored as 0, as in scikit-learn), then ``binary`` and ``norm``.
        """
        _check_not_one_string(X)
        validate_parameters(self)
        dtype = self._check_params()
        from nlpfeat.text._counting._murmur import hashed_rows  # numba: on use

        hashes_of = self._hashes_fn()
        pieces, n_documents = [], 0
        min_n, max_n = check_ngram_range(self.ngram_range)
        limit = max(1, _CHUNK_SIZE // (max_n - min_n + 1))     # features of a chunk
        for start, chunk in document_chunks(self._iter_docs(X), limit, cost=len):
            hashes, row_offsets = hashes_of(chunk, start)
            pieces.append(hashed_rows(hashes, row_offsets, self.n_features,
                                      self.alternate_sign))
            n_documents += len(chunk)
        X = _to_csr(pieces, n_documents, self.n_features, dtype)
        if self.binary:
            X.data.fill(1)
        if self.norm is not None:
            X = normalize_rows(X, self.norm)
        return X

    #: Private switch: False sends every document through the Python tokenizer (tests).
    _compiled_text = True

    def _check_params(self):
        """Checks the constraints cannot express; returns the matrix's dtype."""
        check_ngram_range(self.ngram_range)
        check_encoding(self.encoding)
        self.build_preprocessor()  # raises on a bad strip_accents
        try:
            dtype = np.dtype(self.dtype)
        except TypeError:
            dtype = None
        if dtype is None or not (np.issubdtype(dtype, np.floating)
                                 or np.issubdtype(dtype, np.signedinteger)):
            raise ValueError(
                f"dtype={self.dtype!r} cannot hold signed counts; use a float or signed "
                f"integer type such as np.float64, np.float32 or np.int64."
            )
        return dtype

    def _hashes_fn(self):
        """Callable ``(chunk of decoded documents, index of the first) -> (hashes,
        row_offsets)``: the int32 hash of every feature, row by row."""
        from nlpfeat.text._counting import _murmur  # numba: on use

        min_n, max_n = check_ngram_range(self.ngram_range)
        if callable(self.analyzer):
            features = self._analyzer_fn()

            def hashes_of(chunk, start):
                buffer, starts, ends, rows = spans_of_token_lists(list(map(features, chunk)),
                                                                  start)
                return _murmur.hash_spans(buffer, starts, ends), rows
        elif self.analyzer == "word":
            tokens = self._token_fn()
            options = text_pass_options(self, stop_words=False) if self._compiled_text else None

            def hashes_of(chunk, start):
                spans = _chunk_spans(chunk, tokens, start, options)
                return _murmur.hash_word_ngrams(*spans, min_n, max_n)
        else:
            from nlpfeat.text._counting._char_ids import encoded_chars, hash_char_ngrams

            text, words = self._text_fn(), self.analyzer == "char_wb"
            normalised = padded_words if words else collapse_white_space

            def hashes_of(chunk, start):
                texts = [normalised(text(doc)) for doc in chunk]
                found = encoded_chars(texts)
                if found is None:                   # a lone surrogate: the error naming it
                    encode_texts(texts, start)
                return hash_char_ngrams(*found, min_n, max_n, words)
        return hashes_of

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.requires_fit = False
        return tags


def _chunk_spans(docs, tokens, start, options=None):
    """The word tokens of a chunk of decoded documents as ``(buffer, starts, ends,
    doc_offsets)``: by the compiled tokenizer (``token_spans``, the same spans) with the
    :class:`~nlpfeat.text._counting._text_pass.TextPass` ``options`` it honours exactly,
    else (no options, or a chunk it refuses: a lone surrogate) from ``tokens`` (one
    document -> its list of tokens: Python's tokenization).
    """
    if options is not None:
        from nlpfeat.text._counting._compiled_tokens import token_spans  # numba: on use

        spans = token_spans(docs, lowercase=options.lowercase, preprocess=options.preprocess,
                            ideographs=options.ideographs)
        if spans is not None:
            return spans
    return spans_of_token_lists(list(map(tokens, docs)), start)


def _check_not_one_string(X):
    check_not_bag(X, "HashingVectorizer")
    if isinstance(X, (str, bytes)):
        raise ValueError(
            "Iterable over raw text documents expected, string object received; wrap one "
            "document in a list: [doc]."
        )


def _to_csr(pieces, n_documents, n_features, dtype):
    """The CSR matrix of the chunks' ``(indptr, indices, values)``, with scikit-learn's
    index types (int32, int64 when the entries overflow int32)."""
    nnz = sum(piece[1].size for piece in pieces)
    index_dtype = np.int32 if nnz <= _INT32_MAX else np.int64
    indptr = np.zeros(n_documents + 1, index_dtype)
    indices = np.empty(nnz, index_dtype)
    data = np.empty(nnz, dtype)
    row, entry = 0, 0
    for chunk_indptr, chunk_indices, values in pieces:
        rows, size = chunk_indptr.size - 1, chunk_indices.size
        indptr[row + 1: row + rows + 1] = chunk_indptr[1:] + entry
        indices[entry: entry + size] = chunk_indices
        data[entry: entry + size] = values
        row, entry = row + rows, entry + size
    X = sp.csr_matrix((data, indices, indptr), shape=(n_documents, n_features), copy=False)
    X.has_canonical_format = True
    return X
