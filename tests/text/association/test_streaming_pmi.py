"""cooccurrence and PMIEmbedding on streamed corpora: Corpus files, chunks, partial_fit,
vocabulary pruning and Dask bags (a real LocalCluster of two workers)."""
import pickle
import tracemalloc

import numpy as np
import pytest
from _corpus_files import write_gzip_lines

from nlpfeat.datasets import Corpus
from nlpfeat.text import PMIEmbedding, cooccurrence, get_tokenizer
from nlpfeat.text._counting._pair_counts import PairCounts, doc_chunks


@pytest.fixture(scope="module")
def wiki_lines():
    from nlpfeat.datasets import load_wiki_sample

    return [" ".join(doc.split()) for doc in load_wiki_sample().data[:150]]


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory, wiki_lines):
    return write_gzip_lines(tmp_path_factory.mktemp("corpus") / "wiki.txt.gz", wiki_lines)


def assert_same_counts(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    assert (a != b).nnz == 0


def assert_close_counts(a, b, rtol=1e-12):
    assert a.dtype == b.dtype and a.shape == b.shape
    assert abs(a - b).max() <= rtol * abs(b).max()


def assert_same_vectors_up_to_sign(a, b, atol=1e-10):
    signs = np.sign(np.sum(a * b, axis=0))
    np.testing.assert_allclose(a, b * signs, rtol=0, atol=atol)


def test_cooccurrence_of_a_corpus_file_equals_the_list(corpus_file, wiki_lines):
    expected, vocabulary = cooccurrence(wiki_lines, window=5, min_count=3)
    got, got_vocabulary = cooccurrence(Corpus(corpus_file), window=5, min_count=3)
    assert got_vocabulary == vocabulary
    assert_same_counts(got, expected)


@pytest.mark.parametrize("weighting", ["uniform",
                                       pytest.param("harmonic", marks=pytest.mark.slow)])
def test_any_chunking_gives_the_same_counts(wiki_lines, weighting):
    whole, vocabulary = cooccurrence(wiki_lines, 4, min_count=2, context_weighting=weighting,
                                     working_memory=1024)
    chunked, chunked_vocabulary = cooccurrence(wiki_lines, 4, min_count=2,
                                               context_weighting=weighting,
                                               working_memory=0.01)
    assert chunked_vocabulary == vocabulary
    if weighting == "uniform":
        assert_same_counts(chunked, whole)
    else:                   # float sums: the order of the additions differs
        assert_close_counts(chunked, whole)


def test_chunks_follow_working_memory(wiki_lines):
    docs = [line.split() for line in wiki_lines]
    small = list(doc_chunks(docs, 5, 0.05))
    large = list(doc_chunks(docs, 5, 4.0))
    assert sum(map(len, small)) == sum(map(len, large)) == len(docs)   # no document lost
    assert [d for chunk in small for d in chunk] == docs                # nor reordered
    assert len(small) > 10 * len(large)
    def cost(doc):
        return 8 * len(doc) * (2 * min(5, len(doc)) + 4)

    for chunk in small[:-1]:        # a chunk ends at the first document over the budget
        total = sum(map(cost, chunk))
        assert total - cost(chunk[-1]) < int(0.05 * 2**20) <= total


@pytest.mark.parametrize("cut", [1, 37, 75, 149])
def test_split_in_the_middle_of_the_documents_gives_identical_counts(wiki_lines, cut):
    docs = [line.split() for line in wiki_lines]
    whole = PairCounts(5, document_frequency=True).update(docs)
    left = PairCounts(5, document_frequency=True).update(docs[:cut])
    right = PairCounts(5, document_frequency=True).update(docs[cut:])
    merged = left.merge(right)
    assert merged.n_documents == whole.n_documents == len(docs)
    for min_count in (1, 4):
        (a, va), (b, vb) = merged.matrix(min_count), whole.matrix(min_count)
        assert va == vb
        assert_same_counts(a, b)
    ids_merged, ids_whole = merged.selected_ids(va), whole.selected_ids(vb)
    np.testing.assert_array_equal(merged.freq[ids_merged], whole.freq[ids_whole])
    np.testing.assert_array_equal(merged.df[ids_merged], whole.df[ids_whole])


def test_windows_never_join_the_last_and_first_documents_of_two_chunks():
    docs = [["aa", "bb"], ["cc", "dd"], ["ee", "ff"]] * 50
    counts, vocabulary = cooccurrence(docs, window=5, working_memory=0.0005)
    assert counts[vocabulary["bb"], vocabulary["cc"]] == 0
    assert counts[vocabulary["ff"], vocabulary["aa"]] == 0
    assert counts[vocabulary["aa"], vocabulary["bb"]] == 50


@pytest.mark.slow   # a memory bound: 5 CPU-s
def test_counting_memory_does_not_grow_with_the_number_of_chunks():
    """The same documents counted 4 and 16 times: the vocabulary and the pair table are
    the same size, so the peak must not grow with the number of chunks read."""
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(20000)]
    block = [list(rng.choice(words, 60)) for _ in range(400)]

    def peak(repeats):
        docs = (doc for _ in range(repeats) for doc in block)
        tracemalloc.start()
        counts = PairCounts(5).update(docs, working_memory=0.05)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert counts.n_documents == 400 * repeats
        return peak

    small, large = peak(4), peak(16)
    assert large < 1.3 * small, (small, large)


def test_pair_counts_pickle_and_merge_after_unpickling(wiki_lines):
    docs = [line.split() for line in wiki_lines]
    left = pickle.loads(pickle.dumps(PairCounts(3).update(docs[:50])))
    merged = left.merge(PairCounts(3).update(docs[50:]))
    (a, va), (b, vb) = merged.matrix(2), PairCounts(3).update(docs).matrix(2)
    assert va == vb
    assert_same_counts(a, b)


def test_prune_at_bounds_the_vocabulary_and_is_exact_when_not_reached(wiki_lines):
    tokenize = get_tokenizer("regexp")
    exact, vocabulary = cooccurrence(wiki_lines, 5, min_count=5, working_memory=0.05)
    n_types = PairCounts(5).update(wiki_lines, tokenize=tokenize).n_terms
    same, same_vocabulary = cooccurrence(wiki_lines, 5, min_count=5, working_memory=0.05,
                                         prune_at=n_types)
    assert same_vocabulary == vocabulary
    assert_same_counts(same, exact)

    counts = PairCounts(5, prune_at=n_types // 3)
    for chunk in doc_chunks(wiki_lines, 5, 0.05, tokenize=tokenize):
        counts.add(chunk)
        assert counts.n_terms <= n_types // 3
    assert counts.n_prunings > 0
    pruned, pruned_vocabulary = counts.matrix(5)
    # approximate: the frequent words survive, some rare ones are lost or undercounted
    assert set(pruned_vocabulary) <= set(vocabulary)
    assert len(pruned_vocabulary) > 0.5 * len(vocabulary)
    common = [w for w in pruned_vocabulary if w in vocabulary]
    rows = [vocabulary[w] for w in common]
    new_rows = [pruned_vocabulary[w] for w in common]
    assert (pruned[new_rows][:, new_rows] > exact[rows][:, rows]).nnz == 0


def test_prune_at_must_be_positive():
    with pytest.raises(ValueError, match="'prune_at' parameter"):
        cooccurrence([["aa", "bb"]], prune_at=0)


# ---- PMIEmbedding ------------------------------------------------------------------------
@pytest.mark.slow   # 6 CPU-s; cooccurrence of the same Corpus file stays (above)
def test_pmi_embedding_of_a_corpus_file_equals_the_list(corpus_file, wiki_lines):
    params = {"n_components": 10, "min_count": 3, "random_state": 0, "working_memory": 0.1}
    expected = PMIEmbedding(**params).fit(wiki_lines)
    got = PMIEmbedding(**params).fit(Corpus(corpus_file))
    assert got.vocabulary_ == expected.vocabulary_
    np.testing.assert_array_equal(got.embeddings_, expected.embeddings_)
    np.testing.assert_array_equal(got.idf_, expected.idf_)
    np.testing.assert_array_equal(got.transform(Corpus(corpus_file)),
                                  expected.transform(wiki_lines))


@pytest.mark.parametrize("pooling", ["mean", "tfidf"])
def test_fit_transform_of_a_corpus_reads_it_twice_and_equals_fit_then_transform(
        corpus_file, pooling):
    params = {"n_components": 8, "min_count": 3, "random_state": 0, "pooling": pooling}
    got = PMIEmbedding(**params).fit_transform(Corpus(corpus_file))
    model = PMIEmbedding(**params).fit(Corpus(corpus_file))
    np.testing.assert_array_equal(got, model.transform(Corpus(corpus_file)))
    one_shot = PMIEmbedding(**params).fit_transform(iter(Corpus(corpus_file)))
    np.testing.assert_allclose(one_shot, got, rtol=1e-12, atol=1e-14)


def test_transform_pools_chunk_by_chunk(wiki_lines):
    model = PMIEmbedding(8, min_count=3, random_state=0, pooling="tfidf").fit(wiki_lines)
    whole = model.transform(wiki_lines)
    model.set_params(working_memory=0.001)              # many small chunks
    np.testing.assert_allclose(model.transform(wiki_lines), whole, rtol=1e-13, atol=1e-15)
    assert model.transform(wiki_lines).shape == (len(wiki_lines), 8)


@pytest.mark.parametrize("cuts", [[75], [1, 2, 100], [30, 60, 90, 120]])
def test_partial_fit_over_any_split_equals_fit(wiki_lines, cuts):
    params = {"n_components": 12, "min_count": 3, "random_state": 0, "pooling": "tfidf"}
    fitted = PMIEmbedding(**params).fit(wiki_lines)
    model = PMIEmbedding(**params)
    bounds = [0] + cuts + [len(wiki_lines)]
    for a, b in zip(bounds[:-1], bounds[1:]):
        model.partial_fit(wiki_lines[a:b])
    assert model.vocabulary_ == fitted.vocabulary_
    counts, _ = model._pair_counts.matrix(params["min_count"])
    expected, _ = cooccurrence(wiki_lines, 5, min_count=3)
    assert_same_counts(counts, expected)
    np.testing.assert_array_equal(model.idf_, fitted.idf_)
    np.testing.assert_allclose(model.singular_values_, fitted.singular_values_,
                               rtol=1e-12)
    assert_same_vectors_up_to_sign(model.embeddings_, fitted.embeddings_)


def test_partial_fit_waits_for_enough_words_and_keeps_the_counts(wiki_lines):
    model = PMIEmbedding(12, min_count=3, random_state=0)
    with pytest.warns(UserWarning, match="feed more batches"):
        model.partial_fit(["aa bb cc"])
    assert not hasattr(model, "embeddings_")
    model.partial_fit(wiki_lines)
    fitted = PMIEmbedding(12, min_count=3, random_state=0).fit(["aa bb cc"] + wiki_lines)
    assert model.vocabulary_ == fitted.vocabulary_
    assert_same_vectors_up_to_sign(model.embeddings_, fitted.embeddings_)


def test_partial_fit_after_fit_and_with_attention_pooling_raise(wiki_lines):
    model = PMIEmbedding(5, min_count=3, random_state=0).fit(wiki_lines)
    with pytest.raises(ValueError, match="fitted by fit, which keeps no co-occurrence"):
        model.partial_fit(wiki_lines)
    with pytest.raises(ValueError, match="pooling='attention'"):
        PMIEmbedding(5, min_count=3, pooling="attention").partial_fit(wiki_lines)


def test_a_failing_batch_leaves_the_counts_as_they_were(wiki_lines):
    model = PMIEmbedding(5, min_count=3, random_state=0).partial_fit(wiki_lines)
    before = model.embeddings_.copy()
    with pytest.raises(TypeError, match="Document 2"):
        model.partial_fit(["aa bb", "cc dd", 3.5])
    assert model._pair_counts.n_documents == len(wiki_lines)
    np.testing.assert_array_equal(model.embeddings_, before)


def test_pmi_embedding_prune_at(wiki_lines):
    exact = PMIEmbedding(10, min_count=3, random_state=0).fit(wiki_lines)
    pruned = PMIEmbedding(10, min_count=3, random_state=0, prune_at=12000,
                          working_memory=0.05).fit(wiki_lines)
    assert set(pruned.vocabulary_) <= set(exact.vocabulary_)
    assert len(pruned.vocabulary_) > 0.5 * len(exact.vocabulary_)


# ---- Dask --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def client(dask_client):
    """The session's LocalCluster of two workers (tests/conftest.py)."""
    return dask_client


@pytest.fixture(scope="module")
def bag_files(tmp_path_factory, wiki_lines):
    folder = tmp_path_factory.mktemp("bag")
    for k, part in enumerate(np.array_split(np.array(wiki_lines, dtype=object), 3)):
        write_gzip_lines(folder / f"wiki-{k}.txt.gz", part)
    return str(folder / "wiki-*.txt.gz")


@pytest.mark.parametrize("weighting", ["uniform",
                                       pytest.param("harmonic", marks=pytest.mark.slow)])
def test_fit_on_a_dask_bag_equals_the_single_machine_fit(client, bag_files, wiki_lines,
                                                         weighting):
    db = pytest.importorskip("dask.bag")
    bag = db.read_text(bag_files)
    assert bag.npartitions == 3
    params = {"n_components": 10, "min_count": 3, "random_state": 0,
              "context_weighting": weighting, "pooling": "tfidf"}
    on_bag = PMIEmbedding(**params).fit(bag)
    local = PMIEmbedding(**params).fit(wiki_lines)
    assert on_bag.vocabulary_ == local.vocabulary_
    np.testing.assert_array_equal(on_bag.idf_, local.idf_)
    assert_same_vectors_up_to_sign(on_bag.embeddings_, local.embeddings_)
    # the counts: bit for bit (integer sums), whatever the partitions
    model = PMIEmbedding(**params).partial_fit(bag)
    counts, _ = model._pair_counts.matrix(3)
    expected, _ = cooccurrence(wiki_lines, 5, min_count=3, context_weighting=weighting)
    if weighting == "uniform":
        assert_same_counts(counts, expected)
    else:
        assert_close_counts(counts, expected)


def test_a_failing_partition_names_the_partition_and_the_document(client, tmp_path):
    db = pytest.importorskip("dask.bag")
    bag = db.from_sequence(["aa bb cc", "dd ee ff", b"\xff\xfe bad"], npartitions=2)
    with pytest.raises(ValueError, match="Partition 1 of the bag: 'utf-8' codec can't "
                                         "decode byte 0xff .* in document 0"):
        PMIEmbedding(2, min_count=1).fit(bag)


def test_transform_and_fit_transform_of_a_bag_equal_the_in_memory_vectors(
        client, bag_files, wiki_lines):
    da = pytest.importorskip("dask.array")
    db = pytest.importorskip("dask.bag")
    bag = db.read_text(bag_files)
    for pooling in ("mean", "tfidf"):
        model = PMIEmbedding(5, min_count=3, pooling=pooling, random_state=0).fit(wiki_lines)
        lazy = model.transform(bag)
        assert isinstance(lazy, da.Array) and lazy.npartitions == 3
        vectors = lazy.compute()
        assert isinstance(vectors, np.ndarray) and vectors.shape == (len(wiki_lines), 5)
        np.testing.assert_allclose(vectors, model.transform(wiki_lines), rtol=1e-12,
                                   atol=1e-15)
    on_bag = PMIEmbedding(5, min_count=3, random_state=0)
    vectors = on_bag.fit_transform(bag).compute()
    np.testing.assert_allclose(vectors, on_bag.transform(wiki_lines), rtol=1e-12, atol=1e-15)


def test_attention_pooling_refuses_a_bag(client, bag_files, wiki_lines):
    db = pytest.importorskip("dask.bag")
    bag = db.read_text(bag_files)
    for call in ("fit", "fit_transform"):
        with pytest.raises(TypeError, match="dask bag"):
            getattr(PMIEmbedding(5, min_count=3, pooling="attention"), call)(bag)
    fitted = PMIEmbedding(5, min_count=3, pooling="attention", random_state=0).fit(wiki_lines)
    with pytest.raises(TypeError, match="dask bag"):
        fitted.transform(bag)
