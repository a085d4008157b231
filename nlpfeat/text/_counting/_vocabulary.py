"""Vocabulary building, document-term counting and pruning, shared by every vectorizer.

The hot path is one pass over the documents in which each feature list is mapped to column
ids by ``map(vocabulary.__getitem__, features)`` (a ``defaultdict`` hands out the next id to a
new term), appended to one flat ``array.array``. The CSR matrix is built once, with duplicate
(document, term) entries summed by scipy; terms are sorted at the end with one permutation of
the column indices, and pruning uses ``np.bincount`` document frequencies.
"""
from collections import defaultdict
from collections.abc import Mapping
from itertools import count, repeat
from numbers import Integral
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

__all__ = [
    "grown",
    "count_matrix",
    "count_chunks",
    "CountChunk",
    "CsrBuilder",
    "growing_vocabulary",
    "document_error",
    "error_with_context",
    "remap_columns",
    "prune_mask",
    "prune_vocabulary",
    "document_frequency",
    "check_vocabulary",
    "terms_in_column_order",
    "check_df_bounds",
    "string_order",
]


def count_matrix(feature_lists, vocabulary=None, *, sort_terms=True, dtype=np.int64):
    """Count features per document into a CSR document-term matrix.

    Parameters
    ----------
    feature_lists : iterable of list of str
        One list of features (tokens, n-grams) per document; consumed once.
    vocabulary : mapping of str to int or None, default=None
        Fixed term -> column mapping (terms it lacks are ignored); ``None`` learns one.
    sort_terms : bool, default=True
        With a learned vocabulary, number the columns in sorted term order.
    dtype : numpy dtype, default=np.int64
        Type of the counts in the returned matrix.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_documents, n_terms)
        Counts, with sorted indices and no duplicate entries.
    vocabulary : dict of str to int

    Examples
    --------
    >>> from nlpfeat.text._counting._vocabulary import count_matrix
    >>> X, vocabulary = count_matrix([["b", "a", "b"], ["c"]])
    >>> vocabulary
    {'a': 0, 'b': 1, 'c': 2}
    >>> X.toarray()
    array([[1, 2, 0],
           [0, 0, 1]])
    >>> count_matrix([["b", "z"]], vocabulary)[0].toarray()
    array([[0, 1, 0]])
    """
    learn = vocabulary is None
    if learn:
        vocabulary = growing_vocabulary()
    builder = CsrBuilder(dtype)
    for chunk in count_chunks(feature_lists, vocabulary, learn=learn,
                              chunk_tokens=_CHUNK_TOKENS):
        builder.append(chunk)
    X = builder.to_csr(len(vocabulary))
    if learn:
        vocabulary = dict(vocabulary)
        if sort_terms and vocabulary:
            vocabulary, new_of_old = _sorted_order(vocabulary)
            if new_of_old is not None:
                X = remap_columns(X, new_of_old, len(vocabulary))
    return X, vocabulary


_CHUNK_TOKENS = 1 << 18  # tokens buffered before a chunk of rows is compressed


def grown(array, n, keep=None):
    """The per-term ``array`` able to hold ``n`` terms: itself when it is large enough, else
    a zero-padded copy at least half as large again (amortised O(1) a new term).

    With ``keep``, only the first ``keep`` items are copied and the rest is left unwritten
    (its memory is not touched until it is used: room reserved for items that may come).

    Examples
    --------
    >>> import numpy as np
    >>> grown(np.array([3, 1]), 3)
    array([3, 1, 0])
    >>> grown(np.array([3, 1]), 5, keep=1)[:1]
    array([3])
    """
    if n <= array.size:
        return array
    size = max(n, array.size * 3 // 2)
    if keep is None:
        new = np.zeros(size, dtype=array.dtype)
        keep = array.size
    else:
        new = np.empty(size, dtype=array.dtype)
    new[:keep] = array[:keep]
    return new


def growing_vocabulary(terms=(), *, counted=False, size=None):
    """A term -> id ``defaultdict`` in which looking up a new term gives it the next id.

    The one growing vocabulary of the counting engine. The next id is ``len(vocabulary)``,
    so terms may also be added with ``update``. With ``counted=True`` it comes from a
    counter started at ``size`` (default ``len(terms)``; give it when ``terms`` is an
    iterator of (term, id) pairs), which is faster per lookup but is not advanced by
    ``update``: for a vocabulary whose owner keeps the ids in step (``NgramCounts``).

    Examples
    --------
    >>> from nlpfeat.text._counting._vocabulary import growing_vocabulary
    >>> vocabulary = growing_vocabulary({"a": 0})
    >>> [vocabulary[t] for t in ["b", "a", "c", "b"]]
    [1, 0, 2, 1]
    >>> counted = growing_vocabulary(zip("xy", range(2)), counted=True, size=2)
    >>> counted["z"], counted["x"]
    (2, 0)
    """
    if counted:
        return defaultdict(count(len(terms) if size is None else size).__next__, terms)
    vocabulary = defaultdict(None, terms)
    vocabulary.default_factory = vocabulary.__len__
    return vocabulary


class CountChunk(NamedTuple):
    """Counts of consecutive documents: CSR rows without the shape.

    ``start`` is the index of the first document in the corpus; ``indices`` and
    ``counts`` hold each row's (term id, count) pairs, no duplicates, terms increasing
    unless ``sorted_rows`` is False (a learning pass whose columns are renumbered and
    sorted at the end anyway); ``row_nnz`` the number of pairs of each row.
    """

    start: int
    indices: np.ndarray
    counts: np.ndarray
    row_nnz: np.ndarray
    sorted_rows: bool = True

    @property
    def n_documents(self):
        return self.row_nnz.size

    def to_csr(self, n_terms, dtype=np.int64):
        """The chunk as a CSR matrix of shape (n_documents, n_terms)."""
        indptr = np.concatenate(([0], np.cumsum(self.row_nnz, dtype=np.int64)))
        X = sp.csr_matrix((self.counts.astype(dtype, copy=False), self.indices, indptr),
                          shape=(self.row_nnz.size, n_terms))
        X.has_sorted_indices = self.sorted_rows
        return X


def count_chunks(docs, vocabulary, *, learn, analyze=None, chunk_tokens=_CHUNK_TOKENS, start=0):
    """Count ``docs`` a chunk of about ``chunk_tokens`` features at a time.

    The streaming core of every counting estimator: each document is turned into its
    features (``analyze(doc)``, or ``doc`` itself when ``analyze`` is None), mapped to term
    ids, and every ``chunk_tokens`` features the rows so far are compressed into a
    :class:`CountChunk` and yielded. Only one chunk of term ids is held at a time.

    Parameters
    ----------
    docs : iterable
        Documents (or feature lists), consumed once.
    vocabulary : mapping of str to int
        With ``learn=True`` a :func:`growing_vocabulary`, which new terms are added to;
        otherwise a fixed mapping, whose missing terms are ignored.
    learn : bool
    analyze : callable or None, default=None
    chunk_tokens : int, default=262144
        Features per chunk (see :func:`nlpfeat.text._counting._term_counts.chunk_tokens`).
    start : int, default=0
        Index of the first document, for the chunks' ``start`` and error messages.

    Yields
    ------
    chunk : CountChunk

    Raises
    ------
    Exception
        An error while analysing a document is raised again naming the document's index
        (see :func:`document_error`); what was counted before is not returned.

    Examples
    --------
    >>> from nlpfeat.text._counting._vocabulary import count_chunks, growing_vocabulary
    >>> vocabulary = growing_vocabulary()
    >>> chunks = list(count_chunks([["a", "b", "a"], ["b"], ["c"]], vocabulary, learn=True,
    ...                            chunk_tokens=3))
    >>> [(c.start, c.indices.tolist(), c.counts.tolist(), c.row_nnz.tolist()) for c in chunks]
    [(0, [0, 1], [2, 1], [2]), (1, [1, 2], [1, 1], [1, 1])]
    """
    if learn:
        lookup = vocabulary.__getitem__
    else:
        get, unseen = vocabulary.get, repeat(-1)  # -1 marks a term outside the vocabulary
    columns, indptr, first = [], [0], start
    extend, append = columns.extend, indptr.append
    for i, doc in enumerate(docs, start):
        try:
            features = doc if analyze is None else analyze(doc)
            extend(map(lookup, features) if learn else map(get, features, unseen))
        except Exception as exc:
            raise document_error(exc, i) from exc
        append(len(columns))
        if len(columns) >= chunk_tokens:
            yield _compress(first, columns, indptr)
            columns, indptr, first = [], [0], i + 1
            extend, append = columns.extend, indptr.append
    if len(indptr) > 1:
        yield _compress(first, columns, indptr)


def document_error(exc, index):
    """``exc`` raised again with the index of the document that caused it in its message.

    The exception keeps its type when it can be rebuilt from one message (ValueError,
    TypeError, ...); otherwise (Python 3.11+) the position is added as a note.
    """
    if str(exc).startswith(f"Document {index}"):
        return exc
    return error_with_context(exc, f"Document {index}")


def error_with_context(exc, where):
    """``exc`` with ``"<where>: "`` before its message (same type), or as a note."""
    message = f"{where}: {exc}"
    try:
        new = type(exc)(message)
    except Exception:
        new = None
    if new is not None and str(new) == message:
        return new
    if hasattr(exc, "add_note"):
        exc.add_note(f"(raised at {where})")
    return exc


def _compress(start, columns, indptr):
    """One :class:`CountChunk` from flat term ids and row offsets (duplicates summed)."""
    columns = np.array(columns, dtype=np.intc)
    indptr = np.array(indptr, dtype=np.int64)
    keep = columns >= 0
    if not keep.all():
        indptr = np.concatenate(([0], np.cumsum(keep, dtype=np.int64)))[indptr]
        columns = columns[keep]
    n_cols = int(columns.max()) + 1 if columns.size else 0
    chunk = sp.csr_matrix(
        (np.ones(columns.size, dtype=np.intc), columns, indptr),
        shape=(indptr.size - 1, n_cols),
    )
    chunk.sum_duplicates()  # sorts each row's indices and adds up repeated terms (C++)
    return CountChunk(start, chunk.indices.astype(np.intc, copy=False), chunk.data,
                      np.diff(chunk.indptr))


class CsrBuilder:
    """A CSR matrix assembled from :class:`CountChunk` s without a second copy.

    The index and value arrays grow geometrically (by 1.25) in place (``ndarray.resize``, which
    reallocates without copying large blocks on Linux) and are trimmed at the end, so the
    peak memory is about the output plus one chunk, not twice the output.

    Examples
    --------
    >>> from nlpfeat.text._counting._vocabulary import CsrBuilder, count_chunks
    >>> builder = CsrBuilder(np.int64)
    >>> for chunk in count_chunks([["a", "b"], ["b"]], {"a": 0, "b": 1}, learn=False):
    ...     builder.append(chunk)
    >>> builder.to_csr(2).toarray()
    array([[1, 1],
           [0, 1]])
    """

    def __init__(self, dtype=np.int64):
        self.indices = np.empty(0, dtype=np.intc)
        self.data = np.empty(0, dtype=dtype)
        self.nnz = 0
        self.row_nnz = []
        self.sorted_rows = True

    def append(self, chunk):
        end = self.nnz + chunk.indices.size
        if end > self.indices.size:
            capacity = max(end, self.indices.size * 5 // 4, 1024)
            self.indices = _resized(self.indices, capacity)
            self.data = _resized(self.data, capacity)
        self.indices[self.nnz : end] = chunk.indices
        self.data[self.nnz : end] = chunk.counts
        self.nnz = end
        self.row_nnz.append(chunk.row_nnz)
        self.sorted_rows &= chunk.sorted_rows

    def to_csr(self, n_terms):
        indptr = np.concatenate([[0]] + self.row_nnz).cumsum(dtype=np.int64)
        self.row_nnz = None
        indices, data = _resized(self.indices, self.nnz), _resized(self.data, self.nnz)
        self.indices = self.data = None
        X = sp.csr_matrix((data, indices, indptr), shape=(indptr.size - 1, n_terms), copy=False)
        X.has_sorted_indices = self.sorted_rows
        return X


def _resized(array, size):
    """``array`` with ``size`` elements, resized in place when it owns its memory."""
    if array.size == size:
        return array
    if array.flags.owndata and array.base is None:
        try:
            array.resize(size, refcheck=False)
            return array
        except (ValueError, SystemError):
            pass
    out = np.zeros(size, dtype=array.dtype)
    n = min(size, array.size)
    out[:n] = array[:n]
    return out


def remap_columns(X, new_of_old, n_columns, *, block=1 << 20, n_jobs=1):
    """Renumber the columns of CSR ``X`` in place: column j becomes ``new_of_old[j]``.

    Entries whose new column is negative are dropped. The arrays of ``X`` are rewritten a
    block at a time (no full-size temporary), indices are sorted again, and ``X`` is
    returned with shape ``(n_rows, n_columns)``. With ``n_jobs`` threads the rows are
    renumbered and sorted in ``n_jobs`` runs of about equal entries at once (compiled
    code and scipy's sort release the GIL).

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from nlpfeat.text._counting._vocabulary import remap_columns
    >>> X = sp.csr_matrix(np.array([[1, 2, 3], [0, 4, 5]]))
    >>> remap_columns(X, np.array([1, -1, 0]), 2).toarray()
    array([[3, 1],
           [5, 0]])
    """
    new_of_old = np.asarray(new_of_old)
    indices, data, indptr = X.indices, X.data, X.indptr
    nnz = int(indptr[-1])
    if (new_of_old >= 0).all():
        if indices.dtype == np.intc:     # in place, compiled: no temporary of the entries
            from nlpfeat.text._counting._term_loops import renumber

            new_of_old = new_of_old.astype(np.intp, copy=False)
            if n_jobs > 1:
                return _row_blocks_sorted(data, indices, indptr, n_columns, n_jobs,
                                          lambda a, b: renumber(indices[a:b], new_of_old))
            renumber(indices[:nnz], new_of_old)
        else:
            for s in range(0, nnz, block):
                indices[s : s + block] = new_of_old[indices[s : s + block]]
        return _sorted_csr(data, indices, indptr, n_columns)
    new_indptr = np.empty_like(indptr)
    written, assigned = 0, 0
    for s in range(0, nnz, block):
        e = min(s + block, nnz)
        columns = new_of_old[indices[s:e]]
        keep = columns >= 0
        kept_before = np.concatenate(([0], np.cumsum(keep, dtype=np.int64)))
        upto = int(np.searchsorted(indptr, e, side="left"))
        new_indptr[assigned:upto] = written + kept_before[indptr[assigned:upto] - s]
        assigned = upto
        n_kept = int(kept_before[-1])
        indices[written : written + n_kept] = columns[keep]
        data[written : written + n_kept] = data[s:e][keep]
        written += n_kept
    new_indptr[assigned:] = written
    indptr[:] = new_indptr
    del new_indptr
    X.indices = X.data = None
    return _sorted_csr(_resized(data, written), _resized(indices, written), indptr, n_columns)


def _sorted_csr(data, indices, indptr, n_columns):
    X = sp.csr_matrix((data, indices, indptr), shape=(indptr.size - 1, int(n_columns)),
                      copy=False)
    X.has_sorted_indices = False
    X.sort_indices()
    return X


def _row_blocks_sorted(data, indices, indptr, n_columns, n_jobs, before):
    """:func:`_sorted_csr` with ``n_jobs`` runs of rows of about equal entries each
    given to ``before(a, b)`` (entries ``a .. b - 1``), then sorted, on threads."""
    from concurrent.futures import ThreadPoolExecutor

    n_rows = indptr.size - 1
    cuts = np.searchsorted(indptr, np.linspace(0, indptr[-1], n_jobs + 1)[1:-1])
    bounds = np.unique(np.concatenate(([0], cuts, [n_rows]))).tolist()

    def sort_rows(r0, r1):
        a, b = int(indptr[r0]), int(indptr[r1])
        before(a, b)
        rows = sp.csr_matrix((data[a:b], indices[a:b], (indptr[r0:r1 + 1] - a).astype(
            indices.dtype)), shape=(r1 - r0, int(n_columns)), copy=False)
        rows.has_sorted_indices = False
        rows.sort_indices()                        # in place: the arrays are views
        return a == b or np.may_share_memory(rows.indices, indices)

    with ThreadPoolExecutor(n_jobs) as pool:
        in_place = all(list(pool.map(sort_rows, bounds[:-1], bounds[1:])))   # every run
    X = sp.csr_matrix((data, indices, indptr), shape=(n_rows, int(n_columns)), copy=False)
    X.has_sorted_indices = in_place
    if not in_place:                               # scipy copied a run: sort it all
        X.sort_indices()
    return X


def string_order(words):
    """Indices that sort ``words`` (an object array of distinct str) in Python's order.

    One numpy sort of the code points, for term arrays too large for ``sorted`` to be
    cheap; numpy's fixed-width strings drop trailing NULs, so if two distinct words
    compare equal that way, Python's own sort decides.

    Examples
    --------
    >>> import numpy as np
    >>> from nlpfeat.text._counting._vocabulary import string_order
    >>> string_order(np.array(["b", "a\\x00", "a", "B"], dtype=object)).tolist()
    [3, 2, 1, 0]
    """
    codes = words.astype(str)
    order = np.argsort(codes, kind="stable")
    codes = codes[order]
    if (codes[1:] == codes[:-1]).any():          # words differing only in trailing NULs
        order = np.array(sorted(range(len(words)), key=words.__getitem__), dtype=np.intp)
    return order


def _sorted_order(vocabulary):
    """Sorted-term renumbering of a vocabulary: (new vocabulary, new id of each old id)."""
    n_terms = len(vocabulary)
    sorted_terms = sorted(vocabulary)
    old_ids = np.fromiter(map(vocabulary.__getitem__, sorted_terms), dtype=np.intp, count=n_terms)
    if np.array_equal(old_ids, np.arange(n_terms)):
        return vocabulary, None
    new_of_old = np.empty(n_terms, dtype=np.intc)
    new_of_old[old_ids] = np.arange(n_terms, dtype=np.intc)
    del old_ids
    return dict(zip(sorted_terms, range(n_terms))), new_of_old


def terms_in_column_order(vocabulary):
    """List of the terms of ``vocabulary`` ordered by column index."""
    terms = list(vocabulary)
    columns = np.fromiter(vocabulary.values(), dtype=np.int64, count=len(terms))
    if np.array_equal(columns, np.arange(len(terms))):
        return terms
    return list(map(terms.__getitem__, np.argsort(columns, kind="stable").tolist()))


def document_frequency(X):
    """Number of documents (rows of CSR ``X``) in which each term (column) occurs.

    ``X`` must have no duplicate entries (as ``count_matrix`` returns); explicit zeros are
    not counted. Counted in blocks so that the temporary copies stay small.
    """
    df = np.zeros(X.shape[1], dtype=np.int64)
    step = _CHUNK_TOKENS * 4
    for start in range(0, X.nnz, step):
        indices = X.indices[start : start + step]
        data = X.data[start : start + step]
        df += np.bincount(indices[data != 0] if not data.all() else indices, minlength=X.shape[1])
    return df


def check_df_bounds(min_df, max_df, n_documents=None):
    """Convert ``min_df``/``max_df`` (counts or proportions) into document counts and check them.

    With ``n_documents=None`` only settings that contradict each other whatever the corpus
    size (two counts or two proportions with ``min_df > max_df``) are checked.
    Returns ``(min_count, max_count)`` (None, None without ``n_documents``).
    """
    both_counts = isinstance(min_df, Integral) and isinstance(max_df, Integral)
    both_props = not isinstance(min_df, Integral) and not isinstance(max_df, Integral)
    if (both_counts or both_props) and min_df > max_df:
        raise ValueError(
            f"min_df={min_df!r} is larger than max_df={max_df!r}; no term can satisfy both. "
            f"Lower min_df or raise max_df."
        )
    if n_documents is None:
        return None, None
    min_count = min_df if isinstance(min_df, Integral) else min_df * n_documents
    max_count = max_df if isinstance(max_df, Integral) else max_df * n_documents
    if max_count < min_count:
        raise ValueError(
            f"max_df={max_df!r} corresponds to {max_count:g} documents, fewer than the "
            f"{min_count:g} of min_df={min_df!r} on {n_documents} documents; no term can satisfy "
            f"both. Lower min_df or raise max_df."
        )
    return min_count, max_count


def prune_vocabulary(X, vocabulary, *, min_df=1, max_df=1.0, max_features=None):
    """Keep the terms with ``min_df <= df <= max_df``, then the ``max_features`` most frequent.

    ``min_df``/``max_df`` are document counts (int) or proportions of documents (float), as in
    scikit-learn; ties for the last ``max_features`` places are broken as scikit-learn does.
    When nothing can be pruned (``min_df <= 1`` document, ``max_df`` covering every document,
    no ``max_features``) ``X`` is returned as is, without computing document frequencies: a
    learned vocabulary has no term with ``df = 0``.

    Parameters
    ----------
    X : scipy.sparse.csr_matrix of shape (n_documents, n_terms)
    vocabulary : dict of str to int
    min_df, max_df : int or float
    max_features : int or None

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_documents, n_kept)
    vocabulary : dict of str to int

    Raises
    ------
    ValueError
        If the settings contradict each other, or pruning removes every term (the message
        names the parameter that did).
    """
    min_count, max_count = check_df_bounds(min_df, max_df, X.shape[0])
    if min_count <= 1 and max_count >= X.shape[0] and max_features is None:
        return X, vocabulary  # nothing to prune (every learned term occurs in >= 1 document)
    df = document_frequency(X)
    totals = None
    if max_features is not None:
        totals = np.bincount(X.indices, weights=X.data, minlength=X.shape[1])
    keep = prune_mask(df, totals, X.shape[0], min_df=min_df, max_df=max_df,
                      max_features=max_features)
    if keep.all():
        return X, vocabulary
    return _select_columns(X, keep), _select_terms(vocabulary, keep)


def prune_mask(df, totals, n_documents, *, min_df=1, max_df=1.0, max_features=None):
    """Which terms ``prune_vocabulary`` keeps, from their statistics alone.

    Parameters
    ----------
    df : ndarray of shape (n_terms,)
        Document frequency of each term, columns in the vocabulary's order.
    totals : ndarray of shape (n_terms,) or None
        Number of occurrences of each term (needed with ``max_features`` only).
    n_documents : int
    min_df, max_df, max_features
        As in :func:`prune_vocabulary`; ties for the last ``max_features`` places are
        broken as scikit-learn does, on float64 totals in column order.

    Returns
    -------
    keep : ndarray of bool of shape (n_terms,)

    Examples
    --------
    >>> from nlpfeat.text._counting._vocabulary import prune_mask
    >>> prune_mask(np.array([3, 1, 2]), np.array([5, 1, 9]), 3, min_df=2).tolist()
    [True, False, True]
    """
    min_count, max_count = check_df_bounds(min_df, max_df, n_documents)
    keep = df >= min_count
    _check_any_left(keep, df.size, f"min_df={min_df!r}")
    keep &= df <= max_count
    _check_any_left(keep, df.size, f"max_df={max_df!r}")
    if max_features is not None and keep.sum() > max_features:
        kept = np.flatnonzero(keep)
        term_totals = np.asarray(totals, dtype=np.float64)[kept]
        keep = np.zeros_like(keep)
        keep[kept[(-term_totals).argsort()[:max_features]]] = True
        _check_any_left(keep, df.size, f"max_features={max_features!r}")
    return keep


def _check_any_left(keep, n_terms, parameter):
    if n_terms and not keep.any():
        raise ValueError(
            f"{parameter} removed all {n_terms} terms; no terms remain. "
            f"Loosen {parameter.split('=')[0]} (or the other pruning settings)."
        )


def _select_columns(X, keep):
    new_column = np.cumsum(keep, dtype=np.int64) - 1
    entry_kept = keep[X.indices]
    kept_before = np.concatenate(([0], np.cumsum(entry_kept, dtype=np.int64)))
    return sp.csr_matrix(
        (X.data[entry_kept], new_column[X.indices[entry_kept]].astype(X.indices.dtype),
         kept_before[X.indptr]),
        shape=(X.shape[0], int(keep.sum())),
    )


def _select_terms(vocabulary, keep):
    terms = terms_in_column_order(vocabulary)
    kept_terms = [terms[i] for i in np.flatnonzero(keep)]
    return dict(zip(kept_terms, range(len(kept_terms))))


def check_vocabulary(vocabulary):
    """Validate a user-given vocabulary (mapping or iterable of terms); return a dict.

    A mapping gives each term its column; an iterable numbers its terms in order, except a
    set, whose terms are sorted (a set has no reliable order).

    Raises ValueError on an empty vocabulary, a repeated term (named), or column indices
    that are not exactly ``0 .. n_terms - 1`` (the terms sharing a column are named).

    Examples
    --------
    >>> from nlpfeat.text._counting._vocabulary import check_vocabulary
    >>> check_vocabulary({"pizza", "beer"})
    {'beer': 0, 'pizza': 1}
    >>> check_vocabulary({"pizza": 0, "beer": 0})
    Traceback (most recent call last):
    ...
    ValueError: Vocabulary contains repeated indices: 'pizza' and 'beer' both map to column 0...
    """
    if isinstance(vocabulary, (str, bytes)):
        raise TypeError(
            "vocabulary must be a mapping or an iterable of terms; got a single "
            f"{type(vocabulary).__name__}. Wrap one term in a list: [term]."
        )
    if isinstance(vocabulary, Mapping):
        mapping = dict(vocabulary)
        _check_columns(mapping)
    else:
        if isinstance(vocabulary, (set, frozenset)):
            vocabulary = sorted(vocabulary)
        terms = list(vocabulary)
        mapping = dict(zip(terms, range(len(terms))))
        if len(mapping) != len(terms):
            seen, repeated = set(), None
            for term in terms:
                if term in seen:
                    repeated = term
                    break
                seen.add(term)
            raise ValueError(
                f"vocabulary contains the term {repeated!r} more than once; list each term "
                f"once (e.g. list(dict.fromkeys(terms)))."
            )
    if not mapping:
        raise ValueError(
            "vocabulary is empty; pass at least one term, or vocabulary=None to learn it."
        )
    return mapping


def _check_columns(mapping):
    """Check that a term -> column mapping uses each of the columns 0 .. n - 1 once."""
    for term, column in mapping.items():
        if not isinstance(column, Integral) or isinstance(column, bool):
            raise TypeError(
                f"vocabulary values must be integer column indices; term {term!r} maps to "
                f"{column!r} of type {type(column).__name__}."
            )
    n_terms = len(mapping)
    owner = {}
    for term, column in mapping.items():
        if column in owner:
            raise ValueError(
                f"Vocabulary contains repeated indices: {owner[column]!r} and {term!r} both "
                f"map to column {column}; each term needs its own column 0..{n_terms - 1}."
            )
        owner[column] = term
    missing = next((i for i in range(n_terms) if i not in owner), None)
    if missing is not None:
        raise ValueError(
            f"Vocabulary of size {n_terms} doesn't contain index {missing}; the values must "
            f"be the column indices 0..{n_terms - 1}, each once (got {sorted(owner)[:10]})."
        )
