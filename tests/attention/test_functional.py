import numpy as np
import pytest
from gradcheck_utils import numeric_grad, rel_error
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.special import softmax as scipy_softmax

from nlpfeat.attention.functional import (
    additive_score,
    additive_score_backward,
    attention_dropout,
    attention_dropout_backward,
    causal_mask,
    gaussian_score,
    gaussian_score_backward,
    key_padding_mask,
    mask_to_additive,
    masked_softmax,
    masked_softmax_backward,
    mse_loss,
    scaled_dot_score,
    scaled_dot_score_backward,
    sinkhorn,
    sinkhorn_backward,
)


def _fd_errors(loss, arrays, analytic, seed=0, n_entries=30):
    """Relative error of each analytic gradient against central differences of ``loss()``."""
    rng = np.random.default_rng(seed)
    errors = []
    for array, grad in zip(arrays, analytic):
        idx = rng.choice(array.size, size=min(n_entries, array.size), replace=False)
        errors.append(rel_error(np.ravel(grad)[idx], numeric_grad(loss, array, idx)))
    return errors


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_masked_softmax_matches_scipy_and_is_shift_invariant(seed):
    s = np.random.default_rng(seed).normal(size=(3, 4, 6))
    np.testing.assert_allclose(masked_softmax(s), scipy_softmax(s, axis=-1), rtol=1e-13)
    np.testing.assert_allclose(masked_softmax(s + 1e3), masked_softmax(s), rtol=1e-12)
    np.testing.assert_allclose(masked_softmax(s, axis=1), scipy_softmax(s, axis=1), rtol=1e-13)


def test_masked_softmax_masks_and_never_returns_nan():
    s = np.array([[1e3, -1e3, 0.0], [0.0, 1.0, 2.0], [5.0, 5.0, 5.0]])
    mask = np.array([[False, True, False], [True, True, True], [False, False, True]])
    w = masked_softmax(s, mask)
    assert np.isfinite(w).all()
    np.testing.assert_array_equal(w[1], 0.0)  # fully masked row -> zeros
    np.testing.assert_array_equal(w[mask], 0.0)
    np.testing.assert_allclose(w[[0, 2]].sum(axis=1), 1.0)
    np.testing.assert_allclose(w[2], [0.5, 0.5, 0.0])
    np.testing.assert_array_equal(masked_softmax(s, mask_to_additive(mask)), w)
    d = masked_softmax_backward(np.ones_like(w), w)
    assert np.isfinite(d).all() and not d[1].any()


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, (3, 4), elements=st.floats(-1e4, 1e4)),
       arrays(bool, (3, 4)), st.sampled_from([np.float32, np.float64]))
def test_masked_softmax_properties(scores, mask, dtype):
    w = masked_softmax(scores.astype(dtype), mask)
    assert w.dtype == dtype and np.isfinite(w).all() and (w >= 0).all()
    assert not w[mask].any()
    sums = w.sum(axis=1)
    np.testing.assert_allclose(sums, np.where(mask.all(axis=1), 0.0, 1.0), rtol=1e-5)
    s, cache = sinkhorn(scores.astype(dtype), mask, n_iter=2)
    assert np.isfinite(s).all() and np.isfinite(sinkhorn_backward(np.ones_like(s), cache)).all()


def test_masked_softmax_keeps_float32():
    s = np.ones((2, 3), np.float32)
    assert masked_softmax(s, np.array([False, True, False])).dtype == np.float32


@pytest.mark.parametrize("masked", [False, True])
def test_masked_softmax_backward_finite_differences(masked):
    rng = np.random.default_rng(3)
    s, g = rng.normal(size=(2, 3, 5)), rng.normal(size=(2, 3, 5))
    mask = (rng.random((3, 5)) < 0.3) if masked else None
    analytic = masked_softmax_backward(g, masked_softmax(s, mask))
    (err,) = _fd_errors(lambda: float((masked_softmax(s, mask) * g).sum()), [s], [analytic])
    assert err < 1e-6


def test_causal_and_key_padding_masks():
    np.testing.assert_array_equal(causal_mask(2, 3), [[False, True, True], [False, False, True]])
    np.testing.assert_array_equal(key_padding_mask([2, 0], 3),
                                  [[False, False, True], [True, True, True]])
    with pytest.raises(ValueError, match="non-negative"):
        key_padding_mask([-1, 2])
    with pytest.raises(TypeError, match="boolean or float"):
        mask_to_additive(np.array(["a"]))


def test_causal_softmax_ignores_the_future():
    rng = np.random.default_rng(0)
    s = rng.normal(size=(4, 4))
    changed = s.copy()
    changed[np.triu_indices(4, 1)] += 10.0
    np.testing.assert_array_equal(masked_softmax(s, causal_mask(4)),
                                  masked_softmax(changed, causal_mask(4)))


@pytest.mark.parametrize("n_iter", [0, 1, 4])
def test_sinkhorn_rows_sum_to_one_and_columns_converge(n_iter):
    s = np.random.default_rng(n_iter).normal(size=(2, 5, 5))
    w, _ = sinkhorn(s, n_iter=n_iter)
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=1e-12)
    if n_iter == 0:
        np.testing.assert_allclose(w, scipy_softmax(s, axis=-1), rtol=1e-12)
    many, _ = sinkhorn(s, n_iter=200)
    np.testing.assert_allclose(many.sum(axis=-2), 1.0, rtol=1e-8)
    wide, _ = sinkhorn(s[..., :3, :], n_iter=300)  # 3 queries, 5 keys
    np.testing.assert_allclose(wide.sum(axis=-2), 3 / 5, rtol=1e-8)
    np.testing.assert_allclose(wide.sum(axis=-1), 1.0, rtol=1e-12)


@pytest.mark.parametrize("n_iter", [0, 1, 3])
def test_sinkhorn_backward_finite_differences_with_padding(n_iter):
    rng = np.random.default_rng(n_iter)
    s, g = rng.normal(size=(2, 4, 5)), rng.normal(size=(2, 4, 5))
    mask = np.zeros((2, 1, 5), bool)
    mask[0, 0, -2:] = True  # padded keys: fully masked columns
    w, cache = sinkhorn(s, mask, n_iter)
    assert np.isfinite(w).all() and not w[0, :, -2:].any()
    analytic = sinkhorn_backward(g, cache)
    (err,) = _fd_errors(lambda: float((sinkhorn(s, mask, n_iter)[0] * g).sum()), [s],
                        [analytic])
    assert err < 1e-6


def test_sinkhorn_rejects_negative_iterations():
    with pytest.raises(ValueError, match="n_iter"):
        sinkhorn(np.zeros((2, 2)), n_iter=-1)


def test_attention_dropout_is_seeded_unbiased_and_differentiable():
    w = np.full((200, 50), 0.02)
    out1, keep1 = attention_dropout(w, 0.25, np.random.default_rng(0))
    out2, _ = attention_dropout(w, 0.25, np.random.default_rng(0))
    np.testing.assert_array_equal(out1, out2)
    assert abs((keep1 == 0).mean() - 0.25) < 0.02
    np.testing.assert_allclose(out1.sum(axis=1).mean(), 1.0, atol=0.02)
    g = np.random.default_rng(1).normal(size=w.shape)
    np.testing.assert_array_equal(attention_dropout_backward(g, keep1), g * keep1)
    same, keep = attention_dropout(w, 0.0, None)
    assert same is w and keep is None
    with pytest.raises(ValueError, match=r"\[0, 1\)"):
        attention_dropout(w, 1.0, np.random.default_rng(0))


def test_scaled_dot_score_matches_definition_and_finite_differences():
    rng = np.random.default_rng(0)
    q, k, g = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 3, 5))
    expected = np.einsum("bid,bjd->bij", q, k) / 2.0
    np.testing.assert_allclose(scaled_dot_score(q, k), expected, rtol=1e-13)
    analytic = scaled_dot_score_backward(g, q, k)
    errors = _fd_errors(lambda: float((scaled_dot_score(q, k) * g).sum()), [q, k], analytic)
    assert max(errors) < 1e-6


def test_additive_score_matches_definition_and_finite_differences():
    rng = np.random.default_rng(1)
    q, k = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 6))
    w_q, w_k, v = rng.normal(size=(7, 4)), rng.normal(size=(7, 6)), rng.normal(size=7)
    g = rng.normal(size=(2, 3, 5))
    expected = np.einsum("h,bijh->bij", v, np.tanh((q @ w_q.T)[:, :, None] + (k @ w_k.T)[:, None]))
    s, cache = additive_score(q, k, w_q, w_k, v)
    np.testing.assert_allclose(s, expected, rtol=1e-12)
    analytic = additive_score_backward(g, cache)
    arrays = [q, k, w_q, w_k, v]
    errors = _fd_errors(lambda: float((additive_score(q, k, w_q, w_k, v)[0] * g).sum()), arrays,
                        analytic)
    assert max(errors) < 1e-6


@pytest.mark.parametrize("w_shape", [(), (4,)])
def test_gaussian_score_is_nadaraya_watson_and_differentiable(w_shape):
    rng = np.random.default_rng(2)
    q, k = rng.normal(size=(3, 4)), rng.normal(size=(6, 4))
    w = np.asarray(rng.uniform(0.5, 2.0, size=w_shape))
    s = gaussian_score(q, k, w)
    diff = (q[:, None, :] - k[None, :, :]) * w
    np.testing.assert_allclose(s, -0.5 * (diff**2).sum(-1), rtol=1e-10, atol=1e-12)
    kernel = np.exp(-0.5 * (diff**2).sum(-1))  # Gaussian-kernel Nadaraya-Watson weights
    np.testing.assert_allclose(masked_softmax(s), kernel / kernel.sum(1, keepdims=True),
                               rtol=1e-10)
    g = rng.normal(size=s.shape)
    analytic = gaussian_score_backward(g, q, k, w)
    assert np.shape(analytic[2]) == w_shape
    w_arr = w.reshape(-1) if w_shape else w.reshape(1)

    def loss():
        return float((gaussian_score(q, k, w_arr.reshape(w_shape)) * g).sum())

    errors = _fd_errors(loss, [q, k, w_arr], [analytic[0], analytic[1], np.ravel(analytic[2])])
    assert max(errors) < 1e-6


def test_mse_loss_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    pred, target = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    loss, grad = mse_loss(pred, target)
    t_pred = torch.tensor(pred, requires_grad=True)
    t_loss = torch.nn.functional.mse_loss(t_pred, torch.tensor(target))
    t_loss.backward()
    assert abs(loss - t_loss.item()) < 1e-14
    np.testing.assert_allclose(grad, t_pred.grad.numpy(), rtol=1e-13)
