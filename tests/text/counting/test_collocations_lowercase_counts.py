"""Lowercased n-gram counts: each distinct raw token is lowercased once, and while
lowercasing changes no token the raw tokens are the terms (no second dictionary); the
counts are those of the lowercased documents whatever the chunks, merges or pickles."""
import pickle
from collections import Counter
from itertools import pairwise

import pytest

from nlpfeat.text import Collocations
from nlpfeat.text._counting._ngram_counts import NgramCounts, _lowercase


@pytest.mark.parametrize("tokens", [
    [], ["a"], ["new", "york", "1990s", "’s", "ß"], ["New"], ["york", "NEW"],
    ["οδος", "ΟΔΟΣ"], ["ας"], ["ΑΣ"], ["Σ"], ["i̇stanbul"], ["İstanbul"], ["ǅ"], ["ǆ"],
    ["ﬁ", "ª"], ["x", "ÿ", "Ÿ"], ["ab", "Cd", "ef", "GH", "z"], ["A"], ["a\0B", "c"],
    ["a\0b", "C"], ["", "A", ""], ["ab", "", "Z"]])
def test_lowercase_is_true_exactly_when_lower_changes_no_token(tokens):
    assert _lowercase(tokens) == all(t.lower() == t for t in tokens)


def brute_force(docs):
    pairs, words = Counter(), Counter()
    for doc in docs:
        doc = [w.lower() for w in doc]
        words.update(doc)
        pairs.update(pairwise(doc))
    return pairs, words


def counted(counts):
    table = counts.table(min_count=1)
    first, second = (table.terms[g].tolist() for g in table.grams)
    return dict(zip(zip(first, second), table.counts.tolist()))


DOCS = [["new", "york", "city"], ["the", "new", "york", "times"], ["the", "city"],
        ["The", "New", "York", "TIMES"], ["new", "Jersey"], ["jersey", "city", "the"]]


# capitals before the lowercase form, in one chunk or across chunks
CAPITALS_FIRST = [["The", "Cat", "sat"], ["the", "cat", "THE", "Dog"], ["dog", "the"],
                  ["SAT", "Sat", "sat", "cat"]]


@pytest.mark.parametrize("docs", [DOCS, CAPITALS_FIRST])
@pytest.mark.parametrize("split", [1, 2, 3, 4, 6])
def test_lowercase_tokens_then_changed_ones_give_the_lowercased_counts(split, docs):
    """The first chunks hold lowercase tokens only (the raw tokens are the terms); a
    later one brings capitals of terms seen before and of new terms."""
    counts = NgramCounts(2, 2, lower=True)
    for k in range(0, len(docs), split):
        counts.add(docs[k:k + split], k)
    pairs, words = brute_force(docs)
    assert counted(counts) == dict(pairs)
    table = counts.table(min_count=1)                     # words in order of first use
    assert table.terms.tolist() == list(dict.fromkeys(w.lower() for doc in docs for w in doc))
    assert list(counts.vocabulary) == list(dict.fromkeys(
        w.lower() for doc in docs for w in doc))          # in order of first appearance
    freq = dict(zip(counts.vocabulary, counts.freq[list(counts.vocabulary.values())].tolist()))
    assert sum(freq.values()) == counts.n_tokens
    assert freq == dict(words)
    assert counts.n_terms == len(words)


@pytest.mark.parametrize("cut", [2, 3, 5])
def test_merges_and_pickles_of_lowercase_counts_add_up(cut):
    left = NgramCounts(2, 2, lower=True).add(DOCS[:cut])
    right = NgramCounts(2, 2, lower=True).add(DOCS[cut:])
    left = pickle.loads(pickle.dumps(left))
    merged = left.merge(right)
    merged.add([["New", "jersey", "CITY"], ["newark"]])
    pairs, _ = brute_force(DOCS + [["New", "jersey", "CITY"], ["newark"]])
    assert counted(merged) == dict(pairs)
    assert len(merged.vocabulary) == len({w.lower() for doc in DOCS for w in doc} | {"newark"})


def test_a_lowercase_corpus_fits_as_its_capitalised_copy_lowercased():
    docs = [doc for doc in DOCS if all(w.islower() for w in doc)] * 3
    shouted = [[w.upper() for w in doc] for doc in docs]
    a = Collocations("pmi", min_count=2, input="tokens", working_memory=1e-6).fit(docs)
    b = Collocations("pmi", min_count=2, input="tokens").fit(shouted)
    assert a.scores_ == b.scores_ and a.scores_
