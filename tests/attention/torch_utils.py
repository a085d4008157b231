"""Helpers for the PyTorch parity tests (imported only after ``pytest.importorskip("torch")``)."""
import numpy as np


def max_err(ours, theirs):
    """Max absolute difference between a numpy array and a torch tensor."""
    return float(np.abs(np.asarray(ours) - theirs.detach().numpy()).max())


def max_param_grad_err(layer, module):
    """Max over every parameter of |our grad - torch grad|, matched by state_dict name."""
    named = dict(module.named_parameters())
    assert set(named) == set(layer.grads), (sorted(named), sorted(layer.grads))
    return max(max_err(layer.grads[name], p.grad) for name, p in named.items())


def leaf(torch, array):
    return torch.tensor(array, dtype=torch.float64, requires_grad=True)
