"""Dask bags of documents and the CSR blocks of ``transform`` (the optional extra ``dask``).

The names below are this wing's declared internal API: the estimators and the CLI import
these, never a private name of its modules. Importing it imports no dask.
"""
from nlpfeat.text._dask._bags import (
    SPLIT_EVERY,
    bag_term_counts,
    is_dask_bag,
    send_once,
    splitting,
    strip_line_break,
    transform_bag,
    transform_partitions,
    without_statistics,
)

__all__ = ["SPLIT_EVERY", "bag_term_counts", "is_dask_bag", "send_once", "splitting",
           "strip_line_break", "transform_bag", "transform_partitions", "without_statistics"]
