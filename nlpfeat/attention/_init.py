"""Parameter initialisation schemes by name, driven by a ``numpy.random.Generator``.

The formulas are those of ``torch.nn.init`` (fans computed the same way), so a numpy model
and a torch model initialised by the same scheme have the same weight distribution.
"""
import numpy as np

__all__ = ["INIT_SCHEMES", "check_rng", "init_array", "init_params"]

INIT_SCHEMES = (
    "default",
    "xavier_uniform",
    "xavier_normal",
    "kaiming_uniform",
    "kaiming_normal",
    "normal",
    "uniform",
)


def check_rng(rng):
    """Return a ``numpy.random.Generator`` from None, an int seed or a Generator.

    A ``RandomState`` (what ``sklearn.utils.check_random_state`` returns) seeds a new
    Generator from one draw, so estimators stay deterministic given ``random_state``.

    Examples
    --------
    >>> from nlpfeat.attention.optim import check_rng
    >>> bool(check_rng(0).integers(10) == check_rng(0).integers(10))
    True
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, np.random.RandomState):
        return np.random.default_rng(rng.randint(np.iinfo(np.int32).max))
    if rng is None or isinstance(rng, (int, np.integer)):
        return np.random.default_rng(rng)
    raise TypeError(f"rng must be None, an int seed or a numpy.random.Generator, got {type(rng)}.")


def _fans(shape):
    """``torch.nn.init._calculate_fan_in_and_fan_out`` for a weight of ``shape``."""
    if len(shape) < 2:
        raise ValueError(f"Fans need a weight with 2 or more axes, got shape {shape}.")
    receptive = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


def uniform_fan_in(shape, rng, dtype):
    """``U(+-1/sqrt(fan_in))``: torch's Linear default (kaiming_uniform with a=sqrt(5))."""
    bound = 1.0 / np.sqrt(shape[1]) if shape[1] > 0 else 0.0
    return rng.uniform(-bound, bound, size=shape).astype(dtype)


def init_array(shape, scheme, rng, *, dtype=np.float64, std=0.02, a=0.1):
    """Draw an array of ``shape`` from the named initialisation scheme.

    Parameters
    ----------
    shape : tuple of int
        ``(fan_out, fan_in, ...)`` as torch lays out weights.
    scheme : {"xavier_uniform", "xavier_normal", "kaiming_uniform", "kaiming_normal", \
"normal", "uniform", "default"}
        ``kaiming_*`` use torch's defaults (fan_in, gain sqrt(2)); ``default`` is torch's
        Linear default ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``.
    rng : numpy.random.Generator
    dtype : numpy dtype, default=np.float64
    std : float, default=0.02
        Standard deviation of ``normal``.
    a : float, default=0.1
        Half-width of ``uniform``: ``U(-a, a)``.

    Returns
    -------
    array : ndarray of ``shape`` and ``dtype``.

    Examples
    --------
    >>> from nlpfeat.attention.optim import init_array
    >>> w = init_array((512, 256), "xavier_uniform", np.random.default_rng(0))
    >>> bool(np.abs(w).max() <= np.sqrt(6 / (512 + 256)))
    True
    """
    shape = tuple(int(n) for n in shape)
    if scheme == "normal":
        return rng.normal(0.0, std, size=shape).astype(dtype)
    if scheme == "uniform":
        return rng.uniform(-a, a, size=shape).astype(dtype)
    if scheme not in INIT_SCHEMES:
        raise ValueError(f"Unknown initialisation scheme {scheme!r}; choose one of {INIT_SCHEMES}.")
    fan_in, fan_out = _fans(shape)
    if scheme == "default":
        return uniform_fan_in(shape, rng, dtype)
    if scheme.startswith("xavier"):
        std_ = np.sqrt(2.0 / (fan_in + fan_out))
    else:
        std_ = np.sqrt(2.0) / np.sqrt(fan_in)
    if scheme.endswith("uniform"):
        bound = np.sqrt(3.0) * std_
        return rng.uniform(-bound, bound, size=shape).astype(dtype)
    return rng.normal(0.0, std_, size=shape).astype(dtype)


def init_params(layer, scheme="default", *, rng=None, std=0.02, a=0.1):
    """(Re-)initialise a layer's parameters in place by a named scheme.

    Parameters
    ----------
    layer : Layer
        Any layer of :mod:`nlpfeat.attention.layers` (composites recurse).
    scheme : str, default="default"
        ``"default"`` resets every module to PyTorch's own defaults (Linear:
        kaiming_uniform with a=sqrt(5) and ``U(+-1/sqrt(fan_in))`` bias; MultiheadAttention:
        xavier_uniform in-projection and zero biases; LayerNorm: ones and zeros). Any other
        scheme of :func:`init_array` re-draws every parameter with two or more axes (the
        weight matrices, as ``for p in model.parameters(): if p.dim() > 1: init(p)``) and
        leaves biases and norms as they are.
    rng : None, int or numpy.random.Generator, default=None
    std, a : float
        See :func:`init_array`.

    Returns
    -------
    layer : the same layer.

    Examples
    --------
    >>> from nlpfeat.attention.layers import Linear
    >>> from nlpfeat.attention.optim import init_params
    >>> lin = init_params(Linear(4, 3), "normal", std=0.5, rng=0)
    >>> lin.params["weight"].shape
    (3, 4)
    """
    rng = check_rng(rng)
    if scheme == "default":
        layer.reset_parameters(rng)
        return layer
    if scheme not in INIT_SCHEMES:
        raise ValueError(f"Unknown initialisation scheme {scheme!r}; choose one of {INIT_SCHEMES}.")
    for value in layer.params.values():
        if value.ndim >= 2:
            value[...] = init_array(value.shape, scheme, rng, dtype=value.dtype, std=std, a=a)
    return layer
