"""Dask bags of documents for the counting vectorizers (the optional extra ``dask``).

``fit`` on a ``dask.bag.Bag`` counts each partition on the workers into a
:class:`~nlpfeat.text._counting._term_counts.TermCounts` (streamed within
``working_memory``), splits it into shards of disjoint terms and merges shard k of all
partitions by its own tree reduction, the shards in parallel (see
:func:`bag_term_counts`); the estimator is then fitted from the merged statistics exactly
as from a single-machine pass, so its vocabulary and statistics are the same, bit for bit
(they are integer sums). ``transform`` of a bag returns a ``dask.array`` whose blocks are
the CSR matrices of the partitions (rows in the bag's order), as dask-ml's
``CountVectorizer`` does; the fitted vectorizer is scattered to every worker once.

``dask.bag.read_text`` keeps each line's line break: one trailing ``"\\n"`` or ``"\\r\\n"``
is removed from every ``str`` (or ``bytes``) document of a bag, as nlpfeat's own
one-document-per-line rule does; nothing else is stripped.

The glue calls the estimators only through what is declared: the ``count_partition``
function an estimator passes to :func:`bag_term_counts` (``count_partition(estimator,
docs)`` returns the partition's counts, which follow the
:class:`~nlpfeat.text._counting.Counts` protocol; :func:`splitting` declares the ones
whose counts split into shards), the public ``transform``, and the hook
``__nlpfeat_worker_copy__`` of :class:`~nlpfeat.text._base._analyzer.TextMixin`.
"""
import copy
import uuid

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone

from nlpfeat.text._base._documents import is_dask_bag
from nlpfeat.text._counting._term_counts import TermCounts
from nlpfeat.text._counting._vocabulary import error_with_context

__all__ = ["SPLIT_EVERY", "bag_term_counts", "is_dask_bag", "send_once", "splitting",
           "strip_line_break", "transform_bag", "transform_partitions", "without_statistics"]

#: Partition results merged per task of the tree reduction.
SPLIT_EVERY = 8


def _require_dask():
    try:
        import dask
        import dask.array
    except ImportError:  # pragma: no cover - dask is installed with the extra
        raise ImportError(
            'A dask bag needs dask: pip install "nlpfeat[dask]".'
        ) from None
    return dask


def strip_line_break(doc):
    """``doc`` without one trailing ``"\\n"`` or ``"\\r\\n"`` (other documents as they are).

    Examples
    --------
    >>> from nlpfeat.text._dask import strip_line_break
    >>> [strip_line_break(d) for d in ["a\\n", "b\\r\\n", "c\\r", " d \\n\\n", ["e\\n"]]]
    ['a', 'b', 'c\\r', ' d \\n', ['e\\n']]
    """
    if isinstance(doc, str):
        if doc.endswith("\n"):
            return doc[:-2] if doc.endswith("\r\n") else doc[:-1]
    elif isinstance(doc, bytes) and doc.endswith(b"\n"):
        return doc[:-2] if doc.endswith(b"\r\n") else doc[:-1]
    return doc


def _raise_partition_error(exc, index):
    """Raise ``exc`` naming its partition, never as its own cause (distributed walks the
    chain of causes of a worker's error, so a loop would never end). A ValueError that cannot
    be rebuilt from one message (UnicodeDecodeError, whose arguments distributed does not
    carry back) becomes a plain ValueError with the whole message."""
    where = f"Partition {index} of the bag"
    if exc.__cause__ is exc:
        exc.__cause__ = None
    new = error_with_context(exc, where)
    if new is not exc:
        raise new from exc
    if isinstance(exc, ValueError):
        raise ValueError(f"{where}: {exc}") from exc
    raise exc


def splitting(count_partition):
    """Declare that ``count_partition`` returns counts whose ``split`` gives disjoint
    shards (:class:`TermCounts`), which :func:`bag_term_counts` then reduces in parallel."""
    count_partition.splits = True
    return count_partition


def _counted_partition(count_partition, estimator, index, docs):
    try:
        counts = count_partition(estimator, docs)
    except Exception as exc:
        _raise_partition_error(exc, index)
    if isinstance(counts, TermCounts) and counts.learn:    # ids in order of appearance
        counts.first_seen = (np.int64(index) << 40) + np.arange(counts.n_terms,
                                                                 dtype=np.int64)
    return counts


def _merge(*parts):
    """Add the counts ``parts`` (None: no counts, as the empty shards of counts that do
    not split); None when every part is None."""
    parts = [part for part in parts if part is not None]
    if not parts:
        return None
    merged = parts[0]
    for part in parts[1:]:
        merged.merge(part)
    return merged


def bag_term_counts(estimator, bag, count_partition, *, split_every=SPLIT_EVERY,
                    n_shards=None):
    """Statistics of a bag: per-partition counts on the workers, merged by a tree reduction.

    With a learned vocabulary each partition's counts are split into ``n_shards`` parts of
    disjoint terms (:meth:`TermCounts.split`), shard k of all partitions is merged by its
    own tree on the workers, in parallel, and the driver only appends the disjoint shards.
    (One tree over whole partitions would end in one task merging every vocabulary.)

    Parameters
    ----------
    estimator : estimator or object
        Its parameters (a clone is sent to the workers, never fitted state); a function
        passes any picklable object that holds its parameters, sent as it is.
    bag : dask.bag.Bag
    count_partition : callable
        ``(estimator, docs) -> counts`` following the
        :class:`~nlpfeat.text._counting.Counts` protocol.
    split_every : int, default=8
        Fan-in of the reduction tree.
    n_shards : int or None, default=None
        Parts of the vocabulary reduced in parallel; None: twice the workers of the active
        ``distributed`` client, or 1 without one. Only the counts of a ``count_partition``
        declared by :func:`splitting` split: other counts are reduced by one tree.

    Returns
    -------
    counts : the merged counts, computed (with the active scheduler, e.g. a
        ``distributed.Client``).
    """
    dask = _require_dask()
    params = quiet(clone(estimator)) if hasattr(estimator, "get_params") else estimator
    template = dask.delayed(params, name=f"nlpfeat-params-{uuid.uuid4().hex}")
    parts = [dask.delayed(_counted_partition, pure=True)(count_partition, template, i, part)
             for i, part in enumerate(bag.to_delayed())]
    if not parts:
        return count_partition(estimator, [])
    n_shards = _n_shards(count_partition, n_shards, len(parts))
    if n_shards > 1:
        split = [dask.delayed(_split, pure=True, nout=n_shards)(part, n_shards)
                 for part in parts]
        shards = [_tree([pieces[k] for pieces in split], split_every, dask)
                  for k in range(n_shards)]
    else:
        shards = [_tree(parts, split_every, dask)]
    return _merge(*dask.compute(*shards))


def _tree(level, split_every, dask):
    while len(level) > 1:
        level = [dask.delayed(_merge, pure=True)(*level[k : k + split_every])
                 for k in range(0, len(level), split_every)]
    return level[0]


def _n_shards(count_partition, n_shards, n_parts):
    """Shards of the reduction of ``n_parts`` partitions' counts. Counts that do not split
    (n-gram and pair counts) go whole through one tree, never as the first piece of a
    ``_split`` tuple that a worker could be serializing while a merge adds to it."""
    if not getattr(count_partition, "splits", False):
        return 1
    return min(n_parts, n_shards or _default_shards())


def _split(counts, n_shards):
    return tuple(counts.split(n_shards))


def _default_shards():
    """Shards of the reduction: twice the workers of the active distributed client (1
    without one: the local schedulers share one process's memory)."""
    try:
        from distributed import get_client

        return 2 * len(get_client().scheduler_info()["workers"])
    except (ImportError, ValueError):
        return 1


def _transform_partition(shipped, index, docs):
    """``transform`` of one partition by the :class:`Shipped` estimator; an error names
    the partition."""
    try:
        return shipped.get().transform([strip_line_break(doc) for doc in docs])
    except Exception as exc:
        _raise_partition_error(exc, index)


def _transform_block(shipped, index, docs):
    """One partition's rows of a document-feature matrix, as a stackable CSR block."""
    from nlpfeat.text._dask._blocks import CsrBlock

    return CsrBlock(_transform_partition(shipped, index, docs))


def without_statistics(estimator):
    """What a worker needs of the fitted ``estimator`` for ``transform``: its hook
    ``__nlpfeat_worker_copy__()`` (a copy without the counts that ``partial_fit``
    accumulates: less to send to every worker), else a shallow copy."""
    hook = getattr(estimator, "__nlpfeat_worker_copy__", None)
    return quiet(hook() if hook is not None else copy.copy(estimator))


def quiet(estimator):
    """``estimator`` (a copy made for the workers) with ``verbose=0``: a worker's progress
    bars would go to its own log, interleaved with the other workers'."""
    if getattr(estimator, "verbose", 0):
        estimator.verbose = 0
    return estimator


def transform_partitions(estimator, bag):
    """A lazy bag of the fitted ``estimator``'s ``transform`` of each partition of ``bag``,
    in order (for estimators whose output is a list per document, not a matrix).

    The estimator is sent to each worker once (:func:`send_once`, of
    :func:`without_statistics`); a failing partition is named when the bag is computed.
    """
    dask = _require_dask()
    import dask.bag as db

    fitted = send_once(without_statistics(estimator), dask)
    parts = [dask.delayed(_transform_partition, pure=True)(fitted, i, part)
             for i, part in enumerate(bag.to_delayed())]
    return db.from_delayed(parts)


class Shipped:
    """A fitted estimator on its way to the workers; ``get()`` returns it there.

    Its mappings (``vocabulary_`` and the lookup of ``transform``) are pickled as a list of
    keys and an array of values and rebuilt once per worker process, at the first
    ``get()``: a pickled dict has twice the objects. Without pickling (a local scheduler)
    ``get()`` returns the estimator itself.
    """

    _MAPPINGS = ("vocabulary_", "_lookup")

    def __init__(self, estimator):
        self._estimator, self._packed = estimator, None

    def __getstate__(self):
        if self._estimator is None:         # received and not used yet: passed on as is
            return self._packed             # (a worker replicating it to another)
        estimator = copy.copy(self._estimator)
        mappings = {}
        for name in self._MAPPINGS:
            mapping = estimator.__dict__.get(name)
            if type(mapping) is dict:
                mappings[name] = (list(mapping), np.fromiter(mapping.values(), dtype=np.intp,
                                                             count=len(mapping)))
                estimator.__dict__[name] = None
        return {"estimator": estimator, "mappings": mappings}

    def __setstate__(self, state):
        self._estimator, self._packed = None, state

    def get(self):
        if self._estimator is None:
            estimator = self._packed["estimator"]
            for name, (keys, values) in self._packed["mappings"].items():
                estimator.__dict__[name] = dict(zip(keys, values.tolist()))
            self._estimator, self._packed = estimator, None
        return self._estimator


def send_once(obj, dask):
    """``obj`` for the tasks of a graph, sent to each worker once, as a :class:`Shipped`
    (tasks call ``.get()``).

    With a ``distributed`` client it is scattered to every worker directly (broadcast), so
    neither the graph nor the scheduler carries it, and no worker waits to fetch it from
    another. Otherwise a named ``dask.delayed``: tokenizing (hashing) a large
    vocabulary would cost more than it saves.
    """
    try:
        from distributed import get_client

        client = get_client()
    except (ImportError, ValueError):
        return dask.delayed(Shipped(obj), name=f"nlpfeat-fitted-{uuid.uuid4().hex}",
                            traverse=False)
    return client.scatter(Shipped(obj), broadcast=True, hash=False)


def transform_bag(estimator, bag):
    """``dask.array`` of the fitted ``estimator``'s ``transform``, one block per partition.

    Sparse outputs (the vectorizers) come in CSR blocks, dense ones (document vectors) in
    ndarray blocks. The row count of each block is unknown until computed (``np.nan``
    chunks, as in dask-ml); ``.compute()`` stacks the blocks into one
    ``scipy.sparse.csr_matrix`` (the sparse blocks themselves are
    :class:`~nlpfeat.text._dask._blocks.CsrBlock`, whose stacking copies the data once) or
    one ndarray.
    """
    dask = _require_dask()
    import dask.array as da

    empty = estimator.transform([])          # checks that it is fitted; (0, n_features)
    if sp.issparse(empty):
        from nlpfeat.text._dask._blocks import CsrBlock

        meta, task = CsrBlock(empty), _transform_block
    else:
        meta, task = np.asarray(empty), _transform_partition
    fitted = send_once(without_statistics(estimator), dask)
    blocks = [
        da.from_delayed(dask.delayed(task, pure=True)(fitted, i, part),
                        shape=(np.nan, meta.shape[1]), dtype=meta.dtype, meta=meta)
        for i, part in enumerate(bag.to_delayed())
    ]
    if not blocks:
        empty = sp.csr_matrix(empty) if sp.issparse(empty) else meta
        return da.from_array(empty, chunks=empty.shape, asarray=False)
    return da.concatenate(blocks, axis=0)
