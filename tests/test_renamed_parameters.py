"""Renamed public parameters (nlpfeat/_deprecation.py): for one release the old name still
works, warns with a FutureWarning naming the new one, gives the same result, survives
``get_params`` / ``set_params`` / ``clone``; passing both names is an error."""
import warnings

import numpy as np
import pytest
from sklearn.base import clone

from nlpfeat._deprecation import DEPRECATED, renamed_value
from nlpfeat.text import (
    ExplicitSemanticAnalysis,
    LocallyWeightedBagOfWords,
    PMIEmbedding,
    SemanticUnitBagOfWords,
    TopicModel,
    cooccurrence,
)

DOCS = ["the cat sat on the mat", "the dog sat on the rug", "a cat and a dog",
        "the mat and the rug", "a dog on a mat"]
VECTORS = {"cat": [1.0, 0.1], "dog": [0.9, 0.0], "mat": [0.0, 1.0], "rug": [0.1, 0.9],
           "sat": [0.5, 0.5]}


def _esa(est):
    return est.fit(DOCS).transform(DOCS[:2]).toarray()


def _units(est):
    X = est.fit_transform(DOCS)
    return X.toarray(), est.get_feature_names_out().tolist()


def _pmi(est):
    return np.abs(est.fit(DOCS).embeddings_)


def _lowbow(est):
    X = est.fit_transform(DOCS)
    return X.toarray(), est.get_feature_names_out().tolist()


# (estimator class, fixed parameters, old name, new name, value, result of a fitted copy)
CASES = {
    "esa-top_k": (ExplicitSemanticAnalysis, {}, "top_k", "topn", 2, _esa),
    "units-n_top_words": (SemanticUnitBagOfWords, {"embeddings": VECTORS, "n_units": 2,
                                                 "random_state": 0},
                          "n_top_words", "topn", 1, _units),
    "units-embedding": (SemanticUnitBagOfWords, {"n_units": 2, "random_state": 0}, "embedding", "embeddings",
                        VECTORS, _units),
    "pmi-weighting": (PMIEmbedding, {"n_components": 2, "window": 2, "min_count": 1,
                                     "random_state": 0},
                      "weighting", "context_weighting", "harmonic", _pmi),
    "lowbow-pooling": (LocallyWeightedBagOfWords, {"n_positions": 2}, "pooling", "combine",
                       "mean", _lowbow),
}


def _same(a, b):
    for x, y in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


@pytest.mark.parametrize("case", CASES)
def test_old_name_warns_and_gives_the_new_names_result(case):
    cls, fixed, old, new, value, result = CASES[case]
    expected = result(cls(**fixed, **{new: value}))
    with pytest.warns(FutureWarning, match=f"'{old}' was renamed '{new}'"):
        got = result(cls(**fixed, **{old: value}))
    _same(got, expected)


@pytest.mark.parametrize("case", CASES)
def test_both_names_survive_get_params_set_params_and_clone(case):
    cls, fixed, old, new, value, result = CASES[case]
    est = cls(**fixed)
    params = est.get_params(deep=False)
    assert params[old] == DEPRECATED and new in params
    est.set_params(**{old: value})
    copy = clone(est)
    assert copy.get_params(deep=False)[old] == value
    with pytest.warns(FutureWarning, match=new):
        _same(result(copy), result(cls(**fixed, **{new: value})))


@pytest.mark.parametrize("case", CASES)
def test_both_names_is_an_error(case):
    cls, fixed, old, new, value, result = CASES[case]
    other = {"top_k": 3, "n_top_words": 2, "embedding": {"cat": [1.0]},
             "weighting": "uniform", "pooling": "concat"}[old]
    if other == cls().get_params()[new]:         # the new name's default: cannot be told apart
        other = "harmonic" if old == "weighting" else "mean"
    with pytest.raises(ValueError, match=f"both {old}=.* and {new}="):
        result(cls(**fixed, **{old: value, new: other}))


def test_old_name_is_validated_like_the_new_one():
    with pytest.raises(ValueError, match="'top_k' parameter"):
        ExplicitSemanticAnalysis(top_k=0).fit(DOCS)


def test_cooccurrence_weighting():
    expected, vocabulary = cooccurrence(DOCS, 2, context_weighting="harmonic")
    with pytest.warns(FutureWarning, match="'weighting' was renamed 'context_weighting'"):
        got, got_vocabulary = cooccurrence(DOCS, 2, weighting="harmonic")
    assert got_vocabulary == vocabulary
    np.testing.assert_array_equal(got.toarray(), expected.toarray())
    with pytest.raises(ValueError, match="both weighting="):
        cooccurrence(DOCS, 2, weighting="harmonic", context_weighting="harmonic")


def test_top_words_n():
    docs = [doc.split() for doc in DOCS]
    tm = TopicModel(n_components=2, method="nmf", backend="sklearn", random_state=0).fit(docs)
    with pytest.warns(FutureWarning, match="'n' was renamed 'topn'"):
        assert tm.top_words(n=2) == tm.top_words(topn=2) == tm.top_words(2)


def test_plot_topics_n_words():
    pytest.importorskip("matplotlib")
    from nlpfeat.viz import plot_topics

    docs = [doc.split() for doc in DOCS]
    tm = TopicModel(n_components=2, method="nmf", backend="sklearn", random_state=0).fit(docs)
    with pytest.warns(FutureWarning, match="'n_words' was renamed 'topn'"):
        fig = plot_topics(tm, n_words=3)
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == tm.top_words(3)[0]


def test_semantic_units_embedding_attribute():
    est = SemanticUnitBagOfWords(PMIEmbedding(n_components=2, window=2, min_count=1,
                                              random_state=0), n_units=2).fit(DOCS)
    with pytest.warns(FutureWarning, match="embeddings_estimator_"):
        assert est.embedding_ is est.embeddings_estimator_


def test_renamed_value_without_the_old_name_is_silent():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert renamed_value(DEPRECATED, 3, old="a", new="b", default=1, owner="f") == 3


def test_topn_set_after_fit_applies_to_transform_as_before():
    """ESA's count and the unit names read ``topn`` when used, as ``top_k`` was."""
    esa = ExplicitSemanticAnalysis(topn=3).fit(DOCS)
    assert esa.set_params(topn=1).transform(DOCS[:2]).getnnz(axis=1).max() == 1
    units = SemanticUnitBagOfWords(VECTORS, n_units=2, topn=3, random_state=0).fit(DOCS)
    assert all(name.count("/") == 0 for name in units.set_params(topn=1)
               .get_feature_names_out())
