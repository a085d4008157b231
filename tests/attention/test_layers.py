import pickle

import numpy as np
import pytest
from gradcheck_utils import check_layer_gradients, replay

from nlpfeat.attention.functional import causal_mask
from nlpfeat.attention.layers import (
    GELU,
    Dropout,
    LayerNorm,
    LearnedPositionalEncoding,
    Linear,
    MultiHeadAttention,
    MultiHeadAttentionWrapper,
    ReLU,
    RotaryEmbedding,
    Sequential,
    SinusoidalPositionalEncoding,
    TransformerEncoderLayer,
    apply_rope,
    rope_cos_sin,
)

RNG = np.random.default_rng(12345)


def _x(*shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape)


def _assert_grads(errors):
    worst = max(errors, key=errors.get)
    assert errors[worst] < 1e-6, (worst, errors[worst])


@pytest.mark.parametrize(
    "layer",
    [Linear(5, 4, rng=0), Linear(5, 4, bias=False, rng=0), LayerNorm(5),
     LayerNorm(5, elementwise_affine=False), LayerNorm(5, bias=False), ReLU(), GELU(),
     GELU("tanh"), LearnedPositionalEncoding(8, 5, rng=0), SinusoidalPositionalEncoding(5),
     Sequential(Linear(5, 6, rng=0), GELU(), Linear(6, 5, rng=1))],
    ids=lambda layer: type(layer).__name__,
)
def test_layer_backward_matches_finite_differences(layer):
    if isinstance(layer, LayerNorm) and layer.elementwise_affine:
        layer.params["weight"][...] = _x(5, seed=3)  # not the trivial ones/zeros
        if layer.bias:
            layer.params["bias"][...] = _x(5, seed=4)
    _assert_grads(check_layer_gradients(layer, (_x(3, 4, 5),)))


def test_dropout_backward_replays_the_mask():
    drop = Dropout(0.3, rng=0)
    _assert_grads(check_layer_gradients(drop, (_x(3, 4, 5),), reset=replay(drop.rng)))
    x = np.ones((1000,))
    assert abs((drop.forward(x) == 0).mean() - 0.3) < 0.05
    np.testing.assert_array_equal(drop.eval().forward(x), x)


def test_rotary_embedding_backward_and_relative_positions():
    rope = RotaryEmbedding(6)
    _assert_grads(check_layer_gradients(rope, (_x(2, 5, 6),)))
    q, k = _x(6, seed=1), _x(6, seed=2)
    cos, sin = rope_cos_sin(8, 6)
    rq, rk = apply_rope(np.tile(q, (8, 1)), cos, sin), apply_rope(np.tile(k, (8, 1)), cos, sin)
    # the score of positions (i, j) depends only on i - j
    np.testing.assert_allclose(rq[3] @ rk[1], rq[6] @ rk[4], rtol=1e-12)
    np.testing.assert_allclose(rq[2] @ rk[2], q @ k, rtol=1e-12)
    with pytest.raises(ValueError, match="even"):
        RotaryEmbedding(5)


def test_sinusoidal_encoding_values():
    pe = SinusoidalPositionalEncoding(6, max_len=10).encoding
    pos, i = 7, 2
    np.testing.assert_allclose(pe[pos, 2 * i], np.sin(pos / 10000 ** (2 * i / 6)))
    np.testing.assert_allclose(pe[pos, 2 * i + 1], np.cos(pos / 10000 ** (2 * i / 6)))
    with pytest.raises(ValueError, match="max_len"):
        SinusoidalPositionalEncoding(6, max_len=3).forward(np.zeros((1, 4, 6)))


MHA_OPTIONS = {
    "default": {},
    "no_bias": {"bias": False},
    "causal": {"causal": True},
    "kdim_vdim": {"kdim": 5, "vdim": 7},
    "gqa": {"n_kv_heads": 2},
    "mqa": {"n_kv_heads": 1},
    "additive": {"score_func": "additive"},
    "additive_gqa": {"score_func": "additive", "n_kv_heads": 2},
    "sinkhorn": {"normalization": "sinkhorn"},
    "rope": {"rope": True},
    "rope_gqa_causal": {"rope": True, "n_kv_heads": 1, "causal": True},
    "dropout": {"dropout": 0.3},
    "gqa_kdim_vdim_no_bias": {"n_kv_heads": 2, "kdim": 5, "vdim": 7, "bias": False},
    "sinkhorn_causal": {"normalization": "sinkhorn", "causal": True, "sinkhorn_iters": 5},
    "multidim": {"score_func": "multidim"},
    "multidim_gqa_widths_rope": {"score_func": "multidim", "n_kv_heads": 2, "qk_head_dim": 2,
                                 "v_head_dim": 3, "rope": True, "causal": True},
    "multidim_sinkhorn_dropout": {"score_func": "multidim", "normalization": "sinkhorn",
                                  "dropout": 0.2},
    "query_softmax": {"normalization": "query_softmax"},
    "widths_mqa_no_bias": {"qk_head_dim": 1, "v_head_dim": 5, "n_kv_heads": 1, "bias": False},
    "widths_additive": {"score_func": "additive", "qk_head_dim": 3, "v_head_dim": 1},
}


@pytest.mark.parametrize("cross", [False, True], ids=["self", "cross"])
@pytest.mark.parametrize("option", list(MHA_OPTIONS))
def test_multihead_attention_backward_matches_finite_differences(option, cross):
    kw = MHA_OPTIONS[option]
    mha = MultiHeadAttention(8, 4, rng=1, **kw)
    mha.params["in_proj_bias" if "in_proj_bias" in mha.params else "out_proj.weight"][...] += 0.1
    if not cross and mha.kdim == mha.vdim == 8:
        x = _x(2, 5, 8)
        inputs = (x, x, x)
    else:
        inputs = (_x(2, 5, 8), _x(2, 6, mha.kdim, seed=1), _x(2, 6, mha.vdim, seed=2))
    _assert_grads(check_layer_gradients(mha, inputs, reset=replay(mha.rng)))


@pytest.mark.parametrize("mask_kind", ["key_padding", "float_attn_mask", "bool_3d", "is_causal"])
def test_multihead_attention_masks_backward(mask_kind):
    mha = MultiHeadAttention(8, 2, rng=2)
    q, k, v = _x(2, 4, 8), _x(2, 6, 8, seed=1), _x(2, 6, 8, seed=2)
    kwargs = {
        "key_padding": {"key_padding_mask": np.array([[0, 0, 0, 0, 1, 1], [0] * 6], bool)},
        "float_attn_mask": {"attn_mask": _x(4, 6, seed=3)},
        "bool_3d": {"attn_mask": np.random.default_rng(4).random((4, 4, 6)) < 0.3},
        "is_causal": {"is_causal": True},
    }[mask_kind]
    _assert_grads(check_layer_gradients(mha, (q, k, v), kwargs))


def test_multihead_attention_weights_and_fully_masked_rows():
    mha = MultiHeadAttention(8, 2, rng=3)
    x = _x(2, 4, 8)
    out, avg = mha.forward(x, x, x, key_padding_mask=np.ones((2, 4), bool))
    assert np.isfinite(out).all() and not avg.any()  # torch gives NaN here
    out, per_head = mha.forward(x, x, x, is_causal=True, average_attn_weights=False)
    assert per_head.shape == (2, 2, 4, 4)
    np.testing.assert_array_equal(per_head, mha.attn_weights)
    assert not per_head[..., causal_mask(4)].any()
    np.testing.assert_allclose(per_head.sum(-1), 1.0)
    _, none = mha.forward(x, x, x, need_weights=False)
    assert none is None
    changed = x.copy()
    changed[:, 2:] += 10.0  # the future cannot change the past
    np.testing.assert_allclose(mha.forward(changed, changed, changed, is_causal=True)[0][:, :2],
                               out[:, :2], rtol=1e-12)


def test_multihead_attention_unbatched_matches_batched():
    mha = MultiHeadAttention(8, 2, rng=4)
    x = _x(4, 8)
    out, w = mha.forward(x, x, x)
    out_b, w_b = mha.forward(x[None], x[None], x[None])
    np.testing.assert_allclose(out, out_b[0], rtol=1e-13)
    np.testing.assert_allclose(w, w_b[0], rtol=1e-13)
    _assert_grads(check_layer_gradients(mha, (x, x, x)))


ENCODER_OPTIONS = {
    "post_relu": {},
    "pre_gelu": {"norm_first": True, "activation": "gelu"},
    "gqa_rope_causal": {"n_kv_heads": 1, "rope": True, "causal": True},
    "dropout": {"dropout": 0.2},
    "sinkhorn_additive": {"normalization": "sinkhorn", "score_func": "additive",
                          "norm_first": True},
    "multidim_widths": {"score_func": "multidim", "qk_head_dim": 2, "v_head_dim": 6},
}


@pytest.mark.parametrize("option", list(ENCODER_OPTIONS))
def test_encoder_layer_backward_matches_finite_differences(option):
    kw = {"dropout": 0.0, **ENCODER_OPTIONS[option]}
    layer = TransformerEncoderLayer(8, 2, 12, rng=5, **kw)
    for name in ("norm1.weight", "norm2.bias"):
        layer.params[name][...] += _x(8, seed=6) * 0.3
    _assert_grads(check_layer_gradients(layer, (_x(2, 5, 8),), reset=replay(layer.self_attn.rng),
                                        n_entries=15))


def test_encoder_layer_with_padding_mask_backward():
    layer = TransformerEncoderLayer(8, 2, 12, dropout=0.0, rng=6)
    kpm = np.array([[0, 0, 0, 1, 1], [0] * 5], bool)
    _assert_grads(check_layer_gradients(layer, (_x(2, 5, 8),), {"src_key_padding_mask": kpm},
                                        n_entries=15))


@pytest.mark.parametrize("make", [
    lambda dt: Linear(6, 6, rng=0, dtype=dt),
    lambda dt: LayerNorm(6, dtype=dt),
    lambda dt: MultiHeadAttention(6, 3, n_kv_heads=1, rope=True, dropout=0.1, rng=0, dtype=dt),
    lambda dt: MultiHeadAttention(6, 3, score_func="multidim", qk_head_dim=2, v_head_dim=4,
                                  normalization="query_softmax", rng=0, dtype=dt),
    lambda dt: MultiHeadAttentionWrapper(6, 2, 2, causal=True, dropout=0.1, rng=0, dtype=dt),
    lambda dt: TransformerEncoderLayer(6, 3, 8, activation="gelu", rng=0, dtype=dt),
    lambda dt: Sequential(SinusoidalPositionalEncoding(6, dtype=dt),
                          LearnedPositionalEncoding(5, 6, rng=0, dtype=dt), GELU(), ReLU()),
])
def test_float32_stays_float32(make):
    layer = make(np.float32)
    out = layer.forward(*([_x(2, 5, 6).astype(np.float32)] * (3 if isinstance(
        layer, MultiHeadAttention) else 1)))
    out = out[0] if isinstance(out, tuple) else out
    assert out.dtype == np.float32
    d = layer.backward(np.ones_like(out))
    d = d[0] if isinstance(d, tuple) else d
    assert d.dtype == np.float32
    assert all(g.dtype == np.float32 for g in layer.grads.values())
    assert all(p.dtype == np.float32 for p in layer.params.values())
    assert all(p.dtype == np.float64 for p in make(np.float64).params.values())


def test_params_are_shared_with_composites_and_state_dicts_round_trip():
    layer = TransformerEncoderLayer(8, 2, 12, rng=0)
    layer.params["linear1.weight"][0, 0] = 42.0
    assert layer.linear1.params["weight"][0, 0] == 42.0
    other = TransformerEncoderLayer(8, 2, 12, rng=1).load_state_dict(layer.state_dict())
    x = _x(2, 3, 8)
    np.testing.assert_array_equal(other.eval().forward(x), layer.eval().forward(x))
    clone = pickle.loads(pickle.dumps(layer))
    np.testing.assert_array_equal(clone.forward(x), layer.forward(x))
    with pytest.raises(ValueError, match="missing"):
        other.load_state_dict({"linear1.weight": np.zeros((12, 8))})
    with pytest.raises(ValueError, match="shape"):
        other.load_state_dict({**layer.state_dict(), "linear1.weight": np.zeros((3, 3))})


def test_same_seed_same_weights():
    a, b = MultiHeadAttention(8, 2, rng=7), MultiHeadAttention(8, 2, rng=7)
    for name, value in a.params.items():
        np.testing.assert_array_equal(value, b.params[name])


@pytest.mark.parametrize("kwargs, message", [
    ({"d_model": 10, "n_heads": 4},
     r"n_heads=4 does not divide d_model=10; choose n_heads among \[1, 2, 5, 10\]"),
    ({"d_model": 12, "n_heads": 4, "n_kv_heads": 3}, r"choose n_kv_heads among \[1, 2, 4\]"),
    ({"d_model": 8, "n_heads": 2, "score_func": "gaussian"}, "score_func"),
    ({"d_model": 8, "n_heads": 2, "normalization": "sparsemax"}, "normalization"),
    ({"d_model": 8, "n_heads": 2, "dropout": 1.0}, "dropout"),
    ({"d_model": 6, "n_heads": 2, "rope": True}, "even head_dim"),
])
def test_multihead_attention_bad_parameters(kwargs, message):
    with pytest.raises(ValueError, match=message):
        MultiHeadAttention(**kwargs)


def test_bad_input_shapes_name_the_expected_shape():
    mha = MultiHeadAttention(8, 2, kdim=4, rng=0)
    x = _x(2, 3, 8)
    with pytest.raises(ValueError, match=r"query must have shape \(batch, seq_len, d_model\)"):
        mha.forward(x[0, 0], x[0, 0], x[0, 0])
    with pytest.raises(ValueError, match=r"key must have shape .* last axis 4"):
        mha.forward(x, x, x)
    with pytest.raises(ValueError, match="share batch and seq_len"):
        mha.forward(x, _x(2, 3, 4), _x(2, 4, 8))
    with pytest.raises(ValueError, match=r"key_padding_mask must have shape \(batch, S\)"):
        mha.forward(x, _x(2, 3, 4), x, key_padding_mask=np.zeros((2, 5), bool))
    with pytest.raises(ValueError, match=r"attn_mask must have shape \(L, S\)"):
        mha.forward(x, _x(2, 3, 4), x, attn_mask=np.zeros((2, 2), bool))
    with pytest.raises(ValueError, match=r"x must have shape \(\.\.\., in_features\)"):
        Linear(3, 2).forward(np.ones((2, 4)))
    with pytest.raises(TypeError, match="numeric"):
        Linear(3, 2).forward(np.array([["a", "b", "c"]]))
    with pytest.raises(ValueError, match=r"src must have shape \(batch, seq_len, d_model\)"):
        TransformerEncoderLayer(8, 2, 4).forward(np.ones((2, 3, 5)))
    with pytest.raises(ValueError, match="activation"):
        TransformerEncoderLayer(8, 2, activation="tanh")
    with pytest.raises(TypeError, match="dtype"):
        Linear(3, 2, dtype=np.int64)


def test_astype_and_zero_grad():
    model = Sequential(SinusoidalPositionalEncoding(8),
                       TransformerEncoderLayer(8, 2, 12, rope=True, rng=0)).astype(np.float32)
    out = model.forward(_x(2, 3, 8))
    assert out.dtype == np.float32
    assert all(p.dtype == np.float32 for p in model.params.values())
    model.backward(np.ones_like(out))
    assert all(g.dtype == np.float32 for g in model.grads.values())
    model.zero_grad()
    assert set(model.grads) == set(model.params)
    assert not any(g.any() for g in model.grads.values())


@pytest.mark.parametrize("kwargs", [{}, {"kdim": 5, "vdim": 3}, {"n_kv_heads": 1},
                                    {"score_func": "additive"}, {"bias": False},
                                    {"score_func": "multidim", "v_head_dim": 3}])
def test_multihead_attention_initialises_every_parameter_from_its_table(kwargs):
    from nlpfeat.attention._mha import _INIT

    mha = MultiHeadAttention(8, 2, rng=0, **kwargs)
    assert set(mha.params) <= set(_INIT)
    for name, value in mha.params.items():
        if _INIT[name] == "zeros":
            assert not value.any(), name
        else:
            assert np.isfinite(value).all() and value.std() > 0, name


def test_multihead_attention_backward_reads_one_forward_cache():
    mha = MultiHeadAttention(8, 2, rng=0)
    with pytest.raises(RuntimeError, match="forward"):
        mha.backward(np.ones((1, 2, 8)))
    x = np.random.default_rng(0).normal(size=(2, 3, 8))
    mha.forward(x, x, x)
    state = {k for k in vars(mha) if k.startswith("_") and k not in ("_params", "_grads")}
    assert "_cache" in state and not {"_qs", "_keep", "_inputs", "_unbatched"} & state
