"""nlpfeat.kernels."""

__all__ = []
