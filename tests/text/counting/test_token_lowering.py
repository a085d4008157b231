"""Tokens lowered one by one (``token_spans(lower_tokens=True)``, then ``str.lower`` of each
token) equal the tokens of the document lowered whole, on any text: the code points for
which they would differ send their document through ``str.lower`` first."""
import sys

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from nlpfeat.text._counting._compiled_tokens import (lowered_whole, plain_word_classes,
                                                     token_spans, tokens_of, word_classes)

TRICKY = "ΣΟΦΙΑ ΟΔΟΣ. Σ'Α İstanbul ǅemal ẞ K\u212a Ⅻ ⓐⒶ 𐐀𐐨 ᾈ ﬀ Ω \u0345 中文 ab_C٣"
texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)
mixed = st.lists(st.sampled_from(TRICKY.split() + [" ", ".", "'", "x", "\u0301", "Ab"]),
                 max_size=10).map("".join)


def lowered_one_by_one(docs, ideographs):
    spans = token_spans(docs, lower_tokens=True, ideographs=ideographs)
    return [[t.lower() for t in doc] for doc in tokens_of(*spans)]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(texts, mixed), min_size=1, max_size=5), st.booleans())
def test_tokens_lowered_one_by_one_equal_the_document_lowered(docs, ideographs):
    expected = tokens_of(*token_spans([d.lower() for d in docs], lowercase=False,
                                      ideographs=ideographs))
    assert lowered_one_by_one(docs, ideographs) == expected


def test_every_code_point_outside_the_table_lowers_to_one_of_its_class():
    whole, words, plain = lowered_whole(), word_classes(), plain_word_classes()
    assert whole[0x3A3] and whole[0x130]                         # Σ (final sigma), İ
    for c in range(sys.maxunicode + 1):
        char = chr(c)
        lowered = char.lower()
        assert lowered.lower() == lowered                 # a lowered token lowers to itself
        if lowered != char and not whole[c]:
            assert len(lowered) == 1
            assert words[ord(lowered)] == words[c] and plain[ord(lowered)] == plain[c]


def test_documents_lowered_whole_only_where_needed():
    docs = ["ΟΔΟΣ.Α and CAFÉ", "CAFÉ Bar", "plain ASCII"]
    buffer, starts, ends, _ = token_spans(docs, lower_tokens=True)
    assert lowered_one_by_one(docs, True) == [["οδοσ", "and", "café"], ["café", "bar"],
                                              ["plain", "ascii"]]
    data = buffer.tobytes()
    assert "CAFÉ".lower().encode() in data and b"caf\xc3\x89" in data   # 2nd: raw É kept
    assert np.all(ends > starts)
