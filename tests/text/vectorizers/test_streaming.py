"""Streaming fit/transform within ``working_memory``, ``partial_fit``, and chunk errors."""
import pickle
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from _failing_tokenizer import _boom_on
from sklearn.feature_extraction.text import CountVectorizer

from nlpfeat.datasets import Corpus
from nlpfeat.text import BagOfWords, PositionalBagOfWords, TfidfVectorizer
from nlpfeat.text._counting._term_counts import (
    TermCounts,
    chunk_tokens,
    count_terms,
    term_shards,
)
from nlpfeat.text._counting._vocabulary import CsrBuilder, count_chunks, remap_columns

WORDS = np.array([f"w{i}" for i in range(2000)])


def generated_docs(n_docs, seed=0, length=40):
    """A generator (one-shot) of documents of ``length`` words drawn from 2,000 types."""
    rng = np.random.default_rng(seed)
    for _ in range(n_docs):
        yield " ".join(WORDS[rng.zipf(1.3, length) % WORDS.size])


@pytest.fixture(scope="module")
def docs():
    rng = np.random.default_rng(1)
    out = list(generated_docs(300, seed=2, length=12))
    out[5] = ""                                   # an empty document
    out[7] = "Café naïve RÉSUMÉ " + out[7]        # case and accents
    return [d for d in out] + [" ".join(rng.choice(WORDS[:50], 30)) for _ in range(20)]


def _random_splits(docs, seed):
    rng = np.random.default_rng(seed)
    cuts = np.sort(rng.choice(np.arange(1, len(docs)), size=rng.integers(1, 6), replace=False))
    return np.split(np.array(docs, dtype=object), cuts)


ESTIMATORS = [
    BagOfWords(),
    BagOfWords(min_df=2, max_df=0.5, max_features=150),
    BagOfWords(binary=True, max_features=40, ngram_range=(1, 2)),
    BagOfWords(analyzer="char_wb", ngram_range=(2, 3), min_df=3),
    PositionalBagOfWords(position="log", min_df=2),
    TfidfVectorizer(min_df=2, max_df=0.9),
    TfidfVectorizer(sublinear_tf=True, max_features=100),
    TfidfVectorizer(smartirs="Lpb"),
    TfidfVectorizer(smartirs="ntu"),
    TfidfVectorizer(weighting="bm25", norm=None, min_df=2),
    TfidfVectorizer(vocabulary=[f"w{i}" for i in range(0, 60, 3)]),
]


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: repr(e)[:60])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_partial_fit_over_any_split_equals_fit(docs, estimator, seed):
    whole = estimator.__class__(**estimator.get_params()).fit(docs)
    batched = estimator.__class__(**estimator.get_params())
    for part in _random_splits(docs, seed):
        batched.partial_fit(list(part))
    assert batched.vocabulary_ == whole.vocabulary_
    assert list(batched.get_feature_names_out()) == list(whole.get_feature_names_out())
    if hasattr(whole, "idf_"):
        np.testing.assert_array_equal(batched.idf_, whole.idf_)       # bit for bit
        assert getattr(batched, "avgdl_", None) == getattr(whole, "avgdl_", None)
        assert batched.pivot_ == whole.pivot_
    A, B = whole.transform(docs), batched.transform(docs)
    assert (A != B).nnz == 0


def test_partial_fit_log_entropy_equals_fit_up_to_rounding(docs):
    whole = TfidfVectorizer(weighting="logentropy").fit(docs)
    batched = TfidfVectorizer(weighting="logentropy")
    for part in _random_splits(docs, 3):
        batched.partial_fit(list(part))
    assert batched.vocabulary_ == whole.vocabulary_
    np.testing.assert_allclose(batched.idf_, whole.idf_, rtol=1e-12, atol=1e-14)


def test_partial_fit_prunes_from_the_accumulated_counts():
    bow = BagOfWords(min_df=2)
    bow.partial_fit(["cc bb", "aa"])
    assert bow.vocabulary_ == {}                   # no term in 2 documents yet
    with pytest.raises(ValueError, match="vocabulary is empty.*partial_fit"):
        bow.transform(["aa"])
    bow.partial_fit(["cc aa"])
    assert bow.vocabulary_ == {"aa": 0, "cc": 1}   # sorted, as fit
    assert bow.vocabulary_ == BagOfWords(min_df=2).fit(["cc bb", "aa", "cc aa"]).vocabulary_


def test_fit_then_partial_fit_continues_and_fit_resets():
    bow = BagOfWords().fit(["bb aa"])
    bow.partial_fit(["cc"])
    assert list(bow.get_feature_names_out()) == ["aa", "bb", "cc"]
    bow.fit(["zz"])
    assert list(bow.get_feature_names_out()) == ["zz"]


@pytest.mark.parametrize("working_memory", [1e-4, 0.01, None])
def test_small_chunks_change_nothing(docs, working_memory):
    # 1e-4 MiB is a chunk of 3 features: hundreds of chunks
    reference = CountVectorizer(min_df=2, max_features=200).fit(docs)
    bow = BagOfWords(min_df=2, max_features=200, working_memory=working_memory)
    X = bow.fit_transform(docs)
    assert bow.vocabulary_ == reference.vocabulary_
    assert (X != reference.transform(docs)).nnz == 0
    assert (bow.transform(docs) != X).nnz == 0
    tfidf = TfidfVectorizer(working_memory=working_memory, min_df=2)
    np.testing.assert_allclose(tfidf.fit_transform(docs).toarray(),
                               TfidfVectorizer(min_df=2).fit(docs).transform(docs).toarray(),
                               rtol=1e-12)


def test_chunk_tokens_follows_working_memory():
    assert chunk_tokens(None) == chunk_tokens(4.0)   # nlpfeat's default budget (4 MiB)
    assert chunk_tokens(8) == 2 * chunk_tokens(4)
    assert chunk_tokens(1e-9) == 1
    with pytest.raises(ValueError, match="working_memory"):
        BagOfWords(working_memory=0).fit(["a"])


def test_reads_a_corpus_on_disk_and_a_one_shot_generator(tmp_path, docs):
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(docs) + "\n", encoding="utf-8")
    expected = BagOfWords().fit(docs)
    from_disk = BagOfWords(working_memory=0.01).fit(Corpus(path))
    assert from_disk.vocabulary_ == expected.vocabulary_
    assert (from_disk.transform(Corpus(path)) != expected.transform(docs)).nnz == 0
    from_generator = BagOfWords().fit(iter(docs))
    assert from_generator.vocabulary_ == expected.vocabulary_


@pytest.mark.parametrize("method", ["fit", "fit_transform", "partial_fit"])
def test_a_failing_chunk_names_the_document(method):
    docs = [f"d{i} x" for i in range(50)]
    bow = BagOfWords(tokenizer=_boom_on("d37 x"), working_memory=1e-4)
    with pytest.raises(ValueError, match="Document 37: cannot tokenize this"):
        getattr(bow, method)(docs)
    assert not hasattr(bow, "vocabulary_")         # nothing half-counted is kept


def test_a_failing_batch_leaves_partial_fit_state_unchanged():
    bow = BagOfWords(tokenizer=_boom_on("bad"))
    bow.partial_fit(["a b", "b c"])
    before = pickle.dumps(bow)
    with pytest.raises(ValueError, match="Document 2: cannot tokenize"):
        bow.partial_fit(["d", "e", "bad", "f"])
    assert pickle.dumps(bow) == before
    bow.partial_fit(["d"])
    assert list(bow.get_feature_names_out()) == ["a", "b", "c", "d"]


def test_transform_error_names_the_document():
    bow = BagOfWords(tokenizer=_boom_on("bad")).fit(["a"])
    with pytest.raises(ValueError, match="Document 3: cannot tokenize"):
        bow.transform(["a", "a", "a", "bad"])


def test_fitted_streaming_estimators_pickle_and_keep_counting(docs):
    tfidf = TfidfVectorizer(min_df=2).partial_fit(docs[:100])
    clone = pickle.loads(pickle.dumps(tfidf))
    clone.partial_fit(docs[100:])
    np.testing.assert_array_equal(clone.idf_, TfidfVectorizer(min_df=2).fit(docs).idf_)


def test_term_counts_merge_is_exact_in_any_order():
    parts = [[["a", "b", "a"]], [["c"], ["b", "b"]], [[]]]
    merged = [count_terms(p, TermCounts()) for p in parts]
    forward = TermCounts().merge(merged[0]).merge(merged[1]).merge(merged[2])
    backward = TermCounts().merge(merged[2]).merge(merged[1]).merge(merged[0])
    for counts in (forward, backward):
        terms, ids = counts.sorted_terms()
        assert terms == ["a", "b", "c"]
        assert counts.df[ids].tolist() == [1, 2, 1]
        assert counts.totals[ids].tolist() == [2, 3, 1]
        assert counts.n_documents == 4


def test_remap_columns_drops_and_renumbers_in_place():
    rng = np.random.default_rng(0)
    X = sp.random(200, 50, density=0.2, format="csr", random_state=rng,
                  data_rvs=lambda n: rng.integers(1, 9, n)).astype(np.int64)
    new_of_old = rng.permutation(50) - 10            # 10 columns dropped
    keep = new_of_old >= 0
    expected = np.zeros((200, 40), dtype=np.int64)
    expected[:, new_of_old[keep]] = X.toarray()[:, keep]
    Y = remap_columns(X.copy(), new_of_old, 40, block=7)
    assert Y.has_sorted_indices
    np.testing.assert_array_equal(Y.toarray(), expected)


def test_csr_builder_matches_one_shot_counting():
    feature_lists = [list(np.random.default_rng(i).choice(list("abcdefg"), i % 9))
                     for i in range(300)]
    vocabulary = {c: i for i, c in enumerate("abcdefg")}
    builder = CsrBuilder(np.float32)
    for chunk in count_chunks(feature_lists, vocabulary, learn=False, chunk_tokens=5):
        builder.append(chunk)
    X = builder.to_csr(7)
    expected = np.zeros((300, 7))
    for i, features in enumerate(feature_lists):
        for f in features:
            expected[i, vocabulary[f]] += 1
    assert X.dtype == np.float32
    np.testing.assert_array_equal(X.toarray(), expected)


def _traced_peak(func):
    tracemalloc.start()
    try:
        func()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.slow    # a corpus large enough to show the bound (10 s); .ci/run runs it
def test_fit_memory_is_bounded_by_the_budget_not_the_corpus():
    # 0.8M tokens: holding the document-term matrix took 12.8 MiB (50 MiB at 3.2M tokens)
    small = _traced_peak(lambda: BagOfWords().fit(generated_docs(3_000)))
    large = _traced_peak(lambda: BagOfWords().fit(generated_docs(20_000)))
    assert large < 8 * 2**20
    assert large < 1.5 * small
    tfidf = _traced_peak(lambda: TfidfVectorizer(working_memory=1).fit(generated_docs(20_000)))
    assert tfidf < 8 * 2**20


def test_transform_memory_is_the_output_plus_the_budget():
    bow = BagOfWords().fit(generated_docs(2_000))
    docs = list(generated_docs(60_000))
    out = []
    peak = _traced_peak(lambda: out.append(bow.transform(docs)))
    X = out[0]
    output_bytes = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    assert output_bytes > 14 * 2**20
    # no second full copy of the output (concatenating per-chunk arrays took 1.55x + 2 MiB)
    assert peak < 1.4 * output_bytes + 2 * 2**20


# ----------------------------------------------------------------------------- CLI --stream
def _cli(*argv):
    from nlpfeat.cli import main
    return main([str(a) for a in argv])


@pytest.mark.parametrize("kind", ["bow", "pbow", "tfidf"])
def test_cli_stream_writes_the_same_npz_in_chunks(tmp_path, docs, kind):
    import gzip
    path = tmp_path / "corpus.txt.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write("\n".join(docs) + "\n")
    plain = tmp_path / "corpus.txt"
    plain.write_text("\n".join(docs) + "\n", encoding="utf-8")
    assert _cli("features", plain, "--kind", kind, "--min-df", 2, "-o", tmp_path / "a.npz") == 0
    assert _cli("features", path, "--kind", kind, "--min-df", 2, "--stream", "--chunk-docs", 7,
                "-o", tmp_path / "b.npz") == 0
    a, b = np.load(tmp_path / "a.npz"), np.load(tmp_path / "b.npz")
    assert sorted(a.files) == sorted(b.files)
    for key in ("shape", "indices", "indptr", "feature_names", "doc_ids"):
        np.testing.assert_array_equal(a[key], b[key])
    np.testing.assert_allclose(a["data"], b["data"], rtol=1e-12)
    X = sp.load_npz(tmp_path / "b.npz")
    assert X.shape == (len(docs), len(b["feature_names"]))


def test_cli_stream_skips_blank_lines_and_streams_stdin_and_pmi(tmp_path, capsys,
                                                                 monkeypatch):
    path = tmp_path / "c.txt"
    path.write_text("the cat sat\n\nthe dog ran\r\n", encoding="utf-8")
    assert _cli("features", path, "--kind", "bow", "--stream", "--skip-blank",
                "-o", tmp_path / "x.npz") == 0
    assert list(np.load(tmp_path / "x.npz")["doc_ids"]) == ["1", "3"]
    assert "skipped 1 blank" in capsys.readouterr().err
    # stdin is copied to a temporary file (read twice); pmi streams the co-occurrences
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(path.read_bytes())))
    assert _cli("features", "-", "--kind", "bow", "--stream", "-o", tmp_path / "s.npz") == 0
    assert list(np.load(tmp_path / "s.npz")["doc_ids"]) == ["1", "2", "3"]
    assert _cli("features", path, "--kind", "pmi", "--stream", "-o", tmp_path / "y.npz") == 0
    assert "the" in set(np.load(tmp_path / "y.npz")["feature_names"])


def test_term_shards_are_crc32_of_utf8_for_any_term():
    """The shard of a term is the same in every process and on both paths (the C-level
    one for plain str terms, the fallback for lone surrogates and non-str terms)."""
    import zlib

    plain = ["ab", "café", "日本", "x y"]
    mixed = plain + ["\ud800", ("a", 1)]
    expected = [zlib.crc32((t if isinstance(t, str) else repr(t)).encode("utf-8", "surrogatepass"))
                % 5 for t in mixed]
    assert term_shards(mixed, 5).tolist() == expected
    assert term_shards(plain, 5).tolist() == expected[: len(plain)]


def test_split_then_merge_restores_counts_with_odd_terms():
    counts = count_terms([["ab", "\ud800", "café"], ["ab", "zz"], ["\ud800"]], TermCounts())
    parts = counts.split(3)
    merged = parts[0]
    for part in parts[1:]:
        merged = merged.merge(part)
    got = {t: (merged.df[i], merged.totals[i]) for t, i in merged.vocabulary.items()}
    want = {t: (counts.df[i], counts.totals[i]) for t, i in counts.vocabulary.items()}
    assert got == want and merged.n_documents == counts.n_documents == 3


def test_term_counts_pickle_their_learned_terms_as_a_list():
    counts = count_terms([["b", "a", "b"], ["c"]], TermCounts())
    state = counts.__getstate__()
    assert state["vocabulary"] == ["b", "a", "c"]          # ids are positions
    clone = pickle.loads(pickle.dumps(counts))
    assert dict(clone.vocabulary) == {"b": 0, "a": 1, "c": 2}
    assert clone.vocabulary["d"] == 3                      # still learns new terms
    legacy = TermCounts.__new__(TermCounts)                 # a state holding a dict
    legacy.__setstate__(dict(state, vocabulary={"b": 0, "a": 1, "c": 2}))
    assert dict(legacy.vocabulary) == {"b": 0, "a": 1, "c": 2}
    fixed = pickle.loads(pickle.dumps(count_terms([["a", "z"]], TermCounts({"z": 0, "a": 1}))))
    assert fixed.vocabulary == {"z": 0, "a": 1} and fixed.totals.tolist() == [1, 1]


def test_first_seen_survives_split_merge_and_pickle():
    a = count_terms([["x", "y"], ["z"]], TermCounts())
    b = count_terms([["w", "y"], ["v"]], TermCounts())
    a.first_seen = np.arange(3, dtype=np.int64)                # partition 0
    b.first_seen = (np.int64(1) << 40) + np.arange(3)          # partition 1
    parts = [p for counts in (a, b) for p in pickle.loads(pickle.dumps(counts.split(2)))]
    merged = parts[0]
    for part in parts[1:]:
        merged.merge(part)
    order = np.argsort(merged.first_seen, kind="stable")
    assert [merged.terms_by_id()[i] for i in order] == ["x", "y", "z", "w", "v"]
    assert merged.merge(count_terms([["u"]], TermCounts())).first_seen is None
