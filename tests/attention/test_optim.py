import math
import pickle

import numpy as np
import pytest

from nlpfeat.attention.layers import Linear, MultiHeadAttention, TransformerEncoderLayer
from nlpfeat.attention.optim import (
    INIT_SCHEMES,
    SGD,
    Adam,
    AdamW,
    clip_grad_norm,
    init_array,
    init_params,
    make_schedule,
)


def _run(opt_cls, torch_cls, kwargs, n_steps=100, dtype=np.float64):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    params = {"w": rng.normal(size=(4, 3)).astype(dtype), "b": rng.normal(size=3).astype(dtype)}
    t_params = [torch.tensor(params[n].copy(), requires_grad=True) for n in ("w", "b")]
    opt = opt_cls(params, **kwargs)
    t_opt = torch_cls(t_params, **kwargs)
    worst = 0.0
    for step in range(n_steps):
        grads = {"w": rng.normal(size=(4, 3)).astype(dtype),
                 "b": rng.normal(size=3).astype(dtype) * 10.0 ** (step % 3 - 1)}
        opt.step(grads)
        for p, name in zip(t_params, ("w", "b")):
            p.grad = torch.tensor(grads[name])
        t_opt.step()
        worst = max(worst, *(np.abs(params[n] - p.detach().numpy()).max()
                             for n, p in zip(("w", "b"), t_params)))
    assert all(v.dtype == dtype for v in params.values())
    return worst


@pytest.mark.parametrize("kwargs", [
    {"lr": 1e-2},
    {"lr": 3e-2, "betas": (0.8, 0.99), "eps": 1e-6, "weight_decay": 0.1},
])
@pytest.mark.parametrize("name", ["Adam", "AdamW"])
def test_adam_and_adamw_equal_torch_over_100_steps(name, kwargs):
    torch = pytest.importorskip("torch")
    ours, theirs = {"Adam": (Adam, torch.optim.Adam), "AdamW": (AdamW, torch.optim.AdamW)}[name]
    assert _run(ours, theirs, kwargs) < 1e-12


@pytest.mark.parametrize("kwargs", [
    {"lr": 0.05},
    {"lr": 0.05, "momentum": 0.9, "weight_decay": 0.01},
    {"lr": 0.05, "momentum": 0.9, "nesterov": True},
    {"lr": 0.05, "momentum": 0.5, "dampening": 0.3},
])
def test_sgd_equals_torch(kwargs):
    torch = pytest.importorskip("torch")
    assert _run(SGD, torch.optim.SGD, kwargs) < 1e-12


def test_adam_float32_stays_float32_and_close_to_torch():
    torch = pytest.importorskip("torch")
    assert _run(AdamW, torch.optim.AdamW, {"lr": 1e-2}, dtype=np.float32) < 1e-5


def test_adamw_decay_is_decoupled():
    p = {"w": np.array([2.0])}
    AdamW(p, lr=0.1, weight_decay=0.5).step({"w": np.array([0.0])})
    np.testing.assert_allclose(p["w"], 2.0 * (1 - 0.1 * 0.5))  # no gradient, only decay
    q = {"w": np.array([2.0])}
    Adam(q, lr=0.1, weight_decay=0.5).step({"w": np.array([0.0])})
    np.testing.assert_allclose(q["w"], 2.0 - 0.1)  # L2 enters the gradient: a full Adam step


def test_clip_grad_norm_equals_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    for max_norm in (0.5, 100.0):
        grads = {"a": rng.normal(size=(3, 4)), "b": rng.normal(size=5)}
        t_params = [torch.zeros(g.shape, dtype=torch.float64, requires_grad=True)
                    for g in grads.values()]
        for p, g in zip(t_params, grads.values()):
            p.grad = torch.tensor(g)
        total = clip_grad_norm(grads, max_norm)
        t_total = torch.nn.utils.clip_grad_norm_(t_params, max_norm)
        assert abs(total - t_total.item()) < 1e-12
        for g, p in zip(grads.values(), t_params):
            np.testing.assert_allclose(g, p.grad.numpy(), rtol=1e-14)


def test_schedules():
    assert [make_schedule()(t) for t in (0, 10**6)] == [1.0, 1.0]
    warm = make_schedule("linear_warmup", total_steps=100, warmup_fraction=0.1)
    np.testing.assert_allclose([warm(t) for t in (0, 5, 10, 99)], [0.0, 0.5, 1.0, 1.0])
    cos = make_schedule("warmup_cosine", total_steps=100, warmup_fraction=0.2)
    np.testing.assert_allclose([cos(t) for t in (10, 20, 60, 100)],
                               [0.5, 1.0, 0.5 * (1 + math.cos(math.pi * 0.5)), 0.0], atol=1e-15)
    assert pickle.loads(pickle.dumps(cos))(60) == cos(60)
    p = {"w": np.array([1.0])}
    opt = SGD(p, lr=1.0, lr_schedule=warm)
    assert opt.current_lr() == 0.0
    opt.step({"w": np.array([1.0])})
    np.testing.assert_allclose([opt.current_lr(), p["w"][0]], [0.1, 1.0])
    with pytest.raises(ValueError, match="choose one of"):
        make_schedule("exponential")
    with pytest.raises(ValueError, match="total_steps"):
        make_schedule("linear_warmup", warmup_fraction=0.1)
    with pytest.raises(ValueError, match="warmup_fraction"):
        make_schedule("linear_warmup", 10, warmup_fraction=1.5)


def test_optimizer_errors():
    with pytest.raises(TypeError, match="dict"):
        Adam([np.zeros(2)])
    with pytest.raises(ValueError, match="lr"):
        SGD({"w": np.zeros(2)}, lr=-1.0)


@pytest.mark.parametrize("scheme, torch_init", [
    ("xavier_uniform", lambda nn, t: nn.init.xavier_uniform_(t)),
    ("xavier_normal", lambda nn, t: nn.init.xavier_normal_(t)),
    ("kaiming_uniform", lambda nn, t: nn.init.kaiming_uniform_(t)),
    ("kaiming_normal", lambda nn, t: nn.init.kaiming_normal_(t)),
    ("normal", lambda nn, t: nn.init.normal_(t, std=0.02)),
    ("uniform", lambda nn, t: nn.init.uniform_(t, -0.1, 0.1)),
    ("default", lambda nn, t: nn.init.kaiming_uniform_(t, a=math.sqrt(5))),
])
def test_init_schemes_follow_torch_distributions(scheme, torch_init):
    torch = pytest.importorskip("torch")
    shape = (300, 200)
    ours = init_array(shape, scheme, np.random.default_rng(0))
    theirs = torch_init(torch.nn, torch.empty(shape, dtype=torch.float64)).numpy()
    np.testing.assert_allclose(ours.std(), theirs.std(), rtol=0.03)
    if scheme.endswith("uniform") or scheme == "default":  # same support
        np.testing.assert_allclose(np.abs(ours).max(), np.abs(theirs).max(), rtol=0.01)
    assert abs(ours.mean()) < 0.02 * ours.std()


def test_default_init_matches_torch_module_defaults():
    torch = pytest.importorskip("torch")
    mha = MultiHeadAttention(64, 4, rng=0)
    t_mha = torch.nn.MultiheadAttention(64, 4, batch_first=True)
    for name in ("in_proj_bias", "out_proj.bias"):
        assert not mha.params[name].any() and not t_mha.state_dict()[name].any()
    bound = math.sqrt(6 / (64 + 192))  # xavier_uniform on the stacked (192, 64) weight
    for w in (mha.params["in_proj_weight"], t_mha.in_proj_weight.detach().numpy()):
        assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    lin, t_lin = Linear(50, 30, rng=0), torch.nn.Linear(50, 30)
    for p in (lin.params["bias"], t_lin.bias.detach().numpy(),
              lin.params["weight"], t_lin.weight.detach().numpy()):
        assert np.abs(p).max() <= 1 / math.sqrt(50)


def test_init_params_by_name_is_seeded_and_touches_only_matrices():
    layer = TransformerEncoderLayer(8, 2, 16, rng=0)
    before = layer.state_dict()
    init_params(layer, "kaiming_normal", rng=3)
    after = layer.state_dict()
    for name in before:
        changed = not np.array_equal(before[name], after[name])
        assert changed == (before[name].ndim >= 2), name
    again = init_params(TransformerEncoderLayer(8, 2, 16, rng=0), "kaiming_normal", rng=3)
    for name, value in again.params.items():
        np.testing.assert_array_equal(value, after[name])
    init_params(layer, "default", rng=0)
    for name, value in TransformerEncoderLayer(8, 2, 16, rng=0).params.items():
        np.testing.assert_array_equal(layer.params[name], value)
    with pytest.raises(ValueError, match="choose one of"):
        init_params(layer, "orthogonal")
    assert set(INIT_SCHEMES) >= {"default", "xavier_uniform", "normal", "uniform"}
