"""The fused scan (number_text) numbers exactly the tokens that token_spans finds, with
the ids TokenTable.add_spans gives them, across chunks, whatever the hash collisions,
the growth of the table mid-chunk (resumed at a token's start) and the batches."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlpfeat.text._counting._compiled_tokens import (plain_word_classes, scan_input,
                                                     token_spans, word_classes)
from nlpfeat.text._counting._scan_number import number_text
from nlpfeat.text._counting._token_table import TokenTable

SPECIAL = "aZb_09 .,'\u0130\u03a3\u00c9\u00e9\u00df\u4e00\u9fff\u3007\U00020000\u0301\u0660"
words = st.text(st.sampled_from(SPECIAL), max_size=12)
docs = st.lists(st.lists(words, max_size=8).map(" ".join), max_size=5)


def both(chunks, hash_mask, ideographs=True, **options):
    """(ids, doc_offsets) of each chunk by the fused scan and by spans + add_spans, and
    the two tables' strings."""
    classes = word_classes() if ideographs else plain_word_classes()
    fused, spans = TokenTable(hash_mask), TokenTable(hash_mask)
    got, expected = [], []
    for chunk in chunks:
        ids, offsets = number_text(fused, *scan_input(chunk, **options), classes)
        got.append((ids.tolist(), offsets.tolist()))
        buffer, starts, ends, offsets = token_spans(chunk, ideographs=ideographs, **options)
        expected.append((spans.add_spans(buffer, starts, ends).tolist(), offsets.tolist()))
    return got, expected, fused.strings(), spans.strings()


@settings(max_examples=60, deadline=None)
@given(st.lists(docs, max_size=4), st.sampled_from([2**64 - 1, 0, 3]), st.booleans(),
       st.booleans(), st.booleans())
def test_fused_scan_equals_spans_then_numbering(chunks, hash_mask, lowercase, lower_tokens,
                                                ideographs):
    got, expected, fused, spans = both(chunks, hash_mask, ideographs, lowercase=lowercase,
                                       lower_tokens=lower_tokens)
    assert got == expected
    assert fused == spans


@pytest.mark.parametrize("hash_mask", [2**64 - 1, 0xFF])
def test_table_grown_mid_chunk_gives_the_same_ids(hash_mask):
    """Over 4096 new tokens in a chunk and long tokens: the scan stops and resumes."""
    rng = np.random.default_rng(0)
    vocab = [f"w{i}" for i in range(6000)] + ["x" * n + "Y" for n in range(9, 400, 7)]
    chunks = [[" ".join(rng.choice(vocab, 400)) for _ in range(20)] for _ in range(3)]
    chunks[1].insert(5, "")
    got, expected, fused, spans = both(chunks, hash_mask)
    assert got == expected
    assert fused == spans
