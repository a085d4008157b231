"""Positional encodings: sinusoidal, learned (absolute) and rotary (RoPE)."""
import numpy as np

from nlpfeat.attention._init import check_rng
from nlpfeat.attention._layers import Layer, check_input

__all__ = [
    "LearnedPositionalEncoding",
    "RotaryEmbedding",
    "SinusoidalPositionalEncoding",
    "apply_rope",
    "apply_rope_backward",
    "rope_cos_sin",
]


def _check_len(seq_len, max_len):
    if seq_len > max_len:
        raise ValueError(
            f"The sequence length {seq_len} exceeds max_len={max_len}; build the encoding "
            f"with max_len >= {seq_len}."
        )


class SinusoidalPositionalEncoding(Layer):
    """Add the fixed sinusoidal encoding of Vaswani et al. (2017) to a (batch, L, d) input.

    Notes
    -----
    PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(pos / 10000^(2i/d)).

    Examples
    --------
    >>> from nlpfeat.attention.layers import SinusoidalPositionalEncoding
    >>> pe = SinusoidalPositionalEncoding(4, max_len=8)
    >>> pe.forward(np.zeros((1, 2, 4)))[0].round(3)
    array([[0.   , 1.   , 0.   , 1.   ],
           [0.841, 0.54 , 0.01 , 1.   ]])
    """

    def __init__(self, d_model, max_len=5000, *, base=10000.0, dtype=np.float64):
        super().__init__(dtype)
        self.d_model, self.max_len, self.base = int(d_model), int(max_len), float(base)
        pos = np.arange(self.max_len)[:, None]
        inv_freq = self.base ** (-np.arange(0, self.d_model, 2) / self.d_model)
        pe = np.zeros((self.max_len, self.d_model))
        pe[:, 0::2] = np.sin(pos * inv_freq)
        pe[:, 1::2] = np.cos(pos * inv_freq[: self.d_model // 2])
        self.encoding = pe.astype(dtype)

    def astype(self, dtype):
        self.encoding = self.encoding.astype(dtype)
        return super().astype(dtype)

    def forward(self, x):
        """x: (batch, L, d_model) -> x + PE[:L]."""
        x = check_input(x, "x", self.d_model, self.dtype, (3,), "(batch, seq_len, d_model)")
        _check_len(x.shape[1], self.max_len)
        return x + self.encoding[: x.shape[1]]

    def backward(self, d_output):
        return d_output


class LearnedPositionalEncoding(Layer):
    """Add a learned absolute position embedding ``weight[:L]`` (parameter ``weight``).

    ``weight`` has shape (max_len, d_model) and is initialised N(0, 1), as ``torch.nn.Embedding``.

    Examples
    --------
    >>> from nlpfeat.attention.layers import LearnedPositionalEncoding
    >>> pe = LearnedPositionalEncoding(16, 4, rng=0)
    >>> pe.forward(np.zeros((2, 3, 4))).shape, pe.params["weight"].shape
    ((2, 3, 4), (16, 4))
    """

    def __init__(self, max_len, d_model, *, rng=None, dtype=np.float64):
        super().__init__(dtype)
        self.max_len, self.d_model = int(max_len), int(d_model)
        self._params["weight"] = np.empty((self.max_len, self.d_model), dtype=dtype)
        self.reset_parameters(rng)

    def reset_parameters(self, rng=None):
        self._params["weight"][...] = check_rng(rng).normal(size=self._params["weight"].shape)

    def forward(self, x):
        x = check_input(x, "x", self.d_model, self.dtype, (3,), "(batch, seq_len, d_model)")
        _check_len(x.shape[1], self.max_len)
        self._seq_len = x.shape[1]
        return x + self._params["weight"][: x.shape[1]]

    def backward(self, d_output):
        grad = np.zeros_like(self._params["weight"])
        grad[: self._seq_len] = d_output.sum(axis=0)
        self._grads["weight"] = grad
        return d_output


def rope_cos_sin(seq_len, dim, base=10000.0, dtype=np.float64, offset=0):
    """Cosine and sine tables of rotary embeddings, each of shape (seq_len, dim).

    The rotation pairs feature ``i`` with feature ``i + dim/2`` (the "rotate half" layout of
    GPT-NeoX and Llama); position ``p`` rotates pair ``i`` by ``p * base^(-2i/dim)``.

    Parameters
    ----------
    seq_len, dim : int
    base : float, default=10000.0
    dtype : numpy dtype, default=np.float64
    offset : int, default=0
        Position of the first row.

    Examples
    --------
    >>> from nlpfeat.attention.layers import rope_cos_sin
    >>> cos, sin = rope_cos_sin(3, 2)
    >>> sin.round(3)
    array([[0.   , 0.   ],
           [0.841, 0.841],
           [0.909, 0.909]])
    """
    if dim % 2:
        raise ValueError(f"Rotary embeddings need an even dimension, got {dim}.")
    inv_freq = base ** (-np.arange(0, dim, 2) / dim)
    angles = np.arange(offset, offset + seq_len)[:, None] * inv_freq[None, :]
    angles = np.concatenate([angles, angles], axis=1)
    return np.cos(angles).astype(dtype), np.sin(angles).astype(dtype)


def _rotate_half(x, sign):
    half = x.shape[-1] // 2
    out = np.empty_like(x)
    out[..., :half] = x[..., half:]
    out[..., half:] = x[..., :half]
    if sign > 0:
        out[..., :half] *= -1.0  # rotate: (-x2, x1)
    else:
        out[..., half:] *= -1.0  # transpose: (x2, -x1)
    return out


def apply_rope(x, cos, sin):
    """Rotate ``x`` of shape (..., L, dim): ``x * cos + rotate_half(x) * sin``.

    Examples
    --------
    >>> from nlpfeat.attention.layers import apply_rope, rope_cos_sin
    >>> cos, sin = rope_cos_sin(2, 2)
    >>> apply_rope(np.array([[1.0, 0.0], [1.0, 0.0]]), cos, sin).round(3)
    array([[1.   , 0.   ],
           [0.54 , 0.841]])
    """
    return x * cos + _rotate_half(x, 1) * sin


def apply_rope_backward(d_output, cos, sin):
    """Gradient of :func:`apply_rope`: the inverse rotation applied to ``d_output``.

    Examples
    --------
    >>> from nlpfeat.attention.layers import apply_rope, apply_rope_backward, rope_cos_sin
    >>> cos, sin = rope_cos_sin(4, 2)
    >>> x = np.random.default_rng(0).normal(size=(4, 2))
    >>> bool(np.allclose(apply_rope_backward(apply_rope(x, cos, sin), cos, sin), x))
    True
    """
    return d_output * cos + _rotate_half(d_output * sin, -1)


class RotaryEmbedding(Layer):
    """Rotary position embedding (RoPE) of Su et al. (2021) on (..., L, dim) inputs.

    The rotation angle grows with the position, so the dot product of a rotated query and key
    depends only on their offset. ``MultiHeadAttention(rope=True)`` applies it to every head's
    queries and keys.

    References
    ----------
    Su, J. et al. (2021). RoFormer: Enhanced Transformer with Rotary Position Embedding.

    Examples
    --------
    >>> from nlpfeat.attention.layers import RotaryEmbedding
    >>> rope = RotaryEmbedding(4)
    >>> q = rope.forward(np.ones((1, 3, 4)))
    >>> np.allclose(np.linalg.norm(q, axis=-1), 2.0)
    True
    """

    def __init__(self, dim, base=10000.0):
        super().__init__()
        if int(dim) % 2:
            raise ValueError(f"Rotary embeddings need an even dimension, got dim={dim}.")
        self.dim, self.base = int(dim), float(base)
        self._table = {}

    def cos_sin(self, seq_len, dtype):
        """Cached tables for ``seq_len`` positions in ``dtype``."""
        key = (int(seq_len), np.dtype(dtype))
        if key not in self._table:
            self._table[key] = rope_cos_sin(seq_len, self.dim, self.base, dtype)
        return self._table[key]

    def forward(self, x):
        x = np.asarray(x)
        if x.ndim < 2 or x.shape[-1] != self.dim:
            raise ValueError(f"x must have shape (..., seq_len, {self.dim}); got {x.shape}.")
        self._cs = self.cos_sin(x.shape[-2], x.dtype)
        return apply_rope(x, *self._cs)

    def backward(self, d_output):
        return apply_rope_backward(d_output, *self._cs)
