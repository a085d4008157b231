"""Symmetric co-occurrence counts in linear time and bounded memory: spill, then one merge.

:func:`count_upper_pairs` reads the documents once, a chunk at a time, and counts in two
passes, as GloVe's ``cooccur`` does:

1. the terms: frequencies (and document frequencies) of every term, while each chunk's
   token ids (4 bytes per token) and document lengths are written to a temporary folder
   (a learned vocabulary is numbered by a compiled token table,
   :class:`~nlpfeat.text._counting._token_table.TokenTable`; only the strings of the
   terms kept by ``min_count`` are made at the end, no dict of the rare ones);
2. the pairs of the kept terms only (``min_count`` is known now; a dropped word keeps its
   position, so distances in the text are unchanged): each chunk's pairs are keyed by
   (smaller id, larger id), the upper triangle of the symmetric counts, by one compiled
   pass (:func:`~nlpfeat.text._counting._pair_kernels.window_keys`), and cut at fixed key
   boundaries into buckets appended to one file per bucket. The boundaries are
   quantiles of the first chunk's keys, as many as it takes for a bucket to fit the
   budget. Counts spill the keys themselves, grouped by bucket in one compiled pass
   (:func:`~nlpfeat.text._counting._pair_kernels.bucket_keys`); each bucket is then
   sorted and its equal keys counted, once. Harmonic weights spill each chunk's sorted
   table instead (:func:`~nlpfeat.text._counting._pair_tables.document_pairs`: weights
   summed per chunk), each bucket's runs merged pairwise, equal keys summed. The
   buckets are reduced in key order, their rows appended to the CSR arrays of the
   result.

Every pair is sorted once, in its bucket (a harmonic pair: in its chunk, then merged
``log2(chunks)`` times in its bucket, each pass linear), over budget-sized arrays, so
the work grows as ``n log(bucket)``, not with ever larger tables. Memory holds one chunk
or one bucket plus the result (:class:`UpperCounts`: 4 bytes of column index and 4 of
count per entry of the upper triangle, 8 for harmonic weights or counts beyond
``2**31 - 1``); the temporary files take about 4 bytes per token plus 8 per pair (12
per distinct pair of each chunk for harmonic weights). Counts are integer sums, so they
equal the one-pass counts of :class:`~nlpfeat.text._counting._pair_counts.PairCounts`
bit for bit, whatever the chunking.
"""
import os
import tempfile
from itertools import pairwise

import numpy as np
import scipy.sparse as sp

from nlpfeat.text._counting._pair_tables import (
    INT32_MAX,
    MASK,
    SHIFT,
    document_pairs,
    select_terms,
)
from nlpfeat.text._counting._text_ids import TextChunk, TextIds

__all__ = ["UpperCounts", "count_upper_pairs"]

#: Bytes per spilled pair while its bucket is reduced: the record (key and value), the
#: sort order, the sorted key and value, the row and column ids.
_BUCKET_BYTES_PER_PAIR = 48
#: Most buckets (files) of one count: beyond it a bucket exceeds the budget.
_MAX_BUCKETS = 4096
_WIDE = np.empty(0, np.int64)   # the key dtype of window_keys' int64 keys


class UpperCounts:
    """The upper triangle ``U`` (``i <= j``) of symmetric counts ``S = U + U.T``.

    A diagonal entry ``U[i, i]`` is the number of pairs ``(i, i)``; ``S[i, i] = 2 U[i, i]``
    (a pair of equal words is seen from both sides, as :func:`cooccurrence` counts it).

    Parameters
    ----------
    indptr : ndarray of int64, shape (n_terms + 1,)
    indices : ndarray of int32, shape (nnz,)
        Column ids, sorted within each row, each at least the row id.
    data : ndarray of int32, int64 or float64, shape (nnz,)
        Positive counts (summed weights for harmonic weighting).
    n_terms : int
    """

    def __init__(self, indptr, indices, data, n_terms):
        self.indptr = indptr
        self.indices = indices
        self.data = data
        self.n_terms = n_terms

    @property
    def nnz(self):
        return len(self.data)

    def upper(self):
        """``U`` as a CSR matrix (sharing these arrays)."""
        return sp.csr_matrix((self.data, self.indices, self.indptr),
                             shape=(self.n_terms, self.n_terms))

    def symmetric(self):
        """The full symmetric counts ``U + U.T`` (CSR, sorted indices; int64 counts or
        float64 weights), built in place of the output: no transposed copy."""
        from nlpfeat.text._counting._pair_loops import symmetric_row_nnz

        out = _SymmetricOutput(symmetric_row_nnz(self.indptr, self.indices),
                               floating=self.data.dtype.kind == "f")
        out.fill(self.indptr, self.indices, self.data, 0)
        return out.matrix()

    @classmethod
    def from_symmetric(cls, counts):
        """The upper triangle of symmetric counts (CSR), in the canonical layout."""
        upper = sp.triu(counts, format="csr")
        upper.sum_duplicates()
        rows = np.repeat(np.arange(upper.shape[0]), np.diff(upper.indptr))
        diagonal = rows == upper.indices
        if upper.data.dtype.kind == "f":
            upper.data[diagonal] /= 2
        else:
            upper.data[diagonal] //= 2
        upper.eliminate_zeros()
        data = upper.data
        if data.dtype.kind != "f":
            data = data.astype(np.int32 if data.size == 0 or data.max() <= INT32_MAX
                               else np.int64)
        return cls(upper.indptr.astype(np.int64), upper.indices.astype(np.int32), data,
                   upper.shape[0])


class _SymmetricOutput:
    """The CSR arrays of ``U + U.T``, filled a block of rows of ``U`` at a time."""

    def __init__(self, row_nnz, floating):
        total = int(row_nnz.sum())
        index = np.int32 if total <= INT32_MAX else np.int64
        self.indptr = np.zeros(len(row_nnz) + 1, index)
        np.cumsum(row_nnz, out=self.indptr[1:])
        self.indices = np.empty(total, index)
        self.data = np.empty(total, np.float64 if floating else np.int64)
        self._fill = self.indptr[:-1].astype(np.int64)

    def fill(self, indptr, indices, data, first_row):
        from nlpfeat.text._counting._pair_loops import fill_symmetric

        fill_symmetric(indptr, indices, data, first_row, self._fill, self.indices,
                       self.data)

    def matrix(self):
        n = len(self.indptr) - 1
        return sp.csr_matrix((self.data, self.indices, self.indptr), shape=(n, n))


def _stored_chunks(ids_path, lengths_path, window, limit, block=1 << 14):
    """Yield (ids, lengths) of the stored documents, chunks of about ``limit`` bytes of
    pair work (``8 L (2 min(window, L) + 4)`` per document of ``L`` tokens)."""
    with open(ids_path, "rb") as ids_file, open(lengths_path, "rb") as lengths_file:
        carry = np.empty(0, np.int64)
        while True:
            new = np.fromfile(lengths_file, np.int64, count=block)
            last = len(new) < block
            lengths = np.concatenate([carry, new])
            if len(lengths):
                cum = np.cumsum(8 * lengths * (2 * np.minimum(window, lengths) + 4))
                n_full = int(cum[-1] // limit)
                stops = np.searchsorted(cum, limit * np.arange(1, n_full + 1)) + 1
                stops = np.unique(np.minimum(stops, len(lengths))).tolist()
                if last and (not stops or stops[-1] < len(lengths)):
                    stops.append(len(lengths))
                start = 0
                for stop in stops:
                    part = lengths[start:stop]
                    yield np.fromfile(ids_file, np.int32, count=int(part.sum())), part
                    start = stop
                carry = lengths[start:]
            if last:
                return


class _Buckets:
    """Sorted chunk tables cut at fixed key boundaries and appended to one file each."""

    def __init__(self, folder, value_dtype, limit):
        self.folder = folder
        self.record = np.dtype([("key", "<i8"), ("value", value_dtype)])
        self.limit = limit
        self.bounds = None
        self.total = 0                  # sum of the counts (picks the result's dtype)
        self.runs = {}                  # bucket -> lengths of its sorted runs, in order
        self.raw = False                # buckets of unsorted pair keys, each counted 1

    def _path(self, b):
        return os.path.join(self.folder, f"bucket-{b}")

    def _set_bounds(self, sorted_keys, expected_pairs):
        """Quantiles of the first chunk's (sorted) keys: as many buckets as it takes for
        one to fit the budget."""
        per_bucket = max(self.limit // _BUCKET_BYTES_PER_PAIR, 1)
        n = int(min(max(-(-expected_pairs // per_bucket), 1), _MAX_BUCKETS))
        self.bounds = np.unique(sorted_keys[np.arange(1, n) * len(sorted_keys) // n])

    def add_keys(self, keys, expected_pairs, n_rows):
        """Append the unsorted pair keys ``keys`` (int64, one per pair, each counted 1;
        rows below ``n_rows``), grouped by bucket in one compiled pass; each bucket is
        sorted and counted once, when it is reduced (no sort per chunk, no merge of runs)."""
        from nlpfeat.text._counting._pair_kernels import bucket_keys  # numba: on use

        if not len(keys):
            return
        self.raw = True
        if self.bounds is None:          # quantiles of a sample of the first chunk
            step = max(len(keys) // (1 << 16), 1)
            self._set_bounds(np.sort(keys[::step]), expected_pairs)
            rows = np.arange(n_rows, dtype=np.int64) << SHIFT
            self._row_first = np.searchsorted(self.bounds, rows, side="right")
        self.total += len(keys)
        grouped, starts = bucket_keys(keys, self.bounds, self._row_first, SHIFT)
        for b, (start, stop) in enumerate(pairwise(starts.tolist())):
            if stop > start:
                with open(self._path(b), "ab") as fh:
                    grouped[start:stop].tofile(fh)
                self.runs[b] = True

    def add(self, keys, values, expected_pairs):
        if not len(keys):
            return
        if self.bounds is None:          # quantiles of the first chunk's keys
            self._set_bounds(keys, expected_pairs)
        if self.record["value"].kind == "i":
            top = int(values.max())
            if top > INT32_MAX:
                raise ValueError(f"A chunk holds a pair {top} times, more than int32 "
                                 f"counts hold; lower working_memory.")
            self.total += int(values.sum())
        records = np.empty(len(keys), self.record)
        records["key"], records["value"] = keys, values
        edges = [0, *np.searchsorted(keys, self.bounds).tolist(), len(keys)]
        for b, (start, stop) in enumerate(pairwise(edges)):
            if stop > start:
                with open(self._path(b), "ab") as fh:
                    records[start:stop].tofile(fh)
                self.runs.setdefault(b, []).append(stop - start)

    def assemble(self, n_terms, *, symmetric=False):
        """Reduce the buckets in key order into :class:`UpperCounts`, or, with
        ``symmetric``, into the full symmetric CSR matrix, written a block of rows of the
        triangle at a time (the triangle is never held whole)."""
        indptr, indices_path, data_path, out_dtype, mirror_nnz = self._reduce(n_terms)
        if not symmetric:
            return UpperCounts(indptr, np.fromfile(indices_path, np.int32),
                               np.fromfile(data_path, out_dtype), n_terms)
        out = _SymmetricOutput(np.diff(indptr) + mirror_nnz, floating=out_dtype == np.float64)
        per_block = max(self.limit // 16, 1)             # stored pairs read per block
        stops = np.unique(np.searchsorted(indptr, np.arange(per_block, indptr[-1],
                                                            per_block))).tolist()
        with open(indices_path, "rb") as indices_file, open(data_path, "rb") as data_file:
            start = 0
            for stop in [*stops, n_terms]:
                if stop <= start:
                    continue
                count = int(indptr[stop] - indptr[start])
                out.fill(indptr[start : stop + 1] - indptr[start],
                         np.fromfile(indices_file, np.int32, count=count),
                         np.fromfile(data_file, out_dtype, count=count), start)
                start = stop
        return out.matrix()

    def _reduce(self, n_terms):
        """Reduce each bucket in key order, appending its columns and sums to two files:
        (indptr, the files' paths, the sums' dtype, entries each row gets by mirroring)."""
        from nlpfeat.text._counting._pair_kernels import merge_runs  # numba: on use
        from nlpfeat.text._counting._sorted_tables import _count_runs

        floating = self.record["value"].kind == "f"
        out_dtype = (np.float64 if floating else
                     np.int32 if self.total <= INT32_MAX else np.int64)
        row_nnz = np.zeros(n_terms, np.int64)
        mirror_nnz = np.zeros(n_terms, np.int64)
        indices_path = os.path.join(self.folder, "indices")
        data_path = os.path.join(self.folder, "data")
        n_buckets = 0 if self.bounds is None else len(self.bounds) + 1
        with open(indices_path, "wb") as indices_file, open(data_path, "wb") as data_file:
            for b in range(n_buckets):
                if not os.path.exists(self._path(b)):
                    continue
                if self.raw:                  # the bucket's keys, sorted and counted
                    keys = np.fromfile(self._path(b), np.int64)
                    os.remove(self._path(b))
                    keys.sort()
                    sums = np.empty(len(keys), np.int64)
                    keys = keys[:_count_runs(keys, False, keys, sums)]   # in place
                    sums = sums[:len(keys)]
                else:
                    records = np.fromfile(self._path(b), self.record)
                    os.remove(self._path(b))
                    keys = np.ascontiguousarray(records["key"])
                    values = records["value"].astype(np.float64 if floating else np.int64)
                    del records
                    # the bucket is one sorted run per chunk: merged pairwise, equal keys
                    # summed, in linear passes (no sort)
                    bounds = np.concatenate([[0], np.cumsum(self.runs[b])])
                    keys, sums = merge_runs(keys, values, bounds)
                    del values
                rows = keys >> SHIFT
                first = int(rows[0])
                counted = np.bincount(rows - first)
                row_nnz[first:first + len(counted)] += counted
                columns = (keys & MASK).astype(np.int32)
                mirror_nnz += np.bincount(columns[columns != rows], minlength=n_terms)
                columns.tofile(indices_file)
                sums.astype(out_dtype).tofile(data_file)
        indptr = np.zeros(n_terms + 1, np.int64)
        np.cumsum(row_nnz, out=indptr[1:])
        return indptr, indices_path, data_path, out_dtype, mirror_nnz


def count_upper_pairs(chunks, terms, *, min_count=1, limit, check_terms=None,
                      symmetric=False, text=None):
    """Count the documents of ``chunks`` (read once): (:class:`UpperCounts`, vocabulary).

    Parameters
    ----------
    chunks : iterable of list of list of str, or of TextChunk
        Chunks of token lists (:func:`~nlpfeat.text._counting._pair_counts.doc_chunks`),
        and, with ``text``, chunks of decoded documents
        (:class:`~nlpfeat.text._counting._text_ids.TextChunk`,
        :func:`~nlpfeat.text._counting._text_ids.text_chunks`).
    terms : PairCounts
        Empty statistics that count the terms (:meth:`PairCounts.count_terms`); its
        ``window``, ``weighting`` and vocabulary (learned or fixed) apply. After the call
        it holds the frequencies (and document frequencies) of the kept terms (every
        term of a fixed vocabulary), numbered in order of first appearance, and no pairs.
    min_count : int, default=1
        With a learned vocabulary, keep the terms seen at least this often (sorted, as
        :func:`~nlpfeat.text._counting._pair_tables.select_terms` orders them); pairs with
        others vanish.
    limit : int
        Bytes of pair work per chunk of the second pass, and about the memory of the
        reduction of one bucket.
    check_terms : callable or None, default=None
        Called with ``terms`` once the terms are counted, before any term is selected
        (e.g. to reject an empty corpus with the caller's message: ``n_documents``; a
        learned vocabulary is not filled in yet).
    symmetric : bool, default=False
        Return the full symmetric counts ``U + U.T`` (CSR, int64 counts or float64
        weights), written from the reduced buckets a block at a time, instead of ``U``.
    text : tuple ``(options, to_tokens)`` or None, default=None
        How a :class:`~nlpfeat.text._counting._text_ids.TextChunk` is numbered: by the
        compiled tokenizer with ``options`` (a
        :class:`~nlpfeat.text._counting._text_pass.TextPass`), into the token table
        while it numbers a learned vocabulary, else looked up in the vocabulary once per
        distinct token of the chunk (:meth:`PairCounts._text_ids`); where the compiled
        pass refuses the chunk, by ``to_tokens(doc, index)``, the same tokens from Python.

    Returns
    -------
    counts : UpperCounts or scipy.sparse.csr_matrix
        Of the kept terms (all terms of a fixed vocabulary).
    vocabulary : dict
        term -> row/column.
    """
    window, weighting = terms.window, terms.weighting
    with tempfile.TemporaryDirectory(prefix="nlpfeat-pairs-") as folder:
        ids_path = os.path.join(folder, "ids")
        lengths_path = os.path.join(folder, "lengths")
        n_tokens = 0
        # a learned vocabulary is numbered by a compiled token table while every chunk
        # can be (cheaper than a dict lookup per token)
        from nlpfeat.text._counting._token_table import (  # numba: on use
            TokenTable,
            table_ids,
        )

        table = TokenTable() if terms.learn and not terms.vocabulary else None
        numbering = None if text is None or table is None else TextIds(table, text[0])
        with open(ids_path, "wb") as ids_file, open(lengths_path, "wb") as lengths_file:
            for chunk in chunks:
                numbered = None
                if isinstance(chunk, TextChunk):      # decoded documents
                    if table is not None:
                        numbered = numbering.ids(chunk.docs)
                        n_terms = table.n
                    else:                             # a fixed vocabulary, or a dict
                        numbered = terms._text_ids(chunk.docs, text[0])
                        n_terms = terms.n_terms
                    if numbered is not None:
                        numbered = (*numbered, n_terms)
                        chunk = numbered[1]           # only its length is read
                    else:
                        chunk = [text[1](doc, i) for i, doc in enumerate(chunk.docs,
                                                                         chunk.start)]
                if numbered is None and table is not None:
                    lengths = np.fromiter(map(len, chunk), np.int64, len(chunk))
                    numbered = table_ids(table, chunk, lengths)
                    if numbered is None:              # a dict decides from here on
                        terms.vocabulary.update(zip(table.strings(), range(table.n)))
                        table = None
                    else:
                        numbered = (numbered[0], lengths, table.n)
                ids, lengths = terms.count_terms(chunk, numbered)
                ids.astype(np.int32).tofile(ids_file)
                lengths.astype(np.int64).tofile(lengths_file)
                n_tokens += len(ids)
        if check_terms is not None:
            check_terms(terms)
        if terms.learn:
            # the strings of the kept terms only, from the table when it numbered them all
            n_terms = terms.n_terms if table is None else table.n
            kept, vocabulary = select_terms(
                terms._freq[:n_terms], terms.vocabulary, min_count,
                strings=None if table is None else table.strings_of)
            new_id = np.full(n_terms, -1, dtype=np.int64)
            new_id[kept] = np.arange(len(kept))
            by_id = np.argsort(kept)
            words = list(vocabulary)
            terms.keep_terms(kept[by_id], [words[i] for i in by_id.tolist()])
        else:
            new_id, vocabulary = None, dict(terms.vocabulary)
        buckets = _Buckets(folder, np.float64 if weighting == "harmonic" else np.int32, limit)
        from nlpfeat.text._counting._pair_kernels import window_keys  # numba: on use

        for ids, lengths in _stored_chunks(ids_path, lengths_path, window, limit):
            # learned ids are never -1; a fixed vocabulary's -1 (unknown) stays -1
            ids = new_id[ids] if new_id is not None else ids.astype(np.int64)
            if weighting == "harmonic":     # weights: summed per chunk, runs merged
                keys, values = document_pairs(ids, lengths, window, weighting=weighting,
                                              upper=True)
                buckets.add(keys, values, len(keys) * n_tokens // max(len(ids), 1))
            else:                           # counts: each pair's key, counted per bucket
                keys = window_keys(ids, lengths, window, True, SHIFT, _WIDE, False)[0]
                buckets.add_keys(keys, len(keys) * n_tokens // max(len(ids), 1),
                                 len(vocabulary))
        os.remove(ids_path)
        os.remove(lengths_path)
        return buckets.assemble(len(vocabulary), symmetric=symmetric), vocabulary
