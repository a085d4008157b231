"""nlpfeat.text."""

from nlpfeat.text._coherence import coherence_scorer, topic_coherence

__all__ = ["coherence_scorer", "topic_coherence"]
