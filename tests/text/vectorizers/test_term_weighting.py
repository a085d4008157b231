"""TermWeighting: parity with scikit-learn's TfidfTransformer and gensim's TfidfModel (SMART),
OkapiBM25Model and LogEntropyModel on Lee's counts; partial_fit; TfidfVectorizer as counting
followed by TermWeighting; input checks. Fixtures ``lee``, ``gensim_corpus``: conftest.py."""
import inspect
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer, TfidfTransformer
from sklearn.utils.estimator_checks import parametrize_with_checks

from nlpfeat.text import BagOfWords, TermWeighting, TfidfVectorizer


def _max_abs_diff(A, B):
    A, B = (x.toarray() if sp.issparse(x) else np.asarray(x) for x in (A, B))
    assert A.shape == B.shape
    return np.abs(A - B).max(initial=0.0)


@pytest.fixture(scope="module")
def lee_counts(lee):
    """scikit-learn's counts of Lee's background (fit) and test (transform) documents."""
    counts = CountVectorizer().fit(lee.background)
    return counts.transform(lee.background), counts.transform(lee.test)


@pytest.mark.parametrize("kwargs", [{}, dict(sublinear_tf=True), dict(smooth_idf=False, norm="l1"),
                                    dict(use_idf=False), dict(norm=None)])
def test_equals_sklearn_tfidf_transformer_on_lee(lee_counts, kwargs):
    train, test = lee_counts
    ours, ref = TermWeighting(**kwargs), TfidfTransformer(**kwargs)
    X, expected = ours.fit_transform(train), ref.fit_transform(train)
    assert X.format == "csr" and X.dtype == np.float64
    assert _max_abs_diff(X, expected) <= 1e-12
    assert _max_abs_diff(ours.transform(test), ref.transform(test)) <= 1e-12
    if ref.use_idf:
        np.testing.assert_allclose(ours.idf_, ref.idf_, rtol=0, atol=1e-12)


# ---- gensim ----------------------------------------------------------------------------------
def _gensim_matrices(gensim_corpus):
    """The corpus as a CSR count matrix (columns: gensim's term ids) and a function that turns
    gensim vectors into the same layout."""
    matutils = pytest.importorskip("gensim.matutils")
    dictionary, bows = gensim_corpus

    def dense(vectors):
        return matutils.corpus2csc(list(vectors), num_terms=len(dictionary)).T.toarray()

    return matutils.corpus2csc(bows, num_terms=len(dictionary)).T.tocsr(), dense


# every local (n l L a d b), global (f t p x) and normalisation (c u b n) letter; gensim's
# "p" takes log2(0) where a term is in every document
@pytest.mark.filterwarnings("ignore:divide by zero encountered in log2:RuntimeWarning")
@pytest.mark.parametrize("smartirs", ["nfc", "ltc", "Lpu", "atb", "dxn", "bpc"])
def test_smartirs_equals_gensim(gensim_corpus, smartirs):
    models = pytest.importorskip("gensim.models")
    dictionary, bows = gensim_corpus
    counts, dense = _gensim_matrices(gensim_corpus)
    lengths = [len(dictionary[i]) for i in range(len(dictionary))]
    ours = TermWeighting(smartirs=smartirs).fit(counts, term_lengths=lengths)
    reference = models.TfidfModel(dictionary=dictionary, smartirs=smartirs)
    expected = dense(reference[bows])
    assert _max_abs_diff(ours.transform(counts), expected) <= 1e-10
    if smartirs[2] in "ub":
        assert ours.pivot_ == pytest.approx(reference.pivot, rel=1e-12)


@pytest.mark.parametrize("k1, b", [(1.5, 0.75), (1.2, 0.3)])
def test_bm25_equals_gensim(gensim_corpus, k1, b):
    models = pytest.importorskip("gensim.models")
    dictionary, bows = gensim_corpus
    counts, dense = _gensim_matrices(gensim_corpus)
    ours = TermWeighting("bm25", k1=k1, b=b, norm=None).fit(counts)
    reference = models.OkapiBM25Model(dictionary=dictionary, k1=k1, b=b)
    assert _max_abs_diff(ours.transform(counts), dense(reference[bows])) <= 1e-10
    assert ours.avgdl_ == pytest.approx(reference.avgdl, rel=1e-12)


@pytest.mark.parametrize("norm, normalize", [(None, False), ("l2", True)])
def test_logentropy_equals_gensim(gensim_corpus, norm, normalize):
    models = pytest.importorskip("gensim.models")
    _, bows = gensim_corpus
    counts, dense = _gensim_matrices(gensim_corpus)
    ours = TermWeighting("logentropy", norm=norm).fit(counts)
    expected = dense(models.LogEntropyModel(bows, normalize=normalize)[bows])
    assert _max_abs_diff(ours.transform(counts), expected) <= 1e-10


# ---- partial_fit and composition ---------------------------------------------------------------
FAMILIES = [{}, dict(smooth_idf=False, sublinear_tf=True), dict(smartirs="Lpu"),
            dict(smartirs="nfb", slope=0.5), dict(weighting="bm25"),
            dict(weighting="logentropy")]


@pytest.mark.parametrize("kwargs", FAMILIES)
def test_partial_fit_over_batches_equals_fit_on_the_stack(lee_counts, kwargs):
    train, _ = lee_counts
    lengths = np.arange(train.shape[1]) % 7 + 1
    whole = TermWeighting(**kwargs).fit(train, term_lengths=lengths)
    batched = TermWeighting(**kwargs)
    for start, stop in [(0, 70), (70, 71), (71, 300)]:
        batch = train[start:stop]
        batched.partial_fit(batch.toarray() if start == 70 else batch, term_lengths=lengths)
    np.testing.assert_allclose(batched.idf_, whole.idf_, rtol=1e-12, atol=1e-15)
    assert _max_abs_diff(batched.transform(train), whole.transform(train)) <= 1e-12
    assert (batched.pivot_ is whole.pivot_ is None) == ("smartirs" not in kwargs)
    if whole.pivot_ is not None:
        assert batched.pivot_ == pytest.approx(whole.pivot_, rel=1e-12)


def test_fit_then_partial_fit_continues(lee_counts):
    train, _ = lee_counts
    continued = TermWeighting("bm25").fit(train[:100]).partial_fit(train[100:])
    assert continued.avgdl_ == pytest.approx(TermWeighting("bm25").fit(train).avgdl_)


@pytest.mark.parametrize("kwargs", FAMILIES + [dict(binary=True, smartirs="ann")])
def test_vectorizer_is_counting_then_term_weighting(lee, kwargs):
    """TfidfVectorizer == TermWeighting applied to BagOfWords' counts, with a fitted
    ``weighting_`` that holds its weighting parameters."""
    weighting_kwargs = {k: v for k, v in kwargs.items() if k != "binary"}
    vectorizer = TfidfVectorizer(**kwargs).fit(lee.background)
    bow = BagOfWords(binary=kwargs.get("binary", False)).fit(lee.background)
    terms = bow.get_feature_names_out()
    weighting = TermWeighting(**weighting_kwargs).fit(
        bow.transform(lee.background), term_lengths=[len(t) for t in terms])
    np.testing.assert_array_equal(vectorizer.get_feature_names_out(), terms)
    assert isinstance(vectorizer.weighting_, TermWeighting)
    assert vectorizer.weighting_.get_params() == weighting.get_params()
    np.testing.assert_allclose(vectorizer.idf_, weighting.idf_, rtol=1e-12, atol=1e-15)
    assert _max_abs_diff(vectorizer.transform(lee.test),
                         weighting.transform(bow.transform(lee.test))) <= 1e-12


def test_weighting_parameters_have_the_vectorizers_names_and_defaults():
    ours = inspect.signature(TermWeighting).parameters
    vectorizer = inspect.signature(TfidfVectorizer).parameters
    assert {name: p.default for name, p in ours.items()} == \
        {name: vectorizer[name].default for name in ours}


# ---- input -------------------------------------------------------------------------------------
def test_input_is_not_modified_and_may_be_dense_or_non_canonical():
    dense = np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 1.0], [2.0, 1.0, 0.0]])
    csr = sp.csr_matrix(dense)
    snapshot = csr.copy()
    fitted = TermWeighting(smartirs="ltc").fit(csr)
    out = fitted.transform(csr)
    assert out is not csr and out.data is not csr.data
    assert (csr != snapshot).nnz == 0 and csr.data.tolist() == snapshot.data.tolist()
    assert _max_abs_diff(fitted.transform(dense), out) == 0
    # the same counts as duplicate entries, and as a COO matrix
    twice = sp.csr_matrix((np.repeat(csr.data / 2, 2), np.repeat(csr.indices, 2),
                           2 * csr.indptr), shape=dense.shape)
    assert not twice.has_canonical_format
    assert _max_abs_diff(TermWeighting(smartirs="ltc").fit(twice).transform(twice), out) < 1e-15
    assert _max_abs_diff(fitted.transform(sp.coo_matrix(dense)), out) == 0


@pytest.mark.parametrize("bad, match", [
    (np.array([[1.0, -1.0]]), "X holds 1 negative value"),
    (sp.csr_matrix(np.array([[1.0, np.nan]])), "1 NaN"),
    (np.array([[1.0, np.inf]]), "1 infinite"),
    (np.array([1.0, 2.0]), "must be 2-D"),
])
def test_bad_counts_raise(bad, match):
    with pytest.raises(ValueError, match=match):
        TermWeighting().fit(bad)
    fitted = TermWeighting().fit(np.ones((2, 2)))
    with pytest.raises(ValueError, match=match):
        fitted.transform(bad)


def test_column_count_must_match_fit():
    fitted = TermWeighting().fit(np.ones((2, 3)))
    for method in (fitted.transform, fitted.partial_fit):
        with pytest.raises(ValueError, match="X has 2 features, but TermWeighting is "
                                             "expecting 3 features as input"):
            method(np.ones((2, 2)))


def test_pivoted_character_normalisation_needs_term_lengths():
    counts = np.array([[1, 2], [0, 1]])
    with pytest.raises(ValueError, match="pass fit\\(X, term_lengths="):
        TermWeighting(smartirs="nnb").fit(counts)
    with pytest.raises(ValueError, match="one non-negative length per column \\(2\\)"):
        TermWeighting(smartirs="nnb").fit(counts, term_lengths=[3])
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(counts, columns=["cat", "horse"])
    from_names = TermWeighting(smartirs="nnb").fit(frame)
    given = TermWeighting(smartirs="nnb").fit(counts, term_lengths=[3, 5])
    assert from_names.pivot_ == given.pivot_ == (4 + 2 * 6 + 6) / 2
    np.testing.assert_array_equal(from_names.get_feature_names_out(), ["cat", "horse"])


def test_feature_names_pass_through():
    fitted = TermWeighting().fit(np.ones((2, 3)))
    assert fitted.get_feature_names_out().tolist() == ["x0", "x1", "x2"]
    assert fitted.get_feature_names_out(["a", "b", "c"]).tolist() == ["a", "b", "c"]


@pytest.mark.parametrize("kwargs, match", [
    (dict(smartirs="ntc", weighting="bm25"), "cannot be combined with weighting='bm25'"),
    (dict(pivot=5.0), "pivot=5.0 applies to SMART weighting only"),
    (dict(smartirs="nfz"), "normalisation letter 'z'"),
    (dict(smartirs="ntc", pivot=0, slope=0), "divides every row by 0"),
    (dict(weighting="okapi"), "'weighting' parameter"),
])
def test_invalid_settings(kwargs, match):
    with pytest.raises(ValueError, match=match):
        TermWeighting(**kwargs).fit(np.ones((2, 2)))


def test_unused_parameter_warns():
    with pytest.warns(UserWarning, match="'k1' will not be used since weighting='tfidf'"):
        TermWeighting(k1=2.0).fit(np.ones((2, 2)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        TermWeighting("bm25", k1=2.0).fit(np.ones((2, 2)))


def test_bm25_on_all_zero_training_counts_gives_zeros_without_warnings():
    """avgdl = 0 used to divide by zero (RuntimeWarning, NaN weights)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        X = TermWeighting("bm25").fit(np.zeros((2, 2))).transform(np.array([[1.0, 2.0]]))
        assert X.nnz == 0 and X.shape == (1, 2)
        Y = TfidfVectorizer(vocabulary=["dog"], weighting="bm25").fit(["cat"]).transform(["dog"])
        assert Y.nnz == 0 and Y.shape == (1, 1)


# SMART "L" and "d" reject the fractional values scikit-learn's checks feed: "lpu" keeps
# a logarithmic local weight with the probabilistic idf and pivoted normalisation
@parametrize_with_checks([TermWeighting(), TermWeighting("bm25", norm=None),
                          TermWeighting(smartirs="lpu"), TermWeighting("logentropy")])
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize("local", ["d", "L"])
def test_smart_d_and_l_average_reject_values_below_one(local):
    """d and L are defined on counts: below 1 they gave NaN, -inf or a division by zero,
    as gensim does, without a word; now a ValueError says why."""
    fractional = sp.csr_matrix(np.array([[0.3, 2.0], [1.0, 0.6]]))
    with pytest.raises(ValueError, match=f"local weight '{local}' is defined for counts "
                                         r">= 1 .* 2 stored value\(s\) below 1 "
                                         r"\(smallest 0.3\)"):
        TermWeighting(smartirs=f"{local}tc").fit_transform(fractional)
    counts = np.array([[1.0, 2.0], [3.0, 1.0]])
    X = TermWeighting(smartirs=f"{local}tc").fit_transform(counts)
    assert np.isfinite(X.data).all() and X.nnz == 4


@pytest.mark.parametrize("local", ["n", "b", "a", "l"])
def test_other_smart_weights_take_fractional_values(local):
    X = TermWeighting(smartirs=f"{local}nn").fit_transform(np.array([[0.3, 2.0], [1.0, 0.7]]))
    assert np.isfinite(X.data).all() and X.nnz == 4
    assert (X.data > 0).all() or local == "l"       # l: 1 + log2(0.3) < 0, as sublinear_tf
