"""The kernels' internal API for nlpfeat's other subpackages.

``nlpfeat.text`` builds features on kernel weights (kernel attention pooling, the locally
weighted bag of words). It imports what it needs from here, never from the kernels'
private modules, so that those can change freely behind this short list:

* :func:`get_kernel` and :class:`Kernel`: resolve a user's ``kernel`` parameter;
* :func:`rule_of_thumb`: Scott's or Silverman's bandwidth of a sample;
* :func:`check_bandwidth`: validate a fixed bandwidth (scalar or per feature);
* :data:`ENGINES` and :func:`resolve_engine`: the ``engine`` parameter ("auto", "numba",
  "numpy") and its resolution, as on the Nadaraya-Watson estimators;
* the segment tasks on the chosen engine (:mod:`nlpfeat.kernels._engine`, which imports
  numba, and compiles, on first call only): :func:`attention_pool`, kernel attention
  pooling of segments of token vectors, :func:`segment_distances`, the distances it
  weighs, and :func:`position_weights`, kernel weights over token positions;
* numpy pieces of those tasks, for a document read span by span
  (:mod:`nlpfeat.kernels._segments`): :func:`query_distances`, :func:`dimension_scale`,
  :func:`segment_kernel_weights`, :func:`segment_ids` and :data:`TIE_RTOL`, the relative
  tolerance within which the nearest tokens tie.
"""
from nlpfeat.kernels._bandwidth import rule_of_thumb
from nlpfeat.kernels._engine import (
    ENGINES,
    attention_pool,
    position_weights,
    resolve_engine,
    segment_distances,
)
from nlpfeat.kernels._kernels import Kernel, get_kernel
from nlpfeat.kernels._pairwise import check_bandwidth
from nlpfeat.kernels._segments import (
    TIE_RTOL,
    dimension_scale,
    query_distances,
    segment_ids,
    segment_kernel_weights,
)

__all__ = ["ENGINES", "TIE_RTOL", "Kernel", "attention_pool", "check_bandwidth",
           "dimension_scale", "get_kernel", "position_weights", "query_distances",
           "resolve_engine", "rule_of_thumb", "segment_distances", "segment_ids",
           "segment_kernel_weights"]
