"""Neural layers with explicit forward/backward and PyTorch-named parameters (public namespace)."""
from nlpfeat.attention._encoder import TransformerEncoderLayer
from nlpfeat.attention._kv_cache import KeyValueCache
from nlpfeat.attention._layers import GELU, Dropout, Layer, LayerNorm, Linear, ReLU, Sequential
from nlpfeat.attention._mha import MultiHeadAttention
from nlpfeat.attention._positional import (
    LearnedPositionalEncoding,
    RotaryEmbedding,
    SinusoidalPositionalEncoding,
    apply_rope,
    apply_rope_backward,
    rope_cos_sin,
)
from nlpfeat.attention._single_head import MultiHeadAttentionWrapper, SelfAttention
from nlpfeat.attention._torch_interop import load_torch_state_dict, to_torch_state_dict

__all__ = [
    "GELU",
    "Dropout",
    "KeyValueCache",
    "Layer",
    "LayerNorm",
    "LearnedPositionalEncoding",
    "Linear",
    "MultiHeadAttention",
    "MultiHeadAttentionWrapper",
    "ReLU",
    "RotaryEmbedding",
    "SelfAttention",
    "Sequential",
    "SinusoidalPositionalEncoding",
    "TransformerEncoderLayer",
    "apply_rope",
    "apply_rope_backward",
    "load_torch_state_dict",
    "rope_cos_sin",
    "to_torch_state_dict",
]
