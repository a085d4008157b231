"""MultiHeadAttention against torch.nn.MultiheadAttention and scaled_dot_product_attention."""
import zlib

import numpy as np
import pytest

from nlpfeat.attention.layers import (
    MultiHeadAttention,
    load_torch_state_dict,
    to_torch_state_dict,
)

torch = pytest.importorskip("torch")
from torch_utils import leaf, max_err, max_param_grad_err  # noqa: E402

pytestmark = pytest.mark.usefixtures("torch_one_thread")

TOL = 1e-10
B, L, S, E, H = 3, 5, 7, 12, 3


def _masks(kind, rng):
    if kind == "none":
        return {}
    if kind == "causal_bool":
        return {"attn_mask": np.triu(np.ones((L, S), bool), 1)}
    if kind == "is_causal":  # torch needs the mask with the hint; ours builds it itself
        return {"attn_mask": np.triu(np.ones((L, S), bool), 1), "is_causal": True}
    if kind == "float_3d":
        return {"attn_mask": rng.normal(size=(B * H, L, S))}
    kpm = np.zeros((B, S), bool)
    kpm[0, -3:] = True
    kpm[2, -1] = True
    return {"key_padding_mask": kpm}


def _torch_kwargs(kwargs):
    return {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}


@pytest.mark.parametrize("average", [True, False])
@pytest.mark.parametrize("mask", ["none", "causal_bool", "is_causal", "float_3d", "key_padding"])
@pytest.mark.parametrize("config", ["bias", "no_bias", "kdim_vdim", "self"])
def test_multihead_attention_equals_torch(config, mask, average):
    rng = np.random.default_rng(zlib.crc32(f"{config}-{mask}".encode()))
    kw = {"no_bias": {"bias": False}, "kdim_vdim": {"kdim": 5, "vdim": 9}}.get(config, {})
    ours = MultiHeadAttention(E, H, rng=rng, **kw)
    theirs = torch.nn.MultiheadAttention(E, H, batch_first=True, dtype=torch.float64, **kw)
    theirs.load_state_dict(to_torch_state_dict(ours))
    n_keys = L if config == "self" else S
    q = rng.normal(size=(B, L, E))
    if config == "self":
        inputs = (q, q, q)
        masks = _masks(mask, rng) if mask != "float_3d" else {"attn_mask": rng.normal(
            size=(B * H, L, L))}
        masks = {k: v if k == "is_causal" else v[:, :L] if k == "key_padding_mask" else
                 v[..., :L, :n_keys] for k, v in masks.items()}
    else:
        inputs = (q, rng.normal(size=(B, S, ours.kdim)), rng.normal(size=(B, S, ours.vdim)))
        masks = _masks(mask, rng)
    out, weights = ours.forward(*inputs, average_attn_weights=average, **masks)
    g = rng.normal(size=out.shape)
    d_inputs = ours.backward(g)

    t_inputs = [leaf(torch, inputs[0])] * 3 if config == "self" else [leaf(torch, x)
                                                                       for x in inputs]
    t_out, t_weights = theirs(*t_inputs, average_attn_weights=average, **_torch_kwargs(masks))
    t_out.backward(torch.tensor(g))
    assert max_err(out, t_out) < TOL
    assert max_err(weights, t_weights) < TOL
    for d, t_x in zip(d_inputs, t_inputs[: 1 if config == "self" else 3]):
        assert max_err(d, t_x.grad) < TOL
    assert max_param_grad_err(ours, theirs) < TOL


def test_weights_copy_both_ways_by_name():
    theirs = torch.nn.MultiheadAttention(E, H, kdim=4, vdim=6, batch_first=True,
                                         dtype=torch.float64)
    ours = load_torch_state_dict(MultiHeadAttention(E, H, kdim=4, vdim=6, rng=0), theirs)
    for name, tensor in theirs.state_dict().items():
        np.testing.assert_array_equal(ours.params[name], tensor.numpy())
    back = torch.nn.MultiheadAttention(E, H, kdim=4, vdim=6, batch_first=True,
                                       dtype=torch.float64)
    back.load_state_dict(to_torch_state_dict(ours))
    for name, tensor in back.state_dict().items():
        np.testing.assert_array_equal(ours.params[name], tensor.numpy())
    with pytest.raises(ValueError, match="missing"):
        load_torch_state_dict(MultiHeadAttention(E, H, rng=0), theirs)


def _torch_grouped(params, x, n_heads, n_kv_heads, is_causal, repeat):
    """Grouped-query attention in torch from our parameters, via scaled_dot_product_attention."""
    t = {k: leaf(torch, v) for k, v in params.items()}
    hd = E // n_heads

    def proj(name, n):
        y = x @ t[f"{name}_proj.weight"].T + t[f"{name}_proj.bias"]
        return y.reshape(B, L, n, hd).transpose(1, 2)

    q, k, v = proj("q", n_heads), proj("k", n_kv_heads), proj("v", n_kv_heads)
    if repeat:
        r = n_heads // n_kv_heads
        k, v = k.repeat_interleave(r, dim=1), v.repeat_interleave(r, dim=1)
        ctx = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=is_causal)
    else:
        ctx = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=is_causal,
                                                               enable_gqa=True)
    out = ctx.transpose(1, 2).reshape(B, L, E) @ t["out_proj.weight"].T + t["out_proj.bias"]
    return out, t


@pytest.mark.parametrize("repeat", [False, True], ids=["enable_gqa", "repeated_kv"])
@pytest.mark.parametrize("is_causal", [False, True])
@pytest.mark.parametrize("n_kv_heads", [1, 2])  # multi-query, grouped-query
def test_grouped_query_attention_equals_torch_sdpa(n_kv_heads, is_causal, repeat):
    n_heads = 4
    rng = np.random.default_rng(n_kv_heads)
    ours = MultiHeadAttention(E, n_heads, n_kv_heads, rng=rng)
    assert ours.params["k_proj.weight"].shape == (n_kv_heads * E // n_heads, E)
    x = rng.normal(size=(B, L, E))
    out, _ = ours.forward(x, x, x, is_causal=is_causal)
    g = rng.normal(size=out.shape)
    d_x, _, _ = ours.backward(g)
    if not repeat and "enable_gqa" not in torch.nn.functional.scaled_dot_product_attention.__doc__:
        pytest.skip("this torch has no enable_gqa (torch < 2.5); the repeated_kv case covers it")
    t_x = leaf(torch, x)
    t_out, t_params = _torch_grouped(ours.params, t_x, n_heads, n_kv_heads, is_causal, repeat)
    t_out.backward(torch.tensor(g))
    assert max_err(out, t_out) < TOL
    assert max_err(d_x, t_x.grad) < TOL
    assert max(max_err(ours.grads[k], p.grad) for k, p in t_params.items()) < TOL
    # per-head weights: softmax of q k^T / sqrt(d) with each kv head shared by its group
    q = (x @ ours.params["q_proj.weight"].T + ours.params["q_proj.bias"]).reshape(
        B, L, n_heads, -1).transpose(0, 2, 1, 3)
    k = (x @ ours.params["k_proj.weight"].T + ours.params["k_proj.bias"]).reshape(
        B, L, n_kv_heads, -1).transpose(0, 2, 1, 3)
    k = np.repeat(k, n_heads // n_kv_heads, axis=1)
    scores = torch.tensor(q @ k.swapaxes(-1, -2) / np.sqrt(E // n_heads))
    if is_causal:
        scores = scores.masked_fill(torch.ones(L, L, dtype=torch.bool).triu(1), float("-inf"))
    assert max_err(ours.attn_weights, scores.softmax(-1)) < TOL
