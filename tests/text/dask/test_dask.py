"""Dask bags of documents on a real LocalCluster (no mocks): two workers in this process, and
two worker processes in the slow pass."""

import numpy as np
import pytest
import scipy.sparse as sp

dask = pytest.importorskip("dask")
db = pytest.importorskip("dask.bag")
distributed = pytest.importorskip("distributed")

from _corpus_files import write_gzip_lines

from nlpfeat.text import BagOfWords, PositionalBagOfWords, TfidfVectorizer
from nlpfeat.text._dask import strip_line_break

WORDS = [f"w{i}" for i in range(300)] + ["Café", "naïve", "NLP", "我", "爱"]


@pytest.fixture(scope="module", params=[
    "dask_client", pytest.param("dask_process_client", marks=pytest.mark.slow)])
def client(request):
    return request.getfixturevalue(request.param)


@pytest.fixture(scope="module")
def lines():
    rng = np.random.default_rng(0)
    docs = [" ".join(rng.choice(WORDS, rng.integers(0, 25))) for _ in range(400)]
    docs[3] = "  trailing spaces stay  "
    return docs


@pytest.fixture(scope="module")
def text_files(tmp_path_factory, lines):
    """The lines in three gzip files (CRLF line ends in one of them), read by read_text."""
    folder = tmp_path_factory.mktemp("bag")
    for k, part in enumerate(np.array_split(np.array(lines, dtype=object), 3)):
        write_gzip_lines(folder / f"corpus-{k}.txt.gz", part, end="\r\n" if k == 1 else "\n")
    return str(folder / "corpus-*.txt.gz")


ESTIMATORS = [
    BagOfWords(),
    BagOfWords(min_df=2, max_df=0.5, max_features=120, ngram_range=(1, 2)),
    BagOfWords(analyzer="char", ngram_range=(1, 2), binary=True),
    PositionalBagOfWords(position="relative", min_df=2),
    TfidfVectorizer(min_df=2),
    TfidfVectorizer(weighting="bm25", norm=None),
    TfidfVectorizer(smartirs="ltu"),
]


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: repr(e)[:50])
def test_fit_and_transform_of_a_bag_equal_the_single_machine_results(client, text_files,
                                                                      lines, estimator):
    bag = db.read_text(text_files)
    assert bag.npartitions == 3
    single = estimator.__class__(**estimator.get_params()).fit(lines)
    distributed_fit = estimator.__class__(**estimator.get_params()).fit(bag)
    assert distributed_fit.vocabulary_ == single.vocabulary_
    if hasattr(single, "idf_"):
        np.testing.assert_array_equal(distributed_fit.idf_, single.idf_)   # bit for bit
    result = distributed_fit.transform(bag)
    assert isinstance(result, dask.array.Array)
    assert result.npartitions == 3
    assert isinstance(result._meta, sp.csr_matrix)
    X = result.compute()
    expected = single.transform(lines)
    assert type(X) is sp.csr_matrix and X.dtype == expected.dtype     # not a block type
    assert X.shape == expected.shape
    np.testing.assert_allclose(X.toarray(), expected.toarray(), rtol=1e-12, atol=0)


def test_fit_transform_and_partial_fit_of_bags(client, lines):
    bag = db.from_sequence(lines, npartitions=5)
    X = BagOfWords(min_df=2).fit_transform(bag).compute()
    assert (X != BagOfWords(min_df=2).fit_transform(lines)).nnz == 0
    batched = TfidfVectorizer(min_df=3)
    batched.partial_fit(db.from_sequence(lines[:150], npartitions=2))
    batched.partial_fit(lines[150:300])
    batched.partial_fit(db.from_sequence(lines[300:], npartitions=3))
    whole = TfidfVectorizer(min_df=3).fit(lines)
    assert batched.vocabulary_ == whole.vocabulary_
    np.testing.assert_array_equal(batched.idf_, whole.idf_)


def test_many_partitions_use_a_tree_reduction(client, lines):
    bag = db.from_sequence(lines, npartitions=20)    # 20 leaves -> 3 -> 1 merges
    assert BagOfWords().fit(bag).vocabulary_ == BagOfWords().fit(lines).vocabulary_


def test_a_failing_partition_names_partition_and_document(client):
    def shout(text):
        if text == "bad":
            raise ValueError("cannot tokenize this")
        return text.split()
    bag = db.from_sequence(["a b", "c", "d", "bad", "e"], npartitions=2)
    with pytest.raises(ValueError, match=r"Partition 1 of the bag: Document 0: cannot tokenize"):
        BagOfWords(tokenizer=shout).fit(bag)


def test_transform_of_a_bag_needs_a_fitted_estimator(client, lines):
    from sklearn.exceptions import NotFittedError
    with pytest.raises(NotFittedError):
        BagOfWords().transform(db.from_sequence(lines, npartitions=2))


def test_strip_line_break_removes_one_line_end_only():
    assert strip_line_break("a b\n") == "a b"
    assert strip_line_break("a b\r\n") == "a b"
    assert strip_line_break("a b\n\n") == "a b\n"
    assert strip_line_break("a\tb ") == "a\tb "
    assert strip_line_break(b"x\r\n") == b"x"


def test_blocks_stack_into_a_plain_csr_matrix():
    from nlpfeat.text._dask._blocks import CsrBlock, stack_blocks

    rng = np.random.default_rng(1)
    parts = [sp.random(n, 7, density=d, format="csr", random_state=rng, dtype=np.float32)
             for n, d in [(3, 0.5), (0, 0.0), (4, 0.0), (5, 0.9)]]
    X = stack_blocks([CsrBlock(p) for p in parts])
    expected = sp.vstack(parts, format="csr")
    assert type(X) is sp.csr_matrix and X.dtype == np.float32 and X.shape == (12, 7)
    assert X.indices.dtype == X.indptr.dtype == np.int32
    np.testing.assert_array_equal(X.toarray(), expected.toarray())
    single = CsrBlock(parts[0])
    assert stack_blocks([single]) is single
    both = stack_blocks([CsrBlock(parts[0]), CsrBlock(parts[0])], axis=1)
    np.testing.assert_array_equal(both.toarray(), np.hstack([parts[0].toarray()] * 2))


def test_dask_stacks_blocks_with_the_registered_function(client, lines):
    """What ``.compute()`` returns when dask, not the test, stacks the blocks (on a
    worker): the same matrix, as a plain csr_matrix."""
    bag = db.from_sequence(lines, npartitions=4)
    fitted = BagOfWords().fit(lines)
    X = fitted.transform(bag).compute()
    assert type(X) is sp.csr_matrix and X.has_sorted_indices
    assert (X != fitted.transform(lines)).nnz == 0


def test_a_shipped_estimator_is_rebuilt_whole_after_pickling(lines):
    import pickle

    from nlpfeat.text._dask._bags import Shipped, without_statistics

    fitted = TfidfVectorizer(min_df=2).fit(lines)
    shipped = Shipped(without_statistics(fitted))
    assert shipped.get() is shipped._estimator            # no pickling: itself
    state = shipped.__getstate__()
    assert state["estimator"].vocabulary_ is None and state["estimator"]._lookup is None
    assert fitted.vocabulary_ is not None                 # the original is untouched
    received = pickle.loads(pickle.dumps(shipped))
    passed_on = pickle.loads(pickle.dumps(received))      # a worker replicating it
    assert passed_on.get().vocabulary_ == fitted.vocabulary_
    estimator = received.get()
    assert received.get() is estimator                    # rebuilt once
    assert estimator.vocabulary_ == fitted.vocabulary_
    assert list(estimator._lookup) == list(fitted._transform_lookup())   # order kept
    np.testing.assert_array_equal(estimator.transform(lines).toarray(),
                                  fitted.transform(lines).toarray())


def test_a_bag_fit_orders_the_transform_lookup_by_first_appearance(client, lines):
    """As after a single-machine fit (frequent terms first: faster lookups), whatever
    the partitions and shards the counts went through."""
    for npartitions in (1, 4, 20):
        bag = db.from_sequence(lines, npartitions=npartitions)
        on_bag = BagOfWords(min_df=2).fit(bag)
        single = BagOfWords(min_df=2).fit(lines)
        assert list(on_bag._transform_lookup()) == list(single._transform_lookup())
        assert on_bag._transform_lookup() == on_bag.vocabulary_
    on_bag.partial_fit(lines[:50])          # counts without first appearances: column order
    assert on_bag._term_counts.first_seen is None
    assert on_bag._transform_lookup() == on_bag.vocabulary_


def test_only_term_counts_are_reduced_in_shards():
    """Counts that do not split (n-grams, pairs) go whole through one reduction tree, never
    as one piece of a tuple that another shard's merge could be reading."""
    from nlpfeat.text._association._collocations import _count_partition as count_ngrams
    from nlpfeat.text._dask._bags import _n_shards
    from nlpfeat.text._semantics._pmi_embedding import _count_partition as count_pairs
    from nlpfeat.text._vectorizers._bow import count_vectorizer_partition

    assert _n_shards(count_ngrams, 8, 5) == _n_shards(count_pairs, None, 5) == 1
    assert _n_shards(count_vectorizer_partition, 8, 5) == 5
    assert _n_shards(count_vectorizer_partition, 3, 5) == 3
