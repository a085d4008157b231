"""The compiled (numba) engine of the kernels: fused loops, no n_query x n_train matrix.

The numpy modules (:mod:`nlpfeat.kernels._nadaraya_watson`,
:mod:`nlpfeat.kernels._bandwidth`, :mod:`nlpfeat.kernels._segments`) are the reference;
this package computes the same quantities with the same log-space semantics, sharing
their maths through :mod:`nlpfeat.kernels._loss`. Of nlpfeat it imports only
:mod:`nlpfeat.kernels._pairwise` (the scaled coordinates), :mod:`nlpfeat.kernels._loss`
and the leaf :mod:`nlpfeat._chunking` (row chunks under ``working_memory``); kernels come
in as :class:`~nlpfeat.kernels.Kernel` objects, read by their ``family`` code. The choice
between the engines is :mod:`nlpfeat.kernels._engine`'s.

- :mod:`._fastexp`: a float64 ``exp`` that LLVM vectorises;
- :mod:`._rows`: family codes, threads, scalar kernels and tiles of one row;
- :mod:`._moments`: the centred moments of a local linear fit at one query row;
- :mod:`._predict`: :class:`CompiledNW`, predictions and weights of query rows;
- :mod:`._loo`: :func:`loo_grid`, leave-one-out losses over a bandwidth grid, and
  :func:`loo_pairs`, the predictions of chosen (row, bandwidth) pairs;
- :mod:`._ard`: :func:`ard_objective`, the ``loo-ard`` loss and gradient;
- :mod:`._binning`: spreading onto and gathering from the grids of ``algorithm="binned"``
  (imported by :mod:`nlpfeat.kernels._binned` on use);
- :mod:`._polysums`: the exact sums of the polynomial kernels for ``algorithm="binned"``
  (sorted strips and running moments; imported by :mod:`nlpfeat.kernels._binned_poly` on
  use);
- :mod:`._segments`: :func:`segment_attention` and :func:`position_weights`, the
  segment loops of the text features.

One generic compiled function per task, parametrised by the family and metric codes, so
few specialisations are compiled; all are cached on disk (``cache=True``) and compiled
on first use, never at import (importing this package imports numba, which
:mod:`nlpfeat.kernels` itself never does).
"""
from nlpfeat.kernels._compiled._ard import ard_objective
from nlpfeat.kernels._compiled._loo import loo_grid, loo_pairs
from nlpfeat.kernels._compiled._predict import CompiledNW
from nlpfeat.kernels._compiled._rows import family_code, supports
from nlpfeat.kernels._compiled._segments import position_weights, segment_attention

__all__ = ["CompiledNW", "ard_objective", "family_code", "loo_grid", "loo_pairs", "position_weights",
           "segment_attention", "supports"]
