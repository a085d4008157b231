"""Incremental decoding with a key/value cache equals the full causal forward."""
import pickle

import numpy as np
import pytest
from gradcheck_utils import check_layer_gradients

from nlpfeat.attention.functional import causal_mask
from nlpfeat.attention.layers import (
    KeyValueCache,
    MultiHeadAttention,
    TransformerEncoderLayer,
)

E, H, T = 8, 4, 7
#: every key/value layout (multi-head, grouped, multi-query), scores and head widths
LAYOUTS = {
    "mha": {},
    "gqa": {"n_kv_heads": 2},
    "mqa": {"n_kv_heads": 1},
    "additive_gqa": {"score_func": "additive", "n_kv_heads": 2},
    "multidim_widths": {"score_func": "multidim", "n_kv_heads": 2, "qk_head_dim": 4,
                        "v_head_dim": 3},
    "no_rope_bias": {"rope": False, "bias": False},
}


def _x(*shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape)


def _decode(layer, x, prefill, call):
    """Outputs of ``call(layer, chunk, cache)`` over a prefill chunk, then one token at a
    time, concatenated along the sequence."""
    out, cache = call(layer, x[:, :prefill], None)
    outs = [out]
    for t in range(prefill, x.shape[1]):
        out, cache = call(layer, x[:, t:t + 1], cache)
        outs.append(out)
    return np.concatenate(outs, axis=1), cache


def _mha_step(mha, chunk, cache, **kwargs):
    out, _, cache = mha.forward(chunk, chunk, chunk, past_key_value=cache, use_cache=True,
                                **kwargs)
    return out, cache


@pytest.mark.parametrize("prefill", [1, 3])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_decoding_with_the_cache_equals_the_full_causal_forward(layout, prefill):
    kw = {"rope": True, **LAYOUTS[layout]}
    mha = MultiHeadAttention(E, H, causal=True, rng=1, **kw)
    x = _x(2, T, E)
    full, _ = mha.forward(x, x, x)
    last_row = mha.attn_weights[..., -1, :]
    steps, cache = _decode(mha, x, prefill, _mha_step)
    np.testing.assert_allclose(steps, full, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(mha.attn_weights[..., -1, :], last_row, rtol=1e-12,
                               atol=1e-12)
    G = mha.n_kv_heads
    assert isinstance(cache, KeyValueCache) and cache.seq_len == T
    assert cache.key.shape == (2, G, T, mha.qk_head_dim)
    assert cache.value.shape == (2, G, T, mha.v_head_dim)


def test_is_causal_and_padding_masks_cover_the_cached_keys():
    mha = MultiHeadAttention(E, H, n_kv_heads=2, rope=True, rng=2)
    x = _x(2, T, E, seed=1)
    pad = np.zeros((2, T), bool)
    pad[0, :2] = True  # left padding: the first two keys of sequence 0 are never seen
    full, _ = mha.forward(x, x, x, key_padding_mask=pad, is_causal=True)

    def step(layer, chunk, cache):
        n = chunk.shape[1] + (0 if cache is None else cache.seq_len)
        return _mha_step(layer, chunk, cache, key_padding_mask=pad[:, :n], is_causal=True)

    steps, _ = _decode(mha, x, 3, step)
    np.testing.assert_allclose(steps[:, 2:], full[:, 2:], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(steps[1], full[1], rtol=1e-12, atol=1e-12)


def test_an_explicit_mask_with_the_cache_offset_matches_the_causal_layer():
    mha = MultiHeadAttention(E, H, rope=True, rng=3)
    x = _x(1, T, E, seed=2)
    _, _, cache = mha.forward(x[:, :4], x[:, :4], x[:, :4], use_cache=True, is_causal=True)
    chunk = x[:, 4:]
    by_flag, _ = mha.forward(chunk, chunk, chunk, past_key_value=cache, is_causal=True)
    by_mask, _ = mha.forward(chunk, chunk, chunk, past_key_value=cache,
                             attn_mask=causal_mask(3, T, offset=4))
    full, _ = mha.forward(x, x, x, is_causal=True)
    np.testing.assert_array_equal(by_flag, by_mask)
    np.testing.assert_allclose(by_flag, full[:, 4:], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("n_kv_heads", [None, 2, 1])
def test_encoder_layer_decodes_with_the_cache(n_kv_heads, norm_first):
    layer = TransformerEncoderLayer(E, H, 12, dropout=0.0, norm_first=norm_first,
                                    n_kv_heads=n_kv_heads, causal=True, rope=True, rng=4)
    x = _x(2, T, E, seed=3)
    full = layer.forward(x)
    steps, cache = _decode(layer, x, 2, lambda lyr, chunk, c: lyr.forward(
        chunk, past_key_value=c, use_cache=True))
    np.testing.assert_allclose(steps, full, rtol=1e-12, atol=1e-12)
    assert cache.key.shape == (2, n_kv_heads or H, T, E // H)


def test_cache_bytes_shrink_with_the_key_value_heads():
    x = _x(1, T, E)
    nbytes = {}
    for n_kv in (H, H // 2, 1):
        mha = MultiHeadAttention(E, H, n_kv, causal=True, rng=0)
        nbytes[n_kv] = mha.forward(x, x, x, use_cache=True)[2].nbytes
    assert nbytes[H] == 2 * T * E * 8                    # keys and values, float64
    assert nbytes[H // 2] * 2 == nbytes[1] * H == nbytes[H]


def test_unbatched_decoding_keeps_an_unbatched_cache():
    mha = MultiHeadAttention(E, H, n_kv_heads=1, causal=True, rope=True, rng=5)
    x = _x(1, T, E, seed=4)
    batched, _ = _decode(mha, x, 2, _mha_step)

    def step(layer, chunk, cache):
        out, cache = _mha_step(layer, chunk[0], cache)   # 2-D in, 2-D out
        assert out.ndim == 2 and cache.key.ndim == 3
        return out[None], cache

    unbatched, cache = _decode(mha, x, 2, step)
    assert cache.key.shape == (1, T, E // H)
    np.testing.assert_allclose(unbatched, batched, rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("layout", ["mha", "mqa", "multidim_widths"])
def test_backward_with_a_cache_treats_the_cached_keys_as_constants(layout):
    mha = MultiHeadAttention(E, H, causal=True, rope=True, rng=6, **LAYOUTS[layout])
    past = _x(2, 4, E, seed=5)
    _, _, cache = mha.forward(past, past, past, use_cache=True)
    new = _x(2, 2, E, seed=6)
    errors = check_layer_gradients(mha, (new, new, new), {"past_key_value": cache},
                                   n_entries=15)
    worst = max(errors, key=errors.get)
    assert errors[worst] < 1e-6, (worst, errors[worst])


def test_bad_caches_are_rejected_with_the_expected_shapes():
    mha = MultiHeadAttention(E, H, n_kv_heads=2, causal=True, rng=0)
    x = _x(2, 3, E)
    _, _, cache = mha.forward(x, x, x, use_cache=True)
    tok = x[:, :1]
    with pytest.raises(ValueError, match=r"key \(batch, n_kv_heads, seq_len, qk_head_dim\) "
                                         r"= \(2, 2, 3, 2\)"):
        mha.forward(tok, tok, tok, past_key_value=(cache.key[:, :1], cache.value))
    with pytest.raises(ValueError, match="same batch"):
        mha.forward(tok[:1], tok[:1], tok[:1], past_key_value=cache)
    with pytest.raises(ValueError, match="past_key_value must hold key"):
        mha.forward(tok, tok, tok, past_key_value=(np.zeros(3), cache.value))
    with pytest.raises(TypeError, match=r"\(key, value\) pair"):
        mha.forward(tok, tok, tok, past_key_value=cache.key)
    with pytest.raises(ValueError, match="S counts the cached keys"):
        mha.forward(tok, tok, tok, past_key_value=cache, key_padding_mask=np.zeros((2, 1)))
    coupled = MultiHeadAttention(E, H, normalization="query_softmax", causal=True, rng=0)
    _, _, cache = coupled.forward(x, x, x, use_cache=True)
    with pytest.raises(ValueError, match="Decode with normalization='softmax'"):
        coupled.forward(tok, tok, tok, past_key_value=cache)


def test_two_continuations_of_one_cache_do_not_see_each_other():
    """The cache appends in place while it is the newest view of its buffer; a second
    continuation of the same prefix must copy, or it would overwrite the first one's."""
    mha = MultiHeadAttention(E, H, n_kv_heads=2, causal=True, rope=True, rng=7)
    x = _x(1, 5, E, seed=7)
    a, b = _x(1, 1, E, seed=8), _x(1, 1, E, seed=9)
    _, _, prefix = mha.forward(x, x, x, use_cache=True)
    _, _, after_a = mha.forward(a, a, a, past_key_value=prefix, use_cache=True)
    key_a = after_a.key.copy()
    out_b, _, after_b = mha.forward(b, b, b, past_key_value=prefix, use_cache=True)
    np.testing.assert_array_equal(after_a.key, key_a)              # untouched by b
    np.testing.assert_array_equal(after_b.key[:, :, :5], prefix.key)
    xb = np.concatenate([x, b], axis=1)
    np.testing.assert_allclose(out_b, mha.forward(xb, xb, xb)[0][:, -1:], rtol=1e-12,
                               atol=1e-12)
    # a plain (key, value) tuple, as Hugging Face passes them, and a pickled cache work too
    plain = (np.array(prefix.key), np.array(prefix.value))
    restored = pickle.loads(pickle.dumps(prefix))
    assert isinstance(restored, KeyValueCache) and restored.seq_len == 5
    for past in (plain, restored):
        out, _ = mha.forward(b, b, b, past_key_value=past)
        np.testing.assert_array_equal(out, out_b)
