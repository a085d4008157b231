"""Word-context co-occurrence counts in a sliding window, vectorised over token-id arrays.

The numeric core, :func:`window_counts`, pairs ``ids[i]`` with ``ids[i + offset]`` for every
offset ``1..window`` at once (one array operation per offset, never a loop over tokens).
Documents are concatenated with ``window`` padding ids (``-1``) between them, so no pair
crosses a document boundary. :func:`cooccurrence` streams documents in chunks that fit a
working-memory budget and adds the chunk counts, which is exact because counting is
additive: the counts of the parts sum to the counts of the whole.
"""
from collections import defaultdict
from itertools import chain, repeat

import numpy as np
import scipy.sparse as sp

from nlpfeat._chunking import chunk_n_rows
from nlpfeat._validation import Integral, Interval, Real, StrOptions, validate_params

__all__ = ["cooccurrence", "window_counts"]


def new_vocabulary():
    """An empty growing vocabulary: looking up a new term gives it the next id."""
    vocabulary = defaultdict()
    vocabulary.default_factory = vocabulary.__len__
    return vocabulary


def token_ids(token_lists, vocabulary):
    """Map token lists to one flat id array plus document lengths.

    Parameters
    ----------
    token_lists : list of list of str
    vocabulary : dict
        term -> id. Unknown terms get id -1, unless ``vocabulary`` comes from
        :func:`new_vocabulary`, which numbers them in order of first appearance.

    Returns
    -------
    ids : ndarray of int64, shape (n_tokens,)
    lengths : ndarray of int64, shape (n_docs,)
    """
    flat = list(chain.from_iterable(token_lists))
    if isinstance(vocabulary, defaultdict):
        lookup = map(vocabulary.__getitem__, flat)
    else:
        lookup = map(vocabulary.get, flat, repeat(-1))
    ids = np.fromiter(lookup, np.int64, len(flat))
    lengths = np.fromiter(map(len, token_lists), np.int64, len(token_lists))
    return ids, lengths


def pad_documents(ids, lengths, pad):
    """Insert ``pad`` ids of -1 after each document: (n_tokens,) -> (n_tokens + pad * n_docs,)."""
    doc_of_token = np.repeat(np.arange(len(lengths)), lengths)
    out = np.full(len(ids) + pad * len(lengths), -1, dtype=np.int64)
    out[np.arange(len(ids)) + pad * doc_of_token] = ids
    return out


def window_counts(padded_ids, n_terms, window, *, weighting="uniform"):
    """Directed co-occurrence counts ``C[w, c]`` = weight of ``c`` at 1..window after ``w``.

    Parameters
    ----------
    padded_ids : ndarray of int64, shape (n_positions,)
        Term ids; ``-1`` marks padding or an out-of-vocabulary token (never paired).
        Documents must be separated by at least ``window`` padding ids.
    n_terms : int
    window : int
    weighting : {"uniform", "harmonic"}
        Weight 1 per pair, or ``1 / offset``.

    Returns
    -------
    counts : scipy.sparse.csr_matrix, shape (n_terms, n_terms)
        int64 for uniform weighting, float64 for harmonic, sorted indices.
    """
    keys, weights = [], []
    for offset in range(1, window + 1):           # loop over offsets, tokens are an axis
        left, right = padded_ids[:-offset], padded_ids[offset:]
        keep = (left >= 0) & (right >= 0)
        keys.append(left[keep] * n_terms + right[keep])
        if weighting == "harmonic":
            weights.append(np.full(keys[-1].shape, 1.0 / offset))
    keys = np.concatenate(keys) if keys else np.empty(0, np.int64)
    if weighting == "uniform":
        unique, data = np.unique(keys, return_counts=True)
        data = data.astype(np.int64)
    else:
        unique, inverse = np.unique(keys, return_inverse=True)
        data = np.bincount(inverse, weights=np.concatenate(weights), minlength=len(unique))
    rows, cols = np.divmod(unique, n_terms)
    indptr = np.zeros(n_terms + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n_terms), out=indptr[1:])
    return sp.csr_matrix((data, cols, indptr), shape=(n_terms, n_terms))


def _as_tokens(doc, tokenize, index):
    """One document -> list of tokens (strings go through ``tokenize``)."""
    if isinstance(doc, str):
        return tokenize(doc)
    if isinstance(doc, bytes) or not hasattr(doc, "__iter__"):
        raise TypeError(
            f"Document {index} is a {type(doc).__name__}; expected a str or a list of "
            f"str tokens. Pass a list of documents, e.g. [['new', 'york'], ...]."
        )
    return list(doc)


def _sum_padded(matrices, n_terms, dtype):
    """Sum square CSR matrices of growing sizes as ``(n_terms, n_terms)``, in one pass."""
    rows = [np.repeat(np.arange(m.shape[0]), np.diff(m.indptr)) for m in matrices]
    data = np.concatenate([m.data for m in matrices]).astype(dtype, copy=False)
    cols = np.concatenate([m.indices for m in matrices])
    coo = sp.coo_matrix((data, (np.concatenate(rows), cols)), shape=(n_terms, n_terms))
    return coo.tocsr()                                      # sums duplicate entries


def _doc_chunks(docs, tokenize, chunk_tokens):
    """Yield lists of token lists holding about ``chunk_tokens`` tokens each."""
    chunk, n_tokens = [], 0
    for index, doc in enumerate(docs):
        chunk.append(_as_tokens(doc, tokenize, index))
        n_tokens += len(chunk[-1])
        if n_tokens >= chunk_tokens:
            yield chunk
            chunk, n_tokens = [], 0
    if chunk:
        yield chunk


def count_stream(docs, window, *, weighting="uniform", vocabulary=None, tokenize=None,
                 working_memory=None):
    """Stream documents in chunks; return (directed counts, term frequencies, vocabulary).

    ``vocabulary=None`` grows the vocabulary chunk by chunk (first-appearance order).
    Memory holds one chunk of ids and pairs (sized by ``working_memory`` MiB) and at most
    twice the counts (chunk counts wait until they hold as many entries as the running
    total, then merge in one pass), never the whole corpus.
    """
    vocab = new_vocabulary() if vocabulary is None else dict(vocabulary)
    # a token costs its id, its padding share and `window` int64 keys (+ sort space)
    chunk_tokens = chunk_n_rows(8 * (2 * window + 4), 2**62, working_memory)
    dtype = np.int64 if weighting == "uniform" else np.float64
    total, pending, freq = sp.csr_matrix((0, 0), dtype=dtype), [], []
    for chunk in _doc_chunks(docs, tokenize, chunk_tokens):
        ids, lengths = token_ids(chunk, vocab)
        pending.append(window_counts(pad_documents(ids, lengths, window), len(vocab),
                                     window, weighting=weighting))
        freq.append(np.bincount(ids[ids >= 0], minlength=len(vocab)))
        if sum(m.nnz for m in pending) >= total.nnz:
            total, pending = _sum_padded([total, *pending], len(vocab), dtype), []
    total = _sum_padded([total, *pending], len(vocab), dtype)
    freq = sum((np.pad(f, (0, len(vocab) - len(f))) for f in freq),
               np.zeros(len(vocab), dtype=np.int64))
    return total, freq, dict(vocab)


def restrict(counts, freq, vocabulary, min_count):
    """Keep the terms seen at least ``min_count`` times, in sorted term order."""
    terms = np.array(list(vocabulary), dtype=object)
    ids = np.fromiter(vocabulary.values(), np.int64, len(vocabulary))
    keep = freq[ids] >= min_count
    if not len(keep):
        raise ValueError("The documents hold no tokens at all; check the tokenizer options "
                         "(the default regexp tokenizer drops one-letter words).")
    if not keep.any():
        raise ValueError(
            f"min_count={min_count} removes every term: the most frequent term occurs "
            f"{int(freq.max()) if freq.size else 0} time(s). Lower min_count or pass a "
            f"larger corpus."
        )
    order = np.argsort(terms[keep].astype(str), kind="stable")
    kept_ids = ids[keep][order]
    new_vocab = {term: i for i, term in enumerate(terms[keep][order])}
    return counts[kept_ids][:, kept_ids].tocsr(), freq[kept_ids], new_vocab


@validate_params(
    {
        "docs": "no_validation",
        "window": [Interval(Integral, 1, None, closed="left")],
        "symmetric": ["boolean"],
        "weighting": [StrOptions({"uniform", "harmonic"})],
        "vocabulary": [dict, list, tuple, None],
        "min_count": [Interval(Integral, 1, None, closed="left")],
        "tokenizer": [StrOptions({"regexp", "treebank", "wordpunct", "whitespace", "char",
                                  "jieba"}), callable],
        "working_memory": [Interval(Real, 0, None, closed="neither"), None],
    },
    prefer_skip_nested_validation=True,
)
def cooccurrence(docs, window=5, *, symmetric=True, weighting="uniform", vocabulary=None,
                 min_count=1, tokenizer="regexp", working_memory=None):
    """Count how often each word occurs within ``window`` tokens of each other word.

    Parameters
    ----------
    docs : iterable of str or of list of str
        Documents: token lists, or strings split by ``tokenizer``. A generator is read
        once, in chunks, in bounded memory.
    window : int, default=5
        Largest distance (in tokens) between a word and a context word.
    symmetric : bool, default=True
        Count contexts on both sides (the matrix is symmetric); False counts only the
        contexts after the word (``counts[w, c]``: c follows w).
    weighting : {"uniform", "harmonic"}, default="uniform"
        Each pair adds 1, or ``1 / distance`` (word2vec-style dynamic window).
    vocabulary : dict or list of str, default=None
        Fixed terms (dict term -> index, or a list); other tokens are ignored (they still
        take their position, so windows never span them). None learns the terms.
    min_count : int, default=1
        With a learned vocabulary, drop terms seen fewer times (pairs with them vanish;
        distances in the text are kept).
    tokenizer : str or callable, default="regexp"
        How string documents are split (a name of :func:`nlpfeat.text.get_tokenizer`).
    working_memory : float, default=None
        MiB of temporary arrays per chunk; None uses nlpfeat's default.

    Returns
    -------
    counts : scipy.sparse.csr_matrix, shape (n_terms, n_terms)
        Word x context counts: int64 (uniform) or float64 (harmonic).
    vocabulary : dict
        term -> row/column index (sorted by term when learned).

    Notes
    -----
    ``counts[w, c] = sum over positions i, offsets 1 <= d <= window`` of
    ``weight(d) [t_i = w, t_{i+d} = c]`` (plus the mirror image when symmetric), within
    each document. Counting is additive: with a fixed vocabulary, the counts of a corpus
    equal the sum of the counts of its parts, so a corpus can be counted in pieces.

    Examples
    --------
    >>> from nlpfeat.text import cooccurrence
    >>> counts, vocab = cooccurrence([["new", "york", "city"], ["new", "york"]], window=1)
    >>> vocab
    {'city': 0, 'new': 1, 'york': 2}
    >>> counts.toarray()
    array([[0, 0, 1],
           [0, 0, 2],
           [1, 2, 0]])
    """
    if isinstance(vocabulary, (list, tuple)):
        vocabulary = {term: i for i, term in enumerate(vocabulary)}
    if vocabulary is not None and sorted(vocabulary.values()) != list(range(len(vocabulary))):
        raise ValueError(
            "vocabulary must map its n terms to the indices 0..n-1, each once; got "
            f"{len(vocabulary)} terms with indices {sorted(set(vocabulary.values()))[:5]}...")
    from nlpfeat.text._tokenize import get_tokenizer

    counts, freq, vocab = count_stream(
        docs, window, weighting=weighting, vocabulary=vocabulary,
        tokenize=get_tokenizer(tokenizer), working_memory=working_memory)
    if symmetric:
        counts = (counts + counts.T).tocsr()
    if vocabulary is not None:
        return counts, dict(vocabulary)
    counts, _, vocab = restrict(counts, freq, vocab, min_count)
    return counts, vocab

