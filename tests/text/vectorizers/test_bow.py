"""BagOfWords: parity with scikit-learn's CountVectorizer on real corpora, options, errors."""
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.preprocessing import normalize

from nlpfeat.datasets import load_lee, load_wiki_sample
from nlpfeat.text import BagOfWords, PositionalBagOfWords, TfidfVectorizer


@pytest.fixture(scope="module")
def lee():
    return load_lee().background


@pytest.fixture(scope="module")
def wiki():
    return load_wiki_sample().data


SETTINGS = [
    {},
    dict(ngram_range=(1, 2)),
    dict(ngram_range=(2, 3), min_df=2),
    dict(analyzer="char", ngram_range=(2, 4)),
    dict(analyzer="char_wb", ngram_range=(1, 3)),
    dict(min_df=2, max_df=0.5),
    dict(min_df=0.01, max_df=20),
    dict(max_features=100, ngram_range=(1, 3)),
    dict(binary=True, max_features=50),
    dict(lowercase=False, stop_words="english"),
    dict(token_pattern=r"(?u)\b\w+\b"),
]


def _assert_same_as_sklearn(docs, kwargs):
    ours = BagOfWords(**kwargs)
    X = ours.fit_transform(docs)
    ref = CountVectorizer(**kwargs)
    expected = ref.fit_transform(docs)
    np.testing.assert_array_equal(ours.get_feature_names_out(), ref.get_feature_names_out())
    assert ours.vocabulary_ == ref.vocabulary_
    assert sp.isspmatrix_csr(X) and X.dtype == expected.dtype == np.int64
    assert (X != expected).nnz == 0


@pytest.mark.parametrize("kwargs", SETTINGS)
def test_equals_sklearn_on_lee(lee, kwargs):
    char = kwargs.get("analyzer", "word") != "word"
    _assert_same_as_sklearn(lee[:60] if char else lee, kwargs)  # char n-grams: a slice is enough


@pytest.mark.parametrize(
    "kwargs", [{}, dict(ngram_range=(1, 2)), dict(min_df=2, max_df=0.5), SETTINGS[7], SETTINGS[8]]
)
def test_equals_sklearn_on_wikipedia_sample(wiki, kwargs):
    _assert_same_as_sklearn(wiki if not kwargs else wiki[:25], kwargs)  # all 250 for defaults


def test_transform_unseen_documents_equals_sklearn(lee):
    test_docs = load_lee().test
    ours = BagOfWords(ngram_range=(1, 2), min_df=2).fit(lee)
    ref = CountVectorizer(ngram_range=(1, 2), min_df=2).fit(lee)
    assert (ours.transform(test_docs) != ref.transform(test_docs)).nnz == 0


@pytest.mark.parametrize("norm", ["l1", "l2"])
def test_norm(lee, norm):
    X = BagOfWords(norm=norm).fit_transform(lee[:50])
    expected = normalize(CountVectorizer().fit_transform(lee[:50]).astype(np.float64), norm=norm)
    assert X.dtype == np.float64
    np.testing.assert_allclose(X.toarray(), expected.toarray(), rtol=0, atol=1e-12)
    row_sums = np.asarray(abs(X).sum(axis=1)).ravel() if norm == "l1" else sp.linalg.norm(X, axis=1)
    np.testing.assert_allclose(row_sums, 1.0)


def test_dtype_and_binary():
    docs = ["a a a bb", "bb cc"]
    X = BagOfWords(dtype=np.float32, binary=True).fit_transform(docs)
    assert X.dtype == np.float32
    np.testing.assert_array_equal(X.toarray(), [[1, 0], [1, 1]])  # "a" is one character: no token
    assert BagOfWords(norm="l1", dtype=np.int32).fit_transform(docs).dtype == np.float64


def test_fixed_vocabulary():
    bow = BagOfWords(vocabulary=["zebra", "cat"]).fit(["cat cat dog"])
    assert bow.fixed_vocabulary_ and bow.vocabulary_ == {"zebra": 0, "cat": 1}
    np.testing.assert_array_equal(bow.transform(["cat dog cat zebra"]).toarray(), [[1, 2]])
    np.testing.assert_array_equal(bow.get_feature_names_out(), ["zebra", "cat"])
    with pytest.raises(ValueError, match="'cat' more than once"):
        BagOfWords(vocabulary=["cat", "cat"]).fit(["cat"])


def test_mixed_chinese_english():
    bow = BagOfWords().fit(["我爱NLP和machine learning"])
    assert sorted(bow.vocabulary_) == sorted(["我", "爱", "nlp", "和", "machine", "learning"])


def test_jieba_tokenizer_words():
    jieba = pytest.importorskip("jieba")
    text = "我爱自然语言处理和machine learning"
    bow = BagOfWords(tokenizer="jieba").fit([text])
    assert set(bow.vocabulary_) == {w.lower() for w in jieba.lcut(text) if w.strip()}


def test_chinese_stop_words():
    bow = BagOfWords(stop_words="chinese").fit(["这是一个好人", "我的猫和你的狗"])
    assert "的" not in bow.vocabulary_ and "和" not in bow.vocabulary_ and "猫" in bow.vocabulary_


def test_stemmer_merges_inflections():
    bow = BagOfWords(stemmer="porter").fit(["running runs ran", "cats cat"])
    assert set(bow.vocabulary_) == {"run", "ran", "cat"}
    np.testing.assert_array_equal(bow.transform(["runs cat"]).toarray(), [[1, 0, 1]])


def test_input_filename_latin1(tmp_path):
    paths = []
    for i, text in enumerate(["price \xa35", "cost \xa36"]):
        path = tmp_path / f"{i}.txt"
        path.write_bytes(text.encode("latin-1"))
        paths.append(str(path))
    bow = BagOfWords(input="filename", encoding="latin-1", token_pattern=r"\S+").fit(paths)
    assert "\xa35" in bow.vocabulary_
    with pytest.raises(UnicodeDecodeError, match="document 0"):
        BagOfWords(input="filename").fit(paths)
    assert "\ufffd5" in BagOfWords(input="filename", decode_error="replace",
                                   token_pattern=r"\S+").fit(paths).vocabulary_


# --- bad input: clear errors of our own ---------------------------------------------------

@pytest.mark.parametrize("Est", [BagOfWords, PositionalBagOfWords, TfidfVectorizer])
def test_dataframe_names_the_text_column(Est):
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"text": ["the cat sat", "the dog ran"], "label": [0, 1]})
    with pytest.raises(TypeError,
                       match=r"DataFrame with columns \['text', 'label'\].*df\['text'\]"):
        Est().fit(frame)
    fitted = Est().fit(frame["text"])
    with pytest.raises(TypeError, match=r"pass the text column, e.g. df\['text'\]"):
        fitted.transform(frame)


def test_unknown_encoding():
    with pytest.raises(ValueError, match="encoding='utf-9' is not a known text encoding"):
        BagOfWords(encoding="utf-9").fit([b"the cat"])


def test_missing_file(tmp_path):
    (tmp_path / "a.txt").write_text("the cat")
    with pytest.raises(FileNotFoundError, match="Document 1: no file named .*pass input='content'"):
        BagOfWords(input="filename").fit([tmp_path / "a.txt", tmp_path / "missing.txt"])


@pytest.mark.parametrize("option", ["tokenizer", "analyzer", "preprocessor"])
def test_callable_returning_none(option):
    def forgot_return(doc):
        doc.split()

    with pytest.raises(TypeError, match=f"The {option} 'forgot_return' returned NoneType"):
        BagOfWords(**{option: forgot_return}).fit(["the cat"])


def test_bad_dtype():
    with pytest.raises(ValueError, match="dtype='nope' is not a numpy dtype"):
        BagOfWords(dtype="nope").fit(["the cat"])


def test_fixed_vocabulary_ignores_pruning_with_a_warning():
    with pytest.warns(UserWarning, match="The parameter 'min_df' will not be used since "
                                         "'vocabulary' is fixed"):
        X = BagOfWords(vocabulary=["cat", "dog"], min_df=2).fit_transform(["cat", "dog"])
    np.testing.assert_array_equal(X.toarray(), [[1, 0], [0, 1]])


@pytest.mark.parametrize("norm", [None, "l1", "l2"])
def test_empty_transform_has_zero_rows(norm):
    bow = BagOfWords(norm=norm).fit(["the cat sat"])
    X = bow.transform([])
    assert X.shape == (0, 3) and X.format == "csr"
    assert bow.inverse_transform(X) == []


def test_strip_accents_and_preprocessor_params():
    docs = ["Café crème", "CAFÉ"]
    assert BagOfWords(strip_accents="unicode").fit(docs).get_feature_names_out().tolist() == [
        "cafe", "creme"]
    bow = BagOfWords(preprocessor=str.upper, strip_accents="ascii")
    with pytest.warns(UserWarning, match="'strip_accents' will not be used since 'preprocessor'"):
        bow.fit(docs)
    assert bow.get_feature_names_out().tolist() == ["CAFÉ", "CRÈME"]
    tokens = BagOfWords(input="tokens", strip_accents="ascii").fit([["Café", "x"]])
    assert tokens.get_feature_names_out().tolist() == ["cafe", "x"]


def test_decode_reads_like_fit(tmp_path):
    path = tmp_path / "doc.txt"
    path.write_bytes("£5 café".encode("latin-1"))
    bow = BagOfWords(input="filename", encoding="latin-1")
    assert bow.decode(path) == "£5 café"
    assert bow.fit([path]).get_feature_names_out().tolist() == ["café"]
    assert BagOfWords().decode(b"caf\xc3\xa9") == "café"
