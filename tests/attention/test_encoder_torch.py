"""TransformerEncoderLayer and a small encoder model against torch, forward, backward, training."""
import numpy as np
import pytest

from nlpfeat.attention.functional import mse_loss
from nlpfeat.attention.layers import (
    Linear,
    Sequential,
    TransformerEncoderLayer,
    to_torch_state_dict,
)
from nlpfeat.attention.optim import Adam, clip_grad_norm, make_schedule

torch = pytest.importorskip("torch")
from torch_utils import leaf, max_err, max_param_grad_err  # noqa: E402

pytestmark = pytest.mark.usefixtures("torch_one_thread")

TOL = 1e-10


def _pair(d_model=12, n_heads=3, ff=20, seed=0, **kw):
    ours = TransformerEncoderLayer(d_model, n_heads, ff, dropout=0.0, rng=seed, **kw)
    theirs = torch.nn.TransformerEncoderLayer(d_model, n_heads, ff, dropout=0.0, batch_first=True,
                                              dtype=torch.float64, **kw)
    theirs.load_state_dict(to_torch_state_dict(ours))
    for name, p in theirs.named_parameters():  # move norms off their trivial ones/zeros
        if name.startswith("norm"):
            with torch.no_grad():
                p.add_(torch.tensor(np.random.default_rng(len(name)).normal(size=p.shape) * 0.2))
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    return ours, theirs


@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_equals_torch(norm_first, activation):
    ours, theirs = _pair(norm_first=norm_first, activation=activation)
    rng = np.random.default_rng(1)
    x, g = rng.normal(size=(4, 6, 12)), rng.normal(size=(4, 6, 12))
    out = ours.forward(x)
    d_x = ours.backward(g)
    t_x = leaf(torch, x)
    t_out = theirs(t_x)
    t_out.backward(torch.tensor(g))
    assert max_err(out, t_out) < TOL
    assert max_err(d_x, t_x.grad) < TOL
    assert max_param_grad_err(ours, theirs) < TOL


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_masks_equal_torch(norm_first):
    ours, theirs = _pair(norm_first=norm_first, activation="gelu", seed=2)
    rng = np.random.default_rng(3)
    x, g = rng.normal(size=(3, 5, 12)), rng.normal(size=(3, 5, 12))
    kpm = np.zeros((3, 5), bool)
    kpm[1, -2:] = True
    causal = np.triu(np.ones((5, 5), bool), 1)
    out = ours.forward(x, src_mask=causal, src_key_padding_mask=kpm, is_causal=True)
    d_x = ours.backward(g)
    t_x = leaf(torch, x)
    t_out = theirs(t_x, src_mask=torch.tensor(causal), src_key_padding_mask=torch.tensor(kpm),
                   is_causal=True)
    t_out.backward(torch.tensor(g))
    assert max_err(out, t_out) < TOL
    assert max_err(d_x, t_x.grad) < TOL
    assert max_param_grad_err(ours, theirs) < TOL


def test_training_run_matches_torch_loss_curve():
    """Linear -> 2 encoder layers -> Linear, MSE, Adam with warm-up + cosine and clipping."""
    d_in, d_model, d_out, n_steps = 3, 8, 2, 200
    rng = np.random.default_rng(0)
    ours = Sequential(Linear(d_in, d_model, rng=rng),
                      TransformerEncoderLayer(d_model, 2, 16, dropout=0.0, rng=rng),
                      TransformerEncoderLayer(d_model, 2, 16, dropout=0.0, norm_first=True,
                                              activation="gelu", rng=rng),
                      Linear(d_model, d_out, rng=rng))
    theirs = torch.nn.Sequential(
        torch.nn.Linear(d_in, d_model),
        torch.nn.TransformerEncoderLayer(d_model, 2, 16, dropout=0.0, batch_first=True),
        torch.nn.TransformerEncoderLayer(d_model, 2, 16, dropout=0.0, batch_first=True,
                                         norm_first=True, activation="gelu"),
        torch.nn.Linear(d_model, d_out)).double()
    theirs.load_state_dict(to_torch_state_dict(ours))
    schedule = make_schedule("warmup_cosine", total_steps=n_steps, warmup_fraction=0.1)
    opt = Adam(ours.params, lr=3e-3, lr_schedule=schedule)
    t_opt = torch.optim.Adam(theirs.parameters(), lr=3e-3)
    t_sched = torch.optim.lr_scheduler.LambdaLR(t_opt, schedule)
    losses, t_losses = [], []
    for _ in range(n_steps):
        x = rng.normal(size=(8, 5, d_in))
        y = np.concatenate([np.sin(x[..., :1]) + x[..., 1:2] ** 2, x[..., 2:] * 2.0], axis=-1)
        loss, d_pred = mse_loss(ours.forward(x), y)
        ours.backward(d_pred)
        grads = ours.grads
        clip_grad_norm(grads, 1.0)
        opt.step(grads)
        losses.append(loss)
        t_opt.zero_grad()
        t_loss = torch.nn.functional.mse_loss(theirs(torch.tensor(x)), torch.tensor(y))
        t_loss.backward()
        torch.nn.utils.clip_grad_norm_(theirs.parameters(), 1.0)
        t_opt.step()
        t_sched.step()
        t_losses.append(t_loss.item())
    np.testing.assert_allclose(losses, t_losses, rtol=1e-8)
    assert losses[-1] < 0.5 * losses[0]  # it learned something
    for name, p in theirs.named_parameters():
        np.testing.assert_allclose(ours.params[name], p.detach().numpy(), rtol=1e-7, atol=1e-9)
