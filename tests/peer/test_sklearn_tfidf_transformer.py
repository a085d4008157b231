"""TermWeighting against scikit-learn's TfidfTransformer: the TfidfTransformer behaviours of
scikit-learn's ``sklearn/feature_extraction/tests/test_text.py`` (named in each docstring),
compared with scikit-learn's output. TermWeighting's default weighting is
TfidfTransformer's; its other weightings are checked against gensim elsewhere."""
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer, TfidfTransformer

from nlpfeat.text import TermWeighting

JUNK = (
    "the pizza pizza beer copyright",
    "the pizza burger beer copyright",
    "the the pizza beer beer copyright",
    "the burger beer beer copyright",
    "the coke burger coke copyright",
    "the coke burger burger",
)
FULL = np.array([[1, 1, 1], [1, 1, 0], [1, 0, 0]])
WITH_ZERO_COLUMN = np.array([[1, 1, 0], [1, 1, 0], [1, 0, 0]])


def _dense(X):
    return X.toarray() if sp.issparse(X) else np.asarray(X)


@pytest.fixture(scope="module")
def counts():
    return CountVectorizer().fit_transform(JUNK)


def test_feature_names_out():
    """test_tf_transformer_feature_names_out."""
    names = TermWeighting().fit(FULL).get_feature_names_out(["a", "c", "b"])
    np.testing.assert_array_equal(names, ["a", "c", "b"])


@pytest.mark.parametrize("X", [FULL, WITH_ZERO_COLUMN])
def test_smoothed_idf(X):
    """test_tf_idf_smoothing: non-negative, unit rows, robust to an all-zero column."""
    ours = _dense(TermWeighting(smooth_idf=True).fit_transform(X))
    assert (ours >= 0).all()
    np.testing.assert_allclose((ours**2).sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(ours, _dense(TfidfTransformer().fit_transform(X)), atol=1e-15)


def test_unsmoothed_idf():
    """test_tfidf_no_smoothing: an all-zero column divides by zero (a RuntimeWarning, an
    infinite idf, as in scikit-learn); a row that holds it is an error naming the column."""
    ours = _dense(TermWeighting(smooth_idf=False).fit_transform(FULL))
    assert (ours >= 0).all()
    np.testing.assert_allclose((ours**2).sum(axis=1), 1.0, rtol=1e-12)
    with pytest.warns(RuntimeWarning, match="divide by zero"):
        theirs = TfidfTransformer(smooth_idf=False).fit(WITH_ZERO_COLUMN)
    ours = TermWeighting(smooth_idf=False)
    with pytest.warns(RuntimeWarning, match="divide by zero .*column 2"):
        X = ours.fit_transform(WITH_ZERO_COLUMN)
    np.testing.assert_array_equal(ours.idf_, theirs.idf_)
    np.testing.assert_allclose(_dense(X), _dense(theirs.transform(WITH_ZERO_COLUMN)), atol=1e-15)
    with pytest.raises(ValueError, match="column 2.* infinite idf"):
        ours.transform([[1, 0, 0], [0, 0, 3]])


def test_unsmoothed_idf_names_dataframe_columns():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(WITH_ZERO_COLUMN, columns=["cat", "dog", "zebra"])
    with pytest.warns(RuntimeWarning, match="'zebra'"):
        ours = TermWeighting(smooth_idf=False).fit(frame)
    with pytest.raises(ValueError, match="'zebra'.* infinite idf"):
        ours.transform(frame.iloc[:1] + 1)


def test_sublinear_tf():
    """test_sublinear_tf."""
    X = [[1], [2], [3]]
    ours = _dense(TermWeighting(sublinear_tf=True, use_idf=False, norm=None).fit_transform(X))
    theirs = TfidfTransformer(sublinear_tf=True, use_idf=False, norm=None).fit_transform(X)
    np.testing.assert_allclose(ours, _dense(theirs), rtol=1e-15)
    assert ours[0, 0] == 1 and 1 < ours[1, 0] < 2 and ours[1, 0] < ours[2, 0] < 3


def test_csc_and_csr_input_give_one_csr_output():
    """test_tfidf_transformer_sparse."""
    X = sp.random(10, 2000, density=0.01, random_state=42, format="csr")
    from_csc = TermWeighting().fit_transform(X.tocsc())
    from_csr = TermWeighting().fit_transform(X)
    assert from_csc.format == from_csr.format == "csr"
    np.testing.assert_allclose(_dense(from_csc), _dense(from_csr), rtol=0, atol=0)
    np.testing.assert_allclose(_dense(from_csr), _dense(TfidfTransformer().fit_transform(X)),
                               rtol=0, atol=1e-15)


def test_pickling(counts):
    """test_pickling_transformer."""
    fitted = TermWeighting().fit(counts)
    copy = pickle.loads(pickle.dumps(fitted))
    assert type(copy) is TermWeighting
    np.testing.assert_array_equal(_dense(copy.fit_transform(counts)),
                                  _dense(fitted.fit_transform(counts)))


def test_idf_setter(counts):
    """test_transformer_idf_setter: an idf_ set on an unfitted transformer is used."""
    fitted = TermWeighting().fit(counts)
    copy = TermWeighting()
    copy.idf_ = fitted.idf_
    np.testing.assert_array_equal(_dense(copy.transform(counts)), _dense(fitted.transform(counts)))
    with pytest.raises(ValueError, match="X has 2 features, but TermWeighting is expecting"):
        copy.transform(np.ones((1, 2)))
    with pytest.raises(ValueError, match="1-d array"):
        TermWeighting().idf_ = [[1.0, 2.0]]
    with pytest.raises(ValueError, match="`idf_` cannot be set"):
        TermWeighting("bm25").idf_ = fitted.idf_


def test_known_difference_float32_counts_give_float64_weights():
    """test_tfidf_transformer_type: scikit-learn keeps float32; nlpfeat weighs and returns
    float64 (the float64 default; TfidfVectorizer has a ``dtype`` for float32 output)."""
    X = sp.random(10, 200, density=0.05, random_state=42, format="csr", dtype=np.float32)
    assert TfidfTransformer().fit_transform(X).dtype == np.float32
    ours = TermWeighting().fit_transform(X)
    assert ours.dtype == np.float64
    np.testing.assert_allclose(_dense(ours), _dense(TfidfTransformer().fit_transform(X)),
                               rtol=1e-6)


def test_known_difference_transform_never_works_in_place():
    """test_tfidf_transformer_copy: scikit-learn's transform(X, copy=False) overwrites X;
    TermWeighting.transform has no ``copy``: the user's matrix is never modified."""
    X = sp.random(10, 200, density=0.05, random_state=42, format="csr")
    original = X.copy()
    TfidfTransformer().fit(X).transform(X, copy=False)
    assert abs(X - original).max() > 0
    X = original.copy()
    out = TermWeighting().fit(X).transform(X)
    assert out is not X and abs(X - original).max() == 0
    with pytest.raises(TypeError):
        TermWeighting().fit(X).transform(X, copy=False)
