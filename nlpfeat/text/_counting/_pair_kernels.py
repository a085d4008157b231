"""Compiled (numba) windowed pair counting over token ids with document lengths.

:func:`window_keys` makes the pair keys of a chunk in one pass over its tokens (each
token against the next ``min(window, ...)`` tokens of its own document; an id below 0,
an out-of-vocabulary token, keeps its position and pairs with nothing), so no padding,
no layout of the documents and no numpy operation per offset; :func:`merge_runs` merges
sorted runs of keys, summing equal keys, in linear passes (the two-pointer merge of
:mod:`._sorted_tables`). :func:`~nlpfeat.text._counting._pair_tables.document_pairs` puts them
together; the numpy reference they equal is
:func:`~nlpfeat.text._counting._pair_tables.layout_documents` with
:func:`~nlpfeat.text._counting._pair_tables.pair_table`.

Imported on first use (importing :mod:`nlpfeat.text` does not import numba); compiled
on first call and cached on disk.
"""
import numpy as np
from numba import njit

from nlpfeat.text._counting._sorted_tables import _merge_into

__all__ = ["bucket_keys", "merge_runs", "window_keys"]


@njit(cache=True, nogil=True)
def window_keys(ids, lengths, window, upper, shift, key_dtype_sample, with_offsets):
    """Keys ``word << shift | context`` of every pair of a token and one of the next
    ``window`` tokens of its document (both ids >= 0), keyed (smaller, larger) when
    ``upper``; keys in ``key_dtype_sample``'s dtype (uint32 for narrow ids, int64), and
    with ``with_offsets`` each pair's offset (int32), else an empty array."""
    total = 0
    for d in range(len(lengths)):
        n = lengths[d]
        reach = min(window, n - 1)
        if reach > 0:
            total += reach * n - reach * (reach + 1) // 2
    keys = np.empty(total, key_dtype_sample.dtype)
    offsets = np.empty(total if with_offsets else 0, np.int32)
    k = 0
    start = 0
    for d in range(len(lengths)):
        stop = start + lengths[d]
        for i in range(start, stop):
            w = ids[i]
            if w < 0:
                continue
            for j in range(i + 1, i + 1 + min(window, stop - 1 - i)):
                c = ids[j]
                if c < 0:
                    continue
                a, b = w, c
                if upper and b < a:
                    a, b = c, w
                keys[k] = (a << shift) | b
                if with_offsets:
                    offsets[k] = j - i
                k += 1
        start = stop
    return keys[:k], offsets[:k]


@njit(cache=True, nogil=True)
def merge_runs(keys, values, bounds):
    """Runs ``keys[bounds[r]:bounds[r + 1]]``, each sorted with unique keys, merged into
    one sorted table of unique keys whose values are summed: (keys, values). Runs are
    merged pairwise, neighbours first, ``log2(runs)`` linear passes."""
    keys = keys.copy()
    values = values.copy()
    bounds = bounds.copy()
    out_keys = np.empty_like(keys)
    out_values = np.empty_like(values)
    while len(bounds) > 2:
        n_runs = len(bounds) - 1
        new_bounds = np.empty(n_runs // 2 + n_runs % 2 + 1, np.int64)
        new_bounds[0] = 0
        at = 0
        r = 0
        q = 0
        while r < n_runs:
            if r + 1 < n_runs:
                a, b, c = bounds[r], bounds[r + 1], bounds[r + 2]
                at += _merge_into(keys[a:b], values[a:b], keys[b:c], values[b:c],
                                  out_keys[at:], out_values[at:])
                r += 2
            else:
                for i in range(bounds[r], bounds[r + 1]):
                    out_keys[at] = keys[i]
                    out_values[at] = values[i]
                    at += 1
                r += 1
            q += 1
            new_bounds[q] = at
        keys, out_keys = out_keys, keys
        values, out_values = out_values, values
        bounds = new_bounds
    end = bounds[-1] if len(bounds) else 0
    return keys[:end], values[:end]


@njit(cache=True, nogil=True)
def bucket_keys(keys, bounds, row_first, shift):
    """``keys`` grouped by bucket, in their order within each (a stable counting pass):
    bucket ``b`` holds the keys ``bounds[b - 1] <= key < bounds[b]`` (``bounds`` sorted,
    the first bucket unbounded below, the last above). ``row_first[r]`` is the bucket
    of the smallest key of row ``r`` (``key >> shift``; ``np.searchsorted(bounds,
    r << shift, "right")``): a key's bucket is found from there in a step or two, not by
    a binary search. Returns (grouped keys, the ``len(bounds) + 2`` offsets of the
    buckets in them)."""
    n_buckets = len(bounds) + 1
    n_bounds = len(bounds)
    which = np.empty(len(keys), np.int32)
    starts = np.zeros(n_buckets + 1, np.int64)
    for i in range(len(keys)):
        key = keys[i]
        b = row_first[key >> shift]
        while b < n_bounds and bounds[b] <= key:
            b += 1
        which[i] = b
        starts[b + 1] += 1
    for b in range(n_buckets):
        starts[b + 1] += starts[b]
    at = starts[:n_buckets].copy()
    out = np.empty_like(keys)
    for i in range(len(keys)):
        b = which[i]
        out[at[b]] = keys[i]
        at[b] += 1
    return out, starts
