"""Word-context co-occurrence counts of a corpus: :func:`cooccurrence`.

The counting itself is the engine's (:mod:`nlpfeat.text._counting._pair_counts` for one
pass, :mod:`nlpfeat.text._counting._pair_merge` for the two-pass symmetric counts); this
module validates the parameters and chooses between the two.
"""
from typing import NamedTuple

from nlpfeat._deprecation import DEPRECATED, deprecated_constraint, renamed_value
from nlpfeat._progress import track
from nlpfeat._validation import Integral, Interval, Real, StrOptions, validate_params
from nlpfeat.text._base._documents import check_corpus_type
from nlpfeat.text._base._tokenize import TOKENIZERS
from nlpfeat.text._counting._pair_counts import PairCounts, counting_limit, doc_chunks
from nlpfeat.text._counting._pair_merge import count_upper_pairs
from nlpfeat.text._dask import bag_term_counts, is_dask_bag, strip_line_break

__all__ = ["cooccurrence", "count_cooccurrence"]


class _PairCounting(NamedTuple):
    """The parameters of the pair counting of one partition of a bag (sent to the workers)."""

    window: int
    weighting: str
    vocabulary: dict | None
    tokenize: object
    working_memory: float | None
    prune_at: int | None
    text: object = None             # the TextPass of the compiled numbering, or None

    def new_counts(self):
        return PairCounts(self.window, weighting=self.weighting, vocabulary=self.vocabulary,
                          prune_at=self.prune_at)


class _Tokenize(NamedTuple):
    """``(doc, index) -> tokens`` of a string document (the Python path of a chunk)."""

    tokenize: object

    def __call__(self, doc, index):
        return self.tokenize(doc)


def _count_partition(counting, docs):
    """The :class:`PairCounts` of one partition of a dask bag (on a worker)."""
    return counting.new_counts().update(map(strip_line_break, docs),
                                        working_memory=counting.working_memory,
                                        tokenize=counting.tokenize,
                                        text=_one_pass_text(counting.text,
                                                            prune_at=counting.prune_at,
                                                            tokenize=counting.tokenize))


def _one_pass_text(text, *, prune_at, tokenize):
    """The ``text`` argument of :meth:`PairCounts.update`: the compiled numbering with
    the options ``text`` (None: the Python tokenizer), never with ``prune_at`` (its
    counts depend on the chunks' boundaries, which the compiled pass draws otherwise)."""
    return None if text is None or prune_at is not None else (text, _Tokenize(tokenize))


def _count_bag(bag, window, *, symmetric, weighting, vocabulary, min_count, tokenize,
               working_memory, prune_at, text=None):
    """:func:`count_cooccurrence` of a dask bag: each partition counted on a worker, the
    counts merged by a tree reduction there (exact sums: the local counts)."""
    counting = _PairCounting(window, weighting, vocabulary, tokenize, working_memory,
                             prune_at, text)
    counts = bag_term_counts(counting, bag, _count_partition)
    return counts.matrix(min_count, symmetric=symmetric, release=True)


def count_cooccurrence(docs, window, *, symmetric=True, weighting="uniform", vocabulary=None,
                       min_count=1, tokenize=None, working_memory=None, check_tokens=True,
                       prune_at=None, text=None):
    """:func:`cooccurrence` without parameter validation (for the estimators).

    ``check_tokens=False`` skips the per-document check that every token is a ``str``, for
    callers whose token lists come from :meth:`TextMixin._token_lists`, checked already.
    ``text`` (a :class:`~nlpfeat.text._counting._text_pass.TextPass`, or None): the
    options with which ``tokenize`` splits a string exactly as the compiled tokenizer
    does; string documents are then numbered without a ``str`` per token (all counts
    but ``prune_at``'s, whose results depend on the chunks).
    """
    if is_dask_bag(docs):
        return _count_bag(docs, window, symmetric=symmetric, weighting=weighting,
                          vocabulary=vocabulary, min_count=min_count, tokenize=tokenize,
                          working_memory=working_memory, prune_at=prune_at, text=text)
    counts = PairCounts(window, weighting=weighting, vocabulary=vocabulary, prune_at=prune_at)
    if symmetric and prune_at is None:
        matrix, vocabulary = count_upper_pairs(
            doc_chunks(docs, window, working_memory, tokenize=tokenize,
                       check_tokens=check_tokens, text=text is not None),
            counts, min_count=min_count, limit=counting_limit(working_memory),
            symmetric=True, text=None if text is None else (text, _Tokenize(tokenize)))
        return matrix, vocabulary
    counts.update(docs, working_memory=working_memory, tokenize=tokenize,
                  check_tokens=check_tokens,
                  text=_one_pass_text(text, prune_at=prune_at, tokenize=tokenize))
    return counts.matrix(min_count, symmetric=symmetric, release=True)


@validate_params(
    {
        "docs": "no_validation",
        "window": [Interval(Integral, 1, None, closed="left")],
        "symmetric": ["boolean"],
        "context_weighting": [StrOptions({"uniform", "harmonic"})],
        "weighting": deprecated_constraint([StrOptions({"uniform", "harmonic"})]),
        "vocabulary": [dict, list, tuple, None],
        "min_count": [Interval(Integral, 1, None, closed="left")],
        "tokenizer": [StrOptions(set(TOKENIZERS)), callable],
        "working_memory": [Interval(Real, 0, None, closed="neither"), None],
        "prune_at": [Interval(Integral, 1, None, closed="left"), None],
        "verbose": ["verbose"],
    },
    prefer_skip_nested_validation=True,
)
def cooccurrence(docs, window=5, *, symmetric=True, context_weighting="uniform",
                 vocabulary=None, min_count=1, tokenizer="regexp", working_memory=None,
                 prune_at=None, verbose=0, weighting=DEPRECATED):
    """Count how often each word occurs within ``window`` tokens of each other word.

    Parameters
    ----------
    docs : iterable of str or of list of str, or dask.bag.Bag
        Documents: token lists (of ``str``), or strings split by ``tokenizer``, e.g. a
        lazily read :class:`nlpfeat.datasets.Corpus`. Read once, a chunk at a time (a
        generator works). Counting costs at most
        ``min(window, length)`` pairs per token of a document, however large ``window``.
        A ``dask.bag.Bag`` is counted on its workers, a partition per task (one trailing
        line break of each string removed, as from ``dask.bag.read_text``), into one
        pair table per partition, merged by a tree reduction on the workers: the counts
        of the local path (with ``prune_at``, each partition and each merge prunes).
    window : int, default=5
        Largest distance (in tokens) between a word and a context word.
    symmetric : bool, default=True
        Count contexts on both sides (the matrix is symmetric); False counts only the
        contexts after the word (``counts[w, c]``: c follows w).
    context_weighting : {"uniform", "harmonic"}, default="uniform"
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
        MiB of temporary arrays per chunk; None follows scikit-learn's ``working_memory``
        configuration when set, else 64 MiB
        (:data:`~nlpfeat._chunking.PAIR_COUNTING_WORKING_MEMORY`: counting runs faster in
        large chunks, unlike the cache-bound kernels of nlpfeat.kernels).
        Symmetric counts (without ``prune_at``) are counted in two passes over a
        temporary copy of the documents' token ids (4 bytes per token, in the system's
        temporary folder, removed at the end): the terms, then the pairs of the terms
        kept by ``min_count`` only, each chunk's pairs cut into buckets appended to
        files (about 8 bytes per pair; 12 per distinct pair of a chunk for harmonic
        weights), each bucket sorted and counted once: the time grows linearly with the
        corpus. Peak memory is then this budget plus the
        vocabulary and the output (written from the merged buckets a block at a time),
        never the corpus nor the pairs of rare words.
        ``symmetric=False`` and ``prune_at`` count in one pass, with a table of every
        distinct pair in memory (16 bytes each, up to twice while chunk tables merge).
    prune_at : int or None, default=None
        With a learned vocabulary, the largest number of terms kept while counting
        (gensim's ``prune_at``): when a chunk leaves more, the terms seen fewer than 2
        times so far are dropped with their pairs (3 at the next pruning, and so on) until
        at most ``prune_at`` remain. This bounds the vocabulary and the pair table of a
        corpus with an unbounded number of rare words, but the counts become approximate:
        a dropped term seen again starts from zero, so terms (and their pairs) near the
        pruning threshold are undercounted or lost, and the result depends on the chunk
        boundaries. None (the default) never prunes: every count is exact.
    verbose : int, default=0
        With 1 or more, a progress bar on stderr over the documents read (the bytes, with
        the rate in MB/s, of a :class:`~nlpfeat.datasets.Corpus`; none for a dask bag,
        read on its workers); 0 is silent.
    weighting : default="deprecated"
        The former name of ``context_weighting`` (``weighting`` is the TF-IDF scheme of
        :class:`TermWeighting`): still accepted with a ``FutureWarning``, removed in 0.3.

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
    if not is_dask_bag(docs):
        check_corpus_type(docs)
        docs = track(docs, verbose, "cooccurrence: documents")
    context_weighting = renamed_value(weighting, context_weighting, old="weighting",
                                      new="context_weighting", default="uniform",
                                      owner="cooccurrence")
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
    from nlpfeat.text._base._tokenize import get_tokenizer

    text = None
    if isinstance(tokenizer, str) and tokenizer == "regexp":   # the compiled tokenizer's
        from nlpfeat.text._counting._text_pass import TextPass  # numba: on use

        text = TextPass(lowercase=False)
    return count_cooccurrence(docs, window, symmetric=symmetric, weighting=context_weighting,
                              vocabulary=vocabulary, min_count=min_count,
                              tokenize=get_tokenizer(tokenizer), working_memory=working_memory,
                              prune_at=prune_at, text=text)
