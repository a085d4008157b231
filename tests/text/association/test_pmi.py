"""pmi: dense reference formulas, sparsity, smoothing and shift, bad input."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from nlpfeat.text import cooccurrence, pmi


def dense_pmi(counts, alpha):
    """Reference: the definition, on a dense matrix, -inf where counts are 0."""
    counts = np.asarray(counts, dtype=np.float64)
    p_joint = counts / counts.sum()
    p_word = counts.sum(axis=1, keepdims=True) / counts.sum()
    context = counts.sum(axis=0, keepdims=True) ** alpha
    p_context = context / context.sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(p_joint / (p_word * p_context)), -np.log(p_joint)


@pytest.fixture(scope="module")
def counts():
    from nlpfeat.datasets import load_toy_corpus

    counts, _ = cooccurrence(load_toy_corpus("en").data, window=3)
    return counts


@pytest.mark.parametrize("alpha", [1.0, 0.75, 0.5])
def test_pmi_matches_definition_on_observed_pairs(counts, alpha):
    expected, _ = dense_pmi(counts.toarray(), alpha)
    got = pmi(counts, "pmi", alpha=alpha)
    observed = counts.toarray() > 0
    assert (got.toarray() != 0).sum() <= observed.sum()
    np.testing.assert_allclose(got.toarray()[observed], expected[observed], rtol=1e-12,
                               atol=1e-12)


@pytest.mark.parametrize("kind,shift", [("ppmi", 1), ("sppmi", 1), ("sppmi", 5), ("sppmi", 15)])
def test_ppmi_is_sparse_clipped_shifted_pmi(counts, kind, shift):
    expected, _ = dense_pmi(counts.toarray(), 0.75)
    expected = np.maximum(np.nan_to_num(expected, neginf=0.0) - np.log(shift), 0.0)
    got = pmi(counts, kind, shift=shift)
    assert sp.issparse(got) and got.format == "csr"
    assert (got.data > 0).all()                       # no stored zeros: stays sparse
    assert got.nnz == np.count_nonzero(expected)
    np.testing.assert_allclose(got.toarray(), expected, rtol=1e-12)


def test_npmi_matches_definition_and_is_bounded(counts):
    expected, neg_log_joint = dense_pmi(counts.toarray(), 1.0)
    got = pmi(counts, "npmi", alpha=1.0).toarray()
    observed = counts.toarray() > 0
    np.testing.assert_allclose(got[observed], expected[observed] / neg_log_joint[observed],
                               rtol=1e-12, atol=1e-12)
    assert got.min() >= -1 and got.max() <= 1


def test_single_pair_npmi_is_one():
    np.testing.assert_allclose(pmi([[3.0]], "npmi", alpha=1.0).toarray(), [[1.0]])


def test_smoothing_raises_rare_context_probability():
    counts = np.array([[10, 1], [10, 1]])
    rare = pmi(counts, alpha=0.5).toarray()[0, 1]
    plain = pmi(counts, alpha=1.0).toarray()[0, 1]
    assert rare < plain                               # alpha < 1 damps rare contexts


@settings(max_examples=40, deadline=None)
@given(arrays(np.int64, st.tuples(st.integers(1, 6), st.integers(1, 6)),
              elements=st.integers(0, 20)),
       st.sampled_from([0.25, 0.75, 1.0]))
def test_property_dense_and_sparse_input_agree_and_ppmi_is_nonnegative(counts, alpha):
    if counts.sum() == 0:
        return
    dense = pmi(counts, "ppmi", alpha=alpha).toarray()
    sparse = pmi(sp.csr_matrix(counts), "ppmi", alpha=alpha).toarray()
    np.testing.assert_array_equal(dense, sparse)
    assert (dense >= 0).all() and np.isfinite(dense).all()


def test_input_is_not_modified(counts):
    before = counts.copy()
    pmi(counts, "ppmi")
    assert (counts != before).nnz == 0


@pytest.mark.parametrize("alpha", [0, -0.5])
def test_alpha_must_be_positive(alpha):
    with pytest.raises(ValueError, match="'alpha' parameter of pmi must be a float in the range"):
        pmi([[1, 2], [3, 4]], alpha=alpha)


def test_negative_counts_raise():
    with pytest.raises(ValueError, match="non-negative co-occurrence counts"):
        pmi([[1, -2], [3, 4]])


def test_all_zero_counts_raise():
    with pytest.raises(ValueError, match="all zero"):
        pmi(np.zeros((2, 2)))


def test_nan_counts_raise():
    with pytest.raises(ValueError, match="NaN"):
        pmi([[1.0, np.nan]])


def test_shift_needs_sppmi():
    with pytest.raises(ValueError, match="only used by kind='sppmi'"):
        pmi([[1, 2], [3, 4]], "ppmi", shift=5)


def test_unknown_kind_raises():
    with pytest.raises(ValueError, match="'kind' parameter of pmi"):
        pmi([[1, 2], [3, 4]], "lmi")


def test_counts_near_the_float64_maximum_give_the_scale_free_values():
    """PMI and NPMI only depend on the ratios of the counts: scaling them so that their row,
    column and total sums overflow float64 changes nothing."""
    counts = np.array([[40.0, 40.0, 0.0], [1.0, 40.0, 2.0]])
    for kind in ("pmi", "npmi", "ppmi"):
        small = pmi(counts, kind, alpha=1.0)
        huge = pmi(counts * 4e306, kind, alpha=1.0)
        assert np.isfinite(huge.data).all()
        np.testing.assert_allclose(huge.toarray(), small.toarray(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("alpha", [50.0, 1e3, 1e5])
def test_large_alpha_stays_finite_and_matches_log_space_definition(alpha):
    counts = np.array([[4.0, 1.0, 3.0], [1.0, 40.0, 2.0]])
    log_cols = np.log(counts.sum(axis=0))
    top = log_cols.max()                                   # reference: log P_alpha(c) in log space
    log_p_context = alpha * (log_cols - top) - np.log(np.exp(alpha * (log_cols - top)).sum())
    expected = (np.log(counts / counts.sum()) - np.log(counts.sum(axis=1, keepdims=True)
                                                       / counts.sum()) - log_p_context)
    got = pmi(counts, alpha=alpha).toarray()
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, expected, rtol=1e-10)


def test_alpha_beyond_float64_range_raises():
    with pytest.raises(ValueError, match="PMI overflows float64 with alpha=1e"):
        pmi(np.array([[4, 1], [1, 40]]), alpha=1e308)
