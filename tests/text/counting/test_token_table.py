"""The compiled token tables (_token_hash.TokenTable) that number the tokens of n-gram
counts across chunks: ids exact whatever the hash collisions, the counts, merges and
pickles equal to the exact path (a dict lookup per token) for every chunking."""
import pickle
import random

import numpy as np
import pytest

from nlpfeat.datasets import load_lee
from nlpfeat.text import Collocations
from nlpfeat.text._counting import _ngram_counts
from nlpfeat.text._counting._ngram_counts import NgramCounts
from nlpfeat.text._counting._token_table import TokenTable, joined_tokens


def lengths_of(docs):
    return np.array([len(d) for d in docs], dtype=np.int64)


def numbered(chunks, hash_mask=2**64 - 1):
    """The ids of each chunk of documents by one TokenTable, and the table."""
    table, out = TokenTable(hash_mask), []
    for docs in chunks:
        found = joined_tokens(docs, lengths_of(docs))
        out.append([] if found is None else table.add(found[0], int(lengths_of(docs).sum()))
                   .tolist())
    return out, table


def reference(chunks):
    seen = {}
    return [[seen.setdefault(t, len(seen)) for doc in docs for t in doc] for docs in chunks], \
        list(seen)


def random_chunks(seed, alphabet="aAbB-", sizes=(0, 1, 2, 7, 8, 9, 15, 16, 17, 24, 25, 40)):
    """Chunks of documents of tokens that share long prefixes (lengths around the
    eight-byte words)."""
    rng = random.Random(seed)
    return [[["".join(rng.choice(alphabet) for _ in range(rng.choice(sizes)))
              for _ in range(rng.randint(0, 25))] for _ in range(rng.randint(0, 6))]
            for _ in range(rng.randint(1, 4))]


LONG = [[["abcdefgh", "abcdefghi", "abcdefghij", "abcdefgh", "abcdefghi"]],
        [["abcdefghijklmnop", "abcdefghijklmnoq", "abcdefghijklmnopq", "abcdefghijklmnop"],
         [], ["", "abcdefghijklmnoq", "ABCDEFGHIJKLMNOP", ""]]]
CASES = [
    [[["A", "b"], [], ["a", "b", "A"]]],
    [[[""], ["", ""], [], ["a", ""]]],                  # empty tokens and documents
    [[["New", "York"], ["new", "york"]], [["NEW", "York", "city"]], [["new"]]],
    [[["café", "Café", "CAFÉ"], ["café", "x"]], [["ǅ", "ǆ", "Ǆ"], ["x", "café"]]],
    LONG,
]


@pytest.mark.parametrize("hash_mask", [2**64 - 1, 0, 1, 3, 0xFF])
@pytest.mark.parametrize("chunks", CASES + [random_chunks(s) for s in range(6)])
def test_ids_are_exact_across_chunks_whatever_the_hash_collisions(chunks, hash_mask):
    """With 0, 1, 2 or 8 bits of hash every token collides with many others: only the
    comparison of a row's first word, length and stored words tells them apart."""
    ids, table = numbered(chunks, hash_mask)
    ref_ids, ref_tokens = reference(chunks)
    assert ids == ref_ids
    assert table.n == len(ref_tokens)
    assert table.strings() == ref_tokens
    assert table.strings(1) == ref_tokens[1:]
    picked = list(range(len(ref_tokens)))[::-2]
    assert table.strings_of(picked) == [ref_tokens[i] for i in picked]


def test_many_distinct_tokens_grow_the_table():
    """More distinct tokens than the first table's 1024 slots, with 12 bits of hash."""
    rng = random.Random(5)
    chunks = [[["".join(rng.choice("aAbB") for _ in range(rng.randint(1, 19)))
                for _ in range(300)] for _ in range(10)] for _ in range(3)]
    ref_ids, ref_tokens = reference(chunks)
    assert len(ref_tokens) > 4096
    for mask in (2**64 - 1, 0xFFF):
        ids, table = numbered(chunks, mask)
        assert (ids, table.strings()) == (ref_ids, ref_tokens)


@pytest.mark.parametrize("hash_mask", [2**64 - 1, 0])
def test_lowercase_forms_change_ascii_letters_only(hash_mask):
    raw = TokenTable()
    raw.add("AZaz@[`{\x00Ab\x00CAFÉ\x00ABCDEFGHIJKLMNOPQRSTUVWXYZ\x00ab\x00"
            "abcdefghijklmnopqrstuvwxyZ\x00", 7)
    lower = TokenTable(hash_mask)
    assert lower.add_lowered(raw, 0).tolist() == [0, 1, 2, 3, 1, 3, 4]
    assert lower.strings() == ["azaz@[`{", "ab", "cafÉ", "abcdefghijklmnopqrstuvwxyz", ""]
    raw.add("XY\x00ab\x00AB", 3)                       # only the new raw tokens, from 7 on
    assert lower.add_lowered(raw, 7).tolist() == [5, 1]   # "XY", "AB"
    assert lower.strings(5) == ["xy"]


@pytest.mark.parametrize("joined,n_tokens", [
    ("a\x00b", 1), ("a\x00\x00", 2), ("\x00", 1), ("a", 2),   # a token holds the separator
    ("a\x00\ud800", 2), ("\udcff", 1)])                       # a lone surrogate
def test_what_it_cannot_number_exactly_is_refused_and_nothing_is_added(joined, n_tokens):
    table = TokenTable()
    table.add("a\x00bb", 2)
    assert table.add(joined, n_tokens) is None
    assert table.n == 2 and table.strings() == ["a", "bb"]
    assert table.add("bb\x00c", 2).tolist() == [1, 2]


@pytest.mark.parametrize("docs", [[["a", 1]], [["a", None]], [[b"a"]], [[], []], []])
def test_documents_without_str_tokens_are_not_joined(docs):
    assert joined_tokens(docs, lengths_of(docs)) is None


def exact_only(monkeypatch):
    monkeypatch.setattr(_ngram_counts.NgramCounts, "_hashed_ids", lambda *args: None)


def state(counts):
    table = counts.table(min_count=1)
    return (list(counts.vocabulary.items()), counts.freq.tolist(), counts.n_slots,
            counts.n_tokens, counts.n_documents, [g.tolist() for g in table.grams],
            table.terms.tolist(), table.counts.tolist(), counts._slot_terms[:counts.n_slots],
            counts._remap[:counts.n_slots].tolist())


LEE = [t.split() for t in load_lee().background]
CAPS = [["The", "Cat", "sat"], ["the", "cat", "THE", "Dog"], ["dog", "the"],
        ["SAT", "Sat", "sat", "cat"]]
LOWER = [["the", "cat"], ["cat", "the", "dog"]]


@pytest.mark.parametrize("docs", [LEE[:40], CAPS, LOWER, CAPS + [["café", "Café"]],
                                  [["é"]] + CAPS, [["é"]] + LOWER, [["x", "\ud800"]] + CAPS,
                                  [["ΟΔΟΣ", "Σ", "ς"], ["οδος", "σ"]],
                                  [["Abcdefghijk", "abcdefghijk", "ABCDEFGHIJK"], ["abcdefgh"]]])
@pytest.mark.parametrize("split", [1, 2, 3, 100])
@pytest.mark.parametrize("order", [2, 3])
@pytest.mark.parametrize("lower", [True, False])
def test_counts_equal_the_exact_path_for_every_chunking(monkeypatch, docs, split, order,
                                                        lower):
    def count():
        counts = NgramCounts(order, 2, lower=lower, max_key=2**63)
        for k in range(0, len(docs), split):
            counts.add(docs[k:k + split], k)
        return counts

    fast = count()
    fast_state = state(fast)
    exact_only(monkeypatch)
    assert fast_state == state(count())


@pytest.mark.parametrize("first,second", [(CAPS, LOWER), (LOWER, CAPS), (CAPS, CAPS),
                                          (LEE[:20], LEE[20:40])])
def test_merges_and_pickles_equal_the_exact_path(monkeypatch, first, second):
    def merged(pickled):
        a = NgramCounts(2, 2, lower=True).add(first)
        b = NgramCounts(2, 2, lower=True).add(second, len(first))
        if pickled:
            a, b = pickle.loads(pickle.dumps(a)), pickle.loads(pickle.dumps(b))
        return state(a.merge(b)), state(b.merge(NgramCounts(2, 2, lower=True).add(first)))

    fast = [merged(p) for p in (False, True)]
    exact_only(monkeypatch)
    assert fast == [merged(p) for p in (False, True)]


def test_dicts_are_built_when_read_and_the_exact_path_takes_over():
    counts = NgramCounts(2, 2, lower=True).add(CAPS).add([["Dog", "CAT", "new"]], 4)
    assert counts._tables is not None and not counts._vocabulary   # no dict built yet
    again = pickle.loads(pickle.dumps(counts))
    assert again._tables is None and counts._tables is None
    assert list(again._raw) == list(dict.fromkeys(
        [t for d in CAPS for t in d] + ["Dog", "CAT", "new"]))
    assert list(again.vocabulary) == ["the", "cat", "sat", "dog", "new"]
    again.add([["NEW", "Fox"]], 5)                    # the exact path, after the dicts
    assert list(again.vocabulary) == ["the", "cat", "sat", "dog", "new", "fox"]


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("later", [[["x", "\ud800"]], [["a\x00b", "The"]], [["ÉTÉ", "été"]]])
def test_a_chunk_the_tables_refuse_hands_over_to_the_exact_path(monkeypatch, lower, later):
    def count():
        return NgramCounts(2, 2, lower=lower).add(CAPS).add(later, 4).add(LOWER, 5)

    fast = count()
    fast_state = state(fast)
    exact_only(monkeypatch)
    assert fast_state == state(count())


def test_collocations_on_lee_equal_the_exact_path(monkeypatch):
    """Lee's background corpus is ASCII: every chunk is numbered by the tables."""
    fit = Collocations("pmi", input="tokens").fit(LEE)
    tiny = Collocations("pmi", input="tokens", working_memory=0.05).fit(LEE)
    batches = Collocations("pmi", input="tokens").partial_fit(LEE[:100]).partial_fit(LEE[100:])
    exact_only(monkeypatch)
    ref = Collocations("pmi", input="tokens").fit(LEE)
    assert len(ref.scores_) > 1000
    for got in (fit, tiny, batches):
        assert got.scores_ == ref.scores_
        assert got.levels_[0][0].tolist() == ref.levels_[0][0].tolist()
        assert got.levels_[0][1].tolist() == ref.levels_[0][1].tolist()


@pytest.mark.parametrize("later", [[], [["x", "\ud800", "x"]], [["a\x00b", "the", "x"]]])
def test_two_pass_pair_counts_equal_the_dict_path_for_every_chunking(monkeypatch, later):
    """cooccurrence and PMIEmbedding count their terms by a table while every chunk can
    be numbered; a chunk it refuses hands over to a dict."""
    from nlpfeat.text import PMIEmbedding, cooccurrence
    from nlpfeat.text._counting import _token_table as _token_hash

    docs = LEE[:30] + later + LEE[30:60] + [["Abcdefghijk", "abcdefghijk", "x"]]

    def counted():
        out = []
        for working_memory in (0.01, 1, None):
            counts, vocabulary = cooccurrence(docs, window=3, min_count=2,
                                              working_memory=working_memory)
            out.append((list(vocabulary.items()), counts.toarray().tolist()))
        emb = PMIEmbedding(5, min_count=2, random_state=0, working_memory=0.01,
                           input="tokens").fit(docs)
        out.append((list(emb.vocabulary_.items()), emb.embeddings_.round(8).tolist()))
        return out

    fast = counted()
    monkeypatch.setattr(_token_hash, "table_ids", lambda table, chunk, lengths: None)
    assert counted() == fast


def test_a_token_too_long_for_a_row_is_refused(monkeypatch):
    from nlpfeat.text._counting import _token_table as _token_hash

    monkeypatch.setattr(_token_hash, "_MAX_LENGTH", 10)
    table = TokenTable()
    assert table.add("a\x00" + "b" * 11, 2) is None and table.n == 0
    assert table.add("a\x00" + "b" * 10, 2).tolist() == [0, 1]
