"""The sorted order of a vocabulary's terms without a Python comparison per pair.

Python orders str by code point, which is the byte order of their UTF-8 encodings, so
the terms are sorted by their first eight UTF-8 bytes as one big-endian integer (made
by one compiled pass over the joined terms, then one numpy sort; a term shorter than eight bytes is zero-padded, and no term holds U+0000, so
it sorts before its extensions); only terms sharing those eight bytes are then ordered
by Python. Terms that are not all str, hold U+0000 or a lone surrogate are sorted by
Python alone.
"""
import numpy as np

__all__ = ["term_order"]


def term_order(terms):
    """Indices that sort the distinct terms ``terms`` (a list) as ``sorted`` does.

    Examples
    --------
    >>> from nlpfeat.text._counting._term_order import term_order
    >>> term_order(["b", "ab", "a", "é", "abcdefghij", "abcdefghi"]).tolist()
    [2, 1, 5, 4, 0, 3]
    """
    n = len(terms)
    try:
        data = "\x00".join(terms).encode("utf-8")
    except (TypeError, UnicodeEncodeError):
        data = None
    if data is not None and n:
        from nlpfeat.text._counting._term_loops import prefix_keys   # numba: on use

        key = np.empty(n, np.uint64)
        if prefix_keys(np.frombuffer(data, np.uint8), key) != n:
            data = None                         # a term holds U+0000
    if data is None or not n:
        return np.array(sorted(range(n), key=terms.__getitem__), dtype=np.intp)
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    tied = np.flatnonzero(sorted_key[1:] == sorted_key[:-1])
    if tied.size:                               # runs of equal prefixes: Python decides
        bounds = np.flatnonzero(np.diff(np.concatenate(([0], (sorted_key[1:] ==
                                                             sorted_key[:-1]).view(np.int8),
                                                       [0]))))
        for lo, hi in zip(bounds[::2].tolist(), (bounds[1::2] + 1).tolist()):
            run = order[lo:hi].tolist()
            order[lo:hi] = sorted(run, key=terms.__getitem__)
    return order.astype(np.intp, copy=False)
