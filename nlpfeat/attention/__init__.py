"""nlpfeat.attention."""
from nlpfeat.attention import functional, layers, optim
from nlpfeat.attention._attention_regressor import AttentionRegressor
from nlpfeat.attention._encoder import TransformerEncoderLayer
from nlpfeat.attention._mha import MultiHeadAttention
from nlpfeat.attention._sequence_regressor import SequenceAttentionRegressor
from nlpfeat.attention._single_head import MultiHeadAttentionWrapper, SelfAttention
from nlpfeat.attention._training import TrainingDivergedError

__all__ = [
    "AttentionRegressor",
    "MultiHeadAttention",
    "MultiHeadAttentionWrapper",
    "SelfAttention",
    "SequenceAttentionRegressor",
    "TrainingDivergedError",
    "TransformerEncoderLayer",
    "functional",
    "layers",
    "optim",
]
