"""Mergeable n-gram and word counts for :class:`~nlpfeat.text.Collocations`.

:class:`NgramCounts` holds what nltk's finders count: the word counts, the number of
tokens, and one table per tuple shape (for bigrams the pairs within the window; for
trigrams the trigrams, the adjacent pairs and the pairs with a gap; for quadgrams also
the trigrams with a gap), every count kept, however small. It is fed whole documents a
chunk at a time (:meth:`NgramCounts.add`), so no n-gram crosses a document boundary and
only one chunk of token ids is held at a time; the chunk tables are merged as they come
(a binary counter of sorted runs: each chunk's counts are merged about log2(chunks)
times, by a compiled two-pointer pass, :mod:`._sorted_tables`; tuples of ids are packed
into int64 keys with fixed fields while the ids fit, so the merges are linear). All of it
is integer sums: counts of batches (``partial_fit``) or of the partitions of a Dask bag
add up (:meth:`NgramCounts.merge`) to the counts of the whole, bit for bit, and terms are
numbered in order of first appearance, which a merge in corpus order keeps.

Tokens are numbered by compiled tables kept from chunk to chunk (:mod:`._token_table`):
one pass per chunk over its joined bytes, cheaper than a dict lookup per token; with
``lower=True`` each new raw token is lowercased once and numbered in a second table of
lowercase forms. The dicts of the raw tokens and terms, and the terms' strings, are built
only when they are read (``vocabulary``, a merge, a pickle); a table gathers the strings
of its n-grams' words only. A chunk the tables cannot number exactly (a token that is not
a str, holds ``"\\x00"`` or a lone surrogate) builds the dicts, and a dict lookup per
token (in C) takes over for good: lowercasing (``lower=True``) then runs once per distinct
raw token, whose term id is cached, and not at all while it would change no token (checked
once per chunk, on its new tokens joined).
"""
from collections import namedtuple
from itertools import count, islice
from operator import itemgetter

import numpy as np

from nlpfeat.text._base._documents import check_document_tokens
from nlpfeat.text._counting._pair_tables import (
    pair_table,
    reduce_pairs,
    split_keys,
    token_ids,
)
from nlpfeat.text._counting._vocabulary import growing_vocabulary, grown

__all__ = ["NgramCounts", "Table"]

#: Tuple shapes (positions in the n-gram) whose counts the marginals of an order need.
_SHAPES = {
    3: ((0, 1, 2), (0, 1), (0, 2)),
    4: ((0, 1, 2, 3), (0, 1, 2), (0, 1, 3), (0, 2, 3), (0, 1), (0, 2), (0, 3)),
}

# The n-grams of a corpus: their words (one int64 id array per position), raw counts
# and nltk's marginals (aligned with the n-grams), over the unit strings ``terms``.
Table = namedtuple("Table", "terms grams counts marginals")

def _with_breaks(flat, lengths, pad):
    """``flat`` with ``pad`` break ids (-1) after every document."""
    ids = np.full(len(flat) + pad * len(lengths), -1, dtype=np.int64)
    if pad == 0:
        ids[:] = flat
        return ids
    is_token = np.ones(len(ids), dtype=bool)
    after = np.cumsum(lengths) + pad * np.arange(len(lengths))    # each document's breaks
    for k in range(pad):
        is_token[after + k] = False
    ids[is_token] = flat
    return ids


# Tuples of 2, 3 or 4 ids are packed into one int64 key with fixed fields while every id
# fits its field, so that keys keep their meaning from chunk to chunk: (bits, ids below)
_PACK = {2: (32, 2**31), 3: (21, 2**21), 4: (16, 2**16)}


def _pack(cols):
    bits = _PACK[len(cols)][0]
    keys = cols[0]
    for col in cols[1:]:
        keys = (keys << bits) | col
    return keys


def _unpack(keys, width):
    bits = _PACK[width][0]
    mask = (1 << bits) - 1
    return [(keys >> (bits * (width - 1 - k))) & mask for k in range(width)]


def _encode(cols, radix):
    keys = cols[0]
    for col in cols[1:]:
        keys = keys * radix + col
    return keys


def _decode(keys, radix, width):
    cols = []
    for _ in range(width - 1):
        keys, last = np.divmod(keys, radix)
        cols.append(last)
    cols.append(keys)
    return cols[::-1]


def _reduce_rows(cols, counts, radix, max_key):
    """Distinct rows of the id columns ``cols``, sorted, and their summed ``counts``
    (``None``: each row counts 1). Rows are packed into one int64 key when
    ``radix ** width < max_key``, else sorted by ``np.lexsort``."""
    width = len(cols)
    if radix ** width < max_key:
        keys, counts = reduce_pairs(_encode(cols, radix), counts)
        return _decode(keys, radix, width), counts
    if not len(cols[0]):
        return list(cols), np.zeros(0, np.int64)
    order = np.lexsort(cols[::-1])
    cols = [c[order] for c in cols]
    new = np.zeros(len(order), dtype=bool)
    new[0] = True
    for c in cols:
        new[1:] |= c[1:] != c[:-1]
    starts = np.flatnonzero(new)
    if counts is None:
        counts = np.diff(np.append(starts, len(order)))
    else:
        counts = np.add.reduceat(counts[order], starts)
    return [c[starts] for c in cols], counts


def _lookup(table, query, radix, max_key):
    """Counts of the rows ``query`` (each present) in the sorted table ``(cols, counts)``."""
    cols, counts = table
    if radix ** len(cols) < max_key:
        return counts[np.searchsorted(_encode(cols, radix), _encode(query, radix))]
    rows = np.concatenate([np.stack(cols, axis=1), np.stack(query, axis=1)])
    _, inverse = np.unique(rows, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    by_code = np.zeros(len(rows), dtype=np.int64)
    by_code[inverse[:len(counts)]] = counts
    return by_code[inverse[len(counts):]]


class NgramCounts:
    """Word and n-gram counts of a corpus, added a chunk of documents at a time.

    Parameters
    ----------
    order : {2, 3, 4}
    window : int
        Bigrams: the pairs (a, b) with b 1 .. ``window - 1`` tokens after a.
    lower : bool, default=False
        Lowercase the tokens (each distinct raw token once).
    max_key : int, default=2**63
        Tuples of ids are packed into one integer key below this, else sorted as rows.

    Attributes
    ----------
    vocabulary : dict of str to int
        Terms in order of first appearance.
    n_tokens, n_documents : int

    Examples
    --------
    >>> from nlpfeat.text._counting._ngram_counts import NgramCounts
    >>> a = NgramCounts(2, 2).add([["new", "york"], ["new", "york", "city"]])
    >>> b = NgramCounts(2, 2).add([["york", "city"]])
    >>> table = a.merge(b).table(min_count=2)
    >>> [tuple(table.terms[g[i]] for g in table.grams) for i in range(len(table.counts))]
    [('new', 'york'), ('york', 'city')]
    >>> table.counts.tolist(), a.n_tokens, a.n_documents
    ([2, 2], 7, 3)
    """

    def __init__(self, order, window, *, lower=False, max_key=2**63):
        self.order = order
        self.window = window
        self.lower = lower
        self.max_key = max_key
        self._vocabulary = growing_vocabulary(counted=True)
        self.n_tokens = 0
        self.n_documents = 0
        self._raw = growing_vocabulary(counted=True) if lower else None   # raw -> raw id (a cache)
        # lowercasing has changed no token yet (and nothing was merged): every raw token is
        # its own term, with its raw id; the vocabulary is then filled in when it is read
        self._raw_terms = lower
        self._slots = 0                                    # ids used, with lower=True
        self._remap = np.zeros(16, dtype=np.int64)         # raw id -> term id
        self._slot_terms = []                              # id -> its term's string
        self._freq = np.zeros(16, dtype=np.int64)
        # the compiled token tables (raw tokens, and lowercase forms with lower=True) that
        # number the tokens while every chunk can go through them, the dicts unbuilt; then
        # None for good (_settle); _term_slot: the id of each lowercase form's term
        self._hashing = True
        self._tables = None
        self._text = None                                  # the TextIds of add_text
        self._term_slot = np.zeros(16, dtype=np.int64)
        self._runs = {shape: [] for shape in self._shapes()}
        # tuple tables kept as packed keys (else as id columns, sorted as rows)
        self._packed = {shape: max_key >= 2**63 for shape in self._shapes()
                        if shape != "window"}

    def _shapes(self):
        return ("window",) if self.order == 2 else _SHAPES[self.order]

    @property
    def vocabulary(self):
        """Terms -> ids, in order of first appearance."""
        self._settle()
        if self._raw_terms:
            self._sync_vocabulary(len(self._raw))
        return self._vocabulary

    def _settle(self):
        """Build the dicts of the tokens and terms numbered by the compiled tables
        (:meth:`_hashed_ids`); the exact path (a dict lookup per token) takes over."""
        self._hashing = False
        tables, self._tables, self._text = self._tables, None, None
        if tables is None or not tables[0].n:          # nothing numbered: no dict to build
            return
        raw, lower = tables
        strings = raw.strings()
        self._slot_terms = list(map(str.lower, strings)) if self.lower else strings
        if not self.lower:
            self._vocabulary = growing_vocabulary(zip(strings, range(raw.n)), counted=True,
                                                  size=raw.n)
            return
        self._raw = growing_vocabulary(zip(strings, range(raw.n)), counted=True, size=raw.n)
        slots = self._term_slot[:lower.n].tolist()     # each term's id, in their order
        self._vocabulary = growing_vocabulary(
            zip(map(self._slot_terms.__getitem__, slots), slots), counted=True, size=lower.n)
        self._raw_terms = False

    def _sync_vocabulary(self, n_raw):
        """Add the raw tokens ``len(vocabulary) .. n_raw - 1``, their own terms while
        lowercasing has changed none, to the vocabulary."""
        done = len(self._vocabulary)
        if done < n_raw:
            self._vocabulary.update(zip(islice(self._raw, done, n_raw), range(done, n_raw)))

    @property
    def n_terms(self):
        return len(self.vocabulary)

    @property
    def n_slots(self):
        """Ids in use: every term's id is below it. Lowercasing leaves unused ids where
        raw tokens lowercase to a term already seen (no renumbering per chunk)."""
        if self._tables is not None:
            return self._tables[0].n
        return self._slots if self.lower else len(self.vocabulary)

    @property
    def _radix(self):           # every id is below it
        return max(self.n_slots, 1)

    @property
    def freq(self):
        """Token count of each term."""
        return self._freq[:self.n_slots]

    def _grow(self, name, size):
        setattr(self, name, grown(getattr(self, name), size))

    def _ids(self, units, lengths, start):
        """Term ids of the tokens of ``units``, checking the new distinct tokens' types."""
        if self._hashing:
            ids = self._hashed_ids(units, lengths)
            if ids is not None:
                return ids
        self._settle()                  # a dict lookup per token from here on
        vocab = self._raw if self.lower else self._vocabulary
        before = len(vocab)
        try:
            ids = token_ids(units, vocab, lengths)[0]
        except TypeError:                       # an unhashable token
            _check_types(units, None, start)
            raise
        new = _last_keys(vocab, before)
        if not self.lower:
            _check_types(units, new, start)
            self._slot_terms.extend(new)
            return ids
        try:
            unchanged = self._raw_terms and _lowercase(new)
            lowered = new if unchanged else list(map(str.lower, new))
        except TypeError:
            _check_types(units, new, start)
            raise
        if unchanged:            # every new token is its own term, with its raw id
            self._slots += len(new)
            self._slot_terms.extend(new)
            self._grow("_remap", len(vocab))
            self._remap[before:len(vocab)] = np.arange(before, len(vocab))
            return ids
        if self._raw_terms:      # the first change: the terms so far are the raw tokens
            self._sync_vocabulary(before)
            self._raw_terms = False
        # a new term takes the id of its first raw form (a term seen before leaves that
        # id unused): one dict.setdefault per distinct raw token, no renumbering
        terms = np.fromiter(map(self._vocabulary.setdefault, lowered, count(self._slots)),
                            np.int64, len(new))
        self._slots += len(new)
        self._slot_terms.extend(lowered)
        self._grow("_remap", len(vocab))
        self._remap[before:len(vocab)] = terms
        return self._remap[ids]

    def _hashed_ids(self, units, lengths):
        """Term ids by the compiled token tables (:mod:`._token_hash`), the dicts and the
        terms' strings left unbuilt (:meth:`_settle`, :meth:`_strings`); None (nothing
        counted) where the exact path must decide: a token that is not a str, holds
        ``"\\x00"`` or a lone surrogate."""
        from nlpfeat.text._counting._token_table import (  # numba: on use
            SEP,
            TokenTable,
            table_ids,
        )

        if self._tables is None:
            self._tables = (TokenTable(), TokenTable() if self.lower else None)
        raw, lower = self._tables
        before = raw.n
        found = table_ids(raw, units, lengths)
        if found is None:
            return None
        ids, is_ascii = found
        if raw.n == before:
            return self._remap[ids] if self.lower else ids
        if not self.lower:
            return ids
        # the new raw tokens' lowercase forms, numbered in the table of terms: a new term
        # takes the id of its first raw form (no renumbering)
        known = lower.n
        if is_ascii:
            terms = lower.add_lowered(raw, before)
        else:
            terms = lower.add(SEP.join(map(str.lower, raw.strings(before))), raw.n - before)
        self._term_slot = grown(self._term_slot, lower.n)
        new = np.flatnonzero(terms >= known)
        _, first = np.unique(terms[new], return_index=True)   # new terms, in their order
        self._term_slot[known:lower.n] = new[first] + before
        self._grow("_remap", raw.n)
        self._remap[before:raw.n] = self._term_slot[terms]
        self._slots = raw.n
        return self._remap[ids]

    def _strings(self, ids):
        """The strings of the terms of ``ids`` (a list)."""
        if self._tables is None:
            return list(itemgetter(*ids)(self._slot_terms)) if len(ids) > 1 else \
                [self._slot_terms[i] for i in ids]
        strings = self._tables[0].strings_of(ids)
        return list(map(str.lower, strings)) if self.lower else strings

    def add(self, units, start=0):
        """Count the documents ``units`` (a list of token lists); returns ``self``.

        ``start`` is the index of the first document, for error messages.
        """
        lengths = np.fromiter(map(len, units), np.int64, len(units))
        return self._add_ids(self._ids(units, lengths, start), lengths)

    def add_text(self, docs, options):
        """Count the decoded documents ``docs`` (a list of str) tokenized by the compiled
        tokenizer with ``options`` (a :class:`~._text_pass.TextPass`), numbered in the
        raw token table without a str per token; returns ``self``, or None (nothing
        counted) where the caller must count the chunk's token lists (:meth:`add`):
        the tables have given way to the dicts, the counts lowercase their tokens, or
        the compiled pass refuses the chunk."""
        if not self._hashing or self.lower:
            return None
        from nlpfeat.text._counting._text_ids import TextIds
        from nlpfeat.text._counting._token_table import TokenTable   # numba: on use

        if self._tables is None:
            self._tables = (TokenTable(), None)
        if self._text is None or self._text.options != options:
            self._text = TextIds(self._tables[0], options)
        found = self._text.ids(docs)
        return None if found is None else self._add_ids(*found)

    def _add_ids(self, flat, lengths):
        """Count the documents of the term ids ``flat`` (``lengths`` each)."""
        n_tokens = int(lengths.sum())
        n_slots = self.n_slots
        self._grow("_freq", n_slots)
        if n_tokens:
            self._freq[:n_slots] += np.bincount(flat, minlength=n_slots)
        self.n_tokens += n_tokens
        self.n_documents += len(lengths)
        if self.order == 2 and self.window == 2:   # the default: adjacent pairs, no breaks
            from nlpfeat.text._counting._sorted_tables import (
                adjacent_pairs,  # numba: on use
            )

            self._push("window", adjacent_pairs(flat, lengths, n_slots))
            return self
        span = self.window if self.order == 2 else self.order
        ids = _with_breaks(flat, lengths, span - 1)
        del flat
        self._check_packing()
        for shape in self._shapes():
            if shape == "window":
                run = pair_table(ids, self.window - 1)
            else:
                n = len(ids) - shape[-1]
                cols = [ids[p:p + n] for p in shape]
                valid = cols[0] >= 0
                for col in cols[1:]:
                    valid &= col >= 0
                run = self._count_rows(shape, [c[valid] for c in cols], None)
            self._push(shape, run)
        return self

    def _check_packing(self):
        """Unpack the tables whose ids no longer fit the fields of a packed key."""
        for shape, packed in self._packed.items():
            if packed and self.n_slots > _PACK[len(shape)][1]:
                self._runs[shape] = [((_unpack(keys, len(shape)), counts), weight)
                                     for (keys, counts), weight in self._runs[shape]]
                self._packed[shape] = False

    def _count_rows(self, shape, cols, counts):
        """The sorted table of the rows ``cols`` (weighted by ``counts``, or 1 each)."""
        if self._packed[shape]:
            return reduce_pairs(_pack(cols), counts)
        return _reduce_rows(cols, counts, self._radix, self.max_key)

    def _rows(self, shape):
        """The merged table of ``shape`` as id columns and counts."""
        table, counts = self._table(shape)
        return (_unpack(table, len(shape)) if self._packed[shape] else table), counts

    def _merge_runs(self, shape, a, b):
        from nlpfeat.text._counting._sorted_tables import (
            merge_sorted,  # numba: imported on use
        )

        if shape == "window" or self._packed[shape]:
            return merge_sorted(a, b)
        radix = self._radix
        if radix ** len(shape) < self.max_key:   # keys keep the rows' order: a linear merge
            keys, counts = merge_sorted((_encode(a[0], radix), a[1]), (_encode(b[0], radix), b[1]))
            return _decode(keys, radix, len(shape)), counts
        cols = [np.concatenate(pair) for pair in zip(a[0], b[0])]
        return _reduce_rows(cols, np.concatenate([a[1], b[1]]), radix, self.max_key)

    def _push(self, shape, run, weight=1):
        """Add a sorted run counting ``weight`` chunks; merge the last two runs while the
        older counts no more chunks (a binary counter: each chunk's counts are merged
        about log2(chunks) times, however much the runs overlap)."""
        runs = self._runs[shape]
        runs.append((run, weight))
        while len(runs) > 1 and runs[-2][1] <= runs[-1][1]:
            self._merge_last(shape)

    def _merge_last(self, shape):
        runs = self._runs[shape]
        (last, w_last), (prev, w_prev) = runs.pop(), runs.pop()
        runs.append((self._merge_runs(shape, prev, last), w_prev + w_last))

    def _table(self, shape):
        """The merged sorted table of ``shape``: ``(keys or columns, counts)``."""
        runs = self._runs[shape]
        while len(runs) > 1:
            self._merge_last(shape)
        if runs:
            return runs[0][0]
        if shape == "window" or self._packed[shape]:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        return [np.zeros(0, np.int64)] * len(shape), np.zeros(0, np.int64)

    def _weight(self, shape):
        return sum(weight for _, weight in self._runs[shape])

    def merge(self, other):
        """Add ``other``'s counts (its new terms are numbered after ours); returns ``self``."""
        if (other.order, other.window, other.lower) != (self.order, self.window, self.lower):
            raise ValueError(
                f"Cannot merge the counts of order={other.order}, window_size="
                f"{other.window}, lower={other.lower} into counts of order={self.order}, "
                f"window_size={self.window}, lower={self.lower}.")
        slots = np.fromiter(other.vocabulary.values(), np.int64, other.n_terms)
        before = len(self.vocabulary)
        self._raw_terms = False            # other's terms are not raw tokens here
        if self.lower:
            mapped = np.fromiter(map(self.vocabulary.setdefault, other.vocabulary,
                                     count(self._slots)), np.int64, other.n_terms)
            self._slots += other.n_terms
            self._slot_terms.extend(other.vocabulary)
        else:
            mapped = np.fromiter(map(self.vocabulary.__getitem__, other.vocabulary),
                                 np.int64, other.n_terms)
            self._slot_terms.extend(_last_keys(self.vocabulary, before))
        ids = np.zeros(other.n_slots, dtype=np.int64)       # other's id -> ours
        ids[slots] = mapped
        self._grow("_freq", self.n_slots)
        self._freq[mapped] += other._freq[slots]
        self.n_tokens += other.n_tokens
        self.n_documents += other.n_documents
        self._check_packing()
        for shape in self._shapes():
            weight = max(other._weight(shape), 1)
            if shape == "window":
                keys, counts = other._table(shape)
                first, second = split_keys(keys)
                run = reduce_pairs((ids[first] << 32) | ids[second], counts)
            else:
                cols, counts = other._rows(shape)
                run = self._count_rows(shape, [ids[c] for c in cols], counts)
            self._push(shape, run, weight)
        return self

    def split(self, n_shards):
        """N-gram counts do not split (see :class:`~nlpfeat.text._counting.Counts`): the
        whole counts, then None for each other shard."""
        return [self] + [None] * (n_shards - 1)

    def table(self, min_count=1):
        """The n-grams counted at least ``min_count`` times, with nltk's marginals, over
        their words alone (``terms``), numbered ``0 .. len(terms) - 1`` in the order of
        their ids here."""
        freq = self.freq
        if self.order == 2:
            keys, counts = self._table("window")
            frequent = counts >= min_count
            grams = split_keys(keys[frequent])
            counts = counts[frequent]
            marginals = (counts / (self.window - 1.0), (freq[grams[0]], freq[grams[1]]),
                         self.n_tokens)
            return self._compact(Table(None, grams, counts, marginals))
        shapes = _SHAPES[self.order]
        cols, counts = self._rows(shapes[0])
        frequent = counts >= min_count
        grams = tuple(c[frequent] for c in cols)
        counts = counts[frequent]

        def count(*positions):                 # the sub-tuple at these positions
            shape = tuple(p - positions[0] for p in positions)
            query = [grams[p] for p in positions]
            if self._packed[shape]:
                keys, sub_counts = self._table(shape)
                return sub_counts[np.searchsorted(keys, _pack(query))]
            return _lookup(self._table(shape), query, self._radix, self.max_key)

        words = tuple(freq[g] for g in grams)
        if self.order == 3:
            marginals = (counts, (count(0, 1), count(0, 2), count(1, 2)), words,
                         self.n_tokens)
        else:
            marginals = (counts, (count(0, 1, 2), count(0, 1, 3), count(0, 2, 3),
                                  count(1, 2, 3)),
                         (count(0, 1), count(0, 2), count(0, 3), count(1, 3), count(2, 3),
                          count(1, 2)), words, self.n_tokens)
        return self._compact(Table(None, grams, counts, marginals))

    def _compact(self, table):
        """``table`` over the words of its n-grams alone, renumbered ``0 .. k - 1`` in
        the order of their ids (so the sort of the n-grams is kept): the strings of the
        other terms are never gathered."""
        used = np.zeros(self.n_slots, dtype=bool)
        for g in table.grams:
            used[g] = True
        words = np.flatnonzero(used)
        dense = np.cumsum(used) - 1
        terms = np.empty(len(words), dtype=object)
        if len(words):
            terms[:] = self._strings(words.tolist())
        return table._replace(terms=terms, grams=tuple(dense[g] for g in table.grams))

    def __getstate__(self):
        self._settle()
        state = self.__dict__.copy()
        state["_vocabulary"] = dict(self.vocabulary)
        state["_raw"] = None if self._raw is None else dict(self._raw)
        state["_runs"] = {shape: [(self._table(shape), self._weight(shape))]
                          for shape in self._shapes()}
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._hashing, self._tables, self._text = False, None, None   # settled
        self._vocabulary = growing_vocabulary(self._vocabulary, counted=True)
        if self._raw is not None:
            self._raw = growing_vocabulary(self._raw, counted=True)


def _last_keys(mapping, before):
    """The keys of ``mapping`` after its first ``before``, in order (all of them at once
    when ``before`` is 0; else from the end, whatever the size of ``mapping``)."""
    if not before:
        return list(mapping)
    return list(islice(reversed(mapping), len(mapping) - before))[::-1]


def _lowercase(tokens):
    """Whether ``str.lower`` leaves every token as it is, by one ``lower`` of them all
    joined (far cheaper than a call per token). Joined, the one context rule of
    ``lower`` (a final capital sigma) could only change a capital sigma, which lowercasing
    changes anyway, and no character lowercases to a string that starts with itself, so
    the joined string is unchanged exactly when every token is."""
    joined = "".join(tokens)
    return joined.lower() == joined


def _check_types(units, distinct, start):
    """TypeError naming the document (numbered from ``start``) of a token that is not a
    str; ``distinct`` (the new distinct tokens, or None) is checked first."""
    if distinct is not None and all(issubclass(kind, str) for kind in set(map(type, distinct))):
        return
    for i, doc in enumerate(units, start):
        check_document_tokens(i, doc)
