"""Copy parameters between nlpfeat layers and PyTorch modules by ``state_dict`` name.

torch is imported inside the functions only: nlpfeat never needs it otherwise.
"""
import numpy as np

from nlpfeat._validation import import_optional

__all__ = ["load_torch_state_dict", "to_torch_state_dict"]


def to_torch_state_dict(layer):
    """The layer's parameters as a dict of torch tensors (copies), for ``module.load_state_dict``.

    Parameters
    ----------
    layer : Layer

    Returns
    -------
    state_dict : dict name -> torch.Tensor, same dtype as the layer.

    Examples
    --------
    >>> from nlpfeat.attention.layers import Linear, to_torch_state_dict
    >>> torch = __import__("pytest").importorskip("torch")
    >>> module = torch.nn.Linear(3, 2).double()
    >>> _ = module.load_state_dict(to_torch_state_dict(Linear(3, 2, rng=0)))
    """
    torch = import_optional("torch", "torch", "to_torch_state_dict")
    return {name: torch.from_numpy(np.array(value)) for name, value in layer.params.items()}


def load_torch_state_dict(layer, source, strict=True):
    """Copy a torch module's (or state dict's) tensors into ``layer`` in place, by name.

    Parameters
    ----------
    layer : Layer
    source : torch.nn.Module or mapping name -> tensor
    strict : bool, default=True
        Raise ValueError when names differ (buffers without a matching parameter are ignored).

    Returns
    -------
    layer : the same layer.

    Examples
    --------
    >>> from nlpfeat.attention.layers import MultiHeadAttention, load_torch_state_dict
    >>> torch = __import__("pytest").importorskip("torch")
    >>> module = torch.nn.MultiheadAttention(8, 2, batch_first=True)
    >>> mha = load_torch_state_dict(MultiHeadAttention(8, 2), module)
    >>> bool(np.allclose(mha.params["in_proj_weight"], module.in_proj_weight.detach().numpy()))
    True
    """
    state = source.state_dict() if hasattr(source, "state_dict") else source
    arrays = {name: tensor.detach().cpu().numpy() for name, tensor in state.items()}
    if hasattr(source, "named_buffers"):
        for name, _ in source.named_buffers():
            arrays.pop(name, None)
    return layer.load_state_dict(arrays, strict=strict)
