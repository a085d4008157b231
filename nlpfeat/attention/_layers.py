"""Neural layers with explicit forward and backward passes (no autograd).

Each layer keeps what its backward needs from the last ``forward``; ``backward(d_output)``
returns the gradient with respect to the input and fills ``layer.grads`` (overwriting the
previous values, not accumulating). ``layer.params`` maps the names of the matching PyTorch
``state_dict()`` to the arrays themselves, so updating them in place updates the layer.
"""
import numpy as np
from scipy.special import erf

from nlpfeat._persist import PlainStateMixin
from nlpfeat.attention._init import check_rng, uniform_fan_in

__all__ = ["GELU", "Dropout", "Layer", "LayerNorm", "Linear", "ReLU", "Sequential"]


def check_input(x, name, last_dim, dtype, ndims=(3,), shape_doc="(batch, seq_len, d)"):
    """Cast ``x`` to ``dtype`` (no copy if it already is) and check its ndim and last axis."""
    x = np.asarray(x)
    if x.dtype.kind not in "fiub":
        raise TypeError(f"{name} must be a numeric array, got dtype {x.dtype}.")
    x = x.astype(dtype, copy=False)
    if x.ndim not in ndims or (last_dim is not None and x.shape[-1] != last_dim):
        raise ValueError(
            f"{name} must have shape {shape_doc} with last axis {last_dim}; got shape {x.shape}."
        )
    return x


class Layer(PlainStateMixin):
    """Base class: parameters, gradients, children, train/eval mode and state dicts.

    Subclasses put their own arrays in ``self._params`` and sub-layers in ``self._children``;
    ``params``/``grads`` expose them under dotted PyTorch names (``"linear1.weight"``).

    Parameters
    ----------
    dtype : {np.float64, np.float32}, default=np.float64

    Examples
    --------
    >>> from nlpfeat.attention.layers import Linear, Sequential
    >>> model = Sequential(Linear(2, 2, rng=0))
    >>> model.params["0.weight"] is model[0].params["weight"]
    True
    """

    def __init__(self, dtype=np.float64):
        self._params = {}
        self._grads = {}
        self._children = {}
        self._dtype = np.dtype(dtype)
        if self._dtype not in (np.float32, np.float64):
            raise TypeError(f"dtype must be float32 or float64, got {self._dtype}.")
        self.training = True

    def _collect(self, attr):
        out = dict(getattr(self, attr))
        for child_name, child in self._children.items():
            for key, value in getattr(child, attr[1:]).items():
                out[f"{child_name}.{key}"] = value
        return out

    @property
    def params(self):
        """dict name -> ndarray: the parameters themselves (in place updates take effect)."""
        return self._collect("_params")

    @property
    def grads(self):
        """dict name -> ndarray: gradients from the last ``backward``."""
        return self._collect("_grads")

    @property
    def dtype(self):
        """The floating dtype of the parameters (and of the computations)."""
        return self._dtype

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, x):
        """Compute the output from ``x`` (batch first) and keep what ``backward`` needs."""
        raise NotImplementedError

    def backward(self, d_output):
        """Gradient of the loss with respect to the last input, given ``d_output``; fills
        ``grads`` (overwriting, not accumulating)."""
        raise NotImplementedError

    def train(self, mode=True):
        """Set training mode (dropout active) recursively; returns self."""
        self.training = bool(mode)
        for child in self._children.values():
            child.train(mode)
        return self

    def eval(self):
        """Set evaluation mode (dropout off); returns self."""
        return self.train(False)

    def zero_grad(self):
        """Set every gradient to zeros shaped like its parameter."""
        self._grads = {k: np.zeros_like(v) for k, v in self._params.items()}
        for child in self._children.values():
            child.zero_grad()

    def reset_parameters(self, rng=None):
        """Re-draw the parameters with PyTorch's default initialisation for this module."""
        rng = check_rng(rng)
        for child in self._children.values():
            child.reset_parameters(rng)

    def state_dict(self):
        """Copies of the parameters, by PyTorch name."""
        return {k: v.copy() for k, v in self.params.items()}

    def load_state_dict(self, state_dict, strict=True):
        """Copy arrays into the parameters in place (cast to the layer's dtype).

        Raises ValueError on a missing or unexpected name (when ``strict``) or a shape mismatch.
        """
        params = self.params
        missing = sorted(set(params) - set(state_dict))
        unexpected = sorted(set(state_dict) - set(params))
        if strict and (missing or unexpected):
            raise ValueError(
                f"State dict does not match {type(self).__name__}: missing {missing}, "
                f"unexpected {unexpected}. Expected names: {sorted(params)}."
            )
        for name in set(params) & set(state_dict):
            value = np.asarray(state_dict[name])
            if value.shape != params[name].shape:
                raise ValueError(
                    f"Parameter {name!r} has shape {params[name].shape}, got {value.shape}."
                )
            params[name][...] = value
        return self

    def astype(self, dtype):
        """Convert every parameter to ``dtype`` (float32 or float64); returns self."""
        self._dtype = np.dtype(dtype)
        self._params = {k: v.astype(dtype) for k, v in self._params.items()}
        self._grads = {}
        for child in self._children.values():
            child.astype(dtype)
        return self


class Linear(Layer):
    """Affine map ``y = x W^T + b`` on the last axis, as ``torch.nn.Linear``.

    Parameters
    ----------
    in_features, out_features : int
    bias : bool, default=True
    rng : None, int or numpy.random.Generator, default=None
        Draws the PyTorch default initialisation.
    dtype : {np.float64, np.float32}, default=np.float64

    Examples
    --------
    >>> from nlpfeat.attention.layers import Linear
    >>> lin = Linear(3, 2, rng=0)
    >>> sorted((k, v.shape) for k, v in lin.params.items())
    [('bias', (2,)), ('weight', (2, 3))]
    >>> lin.forward(np.ones((4, 3))).shape
    (4, 2)
    """

    def __init__(self, in_features, out_features, bias=True, *, rng=None, dtype=np.float64):
        super().__init__(dtype)
        self.in_features, self.out_features, self.bias = int(in_features), int(out_features), bias
        self._params["weight"] = np.empty((self.out_features, self.in_features), dtype=dtype)
        if bias:
            self._params["bias"] = np.empty(self.out_features, dtype=dtype)
        self.reset_parameters(rng)

    def reset_parameters(self, rng=None):
        rng = check_rng(rng)
        self._params["weight"][...] = uniform_fan_in(self._params["weight"].shape, rng, self.dtype)
        if self.bias:
            bound = 1.0 / np.sqrt(self.in_features) if self.in_features else 0.0
            self._params["bias"][...] = rng.uniform(-bound, bound, self.out_features)

    def forward(self, x):
        """x: (..., in_features) -> (..., out_features)."""
        x = check_input(x, "x", self.in_features, self.dtype, range(1, 33), "(..., in_features)")
        self._x = x
        y = x.reshape(-1, self.in_features) @ self._params["weight"].T  # one 2-D GEMM
        if self.bias:
            y += self._params["bias"]
        return y.reshape(x.shape[:-1] + (self.out_features,))

    def backward(self, d_output):
        """d_output: (..., out_features) -> d_x: (..., in_features)."""
        x2 = self._x.reshape(-1, self.in_features)
        d2 = d_output.reshape(-1, self.out_features)
        self._grads["weight"] = d2.T @ x2
        if self.bias:
            self._grads["bias"] = d2.sum(axis=0)
        return (d2 @ self._params["weight"]).reshape(self._x.shape)


class LayerNorm(Layer):
    """Layer normalisation over the last axis, as ``torch.nn.LayerNorm(normalized_shape)``.

    Notes
    -----
    y = (x - mean) / sqrt(var + eps) * weight + bias, with the biased variance.

    Examples
    --------
    >>> from nlpfeat.attention.layers import LayerNorm
    >>> LayerNorm(2).forward(np.array([[1.0, 3.0]])).round(3)
    array([[-1.,  1.]])
    """

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, *,
                 dtype=np.float64):
        super().__init__(dtype)
        self.normalized_shape, self.eps = int(normalized_shape), float(eps)
        self.elementwise_affine, self.bias = elementwise_affine, bias and elementwise_affine
        if elementwise_affine:
            self._params["weight"] = np.ones(self.normalized_shape, dtype=dtype)
            if self.bias:
                self._params["bias"] = np.zeros(self.normalized_shape, dtype=dtype)

    def reset_parameters(self, rng=None):
        for name, value in self._params.items():
            value[...] = 1.0 if name == "weight" else 0.0

    def forward(self, x):
        """x: (..., normalized_shape) -> same shape."""
        x = check_input(x, "x", self.normalized_shape, self.dtype, range(1, 33), "(..., d)")
        mean = x.mean(axis=-1, keepdims=True)
        centred = x - mean
        var = (centred * centred).mean(axis=-1, keepdims=True)
        self._rstd = 1.0 / np.sqrt(var + self.eps)
        self._xhat = centred * self._rstd
        if not self.elementwise_affine:
            return self._xhat.copy()
        y = self._xhat * self._params["weight"]
        if self.bias:
            y += self._params["bias"]
        return y

    def backward(self, d_output):
        xhat, d = self._xhat, self.normalized_shape
        if self.elementwise_affine:
            d2 = d_output.reshape(-1, d)
            self._grads["weight"] = (d2 * xhat.reshape(-1, d)).sum(axis=0)
            if self.bias:
                self._grads["bias"] = d2.sum(axis=0)
            d_xhat = d_output * self._params["weight"]
        else:
            d_xhat = d_output
        mean_d = d_xhat.mean(axis=-1, keepdims=True)
        mean_dx = (d_xhat * xhat).mean(axis=-1, keepdims=True)
        return (d_xhat - mean_d - xhat * mean_dx) * self._rstd


class ReLU(Layer):
    """Rectified linear unit ``max(x, 0)``; the gradient at 0 is 0, as in torch.

    Examples
    --------
    >>> from nlpfeat.attention.layers import ReLU
    >>> relu = ReLU()
    >>> relu.forward(np.array([-1.0, 2.0])), relu.backward(np.array([5.0, 5.0]))
    (array([0., 2.]), array([0., 5.]))
    """

    def forward(self, x):
        self._x = np.asarray(x)
        return np.maximum(self._x, 0.0)

    def backward(self, d_output):
        return d_output * (self._x > 0)


class GELU(Layer):
    """Gaussian error linear unit ``x * Phi(x)`` (exact erf form, torch's default).

    Parameters
    ----------
    approximate : {"none", "tanh"}, default="none"

    Examples
    --------
    >>> from nlpfeat.attention.layers import GELU
    >>> GELU().forward(np.array([-1.0, 0.0, 1.0])).round(4)
    array([-0.1587,  0.    ,  0.8413])
    """

    _C = float(np.sqrt(2.0 / np.pi))

    def __init__(self, approximate="none"):
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"approximate must be 'none' or 'tanh', got {approximate!r}.")
        self.approximate = approximate

    def forward(self, x):
        x = np.asarray(x)
        self._x = x
        if self.approximate == "tanh":
            self._t = np.tanh(self._C * (x + 0.044715 * x * x * x))
            return 0.5 * x * (1.0 + self._t)
        self._cdf = 0.5 * (1.0 + erf(x * float(1.0 / np.sqrt(2.0))))
        return x * self._cdf

    def backward(self, d_output):
        x = self._x
        if self.approximate == "tanh":
            t = self._t
            inner = self._C * (1.0 + 3 * 0.044715 * x * x)
            return d_output * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * inner)
        pdf = np.exp(-0.5 * x * x) * float(1.0 / np.sqrt(2.0 * np.pi))
        return d_output * (self._cdf + x * pdf)


class Dropout(Layer):
    """Inverted dropout: zero entries with probability ``p`` in training, scale by 1/(1-p).

    Parameters
    ----------
    p : float in [0, 1), default=0.5
    rng : None, int or numpy.random.Generator, default=None

    Examples
    --------
    >>> from nlpfeat.attention.layers import Dropout
    >>> drop = Dropout(0.5, rng=0)
    >>> sorted(set(drop.forward(np.ones(8)).tolist()))
    [0.0, 2.0]
    >>> drop.eval().forward(np.ones(2))
    array([1., 1.])
    """

    def __init__(self, p=0.5, *, rng=None):
        super().__init__()
        if not 0.0 <= float(p) < 1.0:
            raise ValueError(f"Dropout probability must be in [0, 1), got p={p!r}.")
        self.p, self.rng = float(p), check_rng(rng)

    def forward(self, x):
        x = np.asarray(x)
        if not self.training or self.p == 0.0:
            self._keep = None
            return x
        self._keep = (self.rng.random(x.shape, dtype=np.float32) >= self.p).astype(x.dtype)
        self._keep *= 1.0 / (1.0 - self.p)
        return x * self._keep

    def backward(self, d_output):
        return d_output if self._keep is None else d_output * self._keep


class Sequential(Layer):
    """Chain of single-input layers; parameter names ``"0.weight"``, as ``torch.nn.Sequential``.

    Examples
    --------
    >>> from nlpfeat.attention.layers import Linear, ReLU, Sequential
    >>> model = Sequential(Linear(3, 4, rng=0), ReLU(), Linear(4, 1, rng=0))
    >>> sorted(model.params)
    ['0.bias', '0.weight', '2.bias', '2.weight']
    >>> model.backward(np.ones_like(model.forward(np.ones((5, 3))))).shape
    (5, 3)
    """

    def __init__(self, *layers):
        dtypes = {layer.dtype for layer in layers if layer._params or layer._children}
        super().__init__(dtypes.pop() if len(dtypes) == 1 else np.float64)
        self.layers = list(layers)
        self._children = {str(i): layer for i, layer in enumerate(self.layers)}

    def __getitem__(self, index):
        return self.layers[index]

    def __len__(self):
        return len(self.layers)

    def forward(self, x):
        for layer in self.layers:
            x = layer.forward(x)
        return x

    def backward(self, d_output):
        for layer in reversed(self.layers):
            d_output = layer.backward(d_output)
        return d_output
