"""Topic models (gensim and scikit-learn backends) and their coherence."""
