"""Joining the learned phrases of ``Collocations`` into single tokens (``transform``).

Both joins are gensim's greedy left-to-right scan, run over all positions of a chunk of
documents at once on token-id arrays.
"""
from itertools import chain

import numpy as np

from nlpfeat.text._counting._pair_tables import token_ids

__all__ = ["join_ngrams", "join_pairs", "rewrite"]


def rewrite(units, levels, delimiter):
    """``units`` (token lists) with the phrases of every level of ``levels_`` joined."""
    for level in levels:
        join = join_pairs if len(level[1].shape) == 1 else join_ngrams
        units = join(units, level, delimiter)
    return units


def join_pairs(units, level, delimiter):
    """Greedy left-to-right joining of the adjacent pairs of ``level`` (gensim's rule).

    ``level`` is ``(terms, keys)``: the unit strings and the sorted keys
    ``first * len(terms) + second`` of the pairs to join. In a run of consecutive matching
    pairs the 1st, 3rd, ... are joined, as a left-to-right scan that joins a pair and skips
    past it does.
    """
    terms, pair_keys = level
    if not units:
        return []
    vocab = dict(zip(terms.tolist(), range(len(terms))))
    n_terms = len(terms)
    ids, lengths = token_ids(units, vocab)
    keys = ids[:-1] * n_terms + ids[1:]
    pos = np.minimum(np.searchsorted(pair_keys, keys), len(pair_keys) - 1)
    match = (ids[:-1] >= 0) & (ids[1:] >= 0) & (pair_keys[pos] == keys)
    ends = np.cumsum(lengths)
    match[ends[(ends > 0) & (ends < len(ids))] - 1] = False
    idx = np.arange(len(match))
    last_miss = np.maximum.accumulate(np.where(match, -1, idx))
    chosen = np.flatnonzero(match & ((idx - last_miss) % 2 == 1))
    flat = np.empty(len(ids), dtype=object)
    flat[:] = list(chain.from_iterable(units))
    flat[chosen] = [a + delimiter + b for a, b in zip(flat[chosen], flat[chosen + 1])]
    keep = np.ones(len(ids), dtype=bool)
    keep[chosen + 1] = False
    doc_of = np.repeat(np.arange(len(lengths)), lengths)
    new_lengths = lengths - np.bincount(doc_of[chosen], minlength=len(lengths))
    return [part.tolist() for part in np.split(flat[keep], np.cumsum(new_lengths)[:-1])]


def join_ngrams(units, level, delimiter):
    """Greedy left-to-right joining of the trigrams or quadgrams of ``level``.

    ``level`` is ``(terms, grams)``: the unit strings and the (k, n) id array of the
    n-grams to join. Scanning left to right, an n-gram of ``level`` is joined and the scan
    resumes after it; the scan runs over all matches at once, one step per joined n-gram
    of the longest chain of overlapping matches.
    """
    terms, grams = level
    n = grams.shape[1]
    if not units:
        return []
    vocab = dict(zip(terms.tolist(), range(len(terms))))
    ids, lengths = token_ids(units, vocab)
    flat = np.empty(len(ids), dtype=object)
    flat[:] = list(chain.from_iterable(units))
    # n-gram at position p: inside its document and made of known units
    doc_end = np.repeat(np.cumsum(lengths), lengths)
    starts = np.flatnonzero(np.arange(len(ids)) + n <= doc_end)
    rows = np.stack([ids[starts + k] for k in range(n)], axis=1)
    starts, rows = starts[(rows >= 0).all(axis=1)], rows[(rows >= 0).all(axis=1)]
    _, inverse = np.unique(np.concatenate([grams, rows]), axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    accepted = np.zeros(len(grams) + len(rows), dtype=bool)
    accepted[inverse[:len(grams)]] = True
    match = starts[accepted[inverse[len(grams):]]]             # sorted positions
    nxt = np.searchsorted(match, match + n)     # the next match a join at match[i] allows
    chosen = np.zeros(len(match), dtype=bool)
    frontier = np.flatnonzero(np.diff(match, prepend=-n) >= n)   # nothing blocks these
    while frontier.size:
        chosen[frontier] = True
        frontier = nxt[frontier]
        frontier = frontier[frontier < len(match)]
        frontier = frontier[~chosen[frontier]]
    at = match[chosen]
    flat[at] = [delimiter.join(parts) for parts in zip(*(flat[at + k] for k in range(n)))]
    keep = np.ones(len(ids), dtype=bool)
    for k in range(1, n):
        keep[at + k] = False
    doc_of = np.repeat(np.arange(len(lengths)), lengths)
    new_lengths = lengths - (n - 1) * np.bincount(doc_of[at], minlength=len(lengths))
    return [part.tolist() for part in np.split(flat[keep], np.cumsum(new_lengths)[:-1])]
