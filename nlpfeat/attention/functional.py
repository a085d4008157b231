"""Attention functions with hand-written backward passes (public namespace).

Implemented in :mod:`nlpfeat.attention._functional` (softmax, Sinkhorn, masks, dropout,
loss) and :mod:`nlpfeat.attention._scores` (scoring functions).
"""
import numpy as np  # noqa: F401  (doctests use np)

from nlpfeat.attention._functional import (  # noqa: F401
    __all__,
    additive_score,
    additive_score_backward,
    attention_dropout,
    attention_dropout_backward,
    causal_mask,
    gaussian_score,
    gaussian_score_backward,
    key_padding_mask,
    mask_to_additive,
    masked_softmax,
    masked_softmax_backward,
    mse_loss,
    multidim_score,
    multidim_score_backward,
    scaled_dot_score,
    scaled_dot_score_backward,
    sinkhorn,
    sinkhorn_backward,
)
