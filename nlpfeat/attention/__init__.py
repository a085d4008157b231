"""nlpfeat.attention."""

__all__ = []
