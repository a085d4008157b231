"""nlpfeat.text."""

__all__ = []
