"""The Dask pipeline of the corpus commands (``--scheduler`` / ``--dask-workers``).

The documents become a ``dask.bag`` of the files' lines (or of whole files of a folder),
read on the workers in blocks of bytes by the corpus' own rule of a line
(:meth:`~nlpfeat.datasets.Corpus.to_bag`), so that the rows, their ids and the errors
are those of the local path; the estimators count on it, and ``features``
transforms it partition by partition on the workers. Only the text Dask wing's declared
names are used; dask is imported inside.
"""
import contextlib
import os

from nlpfeat.cli._io import UsageError


@contextlib.contextmanager
def dask_client(args):
    """A ``distributed.Client`` for ``--scheduler`` / ``--dask-workers`` (else None)."""
    if not (getattr(args, "scheduler", None) or getattr(args, "dask_workers", None)):
        yield None
        return
    flag = "--scheduler" if args.scheduler else "--dask-workers"
    try:
        import dask.bag  # noqa: F401
        from distributed import Client, LocalCluster
    except ImportError:
        raise UsageError(f'{flag} runs the counting on Dask, which is not installed: pip '
                         'install "nlpfeat[dask]" (dask and distributed).') from None
    import logging

    with contextlib.ExitStack() as stack:
        if args.scheduler:
            try:
                client = stack.enter_context(Client(args.scheduler, timeout="20s"))
            except (OSError, TimeoutError) as exc:
                raise UsageError(f"--scheduler {args.scheduler}: cannot connect to a Dask "
                                 f"scheduler there ({exc}).") from None
        else:
            cluster = stack.enter_context(LocalCluster(
                n_workers=args.dask_workers, threads_per_worker=1, processes=True,
                dashboard_address=":0", silence_logs=logging.ERROR))
            stack.callback(stop_workers, cluster)     # after the client, before the cluster
            client = stack.enter_context(Client(cluster))
        yield client


#: Seconds a local worker process is given to exit at the end (the nanny's default, 4 s,
#: is short on a busy machine: it then kills the worker and logs "Worker process still
#: alive after 4.0 seconds, killing").
WORKER_CLOSE_TIMEOUT = 60


def stop_workers(cluster, timeout=WORKER_CLOSE_TIMEOUT):
    """Close the worker processes of a ``LocalCluster`` (its client closed first), each
    given ``timeout`` seconds to exit, so that closing the cluster then finds them
    stopped and kills none."""
    import asyncio

    async def close_all():
        await asyncio.gather(*(worker.close(timeout=timeout)
                               for worker in list(cluster.workers.values())))

    cluster.sync(close_all)


def n_workers(client):
    return len(client.scheduler_info()["workers"])


def _blocksize(args):
    return max(1, int(args.blocksize * 2**20))


def _partitions(args, docs):
    """The blocks of each partition of ``docs.corpus.to_bag`` (``--blocksize`` MiB of a
    file's lines, or of whole files of a folder), by the workers' (absolute) paths."""
    from nlpfeat.datasets._corpus import partition_blocks

    files = [os.path.abspath(f) for f in docs.corpus.files]
    return partition_blocks(files, _blocksize(args), unit=docs.corpus.unit,
                            encoding=docs.corpus.encoding)


def document_bag(args, docs):
    """The documents as a bag read on the workers by the corpus' own rule of a line (the
    local path's documents and errors), blank ones dropped with ``--skip-blank``."""
    bag = docs.corpus.to_bag(_blocksize(args))
    return bag.filter(_not_blank) if args.skip_blank else bag


def _not_blank(doc):
    return bool(doc.strip())


def _transform_part(shipped, texts, skip_blank):
    """One partition's CSR rows, its document count and the positions of the documents
    kept."""
    import numpy as np

    kept = (np.flatnonzero([bool(t.strip()) for t in texts]) if skip_blank
            else np.arange(len(texts)))
    return shipped.get().transform([texts[i] for i in kept]), len(texts), kept


def features_on_dask(args, docs, estimator, client, writer):
    """Fit on the bag (per-partition counts merged by a tree reduction on the workers),
    then transform partition by partition on the workers and write the blocks in order."""
    import dask

    from nlpfeat.text._dask import send_once, without_statistics

    estimator.fit(document_bag(args, docs))
    fitted = send_once(without_statistics(estimator), dask)   # to each worker, once
    parts = [dask.delayed(_transform_part, pure=True)(fitted, texts, args.skip_blank)
             for texts in docs.corpus.to_bag(_blocksize(args)).to_delayed()]
    partitions = _partitions(args, docs)      # partition k: the blocks of parts[k]
    ids = _DocIds(docs)
    window = 2 * n_workers(client)           # partitions in flight: bounded memory
    futures = client.compute(parts[:window])
    for k, blocks in enumerate(partitions):
        X, n_docs, kept = futures[k].result()
        futures[k] = None
        if k + window < len(parts):
            futures.append(client.compute(parts[k + window]))
        writer.append(X, ids.of(blocks, n_docs, kept))
    docs.skipped = ids.skipped
    docs.report_skipped()


class _DocIds:
    """The ids of the documents of consecutive partitions, as the local path names them:
    the line numbers of a file run on from one block to the next (a folder: one document
    per file)."""

    def __init__(self, docs):
        self.docs, self.skipped, self._lines_before = docs, 0, {}
        self._names = {os.path.abspath(f): f for f in docs.corpus.files}

    def of(self, blocks, n_docs, kept):
        self.skipped += n_docs - len(kept)
        names = [self._names[block.file] for block in blocks]
        if self.docs.folder:
            return [self.docs.doc_id(names[i]) for i in kept]
        first = self._lines_before.get(names[0], 0) + 1     # one block of one file
        self._lines_before[names[0]] = first - 1 + n_docs
        return [self.docs.doc_id((names[0], first + int(i))) for i in kept]
