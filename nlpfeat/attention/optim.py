"""Optimisers, gradient clipping, learning-rate schedules and initialisation schemes (public)."""
from nlpfeat.attention._init import INIT_SCHEMES, check_rng, init_array, init_params
from nlpfeat.attention._optim import (
    SCHEDULES,
    SGD,
    Adam,
    AdamW,
    Optimizer,
    clip_grad_norm,
    make_schedule,
)

__all__ = [
    "INIT_SCHEMES",
    "SCHEDULES",
    "SGD",
    "Adam",
    "AdamW",
    "Optimizer",
    "check_rng",
    "clip_grad_norm",
    "init_array",
    "init_params",
    "make_schedule",
]
