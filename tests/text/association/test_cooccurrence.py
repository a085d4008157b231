"""cooccurrence: brute-force equality, document boundaries, chunked merging, bad input."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from nlpfeat.text import cooccurrence


@pytest.fixture(scope="module")
def wiki_tokens():
    from nlpfeat.datasets import load_wiki_sample

    return [doc.split() for doc in load_wiki_sample().data]


DOCS = [["a", "b", "c", "a", "b"], ["c"], [], ["b", "a", "d", "d", "a", "c", "b", "e"]]


def brute_force(docs, window, symmetric=True, weighting="uniform", vocabulary=None,
                sparse=False):
    """Reference: a Python loop over every token and offset (dense, or a sparse matrix
    for large vocabularies)."""
    vocab = vocabulary or {t: i for i, t in enumerate(sorted({t for d in docs for t in d}))}
    dense = _PairCounts((len(vocab), len(vocab))) if sparse else np.zeros((len(vocab),) * 2)
    for doc in docs:
        for i, word in enumerate(doc):
            for offset in range(1, window + 1):
                if i + offset >= len(doc) or word not in vocab or doc[i + offset] not in vocab:
                    continue
                weight = 1.0 if weighting == "uniform" else 1.0 / offset
                dense[vocab[word], vocab[doc[i + offset]]] += weight
                if symmetric:
                    dense[vocab[doc[i + offset]], vocab[word]] += weight
    return (dense.tocsr() if sparse else dense), vocab


class _PairCounts(dict):
    """A dict of (row, column) -> count with numpy-style ``+=`` indexing."""

    def __init__(self, shape):
        super().__init__()
        self.shape = shape

    def __missing__(self, key):
        return 0.0

    def tocsr(self):
        rows, cols = zip(*self) if self else ((), ())
        return sp.csr_matrix((list(self.values()), (rows, cols)), shape=self.shape)


@pytest.mark.parametrize("window", [1, 2, 3, 10])
@pytest.mark.parametrize("symmetric", [True, False])
@pytest.mark.parametrize("weighting", ["uniform", "harmonic"])
def test_matches_brute_force(window, symmetric, weighting):
    counts, vocab = cooccurrence(DOCS, window, symmetric=symmetric, context_weighting=weighting)
    expected, expected_vocab = brute_force(DOCS, window, symmetric, weighting)
    assert vocab == expected_vocab
    assert sp.issparse(counts) and counts.format == "csr"
    assert counts.dtype == (np.int64 if weighting == "uniform" else np.float64)
    np.testing.assert_allclose(counts.toarray(), expected, rtol=1e-12)


def test_no_pair_crosses_documents():
    counts, vocab = cooccurrence([["x", "y"], ["z", "w"]], window=5)
    assert counts[vocab["y"], vocab["z"]] == 0 and counts[vocab["x"], vocab["w"]] == 0
    assert counts[vocab["x"], vocab["y"]] == 1


def test_documents_shorter_than_window_are_fine():
    counts, vocab = cooccurrence([["a"], ["b", "c"], []], window=10)
    assert counts.shape == (3, 3) and counts.sum() == 2


@pytest.mark.parametrize("n_parts", [2, 3, 7])
def test_counts_of_parts_sum_to_counts_of_whole(wiki_tokens, n_parts):
    docs = wiki_tokens[:60]
    whole, vocab = cooccurrence(docs, 5)
    parts = [cooccurrence(part, 5, vocabulary=vocab)[0]
             for part in np.array_split(np.arange(len(docs)), n_parts)
             for part in [[docs[i] for i in part]]]
    merged = sum(parts[1:], parts[0])
    assert (merged != whole).nnz == 0


def test_chunking_never_changes_counts(wiki_tokens):
    docs = wiki_tokens[:40]
    expected, vocab = cooccurrence(docs, 4, context_weighting="harmonic")
    got, got_vocab = cooccurrence(iter(docs), 4, context_weighting="harmonic",
                                   working_memory=0.05)
    assert got_vocab == vocab
    # the same pairs; the float sums may differ in their last bits (another order)
    assert ((got != 0) != (expected != 0)).nnz == 0
    assert abs(got - expected).max() <= 1e-12 * expected.max()


@pytest.mark.parametrize("min_count,symmetric", [(1, True), (3, True), (3, False)])
def test_one_chunk_and_many_chunks_agree_with_min_count(wiki_tokens, min_count, symmetric):
    """One chunk picks the terms before counting; many chunks select them afterwards."""
    docs = wiki_tokens[:40]
    one, vocab = cooccurrence(docs, 3, min_count=min_count, symmetric=symmetric)
    many, many_vocab = cooccurrence(iter(docs), 3, min_count=min_count, symmetric=symmetric,
                                    working_memory=0.05)
    assert many_vocab == vocab and list(vocab) == sorted(vocab)
    assert one.shape == (len(vocab), len(vocab)) and (one != many).nnz == 0
    expected, _ = brute_force(docs, 3, symmetric=symmetric, vocabulary=vocab, sparse=True)
    assert abs(one - expected).max() == 0     # integer counts: exact


def test_generator_input_and_string_documents():
    counts, vocab = cooccurrence((doc for doc in ["new york city", "new york"]), window=1)
    assert vocab == {"city": 0, "new": 1, "york": 2}
    assert counts[vocab["new"], vocab["york"]] == 2


def test_fixed_vocabulary_ignores_other_tokens_but_keeps_their_position():
    counts, vocab = cooccurrence([["a", "zzz", "b"]], window=1, vocabulary=["a", "b"])
    assert vocab == {"a": 0, "b": 1} and counts.nnz == 0
    counts, _ = cooccurrence([["a", "zzz", "b"]], window=2, vocabulary={"b": 0, "a": 1})
    np.testing.assert_array_equal(counts.toarray(), [[0, 1], [1, 0]])


def test_min_count_drops_rare_words():
    counts, vocab = cooccurrence(DOCS, 2, min_count=3)
    expected, _ = brute_force(DOCS, 2, vocabulary=vocab)
    assert set(vocab) == {"a", "b", "c"}
    np.testing.assert_array_equal(counts.toarray(), expected)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.lists(st.sampled_from("abcdef"), max_size=12), min_size=1, max_size=6),
       st.integers(1, 6), st.booleans())
def test_property_symmetric_total_and_brute_force(docs, window, symmetric):
    if not any(docs):
        return
    counts, vocab = cooccurrence(docs, window, symmetric=symmetric)
    expected, _ = brute_force(docs, window, symmetric, vocabulary=vocab)
    np.testing.assert_array_equal(counts.toarray(), expected)
    n_pairs = sum(max(len(d) - k, 0) for d in docs for k in range(1, window + 1))
    assert counts.sum() == n_pairs * (2 if symmetric else 1)
    if symmetric:
        assert (counts != counts.T).nnz == 0


def test_every_word_under_min_count_raises():
    with pytest.raises(ValueError, match="min_count=5 removes every term"):
        cooccurrence([["a", "b", "a"]], 2, min_count=5)


@pytest.mark.parametrize("window", [0, -1])
def test_window_below_one_raises(window):
    with pytest.raises(ValueError, match="'window' parameter of cooccurrence must be"):
        cooccurrence(DOCS, window)


def test_bad_document_raises_type_error_naming_it():
    with pytest.raises(TypeError, match="Document 1 is a int"):
        cooccurrence([["a"], 3], 2)


def test_bad_vocabulary_indices_raise():
    with pytest.raises(ValueError, match="indices 0..n-1"):
        cooccurrence(DOCS, 2, vocabulary={"a": 0, "b": 5})


def test_weighting_must_be_known():
    with pytest.raises(ValueError, match="'context_weighting' parameter"):
        cooccurrence(DOCS, 2, context_weighting="gaussian")


@pytest.mark.parametrize("window", [10**6, 10**9])
def test_huge_window_costs_no_more_than_the_documents_length(window):
    """Offsets beyond a document's length are never scanned nor padded: a window of a
    billion on three short documents counts at once in a few KiB (the old layout padded
    every document with `window` ids and looped over every offset)."""
    import tracemalloc

    docs = [["a", "b", "c"], ["d"], ["b", "a", "d", "d"]]
    tracemalloc.start()
    try:
        counts, vocab = cooccurrence(docs, window)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**20
    expected, _ = brute_force(docs, 3, vocabulary=vocab)        # 3 = longest document - 1
    np.testing.assert_array_equal(counts.toarray(), expected)


def test_layout_scans_each_offset_only_over_longer_documents():
    from nlpfeat.text._counting._pair_tables import layout_documents

    lengths = np.array([2, 0, 5, 1, 3])
    ids = np.arange(lengths.sum())
    padded, reach = layout_documents(ids, lengths, window=3)
    # longest first, each followed by min(window, length - 1) padding ids
    np.testing.assert_array_equal(padded, [2, 3, 4, 5, 6, -1, -1, -1, 8, 9, 10, -1, -1,
                                           0, 1, -1, 7])
    # offset 1: documents longer than 1 (all but the one-token one); 2: lengths 5 and 3;
    # 3: length 5 only
    np.testing.assert_array_equal(reach, [16, 13, 8])


@settings(max_examples=30, deadline=None)
@given(st.lists(st.lists(st.sampled_from("abc"), max_size=9), min_size=1, max_size=6),
       st.integers(1, 12))
def test_property_any_window_equals_brute_force_harmonic(docs, window):
    if not any(docs):
        return
    counts, vocab = cooccurrence(docs, window, context_weighting="harmonic")
    expected, _ = brute_force(docs, window, weighting="harmonic", vocabulary=vocab)
    np.testing.assert_allclose(counts.toarray(), expected, rtol=1e-12)


def test_single_string_and_non_string_tokens_raise():
    with pytest.raises(ValueError, match="string object received.*\\[text\\]"):
        cooccurrence("new york city")
    with pytest.raises(TypeError, match="Document 1 holds a token of type int"):
        cooccurrence([["new", "york"], ["new", 7]])
    with pytest.raises(TypeError, match="vocabulary holds a term of type int"):
        cooccurrence([["new", "york"]], vocabulary={"new": 0, 7: 1})
