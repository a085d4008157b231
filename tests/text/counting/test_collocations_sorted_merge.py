"""The compiled merge of sorted count tables that adds up the chunks' n-gram counts."""
import numpy as np
import pytest

from nlpfeat.text._counting._sorted_tables import merge_sorted


def table(rng, n, high):
    keys = np.unique(rng.integers(0, high, n))
    return keys, rng.integers(1, 5, len(keys))


def reference(a, b):
    keys = np.concatenate([a[0], b[0]])
    unique, inverse = np.unique(keys, return_inverse=True)
    return unique, np.bincount(inverse, weights=np.concatenate([a[1], b[1]])).astype(np.int64)


@pytest.mark.parametrize(("n_a", "n_b", "high"), [
    (0, 0, 10), (0, 5, 10), (7, 0, 10), (50, 50, 60), (500, 30, 10**6), (1, 1, 2),
    (300, 300, 2**62)])
def test_merge_adds_the_counts_of_equal_keys_and_keeps_the_others(n_a, n_b, high):
    rng = np.random.default_rng(n_a + n_b)
    a, b = table(rng, n_a, high), table(rng, n_b, high)
    copies = [x.copy() for x in (*a, *b)]
    keys, counts = merge_sorted(a, b)
    expected_keys, expected_counts = reference(a, b)
    np.testing.assert_array_equal(keys, expected_keys)
    np.testing.assert_array_equal(counts, expected_counts)
    assert keys.dtype == counts.dtype == np.int64
    for before, after in zip(copies, (*a, *b)):            # nothing modified in place
        np.testing.assert_array_equal(before, after)


def test_negative_keys_sort_first():
    keys, counts = merge_sorted((np.array([-5, 3]), np.array([1, 1])),
                                (np.array([-7, -5, 9]), np.array([2, 2, 2])))
    assert keys.tolist() == [-7, -5, 3, 9] and counts.tolist() == [2, 3, 1, 2]


@pytest.mark.parametrize("n_terms", [3, 2**16, 2**16 + 1, 2**30])
def test_adjacent_pairs_count_the_pairs_inside_documents_only(n_terms):
    from collections import Counter

    from nlpfeat.text._counting._sorted_tables import adjacent_pairs

    rng = np.random.default_rng(n_terms % 1000)
    lengths = rng.integers(0, 6, 300)
    lengths[:3] = [0, 1, 0]
    ids = rng.integers(0, min(n_terms, 40), lengths.sum())
    ids[ids == ids.max()] = n_terms - 1                      # the widest id
    expected = Counter()
    for doc in np.split(ids, np.cumsum(lengths)[:-1]):
        expected.update(zip(doc[:-1].tolist(), doc[1:].tolist()))
    keys, counts = adjacent_pairs(ids, lengths, n_terms)
    assert (np.diff(keys) > 0).all()
    got = dict(zip(zip((keys >> 32).tolist(), (keys & 0xFFFFFFFF).tolist()), counts.tolist()))
    assert got == dict(expected)
    empty = adjacent_pairs(ids[:1], lengths[:2], n_terms)
    assert len(empty[0]) == len(empty[1]) == 0



@pytest.mark.parametrize("order", [2, 3, 4])
def test_counts_of_many_chunks_equal_the_counts_of_one(order):
    """70 chunks: runs merged at several levels, then the rest at the end; and a merge of
    counts that pushes one heavy run among light ones."""
    from nlpfeat.text._counting._ngram_counts import NgramCounts

    rng = np.random.default_rng(order)
    docs = [[f"w{int(x)}" for x in rng.zipf(1.3, int(rng.integers(0, 12))) % 50]
            for _ in range(350)]

    def state(counts):
        t = counts.table(min_count=1)
        return ([g.tolist() for g in t.grams], t.terms.tolist(), t.counts.tolist(),
                [np.asarray(m).tolist() for m in t.marginals[1]])

    whole = NgramCounts(order, 2).add(docs)
    chunked = NgramCounts(order, 2)
    for k in range(0, 350, 5):
        chunked.add(docs[k:k + 5], k)
    assert len(chunked._runs[chunked._shapes()[0]]) > 1        # runs left to merge
    mixed = NgramCounts(order, 2).add(docs[:5])
    mixed.merge(NgramCounts(order, 2).add(docs[5:300]))
    for k in range(300, 350, 5):
        mixed.add(docs[k:k + 5], k)
    assert state(chunked) == state(whole) == state(mixed)
