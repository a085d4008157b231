"""Document-term vectorizers: bag of words, positional, TF-IDF, term weighting, count
deviation and dependency relations."""
