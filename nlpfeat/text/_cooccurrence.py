"""Word-context co-occurrence counts in a sliding window, vectorised over token-id arrays.

The numeric core, :func:`pair_table`, pairs ``ids[i]`` with ``ids[i + offset]`` for every
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
from nlpfeat.text._vocabulary import string_order

__all__ = ["cooccurrence", "count_cooccurrence", "pair_table", "split_keys", "token_ids"]

_SHIFT = 32                        # a pair key is word << 32 | context (ids below 2**31)
_MASK = (1 << _SHIFT) - 1
_NARROW_SHIFT = 16                 # with fewer than 2**16 ids, a pair fits a uint32
_NARROW = 1 << _NARROW_SHIFT


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
    lengths = np.fromiter(map(len, token_lists), np.int64, len(token_lists))
    flat = chain.from_iterable(token_lists)
    if isinstance(vocabulary, defaultdict):
        lookup = map(vocabulary.__getitem__, flat)
    else:
        lookup = map(vocabulary.get, flat, repeat(-1))
    return np.fromiter(lookup, np.int64, int(lengths.sum())), lengths


def pad_documents(ids, lengths, pad):
    """Insert ``pad`` ids of -1 after each document: (n_tokens,) -> (n_tokens + pad * n_docs,)."""
    doc_of_token = np.repeat(np.arange(len(lengths)), lengths)
    out = np.full(len(ids) + pad * len(lengths), -1, dtype=np.int64)
    out[np.arange(len(ids)) + pad * doc_of_token] = ids
    return out


def _reduce(keys, values):
    """Sort ``keys`` and add the ``values`` of equal keys: (unique keys, sums).

    ``values=None`` weighs every key 1 (the sums are counts).
    """
    if not len(keys):
        return keys, np.zeros(0, np.int64 if values is None else values.dtype)
    if values is None:
        keys = np.sort(keys)
    else:
        order = np.argsort(keys)
        keys, values = keys[order], values[order]
    starts = np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1]]))
    if values is None:
        return keys[starts], np.diff(np.append(starts, len(keys)))
    return keys[starts], np.add.reduceat(values, starts)


def _merge(table, other):
    """Add the sorted pair table ``other`` into the sorted table ``table`` (linear time)."""
    (keys, values), (new_keys, new_values) = table, other
    if not len(keys):
        return new_keys, new_values
    pos = np.searchsorted(keys, new_keys)
    hit = pos < len(keys)
    hit[hit] = keys[pos[hit]] == new_keys[hit]
    values = values.astype(np.result_type(values, new_values))   # a copy: never in place
    values[pos[hit]] += new_values[hit]                 # keys are unique: no collisions
    # interleave the new keys: the j-th one lands at its insertion point + j
    new_at = pos[~hit] + np.arange(np.count_nonzero(~hit))
    old = np.ones(len(keys) + len(new_at), dtype=bool)
    old[new_at] = False
    merged_keys = np.empty(len(old), dtype=keys.dtype)
    merged_values = np.empty(len(old), dtype=values.dtype)
    merged_keys[old], merged_keys[new_at] = keys, new_keys[~hit]
    merged_values[old], merged_values[new_at] = values, new_values[~hit]
    return merged_keys, merged_values


def split_keys(keys):
    """Pair keys -> (word ids, context ids)."""
    return keys >> _SHIFT, keys & _MASK


def pair_table(padded_ids, window, *, weighting="uniform"):
    """Directed pairs (word, context at 1..window after it) and their summed weights.

    Parameters
    ----------
    padded_ids : ndarray of int64, shape (n_positions,)
        Term ids below 2**31; ``-1`` marks padding or an out-of-vocabulary token (never
        paired). Documents must be separated by at least ``window`` padding ids.
    window : int
    weighting : {"uniform", "harmonic"}
        Weight 1 per pair, or ``1 / offset``.

    Returns
    -------
    keys : ndarray of int64
        Sorted unique ``word << 32 | context``.
    values : ndarray
        int64 counts (uniform) or float64 summed weights (harmonic).
    """
    # ids below 2**16 pack a pair into 32 bits, which sorts about twice as fast
    narrow = len(padded_ids) > 0 and padded_ids.max() < _NARROW
    ids = padded_ids.astype(np.uint32) if narrow else padded_ids
    shift = _NARROW_SHIFT if narrow else _SHIFT
    keys, weights = [], []
    for offset in range(1, window + 1):           # loop over offsets, tokens are an axis
        left, right = padded_ids[:-offset], padded_ids[offset:]
        keep = (left >= 0) & (right >= 0)
        keys.append((ids[:-offset][keep] << shift) | ids[offset:][keep])
        if weighting == "harmonic":
            weights.append(np.full(keys[-1].shape, 1.0 / offset))
    keys = np.concatenate(keys) if keys else np.empty(0, np.int64)
    keys, values = _reduce(keys, np.concatenate(weights) if weights else None)
    if narrow:        # back to the int64 layout word << 32 | context (order unchanged)
        wide = keys.astype(np.int64)
        keys = ((wide >> _NARROW_SHIFT) << _SHIFT) | (wide & (_NARROW - 1))
    return keys, values


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


def _doc_chunks(docs, tokenize, chunk_tokens):
    """Yield lists of token lists of about ``chunk_tokens()`` tokens (asked per chunk)."""
    chunk, n_tokens, limit = [], 0, chunk_tokens()
    for index, doc in enumerate(docs):
        chunk.append(_as_tokens(doc, tokenize, index))
        n_tokens += len(chunk[-1])
        if n_tokens >= limit:
            yield chunk
            chunk, n_tokens, limit = [], 0, chunk_tokens()
    if chunk:
        yield chunk


#: MiB per chunk when ``working_memory`` is None. Counting is a sort-and-merge, not a
#: cache-bound pairwise kernel, so larger chunks amortise the per-chunk work: on the
#: Wikipedia sample (window 5) 4 MiB chunks counted 0.95 M tokens/s and 64 MiB 1.67 M.
COUNTING_WORKING_MEMORY = 64.0


def count_stream(docs, window, *, weighting="uniform", vocabulary=None, tokenize=None,
                 working_memory=None, min_count=1):
    """Stream documents in chunks; return (pair keys, values, vocabulary, order, n_ids).

    ``vocabulary=None`` grows the vocabulary chunk by chunk (first-appearance order) and
    finally keeps the terms seen at least ``min_count`` times, sorted (see
    :func:`select_terms`); the pair keys then use first-appearance ids and ``order`` (new
    index -> old id) selects and sorts them, except when the whole corpus fits one chunk:
    its terms are chosen before the pairs are counted, the keys use the final ids and
    ``order`` is None (as with a fixed vocabulary). ``n_ids``: the size of the keys' id
    space.

    Memory holds one chunk of ids and pairs (sized by ``working_memory`` MiB, or by the
    size of the tables already held when that is larger) and a stack of sorted pair tables
    of doubling sizes (about twice the final table at most), merged pairwise in linear
    time as a binary counter carries; never the whole corpus.
    """
    vocab = new_vocabulary() if vocabulary is None else dict(vocabulary)
    # a token costs its id, its padding share and `window` int64 keys (+ sort space); a
    # chunk may also grow to the size of the tables held already (16 bytes a pair)
    token_bytes = 8 * (2 * window + 4)
    budget = chunk_n_rows(token_bytes, 2**62,
                          COUNTING_WORKING_MEMORY if working_memory is None else working_memory)
    dtype = np.int64 if weighting == "uniform" else np.float64
    stack, freq = [(np.empty(0, np.int64), np.empty(0, dtype))], []
    held = lambda: max(budget, 16 * sum(len(keys) for keys, _ in stack) // token_bytes)
    chunks = _doc_chunks(docs, tokenize, held)
    chunk = next(chunks, None)
    while chunk is not None:
        ids, lengths = token_ids(chunk, vocab)
        chunk = next(chunks, None)         # read ahead: was this the only chunk?
        if vocabulary is None and chunk is None and not freq:
            # one chunk: choose the terms first; the dropped ones become -1 (never paired,
            # but they keep their positions) and the pairs get their final ids
            order, final = select_terms(np.bincount(ids, minlength=len(vocab)), vocab,
                                        min_count)
            new_id = np.full(len(vocab), -1, dtype=np.int64)
            new_id[order] = np.arange(len(order))
            keys, values = pair_table(pad_documents(new_id[ids], lengths, window), window,
                                      weighting=weighting)
            return keys, values, final, None, len(final)
        table = pair_table(pad_documents(ids, lengths, window), window, weighting=weighting)
        while len(stack) > 1 and len(stack[-1][0]) <= 2 * len(table[0]):
            table = _merge(stack.pop(), table)           # sizes on the stack keep doubling
        stack.append(table)
        freq.append(np.bincount(ids[ids >= 0], minlength=len(vocab)))
    table = stack.pop()
    while stack:
        table = _merge(stack.pop(), table)
    if vocabulary is not None:
        return table[0], table[1], dict(vocab), None, len(vocab)
    freq = sum((np.pad(f, (0, len(vocab) - len(f))) for f in freq),
               np.zeros(len(vocab), dtype=np.int64))
    order, final = select_terms(freq, vocab, min_count)
    return table[0], table[1], final, order, len(vocab)


def select_terms(freq, vocabulary, min_count):
    """Terms seen at least ``min_count`` times, sorted: (their old ids, new vocabulary).

    ``vocabulary`` maps each term to its id; ``freq`` is indexed by id.
    """
    if not len(vocabulary):
        raise ValueError("The documents hold no tokens at all; check the tokenizer options "
                         "(the default regexp tokenizer drops one-letter words).")
    terms = np.empty(len(vocabulary), dtype=object)
    terms[np.fromiter(vocabulary.values(), np.int64, len(vocabulary))] = list(vocabulary)
    kept = np.flatnonzero(freq >= min_count)
    if not len(kept):
        raise ValueError(
            f"min_count={min_count} removes every term: the most frequent term occurs "
            f"{int(freq.max())} time(s). Lower min_count or pass a larger corpus.")
    kept = kept[string_order(terms[kept])]
    return kept, dict(zip(terms[kept].tolist(), range(len(kept))))


def pairs_to_matrix(keys, values, n_terms, order=None, *, symmetric=True):
    """CSR matrix of a sorted pair table; ``order`` (new index -> old id) selects terms."""
    rows, cols = split_keys(keys)
    indptr = np.zeros(n_terms + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n_terms), out=indptr[1:])
    counts = sp.csr_matrix((values, cols, indptr), shape=(n_terms, n_terms))
    if order is not None:
        counts = counts[order][:, order]
    return (counts + counts.T).tocsr() if symmetric else counts.tocsr()


def count_cooccurrence(docs, window, *, symmetric=True, weighting="uniform", vocabulary=None,
                       min_count=1, tokenize=None, working_memory=None):
    """:func:`cooccurrence` without parameter validation (for the estimators)."""
    keys, values, vocab, order, n_ids = count_stream(
        docs, window, weighting=weighting, vocabulary=vocabulary, tokenize=tokenize,
        working_memory=working_memory, min_count=min_count)
    return pairs_to_matrix(keys, values, n_ids, order, symmetric=symmetric), vocab


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
        MiB of temporary arrays per chunk; None means 64 MiB (measured: counting runs
        faster in large chunks, unlike the cache-bound kernels of nlpfeat.kernels).

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

    return count_cooccurrence(docs, window, symmetric=symmetric, weighting=weighting,
                              vocabulary=vocabulary, min_count=min_count,
                              tokenize=get_tokenizer(tokenizer), working_memory=working_memory)
