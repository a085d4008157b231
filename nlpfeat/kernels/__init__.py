"""nlpfeat.kernels."""

from nlpfeat.kernels._base import EmptySupportWarning
from nlpfeat.kernels._estimators import (
    NadarayaWatsonClassifier,
    NadarayaWatsonRegressor,
)
from nlpfeat.kernels._kernels import (
    Kernel,
    available_kernels,
    get_kernel,
    register_kernel,
    unregister_kernel,
)
from nlpfeat.kernels._pairwise import kernel_log_weights, log_normalize

__all__ = [
    "EmptySupportWarning",
    "Kernel",
    "NadarayaWatsonClassifier",
    "NadarayaWatsonRegressor",
    "available_kernels",
    "get_kernel",
    "kernel_log_weights",
    "log_normalize",
    "register_kernel",
    "unregister_kernel",
]
