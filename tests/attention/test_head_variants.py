"""Head variants: multi-dimensional scores, own query/key and value widths, the book's
single heads, normalising over the queries, and what Sinkhorn does under a causal mask."""
import numpy as np
import pytest
from gradcheck_utils import check_layer_gradients, numeric_grad, rel_error

from nlpfeat.attention.functional import (
    causal_mask,
    masked_softmax,
    multidim_score,
    multidim_score_backward,
    sinkhorn,
)
from nlpfeat.attention.layers import (
    MultiHeadAttention,
    MultiHeadAttentionWrapper,
    SelfAttention,
    apply_rope,
    rope_cos_sin,
)


def _x(*shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape)


def _assert_grads(errors):
    worst = max(errors, key=errors.get)
    assert errors[worst] < 1e-6, (worst, errors[worst])


# ------------------------------------------------------------ multi-dimensional attention
def test_multidim_score_matches_its_definition_and_finite_differences():
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 6))
    w_q, w_k = rng.normal(size=(7, 4)), rng.normal(size=(7, 6))
    s, cache = multidim_score(q, k, w_q, w_k)
    expected = np.tanh((q @ w_q.T)[:, :, None, :] + (k @ w_k.T)[:, None, :, :])  # b i j f
    np.testing.assert_allclose(s, expected.transpose(0, 3, 1, 2), rtol=1e-13)
    g = rng.normal(size=s.shape)
    analytic = multidim_score_backward(g, cache)
    for array, grad in zip((q, k, w_q, w_k), analytic):
        idx = rng.choice(array.size, size=min(20, array.size), replace=False)
        numeric = numeric_grad(lambda: float((multidim_score(q, k, w_q, w_k)[0] * g).sum()),
                               array, idx)
        assert rel_error(grad.ravel()[idx], numeric) < 1e-7


def test_multidim_attention_weights_each_feature_of_the_values_on_its_own():
    mha = MultiHeadAttention(6, 2, score_func="multidim", bias=False, rng=0)
    q, kv = _x(1, 3, 6), _x(1, 4, 6, seed=1)
    out, avg = mha.forward(q, kv, kv)
    w = mha.attn_weights                               # (batch, heads, features, L, S)
    assert w.shape == (1, 2, 3, 3, 4) and avg.shape == (1, 3, 4)
    np.testing.assert_allclose(w.sum(-1), 1.0, rtol=1e-13)
    np.testing.assert_allclose(avg, w.mean(axis=(1, 2)), rtol=1e-13)
    w_v = mha.params["in_proj_weight"][12:]
    v = (kv[0] @ w_v.T).reshape(4, 2, 3)                # key, head, feature
    ctx = np.einsum("hfls,shf->lhf", w[0], v).reshape(3, 6)
    np.testing.assert_allclose(out[0], ctx @ mha.params["out_proj.weight"].T, rtol=1e-12)
    assert mha.forward(q, kv, kv, average_attn_weights=False)[1].shape == (1, 2, 3, 3, 4)


def _affine_rank(outputs):
    """Number of directions a set of output vectors spans around its mean, and the first
    singular value below that rank (relative to the largest)."""
    s = np.linalg.svd(outputs - outputs.mean(axis=0), compute_uv=False)
    s = s / s[0]
    rank = int((s > 1e-10).sum())
    return rank, (s[rank] if rank < len(s) else 0.0)


@pytest.mark.parametrize("score_func, n_heads, rank", [
    ("scaled_dot", 1, 1), ("scaled_dot", 2, 2), ("scaled_dot", 4, 4), ("additive", 4, 4),
    ("multidim", 1, 8), ("multidim", 4, 8)])
def test_two_tokens_give_one_direction_per_head_and_d_to_multidim(score_func, n_heads, rank):
    """The degrees-of-freedom argument of docs/concepts.rst, measured: attending to two
    tokens, one softmax moves the output along the line between their values."""
    mha = MultiHeadAttention(8, n_heads, score_func=score_func, rng=1)
    kv = _x(1, 2, 8, seed=2)
    out, _ = mha.forward(_x(1, 200, 8, seed=3), kv, kv)
    measured, next_singular_value = _affine_rank(out[0])
    assert measured == rank
    assert next_singular_value < 1e-13


# ---------------------------------------------------------------------- head widths
def test_query_key_space_narrower_than_the_value_space():
    mha = MultiHeadAttention(12, 3, qk_head_dim=2, v_head_dim=6, rope=True, rng=0)
    shapes = {name: value.shape for name, value in mha.params.items()}
    assert shapes == {"q_proj.weight": (6, 12), "k_proj.weight": (6, 12),
                      "v_proj.weight": (18, 12), "q_proj.bias": (6,), "k_proj.bias": (6,),
                      "v_proj.bias": (18,), "out_proj.weight": (12, 18), "out_proj.bias": (12,)}
    x = _x(2, 5, 12)
    out, w = mha.forward(x, x, x)
    assert out.shape == (2, 5, 12) and w.shape == (2, 5, 5)
    q = (x @ mha.params["q_proj.weight"].T + mha.params["q_proj.bias"])[..., :2]  # head 0
    k = (x @ mha.params["k_proj.weight"].T + mha.params["k_proj.bias"])[..., :2]
    q, k = (apply_rope(a, *rope_cos_sin(5, 2)) for a in (q, k))
    np.testing.assert_allclose(mha.attn_weights[:, 0],
                               masked_softmax(q @ k.swapaxes(-1, -2) / np.sqrt(2)), rtol=1e-12)
    # both widths given: n_heads need not divide d_model
    assert MultiHeadAttention(10, 4, qk_head_dim=3, v_head_dim=5, rng=0).forward(
        x[..., :10], x[..., :10], x[..., :10])[0].shape == (2, 5, 10)


def test_default_widths_keep_the_torch_layout():
    explicit = MultiHeadAttention(12, 3, qk_head_dim=4, v_head_dim=4, rng=0)
    default = MultiHeadAttention(12, 3, rng=0)
    assert sorted(explicit.params) == sorted(default.params) == [
        "in_proj_bias", "in_proj_weight", "out_proj.bias", "out_proj.weight"]
    for name, value in default.params.items():
        np.testing.assert_array_equal(explicit.params[name], value)


@pytest.mark.parametrize("kwargs, message", [
    ({"qk_head_dim": 0}, "qk_head_dim must be a positive int"),
    ({"qk_head_dim": 3, "rope": True}, "even head_dim"),
    ({"d_model": 10, "n_heads": 4, "qk_head_dim": 2}, "or give qk_head_dim and v_head_dim"),
    ({"score_func": "dot"}, r"score_func must be one of \('scaled_dot', 'additive', 'multidim'"),
    ({"normalization": "sparsemax"}, "'query_softmax'"),
])
def test_bad_widths_and_options_say_what_fits(kwargs, message):
    with pytest.raises(ValueError, match=message):
        MultiHeadAttention(**{"d_model": 8, "n_heads": 2, **kwargs})


# ------------------------------------------------------------- the book's single heads
def test_self_attention_is_the_books_formula_and_differentiable():
    head = SelfAttention(5, 3, causal=True, qkv_bias=True, rng=0)
    x = _x(2, 4, 5)
    p = head.params
    q, k, v = (x @ p[f"W_{n}.weight"].T + p[f"W_{n}.bias"] for n in ("query", "key", "value"))
    w = masked_softmax(q @ k.swapaxes(-1, -2) / np.sqrt(3), causal_mask(4))
    np.testing.assert_allclose(head.forward(x), w @ v, rtol=1e-13)
    assert sorted(SelfAttention(5, 3).params) == ["W_key.weight", "W_query.weight",
                                                  "W_value.weight"]
    _assert_grads(check_layer_gradients(head, (x,)))
    assert head.forward(x[0]).shape == (4, 3)          # unbatched, as the book's first head
    with pytest.raises(ValueError, match=r"x must have shape \(batch, n_tokens, d_in\)"):
        head.forward(_x(2, 4, 3))


def _load_wrapper_weights(mha, wrapper, out_weight):
    """The wrapper's heads stacked into the weight-split layer; output bias zero."""
    heads = wrapper.heads
    for name, book in (("q", "W_query"), ("k", "W_key"), ("v", "W_value")):
        mha.params[f"{name}_proj.weight"][...] = np.vstack(
            [h.params[f"{book}.weight"] for h in heads])
        if f"{name}_proj.bias" in mha.params:
            mha.params[f"{name}_proj.bias"][...] = np.concatenate(
                [h.params[f"{book}.bias"] for h in heads])
    mha.params["out_proj.weight"][...] = out_weight
    if "out_proj.bias" in mha.params:
        mha.params["out_proj.bias"][...] = 0.0


@pytest.mark.parametrize("qkv_bias", [False, True])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("d_in, d_out, n_heads", [(6, 4, 3), (5, 3, 2)])
def test_wrapper_equals_the_weight_split_multihead_attention(d_in, d_out, n_heads, causal,
                                                             qkv_bias):
    wrapper = MultiHeadAttentionWrapper(d_in, d_out, n_heads, causal=causal,
                                        qkv_bias=qkv_bias, rng=0)
    mha = MultiHeadAttention(d_in, n_heads, qk_head_dim=d_out, v_head_dim=d_out,
                             bias=qkv_bias, causal=causal, rng=1)
    w_out = _x(d_in, n_heads * d_out, seed=1)
    _load_wrapper_weights(mha, wrapper, w_out)
    x, g = _x(2, 5, d_in, seed=2), _x(2, 5, d_in, seed=3)
    concatenated = wrapper.forward(x)
    assert concatenated.shape == (2, 5, n_heads * d_out)
    out, _ = mha.forward(x, x, x)
    np.testing.assert_allclose(out, concatenated @ w_out.T, rtol=1e-12, atol=1e-13)
    d_x, _, _ = mha.backward(g)
    np.testing.assert_allclose(wrapper.backward(g @ w_out), d_x, rtol=1e-11, atol=1e-13)
    for name, book in (("q", "W_query"), ("k", "W_key"), ("v", "W_value")):
        stacked = np.vstack([wrapper.grads[f"heads.{i}.{book}.weight"]
                             for i in range(n_heads)])
        np.testing.assert_allclose(mha.grads[f"{name}_proj.weight"], stacked, rtol=1e-11,
                                   atol=1e-13)


def test_wrapper_backward_matches_finite_differences_with_dropout():
    wrapper = MultiHeadAttentionWrapper(4, 2, 2, causal=True, dropout=0.3, rng=0)
    state = wrapper.heads[0].rng.bit_generator.state

    def replay():
        wrapper.heads[0].rng.bit_generator.state = state

    _assert_grads(check_layer_gradients(wrapper, (_x(2, 3, 4),), reset=replay))


# ------------------------------------------------------------ normalising over queries
def test_query_softmax_normalises_each_key_over_the_queries():
    mha = MultiHeadAttention(8, 2, normalization="query_softmax", causal=True, rng=0)
    x = _x(2, 5, 8)
    pad = np.zeros((2, 5), bool)
    pad[1, 0] = True                                  # key 0 of sequence 1: no query sees it
    mha.forward(x, x, x, key_padding_mask=pad)
    w = mha.attn_weights
    cols = w.sum(axis=-2)
    np.testing.assert_allclose(cols[0], 1.0, rtol=1e-13)
    np.testing.assert_allclose(cols[1, :, 1:], 1.0, rtol=1e-13)
    np.testing.assert_array_equal(cols[1, :, 0], 0.0)
    np.testing.assert_allclose(w[..., -1, -1], 1.0)    # the last key: only the last query
    assert not w[..., causal_mask(5)].any()
    assert np.abs(w.sum(axis=-1) - 1.0).max() > 0.1    # rows need not sum to one


@pytest.mark.parametrize("score_func", ["scaled_dot", "multidim"])
def test_query_softmax_backward_matches_finite_differences(score_func):
    mha = MultiHeadAttention(8, 2, normalization="query_softmax", score_func=score_func,
                             causal=True, rng=3)
    x, kv = _x(2, 4, 8), _x(2, 5, 8, seed=1)
    _assert_grads(check_layer_gradients(mha, (x, kv, kv * 0.5), n_entries=15))


def test_sinkhorn_under_a_causal_mask_can_only_tend_to_the_identity():
    """Row 0 may see key 0 only, so column 0 keeps at least its weight 1 and every other
    query must give key 0 nothing, and so on down the diagonal: the only doubly stochastic
    lower-triangular matrix is the identity, which finite scores never reach."""
    s = _x(200, 10, 10)
    mask = causal_mask(10)
    diag = []
    for n_iter in (3, 30, 300):
        w, _ = sinkhorn(s, mask, n_iter)
        np.testing.assert_allclose(w.sum(-1), 1.0, rtol=1e-12)
        assert (w[:, 1:, 0] > 0).all()                 # never exactly doubly stochastic
        diag.append(np.einsum("bii->bi", w).mean())
    assert diag[0] < 0.6 < diag[1] < diag[2] < 1.0     # self-attention takes over
    w3, _ = sinkhorn(s, mask, 3)
    assert np.abs(w3.sum(-2) - 1.0).mean() > 0.2       # columns far from one
    free, _ = sinkhorn(s, None, 3)
    assert np.abs(free.sum(-2) - 1.0).mean() < 0.01    # without the mask: close
