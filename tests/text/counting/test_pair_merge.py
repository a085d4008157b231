"""Two-pass symmetric counting with bucketed spills, PPMI products on the fly, and the
randomized SVD that uses them: equal to the one-pass counts and the materialised PPMI."""
import os
import tempfile
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

import nlpfeat.text._counting._pair_merge as pair_merge
from nlpfeat.text import PMIEmbedding, cooccurrence, get_tokenizer, pmi
from nlpfeat.text._counting._pair_counts import PairCounts, doc_chunks
from nlpfeat.text._counting._pair_merge import UpperCounts, count_upper_pairs
from nlpfeat.text._counting._pair_tables import layout_documents, pair_table
from nlpfeat.text._semantics._pmi_embedding import operator_svd, randomized_svd
from nlpfeat.text._semantics._ppmi_operator import PPMIOperator


@pytest.fixture(scope="module")
def wiki_lines():
    from nlpfeat.datasets import load_wiki_sample

    return [" ".join(doc.split()) for doc in load_wiki_sample().data[:150]]


def one_pass(docs, window, min_count=1, weighting="uniform", vocabulary=None):
    """The one-pass counts of :class:`PairCounts` (the reference)."""
    counts = PairCounts(window, weighting=weighting, vocabulary=vocabulary)
    counts.update(docs, tokenize=get_tokenizer("regexp"))
    return counts.matrix(min_count)


def two_pass(docs, window, working_memory, min_count=1, weighting="uniform",
             vocabulary=None, symmetric=False):
    terms = PairCounts(window, weighting=weighting, vocabulary=vocabulary)
    chunks = doc_chunks(docs, window, working_memory, tokenize=get_tokenizer("regexp"))
    limit = int(working_memory * 2**20)
    return count_upper_pairs(chunks, terms, min_count=min_count, limit=limit,
                             symmetric=symmetric)


def random_symmetric(n, density, seed, dtype=np.int64):
    rng = np.random.default_rng(seed)
    upper = sp.random(n, n, density=density, random_state=rng, format="csr",
                      data_rvs=lambda k: rng.integers(1, 50, k)).astype(dtype)
    upper = sp.triu(upper, format="csr")
    return (upper + upper.T).tocsr()                   # even diagonal, as counts have


def test_upper_pair_table_is_the_triangle_of_the_directed_table():
    ids = np.array([3, 1, 1, 2, -1, 0, 3, 2, 2, 1])
    padded, reach = layout_documents(ids, np.array([4, 6]), 3)
    keys, values = pair_table(padded, 3, reach=reach)
    upper_keys, upper_values = pair_table(padded, 3, reach=reach, upper=True)
    directed = sp.csr_matrix((values, (keys >> 32, keys & 0xFFFFFFFF)), shape=(4, 4))
    upper = sp.csr_matrix((upper_values, (upper_keys >> 32, upper_keys & 0xFFFFFFFF)),
                          shape=(4, 4))
    assert np.all(upper_keys[1:] > upper_keys[:-1])               # sorted, unique
    assert (sp.triu(upper) != upper).nnz == 0
    expected = sp.triu(directed + directed.T) - sp.diags(directed.diagonal(), dtype=None)
    assert (upper != expected).nnz == 0


@pytest.mark.parametrize("min_count,working_memory", [
    pytest.param(m, w, marks=pytest.mark.slow) if (w, m) in {(0.002, 1), (0.002, 3), (0.05, 3)}
    else (m, w) for w in (0.002, 0.05, 64) for m in (1, 3)])
def test_spilled_counts_equal_the_one_pass_counts_bit_for_bit(wiki_lines, min_count,
                                                             working_memory, monkeypatch):
    n_buckets = []
    assemble = pair_merge._Buckets.assemble

    def spy(self, n_terms, **kwargs):
        n_buckets.append(0 if self.bounds is None else len(self.bounds) + 1)
        return assemble(self, n_terms, **kwargs)

    monkeypatch.setattr(pair_merge._Buckets, "assemble", spy)
    upper, vocabulary = two_pass(wiki_lines, 5, working_memory, min_count)
    expected, expected_vocabulary = one_pass(wiki_lines, 5, min_count)
    assert vocabulary == expected_vocabulary
    got = upper.symmetric()
    assert got.dtype == expected.dtype == np.int64 and got.has_sorted_indices
    assert (got != expected).nnz == 0
    np.testing.assert_array_equal(got.indptr, expected.indptr)
    np.testing.assert_array_equal(got.indices, expected.indices)
    # tiny budgets: many chunks, cut into many buckets; a large one: a single bucket
    assert (n_buckets[0] > 50) if working_memory < 1 else (n_buckets[0] == 1)
    assert upper.data.dtype == np.int32 and upper.indices.dtype == np.int32
    # the symmetric matrix written straight from the reduced buckets, a block at a time
    direct, _ = two_pass(wiki_lines, 5, working_memory, min_count, symmetric=True)
    assert direct.dtype == np.int64 and direct.has_sorted_indices
    for name in ("indptr", "indices", "data"):
        np.testing.assert_array_equal(getattr(direct, name), getattr(expected, name))


def test_harmonic_weights_equal_the_one_pass_weights_to_rounding(wiki_lines):
    upper, vocabulary = two_pass(wiki_lines, 4, 0.05, 2, weighting="harmonic")
    expected, expected_vocabulary = one_pass(wiki_lines, 4, 2, weighting="harmonic")
    got = upper.symmetric()
    assert vocabulary == expected_vocabulary and got.dtype == np.float64
    np.testing.assert_array_equal(got.indices, expected.indices)
    np.testing.assert_allclose(got.data, expected.data, rtol=1e-13)


def test_fixed_vocabulary_ignores_unknown_tokens_and_keeps_positions(wiki_lines):
    terms = sorted({t for line in wiki_lines[:40] for t in line.split()})[::7]
    vocabulary = {t: i for i, t in enumerate(terms)}
    upper, got_vocabulary = two_pass(wiki_lines, 3, 0.01, vocabulary=vocabulary)
    expected, _ = one_pass(wiki_lines, 3, vocabulary=vocabulary)
    assert got_vocabulary == vocabulary
    assert (upper.symmetric() != expected).nnz == 0


def test_counts_beyond_int32_switch_to_int64(wiki_lines, monkeypatch):
    monkeypatch.setattr(pair_merge, "INT32_MAX", 1000)
    upper, _ = two_pass(wiki_lines, 5, 0.05, 3)
    expected, _ = one_pass(wiki_lines, 5, 3)
    assert upper.data.dtype == np.int64
    assert (upper.symmetric() != expected).nnz == 0


def test_counts_beyond_int32_in_a_chunk_stay_exact(wiki_lines, monkeypatch):
    # uniform counts are spilled as pair keys and counted per bucket in int64: a chunk
    # that holds a pair more often than int32 counts hold is no error (it was one while
    # chunks spilled int32 counts)
    expected, expected_vocabulary = one_pass(wiki_lines, 5)
    monkeypatch.setattr(pair_merge, "INT32_MAX", 2)
    upper, vocabulary = two_pass(wiki_lines, 5, 64)
    assert vocabulary == expected_vocabulary and upper.data.dtype == np.int64
    assert (upper.upper() != UpperCounts.from_symmetric(expected).upper()).nnz == 0


def test_documents_without_pairs_give_an_empty_matrix():
    counts, vocabulary = cooccurrence([["aa"], [], ["bb"], ["aa"]], window=3)
    assert vocabulary == {"aa": 0, "bb": 1}
    assert counts.shape == (2, 2) and counts.nnz == 0 and counts.dtype == np.int64


@pytest.mark.slow   # 7 CPU-s; the one-shot rule stays in tests/text/test_text_common.py
def test_a_one_shot_generator_is_read_once_and_gives_the_list_counts(wiki_lines):
    expected, vocabulary = cooccurrence(wiki_lines, 5, min_count=2, working_memory=0.05)
    got, got_vocabulary = cooccurrence((line for line in wiki_lines), 5, min_count=2,
                                       working_memory=0.05)
    assert got_vocabulary == vocabulary and (got != expected).nnz == 0


def test_temporary_files_are_removed_even_when_a_document_fails(tmp_path, monkeypatch,
                                                                wiki_lines):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    made, real = [], tempfile.TemporaryDirectory

    def recording(*args, **kwargs):             # the spill folders the counting makes
        folder = real(*args, **kwargs)
        made.append(folder.name)
        return folder

    monkeypatch.setattr(tempfile, "TemporaryDirectory", recording)
    cooccurrence(wiki_lines[:15], 5, working_memory=0.05)
    assert len(made) == 1 and os.listdir(tmp_path) == []      # spilled, then removed
    with pytest.raises(TypeError, match="Document 15"):
        cooccurrence(wiki_lines[:15] + [3.5], 5, working_memory=0.05)
    assert len(made) == 2 and os.listdir(tmp_path) == []      # spilled before the failure


def test_symmetric_and_upper_round_trip():
    full = random_symmetric(300, 0.05, 0)
    upper = UpperCounts.from_symmetric(full)
    assert np.all(upper.indices >= np.repeat(np.arange(300), np.diff(upper.indptr)))
    assert upper.data.dtype == np.int32 and upper.indptr.dtype == np.int64
    got = upper.symmetric()
    assert got.dtype == np.int64 and got.has_sorted_indices
    assert (got != full).nnz == 0
    upper_matrix = upper.upper()
    assert (upper_matrix + upper_matrix.T != full).nnz == 0


@pytest.mark.parametrize("alpha, shift", [(0.75, 1), (1.0, 1), (0.5, 5)])
@pytest.mark.parametrize("dtype", [np.int64, np.float64])
def test_ppmi_products_equal_the_materialised_ppmi(alpha, shift, dtype):
    full = random_symmetric(400, 0.03, 1, dtype)
    if dtype == np.float64:
        full.data /= 3.0                              # harmonic-like fractional weights
    scores = pmi(full, "ppmi" if shift == 1 else "sppmi", alpha=alpha, shift=shift)
    operator = PPMIOperator(UpperCounts.from_symmetric(full), alpha, shift)
    X = np.random.default_rng(2).standard_normal((400, 7))
    np.testing.assert_allclose(operator.matmul(X), scores @ X, rtol=1e-12, atol=1e-11)
    np.testing.assert_allclose(operator.rmatmul(X), scores.T @ X, rtol=1e-12, atol=1e-11)
    single = operator.matmul(X.astype(np.float32))
    assert single.dtype == np.float32
    np.testing.assert_allclose(single, scores @ X, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(operator.toarray(), scores.toarray(), rtol=1e-12,
                               atol=1e-13)


def test_ppmi_products_of_int64_counts_equal_those_of_int32_counts():
    upper = UpperCounts.from_symmetric(random_symmetric(200, 0.05, 5))
    wide = UpperCounts(upper.indptr, upper.indices, upper.data.astype(np.int64), 200)
    X = np.random.default_rng(6).standard_normal((200, 5))
    np.testing.assert_array_equal(PPMIOperator(wide, 0.75).rmatmul(X),
                                  PPMIOperator(upper, 0.75).rmatmul(X))


def test_ppmi_operator_rejects_overflow_and_empty_counts():
    full = random_symmetric(50, 0.1, 3)
    with pytest.raises(ValueError, match="PMI overflows float64 with alpha=1e"):
        PPMIOperator(UpperCounts.from_symmetric(full), 1e308)
    with pytest.raises(ValueError, match="counts is all zero"):
        PPMIOperator(UpperCounts.from_symmetric(sp.csr_matrix((5, 5), dtype=np.int64)), 1)


def test_operator_svd_equals_the_sparse_matrix_svd():
    full = random_symmetric(500, 0.05, 4)
    scores = pmi(full, "ppmi")
    operator = PPMIOperator(UpperCounts.from_symmetric(full), 0.75)
    U, S = operator_svd(operator.matmul, operator.rmatmul, operator.shape, 10,
                        random_state=0)
    U_ref, S_ref = randomized_svd(scores, 10, random_state=0)
    np.testing.assert_allclose(S, S_ref, rtol=1e-5)
    np.testing.assert_allclose(np.abs(np.sum(U * U_ref, axis=0)), 1.0, atol=1e-4)
    np.testing.assert_allclose(U.T @ U, np.eye(10), atol=1e-12)
    assert np.all(np.abs(U).argmax(axis=0) == np.argmax(U, axis=0))   # signs fixed


def test_operator_svd_holds_at_most_a_few_dense_blocks():
    """Beyond the products' outputs, the SVD's dense memory: the basis and B^T (float64)
    at once, never the full-size copies of a QR of a C-ordered array or of svd_flip."""
    n, k = 80000, 20                   # the QR's blocks of 4096 rows are 5% of n
    scale = np.linspace(1.0, 2.0, n)[:, None]

    def product(X):
        return np.multiply(X, scale.astype(X.dtype), out=np.empty_like(X))

    tracemalloc.start()
    try:
        operator_svd(product, product, (n, n), k - 10, random_state=0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    float64_block = n * k * 8
    assert peak < 2.4 * float64_block   # scipy's QR of a C-ordered array, svd_flip: 3.5


@pytest.mark.slow   # the counts' chunk independence stays (test_spilled_counts_...)
def test_pmi_embedding_is_independent_of_the_chunking(wiki_lines):
    params = {"n_components": 10, "min_count": 3, "random_state": 0}
    whole = PMIEmbedding(**params, working_memory=64).fit(wiki_lines)
    chunked = PMIEmbedding(**params, working_memory=0.02).fit(wiki_lines)
    assert chunked.vocabulary_ == whole.vocabulary_
    np.testing.assert_array_equal(chunked.embeddings_, whole.embeddings_)
    np.testing.assert_array_equal(chunked.idf_, whole.idf_)


@pytest.mark.parametrize("weighting", ["uniform", "harmonic"])
def test_pmi_embedding_equals_the_materialised_ppmi_svd(wiki_lines, weighting):
    """The vectors of the on-the-fly PPMI equal those of the explicit pipeline
    (cooccurrence, pmi, randomized SVD of the sparse PPMI matrix), up to sign."""
    params = {"n_components": 12, "min_count": 3, "alpha": 0.75, "eig": 0.5}
    model = PMIEmbedding(**params, context_weighting=weighting, random_state=0).fit(wiki_lines)
    counts, vocabulary = cooccurrence(wiki_lines, 5, min_count=3, context_weighting=weighting)
    U, S = randomized_svd(pmi(counts, "ppmi", alpha=0.75), 12, random_state=0)
    assert model.vocabulary_ == vocabulary
    np.testing.assert_allclose(model.singular_values_, S, rtol=1e-5)
    expected = U * np.sqrt(S)
    signs = np.sign(np.sum(model.embeddings_ * expected, axis=0))
    np.testing.assert_allclose(model.embeddings_, expected * signs, atol=1e-4)
