"""The compiled pair counter (:func:`document_pairs`) equals the numpy one
(:func:`layout_documents` + :func:`pair_table`) on arbitrary ids and document
boundaries, and the compiled merge of sorted runs equals a sort and a sum."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from nlpfeat.text._counting._pair_tables import (
    document_pairs,
    layout_documents,
    pair_table,
    reduce_pairs,
)

# ids from -1 (out of vocabulary: keeps its place, pairs with nothing) up; the wide
# range crosses 2**16, where keys stop fitting 32 bits
id_values = st.one_of(st.integers(-1, 6), st.integers(-1, 2**31 - 1))
documents = st.lists(st.lists(id_values, max_size=12), max_size=8)   # empty ones too
windows = st.one_of(st.integers(1, 15), st.just(2**62))               # beyond any length


def flat(docs):
    ids = np.array([i for doc in docs for i in doc], dtype=np.int64)
    return ids, np.array([len(doc) for doc in docs], dtype=np.int64)


@settings(max_examples=150, deadline=None)
@given(documents, windows, st.sampled_from(["uniform", "harmonic"]), st.booleans())
def test_document_pairs_equal_numpy_pair_table(docs, window, weighting, upper):
    ids, lengths = flat(docs)
    padded, reach = layout_documents(ids, lengths, window)
    expected_keys, expected = pair_table(padded, window, weighting=weighting, reach=reach,
                                         upper=upper)
    keys, values = document_pairs(ids, lengths, window, weighting=weighting, upper=upper)
    assert keys.dtype == np.int64
    np.testing.assert_array_equal(keys, expected_keys)
    if weighting == "uniform":
        assert values.dtype == np.int64
        np.testing.assert_array_equal(values, expected)      # integers: bit for bit
    else:
        assert values.dtype == np.float64                   # also with no pair at all
        np.testing.assert_allclose(values, expected, rtol=1e-12)


def test_document_pairs_never_cross_documents():
    keys, counts = document_pairs(np.array([1, 2, 3, 4]), np.array([2, 0, 2]), 10)
    assert (keys >> 32).tolist() == [1, 3] and (keys & 0xFFFFFFFF).tolist() == [2, 4]
    assert counts.tolist() == [1, 1]


runs = st.lists(st.lists(st.integers(0, 2**40), max_size=10, unique=True).map(sorted),
                max_size=7)


@settings(max_examples=60, deadline=None)
@given(runs, st.sampled_from([np.int64, np.float64]))
def test_merge_runs_equals_a_sort_and_a_sum(parts, dtype):
    from nlpfeat.text._counting._pair_kernels import merge_runs

    keys = np.array([k for part in parts for k in part], dtype=np.int64)
    values = (np.arange(len(keys)) % 5 + 1).astype(dtype)
    bounds = np.concatenate([[0], np.cumsum([len(p) for p in parts])]).astype(np.int64)
    got_keys, got = merge_runs(keys, values, bounds)
    expected_keys, expected = reduce_pairs(keys, values)
    np.testing.assert_array_equal(got_keys, expected_keys)
    np.testing.assert_array_equal(got, expected)      # small integers: exact in floats


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 2**31 - 1)), max_size=40),
       st.lists(st.tuples(st.integers(0, 7), st.integers(0, 2**31 - 1)), max_size=6))
def test_bucket_keys_equals_a_stable_sort_by_searchsorted(pairs, bound_pairs):
    from nlpfeat.text._counting._pair_kernels import bucket_keys

    keys = np.array([(a << 32) | b for a, b in pairs], dtype=np.int64)
    bounds = np.unique(np.array([(a << 32) | b for a, b in bound_pairs], dtype=np.int64))
    row_first = np.searchsorted(bounds, np.arange(8, dtype=np.int64) << 32, side="right")
    grouped, starts = bucket_keys(keys, bounds, row_first, 32)
    which = np.searchsorted(bounds, keys, side="right")
    order = np.argsort(which, kind="stable")
    assert grouped.tolist() == keys[order].tolist()
    assert starts.tolist() == [0, *np.cumsum(np.bincount(which, minlength=len(bounds) + 1))]
