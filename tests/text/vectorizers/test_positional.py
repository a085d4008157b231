"""PositionalBagOfWords: feature names, position modes, n-grams, and agreement with BagOfWords."""
import math
import pickle
import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlpfeat.text import BagOfWords, PositionalBagOfWords
from nlpfeat.text._vectorizers._positional import position_values

CAT = "the fat cat sat on the mat"


def _names(**kwargs):
    return PositionalBagOfWords(**kwargs).fit([CAT]).get_feature_names_out().tolist()


def test_chinese_characters_with_positions():
    X = PositionalBagOfWords().fit_transform(["你好", "你们好"])
    names = PositionalBagOfWords().fit(["你好", "你们好"]).get_feature_names_out().tolist()
    assert names == ["0|你", "1|们", "1|好", "2|好"]
    np.testing.assert_array_equal(X.toarray(), [[1, 0, 1, 0], [1, 1, 0, 1]])


def test_absolute_and_from_end():
    assert set(_names()) == {"0|the", "1|fat", "2|cat", "3|sat", "4|on", "5|the", "6|mat"}
    assert set(_names(position="from_end")) == {"6|the", "5|fat", "4|cat", "3|sat", "2|on",
                                                "1|the", "0|mat"}


def test_relative_bins():
    names = set(_names(position="relative", n_bins=2))  # 7 tokens: k / 7 < 1/2 for k <= 3
    assert names == {"0|the", "0|fat", "0|cat", "0|sat", "1|on", "1|the", "1|mat"}


def test_log_bins():
    names = set(_names(position="log"))  # bins: 0 | 1-2 | 3-6
    assert names == {"0|the", "1|fat", "1|cat", "2|sat", "2|on", "2|the", "2|mat"}


def test_max_position_keeps_small_positions():
    assert set(_names(max_position=2)) == {"0|the", "1|fat"}
    assert set(_names(position="from_end", max_position=1)) == {"0|mat"}


def test_ngrams_positions_are_first_token():
    names = set(_names(ngram_range=(2, 2)))
    assert names == {"0|the fat", "1|fat cat", "2|cat sat", "3|sat on", "4|on the", "5|the mat"}
    assert "0|the mat" in _names(ngram_range=(2, 2), position="from_end")


def test_char_analyzer():
    names = PositionalBagOfWords(analyzer="char", ngram_range=(1, 2)).fit(["ab  c"]) \
        .get_feature_names_out().tolist()
    assert set(names) == {"0|a", "1|b", "2| ", "3|c", "0|ab", "1|b ", "2| c"}


@pytest.mark.parametrize("position", ["absolute", "from_end", "relative", "log"])
@pytest.mark.parametrize("n_units", [1, 2, 7, 33])
def test_position_values_formulae(position, n_units):
    n_bins = 4
    for n in (1, 2, 3):
        count = n_units - n + 1
        if count < 1:
            continue
        values = list(position_values(count, n_units, n, position, n_bins))
        expected = {
            "absolute": list(range(count)),
            "from_end": [n_units - n - k for k in range(count)],
            "relative": [math.floor(n_bins * k / n_units) for k in range(count)],
            "log": [math.floor(math.log2(k + 1)) for k in range(count)],
        }[position]
        assert values == expected
        if position == "relative":
            assert 0 <= min(values) and max(values) <= n_bins - 1


WORDS = st.lists(st.sampled_from(["aa", "bb", "cc", "dd", "ee"]), min_size=0, max_size=12)


@settings(max_examples=25, deadline=None)
@given(st.lists(WORDS.map(" ".join), min_size=1, max_size=6).filter(lambda d: any(x for x in d)),
       st.sampled_from(["absolute", "from_end", "relative", "log"]),
       st.sampled_from([(1, 1), (1, 2), (2, 3)]))
def test_summing_over_positions_gives_bag_of_words(docs, position, ngram_range):
    """Property: collapsing the positions of every feature recovers BagOfWords' counts."""
    bow = BagOfWords(ngram_range=ngram_range)
    pbow = PositionalBagOfWords(ngram_range=ngram_range, position=position)
    try:
        B = bow.fit_transform(docs).toarray()
    except ValueError:  # no n-gram long enough in any document
        with pytest.raises(ValueError, match="Empty vocabulary"):
            pbow.fit(docs)
        return
    P = pbow.fit_transform(docs)
    collapsed = np.zeros_like(B)
    for name, column in pbow.vocabulary_.items():
        term = re.sub(r"^\d+\|", "", name)
        collapsed[:, bow.vocabulary_[term]] += P[:, column].toarray().ravel()
    np.testing.assert_array_equal(collapsed, B)


def test_char_wb_is_rejected():
    with pytest.raises(ValueError, match="'analyzer' parameter"):
        PositionalBagOfWords(analyzer="char_wb").fit(["ab"])


def test_transform_ignores_unseen_positions():
    pbow = PositionalBagOfWords().fit(["a1 b2"])
    np.testing.assert_array_equal(pbow.transform(["b2 a1 a1"]).toarray(), [[0, 0]])
    np.testing.assert_array_equal(pbow.transform(["a1 c3"]).toarray(), [[1, 0]])


def test_sklearn_text_api():
    """strip_accents, preprocessor, a picklable analyzer that decodes, inverse_transform,
    a fixed vocabulary without fit, no set_output."""
    pbow = PositionalBagOfWords(strip_accents="unicode", max_position=2)
    analyze = pbow.build_analyzer()
    assert analyze("Café crème brûlée".encode("utf-8")) == ["0|cafe", "1|creme"]
    assert pickle.loads(pickle.dumps(analyze))("Élan vital") == ["0|elan", "1|vital"]
    X = pbow.fit_transform(["Café crème", "crème café"])
    assert [terms.tolist() for terms in pbow.inverse_transform(X)] == [
        ["0|cafe", "1|creme"], ["0|creme", "1|cafe"]]
    fixed = PositionalBagOfWords(vocabulary=["0|the", "1|cat"])
    np.testing.assert_array_equal(fixed.transform(["the cat", "cat"]).toarray(), [[1, 1], [0, 0]])
    assert not hasattr(fixed, "set_output")
    upper = PositionalBagOfWords(preprocessor=str.upper).fit(["the cat"])
    assert upper.get_feature_names_out().tolist() == ["0|THE", "1|CAT"]


def test_callable_analyzer_units_keep_ngram_range():
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        pbow = PositionalBagOfWords(analyzer=str.split, ngram_range=(2, 2)).fit(["a b c"])
    assert pbow.get_feature_names_out().tolist() == ["0|a b", "1|b c"]
    with pytest.warns(UserWarning, match="'preprocessor' will not be used since 'analyzer' is"):
        PositionalBagOfWords(analyzer=str.split, preprocessor=str.upper).fit(["a b"])


@pytest.mark.parametrize("norm", [None, "l2"])
def test_empty_transform_has_zero_rows(norm):
    pbow = PositionalBagOfWords(norm=norm).fit(["the cat sat"])
    assert pbow.transform([]).shape == (0, 3)
