"""Two statements of docs/concepts.rst about MultiHeadAttention, checked on numbers.

* Softmax weights keep each output in the convex hull of the values, but attention dropout
  in training rescales the kept weights by 1 / (1 - p), so outputs leave it.
* Each pair of tokens is scored from those two tokens only, so within one head the ratio of
  two weights of a row does not depend on a third token, with or without ``in_proj_bias``;
  the bias makes the score affine rather than bilinear (a term of the key alone, shared by
  every query), so a zero query no longer weights the keys uniformly.
"""
import numpy as np
import pytest

from nlpfeat.attention import MultiHeadAttention


def _identity_attention(dropout, rng):
    """One head on one feature whose queries, keys, values and output are the input itself."""
    mha = MultiHeadAttention(1, 1, dropout=dropout, rng=rng)
    p = mha.params
    p["in_proj_weight"][...] = 1.0
    p["in_proj_bias"][...] = 0.0
    p["out_proj.weight"][...] = 1.0
    p["out_proj.bias"][...] = 0.0
    return mha


def test_outputs_lie_in_the_hull_of_the_values_except_under_dropout_in_training():
    x = np.random.default_rng(0).uniform(1.0, 2.0, size=(4, 8, 1))   # values in [1, 2]
    lo, hi = x.min(axis=1, keepdims=True), x.max(axis=1, keepdims=True)
    mha = _identity_attention(0.5, rng=0)
    out, _ = mha.eval().forward(x, x, x)
    assert ((out >= lo - 1e-12) & (out <= hi + 1e-12)).all()
    out, _ = mha.train().forward(x, x, x)
    outside = (out < lo - 1e-12) | (out > hi + 1e-12)
    assert outside.mean() > 0.5, outside.mean()       # most rows leave [min, max]


def _pair(bias, seed, normalization="softmax"):
    mha = MultiHeadAttention(4, 2, bias=bias, rng=seed, normalization=normalization)
    if bias:                                          # torch starts it at zero; trained, it is not
        mha.params["in_proj_bias"][...] = np.random.default_rng(seed).normal(size=12)
    x = np.random.default_rng(seed + 10).normal(size=(1, 5, 4))
    y = x.copy()
    y[0, 4] = np.random.default_rng(seed + 20).normal(size=4) * 3.0    # a third token moves
    return mha, x, y


def _ratios(w):
    """Each weight of a row over the row's weight of key 0."""
    return w / w[..., :1]


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_weight_ratios_within_a_head_ignore_a_third_token(bias, seed):
    mha, x, y = _pair(bias, seed)
    _, averaged_x = mha.forward(x, x, x)
    w_x = mha.attn_weights[0, :, :4, :4]                 # (heads, rows, keys) off token 4
    _, averaged_y = mha.forward(y, y, y)
    w_y = mha.attn_weights[0, :, :4, :4]
    np.testing.assert_allclose(_ratios(w_y), _ratios(w_x), rtol=1e-10)
    assert not np.allclose(w_y, w_x)                     # the weights themselves do change
    # Averaged over heads (what forward returns), each head's normaliser differs: the
    # ratios of the averages do depend on the third token.
    assert not np.allclose(_ratios(averaged_y[0, :4, :4]), _ratios(averaged_x[0, :4, :4]),
                           rtol=1e-6)


@pytest.mark.parametrize("seed", range(3))
def test_sinkhorn_couples_the_pairs(seed):
    """Normalising columns too (Sinkhorn) makes every weight depend on every token."""
    mha, x, y = _pair(False, seed, normalization="sinkhorn")
    mha.forward(x, x, x)
    w_x = mha.attn_weights[0, :, :4, :4]
    mha.forward(y, y, y)
    assert not np.allclose(_ratios(mha.attn_weights[0, :, :4, :4]), _ratios(w_x), rtol=1e-6)


@pytest.mark.parametrize("bias", [False, True])
def test_the_bias_makes_the_score_affine(bias):
    """A zero query scores every key 0 when the score is bilinear (uniform weights); the
    bias adds a term of the key alone, so the same query prefers some keys."""
    mha, x, _ = _pair(bias, 0)
    x[0, 0] = 0.0
    mha.forward(x, x, x)
    row = mha.attn_weights[0, :, 0, :]                   # (heads, keys) of the zero token
    if bias:
        assert not np.allclose(row, 1.0 / 5)
    else:
        np.testing.assert_allclose(row, 1.0 / 5, rtol=1e-12)
