"""The kernels' internal API for nlpfeat's other subpackages.

``nlpfeat.text`` builds features on kernel weights (kernel attention pooling, the locally
weighted bag of words). It imports what it needs from here, never from the kernels'
private modules, so that those can change freely behind this short list:

* :func:`get_kernel` and :class:`Kernel`: resolve a user's ``kernel`` parameter;
* :func:`rule_of_thumb`: Scott's or Silverman's bandwidth of a sample;
* :func:`check_bandwidth`: validate a fixed bandwidth (scalar or per feature).
"""
from nlpfeat.kernels._bandwidth import rule_of_thumb
from nlpfeat.kernels._kernels import Kernel, get_kernel
from nlpfeat.kernels._pairwise import check_bandwidth

__all__ = ["Kernel", "check_bandwidth", "get_kernel", "rule_of_thumb"]
