"""Compiled (numba) loops over the token ids of a chunk: term statistics in one pass.

Imported on first use by :mod:`nlpfeat.text._counting._pair_counts` and
:func:`~nlpfeat.text._counting._vocabulary.remap_columns`,
:func:`~nlpfeat.text._counting._term_order.term_order` (importing
:mod:`nlpfeat.text` does not import numba); compiled on first call and cached on disk.
"""
import numpy as np
from numba import njit

__all__ = ["add_document_frequency", "renumber", "prefix_keys"]


@njit(cache=True, nogil=True)
def add_document_frequency(ids, lengths, df):
    """Add to ``df[t]`` the number of documents (consecutive runs of ``lengths`` ids of
    ``ids``) that hold the term ``t`` (ids below 0 are not terms): one pass, a document
    counted once per term by remembering the last document that counted it."""
    last = np.full(len(df), -1, np.int64)
    k = 0
    for d in range(len(lengths)):
        for _ in range(lengths[d]):
            t = ids[k]
            k += 1
            if t >= 0 and last[t] != d:
                last[t] = d
                df[t] += 1


@njit(cache=True, nogil=True)
def renumber(indices, new_of_old):
    """``indices[k] = new_of_old[indices[k]]`` in place (a matrix's columns renumbered)."""
    for k in range(len(indices)):
        indices[k] = new_of_old[indices[k]]


@njit(cache=True, nogil=True)
def prefix_keys(data, keys):
    """``keys[i]``: the first eight bytes of term ``i`` of ``data`` (UTF-8 terms joined by
    zero bytes) as a big-endian integer, zero-padded; returns the number of terms (more
    than ``len(keys)``: a term holds a zero byte, ``keys`` incomplete)."""
    i = 0
    key = np.uint64(0)
    k = 0
    for b in data:
        if b == 0:
            if i < len(keys):
                keys[i] = key << np.uint64(8 * (8 - k)) if k else np.uint64(0)
            i += 1
            key = np.uint64(0)
            k = 0
        elif k < 8:
            key = (key << np.uint64(8)) | np.uint64(b)
            k += 1
    if i < len(keys):
        keys[i] = key << np.uint64(8 * (8 - k)) if k else np.uint64(0)
    return i + 1
