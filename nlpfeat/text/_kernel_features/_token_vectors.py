"""Token vectors from any source: a dict, gensim KeyedVectors, or an nlpfeat estimator.

One place turns the ``embeddings`` that text estimators accept into a token -> row mapping
and a matrix, without copying large gensim vocabularies.
"""
from collections.abc import Mapping

import numpy as np

from nlpfeat._validation import check_finite

__all__ = ["resolve_embeddings"]


def resolve_embeddings(embeddings):
    """Token -> row mapping and vector matrix of a dict, KeyedVectors or fitted estimator.

    Returns ``(vocabulary, matrix)``; a gensim model with a ``wv`` attribute uses its
    ``wv``. Raises TypeError for anything else and ValueError for bad vectors.

    Examples
    --------
    >>> from nlpfeat.text._kernel_features._token_vectors import resolve_embeddings
    >>> vocabulary, matrix = resolve_embeddings({"cat": [1.0, 0.0], "mat": [0.0, 2.0]})
    >>> vocabulary, matrix.shape
    ({'cat': 0, 'mat': 1}, (2, 2))
    """
    source = getattr(embeddings, "wv", embeddings)
    if hasattr(source, "key_to_index") and hasattr(source, "vectors"):  # gensim KeyedVectors
        vocabulary, matrix = source.key_to_index, np.asarray(source.vectors)
    elif hasattr(source, "vocabulary_") and hasattr(source, "embeddings_"):
        vocabulary, matrix = source.vocabulary_, np.asarray(source.embeddings_)
    elif isinstance(source, Mapping):
        vocabulary = dict(zip(source, range(len(source))))
        rows = [np.asarray(vec, dtype=np.float64) for vec in source.values()]
        shapes = {row.shape for row in rows}
        if len(shapes) > 1 or (rows and rows[0].ndim != 1):
            raise ValueError(
                f"embeddings must map every token to a 1-D vector of the same length; got "
                f"vectors of shapes {sorted(shapes)[:5]}."
            )
        matrix = np.vstack(rows) if rows else np.empty((0, 0))
    else:
        raise TypeError(
            f"embeddings must be a mapping token -> vector (dict), a gensim KeyedVectors, or "
            f"an estimator with vocabulary_ and embeddings_ (fitted, or fittable on X); got "
            f"{type(embeddings).__name__}."
        )
    if matrix.ndim != 2 or matrix.shape[0] == 0 or matrix.shape[1] == 0:
        raise ValueError(
            f"embeddings hold no vectors (matrix of shape {matrix.shape}); expected at least "
            f"one token with a vector of length >= 1."
        )
    check_finite(matrix, "embeddings")
    return vocabulary, matrix
