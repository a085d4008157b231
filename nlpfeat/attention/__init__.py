"""nlpfeat.attention."""
from nlpfeat.attention import functional, layers, optim
from nlpfeat.attention._encoder import TransformerEncoderLayer
from nlpfeat.attention._mha import MultiHeadAttention

__all__ = [
    "MultiHeadAttention",
    "TransformerEncoderLayer",
    "functional",
    "layers",
    "optim",
]
