"""nlpfeat.kernels."""

from nlpfeat.kernels._kernels import Kernel, available_kernels, get_kernel, register_kernel
from nlpfeat.kernels._pairwise import kernel_log_weights, log_normalize

__all__ = [
    "Kernel",
    "available_kernels",
    "get_kernel",
    "kernel_log_weights",
    "log_normalize",
    "register_kernel",
]
