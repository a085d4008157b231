"""TfidfVectorizer: parity with scikit-learn (default weighting) and gensim (SMART, BM25,
log-entropy) on the Lee corpus (fixtures ``lee`` and ``gensim_corpus`` in conftest.py), and
its own errors."""
import re
import warnings

import numpy as np
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer as SklearnTfidf

from nlpfeat.text import TfidfVectorizer


@pytest.mark.parametrize(
    "kwargs",
    [{}, dict(sublinear_tf=True, ngram_range=(1, 2)), dict(smooth_idf=False, norm="l1"),
     dict(use_idf=False), dict(norm=None, min_df=2, max_df=0.9), dict(binary=True)],
)
def test_equals_sklearn_on_lee(lee, kwargs):
    ours = TfidfVectorizer(**kwargs)
    ref = SklearnTfidf(**kwargs)
    X, expected = ours.fit_transform(lee.background), ref.fit_transform(lee.background)
    np.testing.assert_array_equal(ours.get_feature_names_out(), ref.get_feature_names_out())
    assert X.dtype == np.float64 and X.format == "csr"
    assert abs(X - expected).max() <= 1e-12
    assert abs(ours.transform(lee.test) - ref.transform(lee.test)).max() <= 1e-12
    if ref.use_idf:
        np.testing.assert_allclose(ours.idf_, ref.idf_, rtol=0, atol=1e-12)


def test_default_rows_have_unit_norm(lee):
    X = TfidfVectorizer().fit_transform(lee.background)
    np.testing.assert_allclose(np.asarray(X.multiply(X).sum(axis=1)).ravel(), 1.0)


def test_float32_dtype(lee):
    X = TfidfVectorizer(dtype=np.float32).fit_transform(lee.background[:20])
    assert X.dtype == np.float32


# --- gensim parity -----------------------------------------------------------------------


def _gensim_dense(vectors, dictionary, feature_names):
    """Dense (n_documents, n_terms) matrix in nlpfeat's column order from gensim vectors."""
    vectors = list(vectors)
    dense = np.zeros((len(vectors), len(dictionary)))
    for row, vector in enumerate(vectors):
        for term_id, weight in vector:
            dense[row, term_id] = weight
    return dense[:, [dictionary.token2id[t] for t in feature_names]]


# Every local, global and normalisation letter gensim supports, incl. its aliases (t, x).
SMART = ["ntc", "nfc", "ltc", "Lpc", "bxn", "tfx", "axu", "dtb", "Lnu", "apc", "bpu", "dfn"]
_GENSIM_P_WARNING = "ignore:divide by zero encountered in log2:RuntimeWarning"  # gensim's "p" at df=N


@pytest.mark.filterwarnings(_GENSIM_P_WARNING)
@pytest.mark.parametrize("smartirs", SMART)
def test_smartirs_equals_gensim(lee, gensim_corpus, smartirs):
    models = pytest.importorskip("gensim.models")
    dictionary, bows = gensim_corpus
    ours = TfidfVectorizer(smartirs=smartirs).fit(lee.background)
    reference = models.TfidfModel(dictionary=dictionary, smartirs=smartirs)
    expected = _gensim_dense(reference[bows], dictionary, ours.get_feature_names_out())
    np.testing.assert_allclose(ours.transform(lee.background).toarray(), expected, rtol=0, atol=1e-10)


@pytest.mark.filterwarnings(_GENSIM_P_WARNING)
@pytest.mark.parametrize("smartirs, pivot, slope", [("ntc", 10.0, 0.3), ("lfn", 5.0, 0.25),
                                                    ("ntu", 3.0, 0.5), ("Lpb", 4000.0, 0.2)])
def test_explicit_pivot_equals_gensim(lee, gensim_corpus, smartirs, pivot, slope):
    models = pytest.importorskip("gensim.models")
    dictionary, bows = gensim_corpus
    ours = TfidfVectorizer(smartirs=smartirs, pivot=pivot, slope=slope).fit(lee.background)
    reference = models.TfidfModel(dictionary=dictionary, smartirs=smartirs, pivot=pivot, slope=slope)
    expected = _gensim_dense(reference[bows], dictionary, ours.get_feature_names_out())
    np.testing.assert_allclose(ours.transform(lee.background).toarray(), expected, rtol=0, atol=1e-10)
    assert ours.pivot_ == pivot


def test_learned_pivot_equals_gensim(lee, gensim_corpus):
    models = pytest.importorskip("gensim.models")
    dictionary, _ = gensim_corpus
    for smartirs in ["nfu", "nfb"]:
        ours = TfidfVectorizer(smartirs=smartirs).fit(lee.background)
        reference = models.TfidfModel(dictionary=dictionary, smartirs=smartirs)
        assert ours.pivot_ == pytest.approx(reference.pivot, rel=1e-12)


@pytest.mark.parametrize("k1, b", [(1.5, 0.75), (1.2, 0.5), (2.0, 1.0), (0.9, 0.0)])
def test_bm25_equals_gensim(lee, gensim_corpus, k1, b):
    models = pytest.importorskip("gensim.models")
    dictionary, bows = gensim_corpus
    ours = TfidfVectorizer(weighting="bm25", k1=k1, b=b, norm=None).fit(lee.background)
    reference = models.OkapiBM25Model(dictionary=dictionary, k1=k1, b=b)
    expected = _gensim_dense(reference[bows], dictionary, ours.get_feature_names_out())
    np.testing.assert_allclose(ours.transform(lee.background).toarray(), expected, rtol=0, atol=1e-10)
    assert ours.avgdl_ == pytest.approx(reference.avgdl, rel=1e-12)


def test_bm25_negative_idf_floor():
    docs = ["common a1", "common b1", "common c1", "rare common"]
    tfidf = TfidfVectorizer(weighting="bm25", epsilon=0.5, norm=None).fit(docs)
    idf = tfidf.idf_
    raw_common = np.log(4 - 4 + 0.5) - np.log(4 + 0.5)
    assert raw_common < 0
    raw = np.log(4 - 1 + 0.5) - np.log(1 + 0.5)
    expected_mean = (4 * raw + raw_common) / 5
    assert idf[tfidf.vocabulary_["common"]] == pytest.approx(0.5 * expected_mean)


def test_logentropy_equals_gensim(lee, gensim_corpus):
    models = pytest.importorskip("gensim.models")
    dictionary, bows = gensim_corpus
    ours = TfidfVectorizer(weighting="logentropy").fit(lee.background)
    expected = _gensim_dense(models.LogEntropyModel(bows)[bows], dictionary,
                             ours.get_feature_names_out())
    np.testing.assert_allclose(ours.transform(lee.background).toarray(), expected, rtol=0, atol=1e-10)


def test_terms_absent_from_training_get_zero_weight():
    """(scikit-learn's unsmoothed idf of such a term is inf: tests/peer/test_sklearn_text.py)"""
    docs = ["cat sat", "cat ran"]
    for kwargs in [dict(smartirs="nfc"), dict(weighting="bm25"), dict(weighting="logentropy")]:
        tfidf = TfidfVectorizer(vocabulary=["cat", "dog"], **kwargs).fit(docs)
        X = tfidf.transform(["dog dog cat"])
        assert np.isfinite(X.data).all() and X[0, 1] == 0, kwargs


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(smartirs="nt"), "three letters"),
        (dict(smartirs="zfc"), "term frequency letter 'z'"),
        (dict(smartirs="nqc"), "document frequency letter 'q'"),
        (dict(smartirs="nfz"), "normalisation letter 'z'"),
        (dict(smartirs="ntc", weighting="bm25"), "cannot be combined with weighting='bm25'"),
        (dict(pivot=5.0), "pivot=5.0 applies to SMART weighting only"),
        (dict(weighting="okapi"), "'weighting' parameter"),
        (dict(b=1.5), "'b' parameter"),
    ],
)
def test_invalid_settings(kwargs, match):
    with pytest.raises(ValueError, match=match):
        TfidfVectorizer(**kwargs).fit(["a cat", "a dog"])


@pytest.mark.parametrize(
    "kwargs, unused, because",
    [
        (dict(weighting="bm25", sublinear_tf=True), "sublinear_tf", "weighting='bm25'"),
        (dict(weighting="logentropy", use_idf=False), "use_idf", "weighting='logentropy'"),
        (dict(smartirs="ntc", norm="l1"), "norm", "smartirs='ntc' is set"),
        (dict(smartirs="ntc", sublinear_tf=True), "sublinear_tf", "smartirs='ntc' is set"),
        (dict(smartirs="ntc", slope=0.5), "slope", "smartirs='ntc' is set"),
        (dict(k1=2.0), "k1", "weighting='tfidf' is not 'bm25'"),
        (dict(weighting="logentropy", epsilon=0.1), "epsilon", "is not 'bm25'"),
        (dict(slope=0.5), "slope", "smartirs is None"),
        (dict(use_idf=False, smooth_idf=False), "smooth_idf", "smartirs is None"),
    ],
)
def test_unused_weighting_parameters_warn(kwargs, unused, because):
    with pytest.warns(UserWarning, match=f"The parameter '{unused}' will not be used since "
                                         f".*{re.escape(because)}"):
        TfidfVectorizer(**kwargs).fit(["a cat", "a dog"])


@pytest.mark.parametrize("kwargs", [{}, dict(weighting="bm25", norm=None),
                                    dict(smartirs="ntc", pivot=0.0, slope=1.0),
                                    dict(smartirs="Lpu", slope=0.5), dict(use_idf=False)])
def test_used_parameters_do_not_warn(kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        TfidfVectorizer(**kwargs).fit(["the cat sat", "the dog sat"])


@pytest.mark.parametrize("kwargs", [{}, dict(weighting="bm25"), dict(weighting="logentropy"),
                                    dict(smartirs="ntc"), dict(smartirs="Lpu"),
                                    dict(smartirs="atb")])
def test_empty_transform_has_zero_rows(kwargs):
    tfidf = TfidfVectorizer(**kwargs).fit(["the cat sat", "the dog sat"])
    X = tfidf.transform([])
    assert X.shape == (0, 4) and X.format == "csr" and X.dtype == np.float64


def test_int_dtype_warns_and_gives_float64_weights():
    docs = ["the cat sat", "the dog sat", "the cat ran"]
    with pytest.warns(UserWarning, match="dtype=int64 would truncate them"):
        tfidf = TfidfVectorizer(dtype=np.int64).fit(docs)
    X = tfidf.transform(docs)
    assert X.dtype == np.float64 and tfidf.idf_.dtype == np.float64
    np.testing.assert_allclose(X.toarray(), TfidfVectorizer().fit_transform(docs).toarray(),
                               rtol=0, atol=1e-12)
    assert TfidfVectorizer(dtype=np.float32, weighting="bm25").fit(docs).idf_.dtype == np.float32
