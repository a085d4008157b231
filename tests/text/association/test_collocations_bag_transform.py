"""Collocations.transform and fit_transform of a dask bag: a lazy bag of the rewritten
documents, partition by partition, equal to the in-memory transform, on the session's
LocalCluster of two workers."""
import numpy as np
import pytest
from _failing_tokenizer import _boom_on
from sklearn.exceptions import NotFittedError

from nlpfeat.text import Collocations
from nlpfeat.text._dask import _bags

WORDS = np.array([f"w{i}" for i in range(40)] + ["New", "new", "York", "york", "city"])


def token_docs(n_docs=200, seed=1):
    rng = np.random.default_rng(seed)
    docs = [WORDS[rng.zipf(1.4, rng.integers(0, 25)) % WORDS.size].tolist()
            for _ in range(n_docs)]
    docs[3] = []                                            # an empty document
    for i in range(0, n_docs, 7):
        docs[i] = docs[i] + ["new", "york", "city"]         # phrases to join
    return docs


@pytest.fixture
def db(dask_client):
    """dask.bag, with the session's LocalCluster of two workers active."""
    pytest.importorskip("distributed")
    return pytest.importorskip("dask.bag")


@pytest.mark.parametrize("order", [2, 3])
def test_transform_of_a_bag_is_a_lazy_bag_equal_to_the_in_memory_transform(db, order):
    docs = token_docs()
    coll = Collocations("pmi", order=order, min_count=3, threshold=0.0,
                        input="tokens").fit(docs)
    assert coll.levels_                        # some phrases are joined
    bag = db.from_sequence(docs, npartitions=4)
    out = coll.transform(bag)
    assert isinstance(out, db.Bag) and out.npartitions == 4
    expected = coll.transform(docs)
    assert expected != docs
    assert out.compute() == expected           # same documents, same order
    sizes = out.map_partitions(lambda part: [len(part)]).compute()
    assert sizes == bag.map_partitions(lambda part: [len(part)]).compute()


def test_fit_transform_of_a_bag_is_fit_then_transform(db):
    docs = token_docs()
    bag = db.from_sequence(docs, npartitions=3)
    coll = Collocations("pmi", min_count=3, threshold=0.0, input="tokens")
    out = coll.fit_transform(bag)
    reference = Collocations("pmi", min_count=3, threshold=0.0, input="tokens")
    expected = reference.fit_transform(docs)
    assert isinstance(out, db.Bag)
    assert out.compute() == expected
    assert coll.scores_ == reference.scores_
    assert [k.tolist() for _, k in coll.levels_] == [k.tolist() for _, k in reference.levels_]


def test_text_lines_of_a_bag_are_rewritten_without_their_line_breaks(db, tmp_path):
    lines = [" ".join(doc) for doc in token_docs(150)]
    (tmp_path / "a.txt").write_bytes("".join(l + "\n" for l in lines[:70]).encode())
    (tmp_path / "b.txt").write_bytes("".join(l + "\r\n" for l in lines[70:]).encode())
    bag = db.read_text(str(tmp_path / "*.txt"))
    coll = Collocations("pmi", min_count=3, threshold=0.0)
    out = coll.fit_transform(bag).compute()
    assert out == Collocations("pmi", min_count=3, threshold=0.0).fit_transform(lines)


def test_the_fitted_estimator_is_sent_once_without_its_counts(db, monkeypatch):
    docs = token_docs()
    coll = Collocations("pmi", min_count=3, threshold=0.0, input="tokens").fit(docs)
    sent = []
    send_once = _bags.send_once

    def spy(obj, dask):
        sent.append(obj)
        return send_once(obj, dask)

    monkeypatch.setattr(_bags, "send_once", spy)
    out = coll.transform(db.from_sequence(docs, npartitions=5))
    assert len(sent) == 1                     # once for all partitions
    light = sent[0]
    assert not hasattr(light, "_counts") and light.scores_ == []
    assert light.levels_ is coll.levels_
    assert hasattr(coll, "_counts") and coll.scores_     # the user's estimator is intact
    assert out.compute() == coll.transform(docs)


def test_a_failing_document_is_named_with_its_partition_when_computed(db):
    lines = ["a b", "new york", "c", "bad", "new york"]
    coll = Collocations("count", min_count=1, tokenizer=_boom_on("bad")).fit(["new york"])
    out = coll.transform(db.from_sequence(lines, npartitions=2))   # lazy: no error yet
    with pytest.raises(ValueError,
                       match=r"Partition 1 of the bag: Document 0: cannot tokenize"):
        out.compute()


def test_an_empty_bag_and_empty_partitions_are_rewritten_as_empty(db):
    docs = token_docs(30)
    coll = Collocations("pmi", min_count=2, threshold=0.0, input="tokens").fit(docs)
    assert coll.transform(db.from_sequence([])).compute() == []
    bag = db.concat([db.from_sequence(docs[:10], npartitions=1), db.from_sequence([]),
                     db.from_sequence(docs[10:], npartitions=2)])
    out = coll.transform(bag)
    assert out.npartitions == 4 and out.compute() == coll.transform(docs)


def test_transform_of_a_bag_needs_a_fitted_estimator(db):
    with pytest.raises(NotFittedError):
        Collocations(input="tokens").transform(db.from_sequence([["a"]], npartitions=1))


def test_a_bag_with_phrases_grown_in_passes_cannot_be_fit_transformed(db):
    bag = db.from_sequence(token_docs(), npartitions=2)
    with pytest.raises(ValueError, match="a dask bag needs counts that add up"):
        Collocations(max_len=3, input="tokens").fit_transform(bag)


def test_a_failing_document_is_named_by_the_in_memory_transform_too():
    coll = Collocations("count", min_count=1, tokenizer=_boom_on("bad")).fit(["new york"])
    with pytest.raises(ValueError, match=r"^Document 2: cannot tokenize"):
        coll.transform(["a b", "new york", "bad"])
    with pytest.raises(ValueError, match=r"^Document 1: cannot tokenize"):
        Collocations("count", min_count=1, tokenizer=_boom_on("bad")).fit_transform(
            ["new york", "bad"])
