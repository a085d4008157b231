"""The kernels' internal API for nlpfeat's other subpackages.

``nlpfeat.text`` builds features on kernel weights (kernel attention pooling, the locally
weighted bag of words). It imports what it needs from here, never from the kernels'
private modules, so that those can change freely behind this short list:

* :func:`get_kernel` and :class:`Kernel`: resolve a user's ``kernel`` parameter;
* :func:`rule_of_thumb`: Scott's or Silverman's bandwidth of a sample;
* :func:`check_bandwidth`: validate a fixed bandwidth (scalar or per feature);
* :data:`ENGINES` and :func:`resolve_engine`: the ``engine`` parameter ("auto", "numba",
  "numpy") and its resolution, as on the Nadaraya-Watson estimators;
* :func:`compiled_kernel`: whether a kernel has compiled loops (a built-in family);
* :func:`segment_attention`: kernel attention pooling of segments of token vectors (and
  :func:`segment_distances`, the distances it weighs), and
  :func:`position_weights`: kernel weights over token positions, in the compiled engine
  (they import numba, and compile, on first call only).
"""
from nlpfeat.kernels._bandwidth import rule_of_thumb
from nlpfeat.kernels._engine import ENGINES, resolve_engine
from nlpfeat.kernels._kernels import Kernel, get_kernel
from nlpfeat.kernels._pairwise import check_bandwidth

__all__ = ["ENGINES", "Kernel", "check_bandwidth", "compiled_kernel", "get_kernel",
           "position_weights", "resolve_engine", "rule_of_thumb", "segment_attention",
           "segment_distances"]


def compiled_kernel(kern):
    """True for a built-in kernel (the compiled loops know its family), False for a user's."""
    return kern.family is not None


def segment_attention(vectors, starts, kern, bandwidth, *, query=None, token_weights=None,
                      tie_rtol=0.0):
    """:func:`nlpfeat.kernels._compiled.segment_attention` (pooled, weights), compiled."""
    from nlpfeat.kernels import _compiled

    return _compiled.segment_attention(vectors, starts, kern, bandwidth, query=query,
                                       token_weights=token_weights, tie_rtol=tie_rtol)


def segment_distances(vectors, starts, *, query=None, token_weights=None, bandwidth=1.0):
    """Distances of the tokens to their segment's query, by the compiled attention loop.

    Exactly the distances :func:`segment_attention` weighs (``bandwidth``: an array
    rescales the dimensions by ``bandwidth.min() / bandwidth``; a scalar does nothing).
    """
    from nlpfeat.kernels import _compiled

    return _compiled.segment_attention(vectors, starts, None, bandwidth, query=query,
                                       token_weights=token_weights, distances_only=True)


def position_weights(offsets, mu, kern, bandwidth, *, tie_rtol=0.0):
    """:func:`nlpfeat.kernels._compiled.position_weights` (n_positions, n_tokens), compiled."""
    from nlpfeat.kernels import _compiled

    return _compiled.position_weights(offsets, mu, kern, bandwidth, tie_rtol=tie_rtol)
