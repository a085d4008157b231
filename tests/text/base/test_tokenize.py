"""Tokenizers, stop words, stemmers and document iteration (the shared text API)."""
import io
import pickle
import re
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, CountVectorizer

from nlpfeat.datasets import load_lee, load_wiki_sample
from nlpfeat.text._base._documents import check_corpus_nonempty, iter_documents
from nlpfeat.text._base._tokenize import get_stemmer, get_stop_words, get_tokenizer

MIXED = "我爱NLP和machine learning"


def test_default_tokenizer_mixed_text():
    assert get_tokenizer()(MIXED.lower()) == ["我", "爱", "nlp", "和", "machine", "learning"]


def test_none_is_the_default_tokenizer():
    """scikit-learn spells the default tokenizer None."""
    assert get_tokenizer(None)(MIXED) == get_tokenizer("regexp")(MIXED)
    assert get_tokenizer(None, r"\w+")("a bc") == ["a", "bc"]


@pytest.mark.parametrize(
    "loader", [lambda: load_lee().background, lambda: load_wiki_sample().data[:40]]
)
def test_default_tokenizer_equals_sklearn_on_english(loader):
    sk = re.compile(r"(?u)\b\w\w+\b").findall
    ours = get_tokenizer()
    for doc in loader():
        assert ours(doc) == sk(doc)


@pytest.mark.parametrize("text", ["a b c", "x1 _y z_ é", "l'été 2026, n°5", "ab\tcd\n ef", "Ωμέγα ok"])
def test_default_tokenizer_matches_sklearn_without_ideographs(text):
    assert get_tokenizer()(text) == CountVectorizer().build_tokenizer()(text)


def test_ideographs_split_but_kana_runs_stay_words():
    assert get_tokenizer()("日本語テキスト ok") == ["日", "本", "語", "テキスト", "ok"]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab_1 .-\t\néß我爱テ", max_size=30))
def test_default_tokenizer_fast_path_is_the_pattern(text):
    """Property: the ASCII fast path finds what the documented pattern finds, and on text
    without ideographs both equal scikit-learn's default token_pattern."""
    from nlpfeat.text._base._tokenize import DEFAULT_TOKEN_PATTERN

    tokens = get_tokenizer()(text)
    assert tokens == re.findall(DEFAULT_TOKEN_PATTERN, text)
    if not re.search("[我爱]", text):
        assert tokens == re.findall(r"(?u)\b\w\w+\b", text)


def test_each_ideograph_is_a_token():
    assert get_tokenizer()("这是一个好人") == list("这是一个好人")


def test_custom_token_pattern_capturing_group():
    assert get_tokenizer("regexp", r"(\w+)-x")("ab-x cd-x ef") == ["ab", "cd"]
    with pytest.raises(ValueError, match="capturing groups"):
        get_tokenizer("regexp", r"(a)(b)")
    with pytest.raises(ValueError, match="not a valid regular expression"):
        get_tokenizer("regexp", r"(")


@pytest.mark.parametrize(
    "name, text, expected",
    [
        ("treebank", "Don't stop.", ["Do", "n't", "stop", "."]),
        ("wordpunct", "Don't stop!", ["Don", "'", "t", "stop", "!"]),
        ("whitespace", " a  b\tc ", ["a", "b", "c"]),
        ("char", "ab c", ["a", "b", "c"]),
    ],
)
def test_named_tokenizers(name, text, expected):
    assert get_tokenizer(name)(text) == expected


def test_callable_tokenizer_is_used_as_given():
    fn = str.split
    assert get_tokenizer(fn) is fn


def test_unknown_tokenizer():
    with pytest.raises(ValueError, match="tokenizer='spacy' is not supported"):
        get_tokenizer("spacy")


def test_jieba_tokenizer():
    jieba = pytest.importorskip("jieba")
    expected = [w for w in jieba.lcut(MIXED) if not w.isspace()]
    assert get_tokenizer("jieba")(MIXED) == expected
    assert pickle.loads(pickle.dumps(get_tokenizer("jieba")))(MIXED) == expected
    assert "machine" in expected and " " not in expected


def test_jieba_missing_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "jieba", None)  # import jieba -> ImportError
    with pytest.raises(ImportError, match=r'pip install "nlpfeat\[zh\]"'):
        get_tokenizer("jieba")


def test_stop_words():
    assert get_stop_words(None) is None
    assert get_stop_words("english") == ENGLISH_STOP_WORDS
    zh = get_stop_words("chinese")
    assert len(zh) >= 200 and {"的", "了", "和", "是"} <= zh
    assert all(not w.startswith("#") and w == w.strip() for w in zh)
    assert get_stop_words(["a", "b"]) == frozenset({"a", "b"})
    with pytest.raises(ValueError, match="stop_words='french'"):
        get_stop_words("french")


def test_stemmers_match_nltk():
    from nltk.stem import PorterStemmer, SnowballStemmer

    words = ["running", "generously", "cats", "happiness", "relational", "running"]
    assert [get_stemmer("porter")(w) for w in words] == [PorterStemmer().stem(w) for w in words]
    snow = SnowballStemmer("english")
    assert [get_stemmer("snowball")(w) for w in words] == [snow.stem(w) for w in words]
    assert get_stemmer(str.upper)("ab") == "AB"
    assert get_stemmer(None) is None
    with pytest.raises(ValueError, match="stemmer='lancaster'"):
        get_stemmer("lancaster")


def test_iter_documents_content_bytes_and_encodings():
    docs = ["a", b"caf\xc3\xa9", bytearray(b"x")]
    assert list(iter_documents(docs)) == ["a", "café", "x"]
    assert list(iter_documents([b"\xa3 5"], encoding="latin-1")) == ["£ 5"]
    assert list(iter_documents([b"a\xa3"], decode_error="replace")) == ["a\ufffd"]
    assert list(iter_documents([b"a\xa3"], decode_error="ignore")) == ["a"]


def test_undecodable_bytes_name_the_document():
    with pytest.raises(UnicodeDecodeError, match="in document 1; pass the right encoding"):
        list(iter_documents(["ok", b"\xa3"]))


def test_iter_documents_filename_and_file(tmp_path):
    path = tmp_path / "doc.txt"
    path.write_bytes("Grüße".encode("utf-8"))
    assert list(iter_documents([str(path), path], input="filename")) == ["Grüße", "Grüße"]
    assert list(iter_documents([io.BytesIO(b"ab"), io.StringIO("cd")], input="file")) == ["ab", "cd"]
    with pytest.raises(TypeError, match="Document 0 is of type int"):
        list(iter_documents([3], input="file"))


def test_iter_documents_tokens():
    assert list(iter_documents([["a", "b"], ("c",)], input="tokens")) == [["a", "b"], ["c"]]
    with pytest.raises(TypeError, match="Document 1 is of type str"):
        list(iter_documents([["a"], "b c"], input="tokens"))
    with pytest.raises(TypeError, match="Document 0 holds a token of type int"):
        list(iter_documents([["a", 1]], input="tokens"))


@pytest.mark.parametrize("bad, type_name", [(None, "NoneType"), (float("nan"), "float"), (3, "int")])
def test_non_string_document_names_index_and_type(bad, type_name):
    with pytest.raises(TypeError, match=f"Document 2 is of type {type_name}"):
        list(iter_documents(["a", "b", bad]))


def test_iter_documents_rejects_a_single_string_and_non_iterables():
    with pytest.raises(ValueError, match="string object received"):
        iter_documents("one document")
    with pytest.raises(TypeError, match="Expected an iterable of documents"):
        iter_documents(42)
    with pytest.raises(ValueError, match="input='url'"):
        iter_documents(["a"], input="url")


def test_iter_documents_consumes_a_generator_once():
    gen = (d for d in ["a", "b"])
    assert list(iter_documents(gen)) == ["a", "b"]
    assert list(gen) == []


def test_check_corpus_nonempty():
    check_corpus_nonempty(1)
    with pytest.raises(ValueError, match="Empty corpus"):
        check_corpus_nonempty(0)


def test_char_and_jieba_drop_punctuation_unless_asked():
    import pickle

    from nlpfeat.text import get_tokenizer

    text = "今天天气很好，我们去公园吧！“好的”、3点见。"
    chars = get_tokenizer("char")(text)
    assert "，" not in chars and "！" not in chars and "“" not in chars and "3" in chars
    assert "，" in get_tokenizer("char", keep_punctuation=True)(text)
    for tok in (get_tokenizer("char"), get_tokenizer("char", keep_punctuation=True)):
        assert pickle.loads(pickle.dumps(tok))(text) == tok(text)
    pytest.importorskip("jieba")
    words = get_tokenizer("jieba")(text)
    assert "公园" in words and not {"，", "！", "、", "。", "“", "”"} & set(words)
    kept = get_tokenizer("jieba", keep_punctuation=True)
    assert "，" in kept(text)
    assert pickle.loads(pickle.dumps(kept))(text) == kept(text)


def test_chinese_stop_words_remove_punctuation_too():
    from nlpfeat.text import get_stop_words

    assert {"，", "。", "、", "！", "？"} <= get_stop_words("chinese")
