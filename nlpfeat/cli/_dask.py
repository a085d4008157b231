"""The Dask pipeline of the corpus commands (``--scheduler`` / ``--dask-workers``).

The documents become a ``dask.bag`` of the files' lines (or of whole files of a folder);
the estimators count on it, and ``features`` transforms it partition by partition on the
workers. Only the text Dask wing's declared names are used; dask is imported inside.
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
            client = stack.enter_context(Client(cluster))
        yield client


def n_workers(client):
    return len(client.scheduler_info()["workers"])


_COMPRESSED = (".gz", ".bz2", ".xz")


def _pair_bag(args, docs, client):
    """A ``dask.bag`` of ``(document, path)``: lines of the files (``read_text``, split in
    blocks of ``--blocksize`` MiB, compressed files whole), or whole files of a folder."""
    import dask.bag as db

    files = [os.path.abspath(f) for f in docs.corpus.files]
    if docs.folder:
        parts = min(len(files), 4 * n_workers(client))
        return db.from_sequence(files, npartitions=parts).map(
            _read_whole_file, args.encoding, args.errors)
    compressed = any(f.endswith(_COMPRESSED) for f in files)
    blocksize = None if compressed else max(1, int(args.blocksize * 2**20))
    bag = db.read_text(files, blocksize=blocksize, encoding=args.encoding, errors=args.errors,
                       compression="infer", include_path=True)
    return bag.map(_clean_pair)


def _read_whole_file(path, encoding, errors):
    from nlpfeat.datasets._corpus import Corpus

    return next(iter(Corpus([path], unit="file", encoding=encoding, errors=errors))), path


def _clean_pair(pair):
    """A line of ``read_text`` without its line break (and a file's byte-order mark)."""
    from nlpfeat.text._dask import strip_line_break

    line, path = pair
    line = strip_line_break(line)
    return line.removeprefix("\ufeff"), path


def document_bag(args, docs, client):
    """The documents as a bag (blank ones dropped with ``--skip-blank``)."""
    bag = _pair_bag(args, docs, client).pluck(0)
    return bag.filter(_not_blank) if args.skip_blank else bag


def _not_blank(doc):
    return bool(doc.strip())


def _transform_part(shipped, pairs, skip_blank):
    """One partition's CSR rows, its document count, the positions and files of the
    documents kept, and the file of its first document."""
    import numpy as np

    texts = [doc for doc, _ in pairs]
    kept = (np.flatnonzero([bool(t.strip()) for t in texts]) if skip_blank
            else np.arange(len(texts)))
    X = shipped.get().transform([texts[i] for i in kept])
    return X, len(texts), kept, [pairs[i][1] for i in kept], (pairs[0][1] if pairs else None)


def features_on_dask(args, docs, estimator, client, writer):
    """Fit on the bag (per-partition counts merged by a tree reduction on the workers),
    then transform partition by partition on the workers and write the blocks in order."""
    import dask

    from nlpfeat.text._dask import send_once, without_statistics

    pairs = _pair_bag(args, docs, client)
    estimator.fit(document_bag(args, docs, client))
    fitted = send_once(without_statistics(estimator), dask)   # to each worker, once
    parts = [dask.delayed(_transform_part, pure=True)(fitted, part, args.skip_blank)
             for part in pairs.to_delayed()]
    names = {os.path.abspath(f): f for f in docs.corpus.files}
    lines_before, skipped = {}, 0
    window = 2 * n_workers(client)           # partitions in flight: bounded memory
    futures = client.compute(parts[:window])
    for k in range(len(parts)):
        X, n_docs, kept, paths, first_path = futures[k].result()
        futures[k] = None
        if k + window < len(parts):
            futures.append(client.compute(parts[k + window]))
        if docs.folder:
            ids = [docs.doc_id(names.get(path, path)) for path in paths]
        elif n_docs:        # the documents of a partition are lines of one file
            path = names.get(first_path, first_path)
            first = lines_before.get(path, 0) + 1
            lines_before[path] = first - 1 + n_docs
            ids = [docs.doc_id((path, first + int(i))) for i in kept]
        else:
            ids = []
        skipped += n_docs - len(kept)
        writer.append(X, ids)
    docs.skipped = skipped
    docs.report_skipped()
