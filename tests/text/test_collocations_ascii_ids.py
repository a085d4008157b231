"""The compiled numbering of a first ASCII chunk of lowercased counts (_token_hash): the
same ids, terms, counts, vocabulary and scores as the exact path (a dict lookup per
token), whatever the hashes' collisions, chunks, merges, batches or pickles; every input
it cannot number exactly is left to the exact path."""
import pickle
import random
import string

import numpy as np
import pytest

from nlpfeat.datasets import load_lee
from nlpfeat.text import Collocations, _ngram_counts
from nlpfeat.text._ngram_counts import NgramCounts
from nlpfeat.text._token_hash import ascii_lower_ids, decode_spans


def reference(docs):
    """(raw ids, distinct raw tokens, first raw id of each lowercase form, lowered)."""
    raw, lower_first = {}, {}
    ids = [raw.setdefault(t, len(raw)) for doc in docs for t in doc]
    terms = [lower_first.setdefault(t.lower(), i) for i, t in enumerate(raw)]
    return ids, list(raw), terms, [t.lower() for t in raw]


def lengths_of(docs):
    return np.array([len(d) for d in docs], dtype=np.int64)


def random_docs(seed, n_docs=40, alphabet=string.ascii_letters[:6] + "Zz-", max_len=4):
    rng = random.Random(seed)
    return [["".join(rng.choice(alphabet) for _ in range(rng.randint(0, max_len)))
             for _ in range(rng.randint(0, 30))] for _ in range(n_docs)]


CASES = [
    [["A", "b"], [], ["a", "b", "A"]],
    [[""], ["", ""], [], ["a", ""]],                   # empty tokens and documents
    [["", "A"]], [["x"]], [[], ["Ab", "aB", "AB", "ab", "abc", "ABC"]],
    [["New", "York"], ["new", "york", "NEW"], ["NEWS", "new", "ne", "New"]],
    [["@", "[", "`", "{", "A", "Z", "a", "z"]],        # the ASCII bytes around A-Z, a-z
]


@pytest.mark.parametrize("hash_mask", [2**64 - 1, 0, 1, 3, 0xFF])
@pytest.mark.parametrize("docs", CASES + [random_docs(s) for s in range(4)])
def test_ids_and_terms_are_exact_whatever_the_hash_collisions(docs, hash_mask):
    """With 0, 1, 2 or 8 bits of hash every token collides with many others: only the
    byte-for-byte check of a table hit tells them apart."""
    ids, raw, terms, lowered = ascii_lower_ids(docs, lengths_of(docs), hash_mask)
    ref_ids, ref_raw, ref_terms, ref_lowered = reference(docs)
    assert ids.tolist() == ref_ids
    assert decode_spans(raw) == ref_raw
    assert lowered == ref_lowered
    if terms is None:
        assert ref_terms == list(range(len(ref_raw)))
        assert ref_lowered == ref_raw
    else:
        assert terms.tolist() == ref_terms


def test_many_distinct_tokens_grow_the_tables():
    """More distinct tokens than the first tables' 1024 slots, with 12 bits of hash."""
    rng = random.Random(5)
    docs = [["".join(rng.choice("aAbB") for _ in range(rng.randint(1, 9)))
             for _ in range(300)] for _ in range(30)]
    for mask in (2**64 - 1, 0xFFF):
        ids, raw, terms, lowered = ascii_lower_ids(docs, lengths_of(docs), mask)
        ref = reference(docs)
        assert len(ref[1]) > 2048
        assert (ids.tolist(), decode_spans(raw), terms.tolist(), lowered) == ref


@pytest.mark.parametrize("docs", [
    [["a\0b", "c"]], [["a", "\0"]], [["\0"]],         # a token holds the separator
    [["a"], ["\ud800"]], [["é", "\udcff"]],           # a lone surrogate
    [["a", 1]], [["a", None]], [[b"a"]],             # not a str
    [[], []], [],                                     # no token
])
def test_inputs_it_cannot_number_exactly_are_left_to_the_exact_path(docs):
    assert ascii_lower_ids(docs, lengths_of(docs)) is None


@pytest.mark.parametrize("hash_mask", [2**64 - 1, 0, 3])
@pytest.mark.parametrize("docs", [
    [["café", "Café", "CAFÉ"], ["café", "x"]], [["ǅ", "ǆ", "Ǆ", ""], [], ["ǅ"]],
    [["İstanbul", "i̇stanbul", "ΟΔΟΣ", "οδος"]], [["a", "é"], ["e", "A", "é", "ée"]],
    [["ß", "SS", "ss"], ["é"]]])
def test_beyond_ascii_the_raw_ids_are_exact_and_lowercasing_is_left_to_str_lower(
        docs, hash_mask):
    ids, raw, terms, lowered = ascii_lower_ids(docs, lengths_of(docs), hash_mask)
    ref_ids, ref_raw, _, _ = reference(docs)
    assert (ids.tolist(), raw, terms, lowered) == (ref_ids, ref_raw, None, None)


def exact_only(monkeypatch):
    monkeypatch.setattr(_ngram_counts.NgramCounts, "_first_ids", lambda *args: (None, None))


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
                                  [["ΟΔΟΣ", "Σ", "ς"], ["οδος", "σ"]]])
@pytest.mark.parametrize("split", [1, 2, 3, 100])
@pytest.mark.parametrize("order", [2, 3])
def test_counts_equal_the_exact_path_for_every_chunking(monkeypatch, docs, split, order):
    def count():
        counts = NgramCounts(order, 2, lower=True, max_key=2**63)
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


def test_pending_dicts_are_built_before_the_next_chunk_and_pickle():
    counts = NgramCounts(2, 2, lower=True).add(CAPS)
    assert counts._pending is not None                # a fit of one chunk builds no dict
    again = pickle.loads(pickle.dumps(counts))
    assert again._pending is None and counts._pending is None
    assert list(again._raw) == list(dict.fromkeys(t for d in CAPS for t in d))
    assert list(again.vocabulary) == list(dict.fromkeys(t.lower() for d in CAPS for t in d))
    more = NgramCounts(2, 2, lower=True).add(CAPS).add([["Dog", "CAT", "new"]], 4)
    assert list(more.vocabulary) == ["the", "cat", "sat", "dog", "new"]


def test_collocations_on_lee_equal_the_exact_path(monkeypatch):
    """Lee's background corpus is ASCII: the default fit numbers its one chunk compiled."""
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
