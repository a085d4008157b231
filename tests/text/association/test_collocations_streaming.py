"""Collocations on corpora streamed in chunks: partial_fit, a corpus on disk, dask bags.

The counts are sums over whole documents, so every way of feeding a corpus (one chunk,
chunks of one document, batches split anywhere, the partitions of a dask bag) gives the
same counts, scores and phrases, bit for bit; no n-gram crosses a document boundary.
"""
import pickle
import tracemalloc
from collections import Counter

import numpy as np
import pytest
from _failing_tokenizer import _boom_on

from nlpfeat.datasets import Corpus
from nlpfeat.text import Collocations
from nlpfeat.text._counting._ngram_counts import NgramCounts

WORDS = np.array([f"w{i}" for i in range(60)] + ["New", "new", "NEW", "York", "york"])

# (order, window_size): bigrams in windows 2, 3 and 5, trigrams, quadgrams
SHAPES = [(2, 2), (2, 3), (2, 5), (3, 2), (4, 2)]


def token_docs(n_docs=150, seed=0):
    rng = np.random.default_rng(seed)
    docs = [WORDS[rng.zipf(1.5, rng.integers(0, 30)) % WORDS.size].tolist()
            for _ in range(n_docs)]
    docs[4] = []                                  # an empty document
    docs[5] = ["new", "york"]                     # shorter than every window but one
    return docs


def fitted_state(coll):
    """Everything a fit decides, as plain values (arrays as lists)."""
    levels = [(terms.tolist(), keys.tolist()) for terms, keys in coll.levels_]
    return coll.scores_, levels


def reference_counts(docs, order, window):
    """n-gram counts inside each document, by brute force (pairs within the window for
    bigrams)."""
    counts = Counter()
    for doc in docs:
        for i in range(len(doc)):
            if order == 2:
                for j in range(i + 1, min(i + window, len(doc))):
                    counts[doc[i], doc[j]] += 1
            elif i + order <= len(doc):
                counts[tuple(doc[i:i + order])] += 1
    return counts


def table_counts(counts):
    table = counts.table(min_count=1)
    grams = zip(*(table.terms[g].tolist() for g in table.grams))
    return dict(zip(grams, table.counts.tolist()))


def estimator(order, window, **params):
    measure = "pmi" if order > 2 else "likelihood_ratio"
    return Collocations(measure, order=order, window_size=window, min_count=2,
                        threshold=0.0, input="tokens", **params)


@pytest.mark.parametrize(("order", "window"), SHAPES)
def test_chunks_of_any_size_count_inside_documents_only(order, window):
    """Chunks of one document each (a budget of a few bytes) and one chunk for all give
    the brute-force counts: nothing pairs across a document or a chunk boundary."""
    docs = token_docs()
    lowered = [[w.lower() for w in doc] for doc in docs]
    expected = reference_counts(lowered, order, window)
    whole = estimator(order, window).fit(docs)
    tiny = estimator(order, window, working_memory=1e-6).fit(docs)
    assert table_counts(whole._counts) == table_counts(tiny._counts) == expected
    assert fitted_state(tiny) == fitted_state(whole)
    assert tiny.transform(docs) == whole.transform(docs)


@pytest.mark.parametrize(("order", "window"), SHAPES)
@pytest.mark.parametrize("seed", [0, 1])
def test_partial_fit_over_any_split_equals_fit(order, window, seed):
    docs = token_docs(seed=seed)
    rng = np.random.default_rng(seed)
    cuts = rng.choice(np.arange(1, len(docs)), size=3, replace=False)
    cuts = np.unique(np.append(cuts, len(docs) // 2))   # one in the middle of the list
    fitted = estimator(order, window).fit(docs)
    streamed = estimator(order, window, working_memory=1e-4)
    for start, stop in zip([0, *cuts], [*cuts, len(docs)]):
        streamed.partial_fit(iter(docs[start:stop]))          # one-shot batches
    assert fitted_state(streamed) == fitted_state(fitted)
    assert table_counts(streamed._counts) == table_counts(fitted._counts)
    assert streamed._counts.n_tokens == sum(map(len, docs))


def test_fit_then_partial_fit_continues_and_fit_starts_again():
    docs = token_docs()
    coll = estimator(2, 2).fit(docs[:80])
    coll.partial_fit(docs[80:])
    assert fitted_state(coll) == fitted_state(estimator(2, 2).fit(docs))
    coll.fit(docs[:10])
    assert fitted_state(coll) == fitted_state(estimator(2, 2).fit(docs[:10]))


def test_string_documents_and_a_corpus_on_disk(tmp_path):
    lines = [" ".join(doc) for doc in token_docs()]
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    expected = Collocations("pmi", min_count=2, window_size=3).fit(lines)
    from_disk = Collocations("pmi", min_count=2, window_size=3,
                             working_memory=1e-4).fit(Corpus(path))
    assert fitted_state(from_disk) == fitted_state(expected)
    assert from_disk._counts.n_documents == len(lines)
    streamed = Collocations("pmi", min_count=2, window_size=3)
    streamed.partial_fit(Corpus(path)).partial_fit(lines[:7])
    assert fitted_state(streamed) == fitted_state(
        Collocations("pmi", min_count=2, window_size=3).fit(lines + lines[:7]))


def test_one_shot_iterator_is_read_once_in_order():
    docs = token_docs()
    consumed = []

    def generator():
        for doc in docs:
            consumed.append(doc)
            yield doc

    coll = estimator(3, 2, working_memory=1e-4).fit(generator())
    assert consumed == docs
    assert fitted_state(coll) == fitted_state(estimator(3, 2).fit(docs))


@pytest.mark.parametrize("method", ["fit", "partial_fit"])
def test_a_failing_chunk_names_the_document(method):
    docs = [f"d{i} x" for i in range(50)]
    coll = Collocations(tokenizer=_boom_on("d37 x"), working_memory=1e-4)
    with pytest.raises(ValueError, match="Document 37: cannot tokenize this"):
        getattr(coll, method)(docs)
    assert not hasattr(coll, "scores_")


def test_a_bad_token_in_a_later_chunk_names_its_document():
    docs = [["a", "b"]] * 30 + [["a", 3]]
    with pytest.raises(TypeError, match="Document 30 holds a token of type int"):
        Collocations(input="tokens", working_memory=1e-5).fit(docs)


def test_a_failing_batch_leaves_partial_fit_state_unchanged():
    coll = Collocations(tokenizer=_boom_on("bad"), min_count=1)
    coll.partial_fit(["a b", "b c"])
    before = pickle.dumps(coll)
    with pytest.raises(ValueError, match="Document 2: cannot tokenize"):
        coll.partial_fit(["a b", "e", "bad", "f"])
    assert pickle.dumps(coll) == before
    coll.partial_fit(["a b"])
    assert dict(coll.scores_).keys() == {("a", "b"), ("b", "c")}


def test_pickled_partial_fit_keeps_counting():
    docs = token_docs()
    coll = estimator(4, 2).partial_fit(docs[:70])
    again = pickle.loads(pickle.dumps(coll)).partial_fit(docs[70:])
    assert fitted_state(again) == fitted_state(estimator(4, 2).fit(docs))


def test_phrases_grown_in_passes_cannot_be_added_up():
    """max_len > 2 counts the text rewritten by the whole corpus' phrases: partial_fit
    refuses it, fit still works on a list."""
    docs = token_docs()
    coll = Collocations("pmi", max_len=3, min_count=2, threshold=0, input="tokens")
    with pytest.raises(ValueError, match="partial_fit needs counts that add up"):
        coll.partial_fit(docs)
    assert coll.fit(iter(docs)).scores_ == Collocations(
        "pmi", max_len=3, min_count=2, threshold=0, input="tokens").fit(docs).scores_


def test_counts_merge_in_any_grouping_without_direct_keys(monkeypatch):
    """The run merging and NgramCounts.merge, with tuples sorted as rows (vocabularies
    whose id tuples overflow int64 keys)."""
    from nlpfeat.text._association import _collocations

    docs = token_docs()
    expected = reference_counts(docs, 4, 2)
    monkeypatch.setattr(_collocations, "_MAX_TUPLE_KEY", 0)
    rows = Collocations("pmi", order=4, min_count=1, lowercase=False, input="tokens",
                        working_memory=1e-5).fit(docs)
    assert rows._counts.max_key == 0 and table_counts(rows._counts) == expected
    parts = [NgramCounts(4, 2, max_key=0).add(docs[k:k + 40]) for k in range(0, 150, 40)]
    merged = parts[2].merge(parts[3])
    merged = parts[0].merge(parts[1]).merge(merged)
    assert table_counts(merged) == expected


def test_keys_are_unpacked_when_the_vocabulary_outgrows_them():
    """Quadgram keys pack four ids of 16 bits: past 65,536 terms, in the middle of the
    stream, the tables switch to rows, and the counts stay exact."""
    rng = np.random.default_rng(0)
    words = np.array([f"t{i}" for i in range(200_000)])
    docs = [words[rng.integers(0, 200_000, 40)].tolist() + ["a", "b", "c", "d"]
            for _ in range(3_000)]
    coll = Collocations("pmi", order=4, min_count=2, lowercase=False, input="tokens",
                        working_memory=0.5).fit(docs)
    counts = coll._counts
    assert counts.n_slots > 2**16
    assert not counts._packed[(0, 1, 2, 3)] and counts._packed[(0, 1, 2)]
    assert table_counts(counts) == reference_counts(docs, 4, 2)
    assert ("a", "b", "c", "d") in dict(coll.scores_)


def test_working_memory_is_checked():
    with pytest.raises(ValueError, match="working_memory"):
        Collocations(working_memory=0).fit(["a b"])


def _traced_peak(fn):
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def generated_docs(n_docs, seed=0, length=40):
    """A generator (one-shot) of documents of ``length`` words drawn from 500 types."""
    words = np.array([f"w{i}" for i in range(500)])
    rng = np.random.default_rng(seed)
    for _ in range(n_docs):
        yield " ".join(words[rng.zipf(1.3, length) % words.size])


@pytest.mark.slow    # a corpus large enough to show the bound (6 s); .ci/run runs it
def test_fit_memory_is_bounded_by_the_budget_not_the_corpus():
    """240k tokens of a one-shot generator: in one chunk the token lists, their ids and
    the pair keys take about 20 MiB; streamed, the peak is the 4 MiB budget plus the
    count tables, about what 60k tokens take."""
    def peak(n_docs, **params):
        coll = Collocations(input="tokens", **params)
        return _traced_peak(lambda: coll.fit(doc.split() for doc in generated_docs(n_docs)))

    one_chunk, small, large = peak(6_000, working_memory=1e6), peak(1_500), peak(6_000)
    assert one_chunk > 3 * large
    assert large < 10 * 2**20
    assert large < 1.5 * small


# ------------------------------------------------------------------------ dask bags
@pytest.fixture
def db(dask_client):
    """dask.bag, with the session's LocalCluster of two workers active."""
    return pytest.importorskip("dask.bag")


@pytest.mark.parametrize(("order", "window"), [(2, 2), (2, 3), (3, 2)])
def test_fit_of_a_bag_equals_the_single_machine_fit(db, order, window):
    docs = token_docs(400)
    bag = db.from_sequence(docs, npartitions=5)
    fitted = estimator(order, window).fit(bag)
    expected = estimator(order, window).fit(docs)
    assert fitted_state(fitted) == fitted_state(expected)
    assert table_counts(fitted._counts) == table_counts(expected._counts)
    assert fitted.transform(docs[:20]) == expected.transform(docs[:20])
    more = estimator(order, window).partial_fit(docs[:100]).partial_fit(
        db.from_sequence(docs[100:], npartitions=3))
    assert fitted_state(more) == fitted_state(expected)


def test_fit_of_text_files_read_as_a_bag(db, tmp_path):
    lines = [" ".join(doc) for doc in token_docs(300)]
    for k, part in enumerate(np.array_split(np.array(lines, dtype=object), 3)):
        end = "\r\n" if k == 1 else "\n"
        (tmp_path / f"corpus-{k}.txt").write_bytes(
            "".join(line + end for line in part).encode("utf-8"))
    bag = db.read_text(str(tmp_path / "corpus-*.txt"))
    fitted = Collocations("pmi", min_count=2).fit(bag)
    assert fitted_state(fitted) == fitted_state(Collocations("pmi", min_count=2).fit(lines))


def test_a_bag_with_phrases_grown_in_passes_is_refused(db):
    bag = db.from_sequence(token_docs(), npartitions=2)
    with pytest.raises(ValueError, match="a dask bag needs counts that add up"):
        Collocations(max_len=3, input="tokens").fit(bag)


def test_fit_transform_then_partial_fit_with_lowercased_tokens():
    """fit_transform counted the lowercased token lists as counts of another kind than
    partial_fit's, whose merge then refused them as changed text options."""
    docs = [[w.capitalize() if i % 3 == 0 else w for i, w in enumerate(doc)]
            for doc in token_docs()]
    coll = Collocations("pmi", min_count=2, input="tokens")       # lowercase=True
    coll.fit_transform(docs[:80])
    coll.partial_fit(docs[80:])
    assert fitted_state(coll) == fitted_state(
        Collocations("pmi", min_count=2, input="tokens").fit(docs))


@pytest.mark.parametrize("change", [{"lowercase": False}, {"stop_words": ["the"]},
                                    {"stemmer": "porter"}, {"tokenizer": "whitespace"}])
def test_partial_fit_after_a_change_of_text_options_names_it(change):
    texts = [" ".join(doc) for doc in token_docs()]
    coll = Collocations("pmi", min_count=2).fit(texts[:80])
    coll.set_params(**change)
    with pytest.raises(ValueError, match=f"text options \\['{next(iter(change))}'\\] changed"):
        coll.partial_fit(texts[80:])
    coll.set_params(**{name: Collocations().get_params()[name] for name in change})
    coll.partial_fit(texts[80:])                      # changed back: the batches add up
    assert fitted_state(coll) == fitted_state(Collocations("pmi", min_count=2).fit(texts))
