"""Word-context co-occurrence counts in a sliding window, vectorised over token-id arrays.

The numeric core, :func:`pair_table`, pairs ``ids[i]`` with ``ids[i + offset]`` for every
offset ``1..window`` at once (one array operation per offset, never a loop over tokens).
Documents are laid out longest first, each followed by ``min(window, length - 1)`` padding
ids (``-1``), so no pair crosses a document boundary, and offset ``d`` only scans the
documents longer than ``d``: the cost of a document is bounded by ``min(window, length)``
per token, however large ``window`` is. :func:`cooccurrence` streams documents in chunks that fit a
working-memory budget and adds the chunk counts, which is exact because counting is
additive: the counts of the parts sum to the counts of the whole.
"""
from collections import defaultdict
from itertools import chain, repeat

import numpy as np
import scipy.sparse as sp

from nlpfeat._chunking import chunk_n_rows
from nlpfeat._validation import Integral, Interval, Real, StrOptions, validate_params
from nlpfeat.text._documents import check_corpus_type, check_document_tokens
from nlpfeat.text._tokenize import TOKENIZERS
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


def layout_documents(ids, lengths, window):
    """Longest document first, each followed by its own padding: (padded ids, reach).

    Document ``i`` is followed by ``min(window, lengths[i] - 1)`` ids of -1, the largest
    offset at which it has a pair, so no pair crosses a document boundary.
    ``reach[d - 1]`` is the number of leading positions that hold every document longer
    than ``d`` (with its padding): the only ones offset ``d`` needs to scan.
    ``len(reach)`` is the largest offset with a pair, ``min(window, max(lengths) - 1)``.

    Examples
    --------
    >>> from nlpfeat.text._cooccurrence import layout_documents
    >>> layout_documents(np.array([7, 8, 9]), np.array([1, 2]), window=10**6)
    (array([ 8,  9, -1,  7]), array([3]))
    """
    order = np.argsort(-lengths, kind="stable")
    sorted_lengths = lengths[order]
    pad = np.minimum(window, np.maximum(sorted_lengths - 1, 0))
    ends = np.cumsum(sorted_lengths + pad)
    starts = ends - sorted_lengths - pad
    doc = np.repeat(np.arange(len(order)), sorted_lengths)
    rank = np.arange(len(doc)) - np.repeat(np.cumsum(sorted_lengths) - sorted_lengths,
                                           sorted_lengths)
    source = (np.cumsum(lengths) - lengths)[order]
    out = np.full(int(ends[-1]) if len(ends) else 0, -1, dtype=np.int64)
    out[starts[doc] + rank] = ids[source[doc] + rank]
    max_offset = int(min(window, max(int(sorted_lengths.max(initial=0)) - 1, 0)))
    # the documents longer than d are the first searchsorted(-L, -d) of the sorted ones
    n_longer = np.searchsorted(-sorted_lengths, -np.arange(1, max_offset + 1), side="left")
    return out, np.concatenate([[0], ends])[n_longer]


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


def pair_table(padded_ids, window, *, weighting="uniform", reach=None):
    """Directed pairs (word, context at 1..window after it) and their summed weights.

    Parameters
    ----------
    padded_ids : ndarray of int64, shape (n_positions,)
        Term ids below 2**31; ``-1`` marks padding or an out-of-vocabulary token (never
        paired). Documents must be separated by at least ``window`` padding ids, or laid
        out by :func:`layout_documents`, which gives ``reach``.
    window : int
    weighting : {"uniform", "harmonic"}
        Weight 1 per pair, or ``1 / offset``.
    reach : ndarray of int64, shape (n_offsets,), default=None
        Offset ``d`` pairs only the first ``reach[d - 1]`` positions, and offsets beyond
        ``len(reach)`` none; None: every position, offsets up to ``window``.

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
    if reach is None:
        reach = np.full(min(window, max(len(padded_ids) - 1, 0)), len(padded_ids))
    for offset, n in enumerate(reach.tolist(), start=1):   # offsets; tokens are an axis
        left, right = padded_ids[:n - offset], padded_ids[offset:n]
        keep = (left >= 0) & (right >= 0)
        keys.append((ids[:n - offset][keep] << shift) | ids[offset:n][keep])
        if weighting == "harmonic":
            weights.append(np.full(keys[-1].shape, 1.0 / offset))
    keys = np.concatenate(keys) if keys else np.empty(0, np.int64)
    keys, values = _reduce(keys, np.concatenate(weights) if weights else None)
    if narrow:        # back to the int64 layout word << 32 | context (order unchanged)
        wide = keys.astype(np.int64)
        keys = ((wide >> _NARROW_SHIFT) << _SHIFT) | (wide & (_NARROW - 1))
    return keys, values


def _as_tokens(doc, tokenize, index, check_tokens):
    """One document -> list of tokens (strings go through ``tokenize``)."""
    if isinstance(doc, str):
        return tokenize(doc)
    if isinstance(doc, bytes) or not hasattr(doc, "__iter__"):
        raise TypeError(
            f"Document {index} is a {type(doc).__name__}; expected a str or a list of "
            f"str tokens. Pass a list of documents, e.g. [['new', 'york'], ...]."
        )
    doc = list(doc)
    if check_tokens:
        check_document_tokens(index, doc)
    return doc


def _doc_chunks(docs, tokenize, chunk_bytes, window, check_tokens=True):
    """Yield lists of token lists whose counting takes about ``chunk_bytes()`` bytes.

    A document of ``L`` tokens costs ``8 L (2 min(window, L) + 4)`` bytes (ids, padding,
    pair keys and sort space); the budget is asked again for every chunk.
    """
    chunk, n_bytes, limit = [], 0, chunk_bytes()
    for index, doc in enumerate(docs):
        chunk.append(_as_tokens(doc, tokenize, index, check_tokens))
        n = len(chunk[-1])
        n_bytes += 8 * n * (2 * min(window, n) + 4)
        if n_bytes >= limit:
            yield chunk
            chunk, n_bytes, limit = [], 0, chunk_bytes()
    if chunk:
        yield chunk


#: MiB per chunk when ``working_memory`` is None. Counting is a sort-and-merge, not a
#: cache-bound pairwise kernel, so larger chunks amortise the per-chunk work: on the
#: Wikipedia sample (window 5) 4 MiB chunks counted 0.95 M tokens/s and 64 MiB 1.67 M.
COUNTING_WORKING_MEMORY = 64.0


def count_stream(docs, window, *, weighting="uniform", vocabulary=None, tokenize=None,
                 working_memory=None, min_count=1, check_tokens=True):
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
    # the budget in bytes (chunk_n_rows checks working_memory); a chunk may also grow to
    # the size of the tables held already (16 bytes a pair)
    budget = chunk_n_rows(1, 2**62,
                          COUNTING_WORKING_MEMORY if working_memory is None else working_memory)
    dtype = np.int64 if weighting == "uniform" else np.float64
    stack, freq = [(np.empty(0, np.int64), np.empty(0, dtype))], []
    held = lambda: max(budget, 16 * sum(len(keys) for keys, _ in stack))
    chunks = _doc_chunks(docs, tokenize, held, window, check_tokens)
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
            padded, reach = layout_documents(new_id[ids], lengths, window)
            keys, values = pair_table(padded, window, weighting=weighting, reach=reach)
            return keys, values, final, None, len(final)
        padded, reach = layout_documents(ids, lengths, window)
        table = pair_table(padded, window, weighting=weighting, reach=reach)
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
                       min_count=1, tokenize=None, working_memory=None, check_tokens=True):
    """:func:`cooccurrence` without parameter validation (for the estimators).

    ``check_tokens=False`` skips the per-document check that every token is a ``str``, for
    callers whose token lists come from :meth:`TextMixin._token_lists`, checked already.
    """
    keys, values, vocab, order, n_ids = count_stream(
        docs, window, weighting=weighting, vocabulary=vocabulary, tokenize=tokenize,
        working_memory=working_memory, min_count=min_count, check_tokens=check_tokens)
    return pairs_to_matrix(keys, values, n_ids, order, symmetric=symmetric), vocab


@validate_params(
    {
        "docs": "no_validation",
        "window": [Interval(Integral, 1, None, closed="left")],
        "symmetric": ["boolean"],
        "weighting": [StrOptions({"uniform", "harmonic"})],
        "vocabulary": [dict, list, tuple, None],
        "min_count": [Interval(Integral, 1, None, closed="left")],
        "tokenizer": [StrOptions(set(TOKENIZERS)), callable],
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
        Documents: token lists (of ``str``), or strings split by ``tokenizer``. A generator
        is read once, in chunks, in bounded memory. Counting costs at most
        ``min(window, length)`` pairs per token of a document, however large ``window``.
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
    check_corpus_type(docs)
    if isinstance(vocabulary, (list, tuple)):
        vocabulary = {term: i for i, term in enumerate(vocabulary)}
    if vocabulary is not None and sorted(vocabulary.values()) != list(range(len(vocabulary))):
        raise ValueError(
            "vocabulary must map its n terms to the indices 0..n-1, each once; got "
            f"{len(vocabulary)} terms with indices {sorted(set(vocabulary.values()))[:5]}...")
    if vocabulary is not None:
        bad = next((term for term in vocabulary if not isinstance(term, str)), None)
        if bad is not None:
            raise TypeError(f"vocabulary holds a term of type {type(bad).__name__} "
                            f"({bad!r}); every term must be a str, as the tokens are.")
    from nlpfeat.text._tokenize import get_tokenizer

    return count_cooccurrence(docs, window, symmetric=symmetric, weighting=weighting,
                              vocabulary=vocabulary, min_count=min_count,
                              tokenize=get_tokenizer(tokenizer), working_memory=working_memory)
