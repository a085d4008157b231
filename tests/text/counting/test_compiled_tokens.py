"""The compiled default tokenizer (token_spans): the tokens of ``re`` with the default
pattern and the CJK rule, bit for bit, on any text; lowering as ``str.lower`` on the
whole document; lone surrogates refused."""
import re
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlpfeat.text._base._tokenize import DEFAULT_TOKEN_PATTERN, _default_tokenizer
from nlpfeat.text._counting._compiled_tokens import token_spans, tokens_of, word_classes

FINDALL = re.compile(DEFAULT_TOKEN_PATTERN).findall

#: Characters at the boundaries that matter: word / non-word, ideographs in and next to
#: the ideograph ranges, combining marks, digits and numbers of other scripts, "_",
#: letters whose lowercase is longer (İ) or depends on context (Σ), titlecase, apostrophes.
SPECIAL = ("aZ_09 \t\n.,'-\u0130\u03a3\u03c3\u0307\u0301\u0660\u0669\u0966\u00b2\u2167"
           "\u01c5\u00c9\u00e9\u00df\u1e9e\u3400\u4dbf\u4dc0\u4e00\u9fff\ua000\uf900\ufaff"
           "\ufb00\u3007\u3005\u30a2\uff21\U00020000\U0002ebef\U0002ebf0\U0002f800"
           "\U00030000\U0003134f\U00031350\U0001d400\U0001f600\u200d\u00ad\u2028")

text = st.text(st.one_of(st.sampled_from(SPECIAL),
                         st.characters(blacklist_categories=("Cs",))), max_size=40)


def spans_tokens(docs, **kwargs):
    return tokens_of(*token_spans(docs, **kwargs))


@settings(max_examples=100, deadline=None)
@given(st.lists(text, max_size=6), st.booleans())
def test_tokens_equal_re_findall_on_any_text(docs, lowercase):
    expected = [FINDALL(doc.lower() if lowercase else doc) for doc in docs]
    assert spans_tokens(docs, lowercase=lowercase) == expected


def check_code_points(code_points):
    """Each code point doubled, between spaces: a token exactly when re finds one."""
    doc = " ".join(chr(c) * 2 for c in code_points if not 0xD800 <= c < 0xE000)
    assert spans_tokens([doc], lowercase=False) == [FINDALL(doc)] == [_default_tokenizer(doc)]


def test_every_code_point_of_the_bmp_and_the_ideograph_planes_is_classed_as_re_does():
    check_code_points([*range(0x10000), *range(0x20000, 0x32000, 7)])


@pytest.mark.slow
def test_every_code_point_is_classed_as_re_classes_it():
    check_code_points(range(sys.maxunicode + 1))


def test_the_table_comes_from_re():
    classes = word_classes()
    assert classes.shape == (sys.maxunicode + 1,)
    word = re.compile(r"\w")
    for c in (ord("_"), 0x0660, 0x00B2, 0x0301, 0x4E00, 0x3400, 0x20000, 0x3007, 0x30A2):
        assert (classes[c] > 0) == bool(word.match(chr(c))) or classes[c] == 2, hex(c)


@pytest.mark.parametrize("doc", [
    "İstanbul", "ΟΔΟΣ'Α ΟΔΟΣ", "ΌΣΟΣ.", "ǅemal Ǆ", "STRASSE ẞ ß", "Ⅷx ⅧⅧ", "ÉCOLE école",
])
def test_lowering_is_str_lower_on_the_whole_document(doc):
    # İ lowers to i + U+0307 (not a word character); Σ lowers by its context
    assert spans_tokens([doc, doc.upper()]) == [FINDALL(doc.lower()),
                                                FINDALL(doc.upper().lower())]


def test_ascii_documents_lowered_in_place_others_by_the_preprocessor():
    seen = []

    def preprocess(doc):
        seen.append(doc)
        return doc.lower()

    assert spans_tokens(["AB cd", "ÀB cd"], preprocess=preprocess) == [["ab", "cd"],
                                                                      ["àb", "cd"]]
    assert seen == ["ÀB cd"]


def test_spans_layout():
    buffer, starts, ends, doc_offsets = token_spans(["", "a bc", "中文x"])
    assert doc_offsets.tolist() == [0, 0, 1, 3]
    assert buffer.tobytes() == "a bc中文x".encode()
    assert (starts.tolist(), ends.tolist()) == ([2, 4, 7], [4, 7, 10])
    assert buffer.base.dtype == np.uint64 and buffer.base.size * 8 >= len(buffer) + 8


def test_lone_surrogates_are_refused():
    assert token_spans(["fine", "a\udcff b"]) is None
    assert token_spans([]) is not None
