"""The key/value cache of incremental (autoregressive) decoding.

A decoder that generates one token at a time attends, at every step, from the new token to
all the tokens before it. Their keys and values do not change, so
:meth:`MultiHeadAttention.forward(..., use_cache=True)
<nlpfeat.attention.MultiHeadAttention.forward>` returns them and takes them back
(``past_key_value``): each step then projects only the new token, instead of the whole
prefix again.

The layout is Hugging Face's ``past_key_values`` entry for one layer, a pair ``(key,
value)`` of arrays shaped ``(batch, n_kv_heads, seq_len, head_dim)``; keys are stored
after the rotary rotation, as there. ``n_kv_heads`` is the number of key/value heads, so a
multi-query layer caches ``1 / n_heads`` of the bytes of a multi-head one.
"""
import numpy as np

__all__ = ["KeyValueCache", "check_past_key_value", "extend_cache"]


class _Store:
    """Buffers with room to grow along the sequence axis, shared by the caches that view
    them; ``length`` positions are filled. Only the cache that views all of them may
    append in place, so no cache ever sees another's later tokens."""

    __slots__ = ("key", "length", "value")

    def __init__(self, key, value, length):
        self.key, self.value, self.length = key, value, length


class KeyValueCache(tuple):
    """Keys and values of the tokens seen so far, per key/value head: a ``(key, value)`` pair.

    The shapes of one layer of Hugging Face's ``past_key_values``; unbatched calls drop
    the batch axis, as PyTorch's unbatched inputs do. The arrays view buffers with room
    for more tokens (capacity doubles when full), so appending a token costs its own
    bytes, not a copy of the whole cache; a cache that is extended twice (two
    continuations of one prefix) copies instead, so neither sees the other's tokens.

    Attributes
    ----------
    key : ndarray of shape (batch, n_kv_heads, seq_len, qk_head_dim)
        Keys after the rotary rotation (when the layer has ``rope=True``).
    value : ndarray of shape (batch, n_kv_heads, seq_len, v_head_dim)

    Examples
    --------
    >>> from nlpfeat.attention.layers import MultiHeadAttention
    >>> mha = MultiHeadAttention(8, 4, n_kv_heads=1, causal=True, rng=0)
    >>> x = np.random.default_rng(0).normal(size=(2, 5, 8))
    >>> out, _, cache = mha.forward(x, x, x, use_cache=True)
    >>> key, value = cache
    >>> key.shape, cache.seq_len, cache.nbytes
    ((2, 1, 5, 2), 5, 320)
    >>> new = np.random.default_rng(1).normal(size=(2, 1, 8))
    >>> out, _, cache = mha.forward(new, new, new, past_key_value=cache, use_cache=True)
    >>> out.shape, cache.seq_len
    ((2, 1, 8), 6)
    """

    def __new__(cls, key, value, _store=None):
        self = super().__new__(cls, (key, value))
        self._store = _store
        return self

    def __reduce__(self):  # pickle the data, not the spare capacity
        return KeyValueCache, (np.array(self[0]), np.array(self[1]))

    @property
    def key(self):
        """The cached keys, ``self[0]``."""
        return self[0]

    @property
    def value(self):
        """The cached values, ``self[1]``."""
        return self[1]

    @property
    def seq_len(self):
        """Number of cached positions."""
        return self[0].shape[-2]

    @property
    def nbytes(self):
        """Bytes of the cached keys and values (the buffers reserve up to twice that)."""
        return self[0].nbytes + self[1].nbytes


def check_past_key_value(past, batch, n_kv_heads, qk_head_dim, v_head_dim, dtype, unbatched):
    """-> the cache as batched (key, value) arrays of ``dtype``, or None; ValueError when its
    shapes do not fit the layer or the batch."""
    if past is None:
        return None
    if not isinstance(past, tuple) or len(past) != 2:
        raise TypeError("past_key_value must be the (key, value) pair a forward(..., "
                        f"use_cache=True) returned, got {type(past).__name__}.")
    lead = () if unbatched else (batch,)
    key, value = (np.asarray(a, dtype=dtype) for a in past)
    expect_k = lead + (n_kv_heads, key.shape[-2] if key.ndim >= 2 else 0, qk_head_dim)
    expect_v = lead + (n_kv_heads, expect_k[-2], v_head_dim)
    if key.shape != expect_k or value.shape != expect_v:
        where = "" if unbatched else "batch, "
        raise ValueError(
            f"past_key_value must hold key ({where}n_kv_heads, seq_len, qk_head_dim) = "
            f"{expect_k} and value ({where}n_kv_heads, seq_len, v_head_dim) = {expect_v} "
            f"for this layer and input; got {key.shape} and {value.shape}. Pass the cache "
            f"that this layer returned for the same batch.")
    if unbatched:
        key, value = key[None], value[None]
    return key, value


def _appendable(past, store, n_new, dtype):
    """Whether ``past`` views every filled position of ``store``, of ``dtype``, with room."""
    return (store is not None and store.length == past.seq_len and store.key.dtype == dtype
            and store.length + n_new <= store.key.shape[2])


def extend_cache(past, checked, key, value):
    """Append this step's keys and values (B, G, S_new, .) to the cache ``past``.

    ``checked`` is what :func:`check_past_key_value` made of it (batched arrays, or None).
    Returns ``(keys, values, store)``: all the keys and values so far, (B, G, S, .), as
    views of the store's buffers.
    """
    n_old = 0 if checked is None else checked[0].shape[2]
    n = n_old + key.shape[2]
    store = getattr(past, "_store", None)
    if not _appendable(past, store, key.shape[2], key.dtype):
        capacity = max(2 * n, 16)
        buffers = [np.empty(a.shape[:2] + (capacity,) + a.shape[3:], a.dtype)
                   for a in (key, value)]
        if checked is not None:
            for buf, old in zip(buffers, checked):
                buf[:, :, :n_old] = old
        store = _Store(buffers[0], buffers[1], n_old)
    store.key[:, :, n_old:n] = key
    store.value[:, :, n_old:n] = value
    store.length = n
    return store.key[:, :, :n], store.value[:, :, :n], store
