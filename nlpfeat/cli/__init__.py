"""The ``nlpfeat`` command line: parses arguments and calls the public API.

Subcommands: ``compare`` (the side-by-side comparison of kernel and neural attention),
``features``, ``collocations``, ``topics``, ``neighbors`` and ``attention`` for a user's own
corpora. Errors a user can fix (a missing or empty file, an undecodable line, a bad option
value) are reported as argparse's usage line plus one error line, exit status 2, never a
traceback.

The corpus commands stream their input: a file, folder or glob is read lazily by
:class:`nlpfeat.datasets.Corpus` (twice where fitting and transforming need two passes;
stdin is first copied to a temporary file), and ``features`` writes its matrix to disk
chunk by chunk, so memory holds the model and one chunk, not the corpus. With
``--scheduler ADDRESS`` (a running Dask cluster) or ``--dask-workers N`` (a local one),
the counting runs on Dask over ``dask.bag.read_text`` partitions of the files.
"""
import argparse
import contextlib
import glob
import os
import re
import shutil
import sys
import tempfile
from itertools import islice

from nlpfeat import __version__
from nlpfeat.datasets._corpus import split_lines
from nlpfeat.text._base._tokenize import TOKENIZERS


class UsageError(Exception):
    """An error the user can fix; printed as one line after the usage."""


# ----------------------------------------------------------------------------- input
def _decode(raw, name):
    """UTF-8 text of ``raw`` without a leading byte-order mark; a clear error otherwise."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise UsageError(
            f"{name}: line {line} is not valid UTF-8 ({exc.reason} at byte "
            f"{exc.start}); convert the file to UTF-8, e.g. with iconv -f latin1 -t utf-8."
        ) from None


class Documents:
    """The corpus of a command, read lazily from disk (never held in memory) and re-iterable.

    Iterating yields the documents; :meth:`with_ids` yields ``(id, document)``, the id being
    the line number (one file), ``file:line`` (several files of a glob) or the file's path
    under the folder (one document per file). Blank documents are kept (row i is line i)
    unless ``skip_blank``; :attr:`skipped` counts those the last pass dropped.
    """

    def __init__(self, corpus, source, *, skip_blank=False, shown=None):
        self.corpus, self.source, self.skip_blank = corpus, source, skip_blank
        self.shown = shown            # the name errors give the input (stdin's temporary file)
        self.folder = os.path.isdir(source)
        self.skipped = 0

    def doc_id(self, name):
        if self.folder:
            return os.path.relpath(name, self.source)
        path, line = name
        return str(line) if len(self.corpus.files) == 1 else f"{path}:{line}"

    def with_ids(self):
        skipped = 0
        try:
            for name, doc in self.corpus.iter_with_ids():
                if self.skip_blank and not doc.strip():
                    skipped += 1
                    continue
                yield self.doc_id(name), doc
        except ValueError as exc:
            if self.shown is None:
                raise
            raise ValueError(str(exc).replace(self.corpus.files[0], self.shown)) from None
        self.skipped = skipped

    def __iter__(self):
        return (doc for _, doc in self.with_ids())

    def report_skipped(self):
        if self.skip_blank and self.skipped:
            print(f"{self.shown or self.source}: skipped {self.skipped} blank document(s) "
                  "(--skip-blank)", file=sys.stderr)


class _Lowercased:
    """A re-iterable view of documents, lower-cased one at a time."""

    def __init__(self, docs):
        self.docs = docs

    def __iter__(self):
        return (doc.lower() for doc in self.docs)


@contextlib.contextmanager
def open_documents(args):
    """The :class:`Documents` of ``args.file``: a file, a folder of .txt files, a glob, or
    ``-`` (stdin, copied block by block to a temporary file so that it can be read twice).

    Raises a :class:`UsageError` before any work when the input is missing or holds no
    document that is not blank.
    """
    from nlpfeat.datasets._corpus import Corpus

    source = args.file
    options = dict(encoding=args.encoding, errors=args.errors)
    with contextlib.ExitStack() as stack:
        shown = None
        if source == "-":
            folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="nlpfeat-stdin-"))
            source = os.path.join(folder, "stdin.txt")
            with open(source, "wb") as fh:
                shutil.copyfileobj(sys.stdin.buffer, fh, 1 << 20)
            shown = "<stdin>"
        elif not (os.path.exists(source) or glob.has_magic(source)):
            raise UsageError(f"{source}: no such file or directory.")
        try:
            corpus = Corpus(source, **options)
        except ValueError as exc:     # an empty folder, a glob that matches nothing
            raise UsageError(str(exc)) from None
        docs = Documents(corpus, source, skip_blank=args.skip_blank, shown=shown)
        if not any(doc.strip() for doc in docs):    # reads up to the first non-blank one
            raise UsageError(f"{shown or args.file}: no documents found (the input is empty "
                             "or blank).")
        yield docs


def _output_path(path, suffix=None, *, flag="-o"):
    """Check an output file before any work: its folder exists; returns the name written."""
    if suffix and not path.endswith(suffix):
        path += suffix  # numpy adds the suffix itself; report the real name
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise UsageError(f"{flag} {path}: the folder {os.path.dirname(path) or '.'} does not "
                         f"exist; create it first or choose another path.")
    if os.path.isdir(path):
        raise UsageError(f"{flag} {path}: is a folder; give a file name.")
    return path


def _text_options(args):
    tokenizer = args.tokenizer
    if getattr(args, "keep_punctuation", False) and tokenizer in ("char", "jieba"):
        from nlpfeat.text import get_tokenizer

        tokenizer = get_tokenizer(tokenizer, keep_punctuation=True)
    return {"tokenizer": tokenizer, "lowercase": not args.keep_case}


# ----------------------------------------------------------------------------- commands
def cmd_compare(args, parser):
    from nlpfeat.compare import run_comparison

    if os.path.exists(args.out) and not os.path.isdir(args.out):
        raise UsageError(f"--out {args.out}: is an existing file; --out names a folder.")
    parent = os.path.dirname(os.path.abspath(args.out))
    if not os.path.isdir(parent):
        raise UsageError(f"--out {args.out}: the folder {parent} does not exist; create it "
                         f"first or choose another path.")
    run_comparison(
        tasks=args.task, models=args.models, out=args.out, seed=args.seed,
        quick=args.quick, with_torch=args.with_torch, plots=not args.no_plots,
        progress=not args.no_progress,
    )


_VECTORIZERS = {"bow": "BagOfWords", "pbow": "PositionalBagOfWords", "tfidf": "TfidfVectorizer"}


def cmd_features(args, parser):
    """Fit on a lazy pass over the corpus, then transform and write the matrix in chunks.

    Memory holds the model, one chunk of ``--chunk-docs`` documents and the document ids,
    never the corpus or the whole matrix: the chunks' arrays go to temporary files next to
    the output, then into the .npz one block at a time. With ``--scheduler`` or
    ``--dask-workers`` the counting and the transform run on Dask, a partition per task.
    """
    from nlpfeat import text

    output = _output_path(args.output, ".npz")
    opts = dict(_text_options(args), ngram_range=tuple(args.ngram))
    with _dask_client(args) as client, open_documents(args) as docs:
        if args.kind == "pmi":
            return _features_pmi(args, output, docs, client)
        estimator = getattr(text, _VECTORIZERS[args.kind])(min_df=args.min_df,
                                                           max_df=args.max_df, **opts)
        writer = _CsrWriter(output)
        with writer:
            if client is None:
                estimator.fit(docs)
                docs.report_skipped()
                pairs = docs.with_ids()
                while True:
                    chunk = list(islice(pairs, args.chunk_docs))
                    if not chunk:
                        break
                    writer.append(estimator.transform([doc for _, doc in chunk]),
                                  [i for i, _ in chunk])
            else:
                _features_on_dask(args, docs, estimator, client, writer)
            features = estimator.get_feature_names_out()
            writer.close(features)
        where = "" if client is None else f", counted on {_n_workers(client)} Dask worker(s)"
    print(f"wrote a {writer.n_rows} x {len(features)} {args.kind} document x feature matrix "
          f"({writer.nnz} non-zeros{where}) to {output}; read it with scipy.sparse.load_npz, "
          "and np.load(...)['feature_names'] / ['doc_ids'] (row i is document i of the input)")


def _features_pmi(args, output, docs, client):
    """``features --kind pmi``: the PPMI word x word matrix of streamed co-occurrence counts."""
    import numpy as np
    from scipy import sparse

    from nlpfeat.text import cooccurrence, pmi

    corpus = docs if client is None else _document_bag(args, docs, client)
    if not args.keep_case:
        corpus = _Lowercased(docs) if client is None else corpus.map(str.lower)
    counts, vocabulary = cooccurrence(corpus, window=args.window, min_count=args.min_count,
                                      tokenizer=_text_options(args)["tokenizer"])
    docs.report_skipped()
    matrix = sparse.csr_matrix(pmi(counts, kind="ppmi"))
    names = np.asarray(sorted(vocabulary, key=vocabulary.get), dtype=str)
    np.savez_compressed(output, format=np.array("csr"), shape=np.array(matrix.shape),
                        data=matrix.data, indices=matrix.indices, indptr=matrix.indptr,
                        feature_names=names, row_names=names)
    print(f"wrote a {matrix.shape[0]} x {matrix.shape[1]} pmi word x word matrix "
          f"({matrix.nnz} non-zeros) to {output}; read it with scipy.sparse.load_npz, and "
          "np.load(...)['feature_names'] / ['row_names']")


class _CsrWriter:
    """A CSR matrix written to a .npz in row chunks: the chunks' data and indices go to
    temporary files next to the output (never all in memory), then into the archive."""

    def __init__(self, output):
        self.output = output
        self.n_rows = self.nnz = 0
        self.row_nnz, self.ids, self.dtype = [], [], None

    def __enter__(self):
        import numpy as np

        folder = os.path.dirname(os.path.abspath(self.output))
        self._tmp = tempfile.TemporaryDirectory(dir=folder, prefix=".nlpfeat-")
        self.paths = {name: os.path.join(self._tmp.name, name) for name in ("data", "indices")}
        self._files = {name: open(path, "wb") for name, path in self.paths.items()}
        self._np = np
        return self

    def append(self, X, ids):
        X = X.tocsr()
        self.dtype = X.dtype
        self._files["data"].write(X.data.tobytes())
        self._files["indices"].write(X.indices.astype(self._np.int32, copy=False).tobytes())
        self.row_nnz.append(self._np.diff(X.indptr))
        self.ids.extend(str(i) for i in ids)
        self.n_rows += X.shape[0]
        self.nnz += X.nnz

    def close(self, features):
        np = self._np
        for fh in self._files.values():
            fh.close()
        indptr = np.concatenate([[0]] + self.row_nnz).cumsum(
            dtype=np.int32 if self.nnz < 2**31 else np.int64)
        arrays = dict(format=np.array("csr"), shape=np.array((self.n_rows, len(features))),
                      indptr=indptr, feature_names=np.asarray(features, dtype=str),
                      doc_ids=np.asarray(self.ids, dtype=str))
        raw = {"data": (self.paths["data"], np.dtype(self.dtype or np.float64), self.nnz),
               "indices": (self.paths["indices"], np.dtype(np.int32), self.nnz)}
        _write_npz(self.output, arrays, raw)

    def __exit__(self, *exc):
        for fh in self._files.values():
            fh.close()
        self._tmp.cleanup()


# ----------------------------------------------------------------------------- dask
@contextlib.contextmanager
def _dask_client(args):
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


def _n_workers(client):
    return len(client.scheduler_info()["workers"])


_COMPRESSED = (".gz", ".bz2", ".xz")


def _pair_bag(args, docs, client):
    """A ``dask.bag`` of ``(document, path)``: lines of the files (``read_text``, split in
    blocks of ``--blocksize`` MiB, compressed files whole), or whole files of a folder."""
    import dask.bag as db

    files = [os.path.abspath(f) for f in docs.corpus.files]
    if docs.folder:
        parts = min(len(files), 4 * _n_workers(client))
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


def _document_bag(args, docs, client):
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


def _features_on_dask(args, docs, estimator, client, writer):
    """Fit on the bag (per-partition counts merged by a tree reduction on the workers),
    then transform partition by partition on the workers and write the blocks in order."""
    import dask

    from nlpfeat.text._dask import send_once, without_statistics

    pairs = _pair_bag(args, docs, client)
    estimator.fit(_document_bag(args, docs, client))
    fitted = send_once(without_statistics(estimator), dask)   # to each worker, once
    parts = [dask.delayed(_transform_part, pure=True)(fitted, part, args.skip_blank)
             for part in pairs.to_delayed()]
    names = {os.path.abspath(f): f for f in docs.corpus.files}
    lines_before, skipped = {}, 0
    window = 2 * _n_workers(client)           # partitions in flight: bounded memory
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


def _write_npz(path, arrays, raw, block=1 << 24):
    """A compressed .npz of ``arrays`` plus ``raw`` arrays copied from files block by block.

    ``raw`` maps a name to ``(file, dtype, length)``: the file holds the array's bytes.
    """
    import zipfile

    import numpy as np

    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, allowZip64=True) as zf:
        for name, array in arrays.items():
            with zf.open(name + ".npy", "w", force_zip64=True) as fh:
                np.lib.format.write_array(fh, np.asanyarray(array), allow_pickle=False)
        for name, (source, dtype, length) in raw.items():
            header = {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False,
                      "shape": (int(length),)}
            with zf.open(name + ".npy", "w", force_zip64=True) as fh, open(source, "rb") as src:
                np.lib.format.write_array_header_2_0(fh, header)
                while True:
                    data = src.read(block)
                    if not data:
                        break
                    fh.write(data)


def cmd_collocations(args, parser):
    from nlpfeat.text import Collocations

    model = Collocations(measure=args.measure, min_count=args.min_count, threshold=None,
                         input="content", **_text_options(args))
    with _dask_client(args) as client, open_documents(args) as docs:
        model.fit(docs if client is None else _document_bag(args, docs, client))
        docs.report_skipped()
    if not model.scores_:
        print(f"no phrase occurs {args.min_count} times or more; lower --min-count.")
        return
    print(f"{'rank':>4}  {'score':>10}  phrase  ({args.measure}, min_count={args.min_count})")
    for rank, (ngram, value) in enumerate(model.scores_[: args.top], start=1):
        print(f"{rank:>4}  {value:>10.4f}  {' '.join(ngram)}")


def _stop_words(args):
    """The stop-word list for ``topics``: removed by default, in the tokenizer's language."""
    if args.keep_stop_words:
        return None
    if args.stop_words is not None:
        return args.stop_words
    return "chinese" if args.tokenizer in ("jieba", "char") else "english"


def cmd_topics(args, parser):
    from nlpfeat.text import BagOfWords, TopicModel

    stop_words = _stop_words(args)
    bow = BagOfWords(min_df=args.min_df, max_df=args.max_df, stop_words=stop_words,
                     **_text_options(args))
    with _dask_client(args) as client, open_documents(args) as docs:
        if client is None:
            X = bow.fit_transform(docs)
        else:           # counted on the workers; the document-term matrix comes back
            bag = _document_bag(args, docs, client)
            X = bow.fit(bag).transform(bag).compute()
        docs.report_skipped()
    model = TopicModel(n_components=args.k, method=args.method, backend=args.backend,
                       random_state=args.seed, coherence=args.coherence,
                       vocabulary=bow.vocabulary_).fit(X)
    for k, words in enumerate(model.top_words(args.n_words)):
        print(f"topic {k:>2}  {args.coherence}={model.coherence_[k]:+.3f}  {' '.join(words)}")
    print(f"mean coherence ({args.coherence}, higher is better): {model.coherence_.mean():+.4f}")
    if stop_words is None:
        print("note: stop words were kept (--keep-stop-words); coherence scores reward topics "
              "of frequent function words, so compare them only between runs that keep them.")


def cmd_neighbors(args, parser):
    from nlpfeat.text import PMIEmbedding

    model = PMIEmbedding(n_components=args.dim, window=args.window, min_count=args.min_count,
                         random_state=args.seed, **_text_options(args))
    with _dask_client(args) as client, open_documents(args) as docs:
        model.fit(docs if client is None else _document_bag(args, docs, client))
        docs.report_skipped()
    found = 0
    for word in args.words:
        key = word if args.keep_case else word.lower()
        try:
            neighbours = model.most_similar(key, topn=args.topn)
        except KeyError:
            print(f"{word}: not in the vocabulary (min_count={args.min_count})")
            continue
        found += 1
        print(f"{word}: " + ", ".join(f"{w} ({s:.3f})" for w, s in neighbours))
    if not found:
        raise UsageError(f"none of the query words is in the vocabulary of {args.file} "
                         f"(min_count={args.min_count}); lower --min-count or check spelling.")


def cmd_attention(args, parser):
    from nlpfeat.compare import sentence_attention

    output = _output_path(args.output) if args.output else None
    sentence = args.sentence
    if sentence == "-":
        sentence = " ".join(split_lines(_decode(sys.stdin.buffer.read(), "<stdin>")))
    if not sentence.strip():
        raise UsageError("the sentence is empty.")
    tokens, weights = sentence_attention(sentence, n_heads=args.heads, seed=args.seed,
                                         tokenizer=args.tokenizer)
    col = max(max(len(t) for t in tokens), 6) + 1
    width = max(len(t) for t in tokens) + 1
    print("Self-attention of an untrained model (seeded weights) over PMI token vectors and "
          "sinusoidal positions; see examples/fat_cat_attention.py for a hand-built head.")
    for h in range(weights.shape[0]):
        print(f"head {h} (rows: queries, columns: keys)")
        print(" " * width + "".join(f"{t:>{col}}" for t in tokens))
        for t, row in zip(tokens, weights[h]):
            print(f"{t:<{width}}" + "".join(f"{v:{col}.3f}" for v in row))
    if output:
        from nlpfeat.viz import plot_attention

        try:
            fig = plot_attention(weights, tokens, tokens)
        except ImportError as exc:
            raise UsageError(str(exc)) from None
        fig.savefig(output, dpi=120, bbox_inches="tight")
        print(f"saved the heatmap to {output}")


# ----------------------------------------------------------------------------- parser
_FORMATTER = argparse.ArgumentDefaultsHelpFormatter


def _add_text_options(p):
    p.add_argument("--tokenizer", default="regexp", choices=TOKENIZERS,
                   help="tokenizer (jieba, for Chinese words, needs nlpfeat[zh])")
    p.add_argument("--keep-case", action="store_true", help="do not lower-case the text")
    p.add_argument("--keep-punctuation", action="store_true",
                   help="with --tokenizer char or jieba, keep punctuation tokens (，。、...)")
    p.add_argument("--skip-blank", action="store_true",
                   help="drop blank lines (reported on stderr); by default a blank line is "
                   "an empty document, so that row i of the output is line i of the input")


def _positive_int(value):
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value!r}")
    return number


def _positive_float(value):
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {value!r}") from None
    if not number > 0 or number == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number, got {value!r}")
    return number


def _max_df(value):
    """A document frequency: a proportion in (0, 1] or a count (an integer > 1)."""
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {value!r}") from None
    if not number > 0:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {value!r}")
    if number > 1:
        if number != int(number):
            raise argparse.ArgumentTypeError(
                f"expected a proportion in (0, 1] or a whole count, got {value!r}")
        return int(number)
    return number


_CORPUS_HELP = ("text file (one document per line; .gz, .bz2 and .xz read as such), folder of "
                ".txt files (one document per file), glob pattern such as 'news-*.txt.gz' "
                "(quoted), or - for stdin; read lazily, never held in memory")


#: Parameters of ``Corpus`` that its error messages name, and the flags that set them.
_INPUT_FLAGS = {"encoding": "--encoding", "errors": "--errors"}


def _add_input_options(p):
    """Options of the commands that read a corpus: its decoding and where it is counted."""
    p.add_argument("--encoding", default="utf-8", help="text encoding of the input")
    p.add_argument("--errors", default="strict", choices=["strict", "replace", "ignore"],
                   help="what to do with bytes that do not decode: stop with an error naming "
                   "the file and line, replace them with U+FFFD, or drop them")
    dask = p.add_mutually_exclusive_group()
    dask.add_argument("--scheduler", metavar="ADDRESS", default=None,
                      help="run the counting on the Dask cluster of this scheduler (e.g. "
                      "tcp://10.0.0.5:8786; its workers need nlpfeat and must see the input "
                      "files); needs nlpfeat[dask]")
    dask.add_argument("--dask-workers", metavar="N", type=_positive_int, default=None,
                      help="run the counting on a local Dask cluster of N worker processes; "
                      "needs nlpfeat[dask]")
    p.add_argument("--blocksize", metavar="MIB", type=_positive_float, default=32.0,
                   help="with --scheduler or --dask-workers: MiB of a text file per Dask "
                   "partition (compressed files are one partition each)")


def _add_compare(sub):
    from nlpfeat.compare import ALL_MODELS, TASKS

    p = sub.add_parser(
        "compare", help="kernel attention vs neural attention, side by side",
        description="Compare Nadaraya-Watson kernel regression with learned attention and "
        "baselines on bundled data; writes tables (CSV, JSON) and figures.",
        epilog="example: nlpfeat compare --task sine diabetes --quick --out results/",
        formatter_class=_FORMATTER,
    )
    p.add_argument("--task", nargs="+", choices=list(TASKS), default=list(TASKS),
                   help="tasks to run")
    p.add_argument("--models", nargs="+", choices=list(ALL_MODELS), default=None,
                   help="models to run (None: every model that applies to the task)")
    p.add_argument("--out", default="nlpfeat-compare", help="output folder")
    p.add_argument("--seed", type=int, default=0, help="random seed of data splits and models")
    p.add_argument("--quick", action="store_true", help="small sizes, for smoke tests and CI")
    p.add_argument("--with-torch", action="store_true",
                   help="add a PyTorch nn.MultiheadAttention model (needs torch)")
    p.add_argument("--no-plots", action="store_true", help="skip the figures")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_compare, subparser=p, flags={})


def _add_corpus_commands(sub):
    from nlpfeat.text._association._collocations import MEASURES
    from nlpfeat.text._topics._coherence import COHERENCE_MEASURES
    from nlpfeat.text._topics._model import BACKENDS, METHODS

    p = sub.add_parser("features", help="document-feature matrix of a corpus",
                       description="Write the document x feature matrix of a corpus (or the "
                       "PPMI word x word matrix) to a .npz file; row i is line i.",
                       epilog="example: nlpfeat features corpus.txt --kind tfidf --ngram 1 2 -o X.npz",
                       formatter_class=_FORMATTER)
    p.add_argument("file", help=_CORPUS_HELP)
    p.add_argument("--kind", choices=["bow", "pbow", "tfidf", "pmi"], default="tfidf",
                   help="bag of words, positional bag of words, TF-IDF, or PPMI word vectors")
    p.add_argument("--ngram", nargs=2, type=_positive_int, default=[1, 1], metavar=("MIN", "MAX"),
                   help="smallest and largest word n-gram")
    p.add_argument("--min-df", type=_positive_int, default=1,
                   help="drop features in fewer documents than this")
    p.add_argument("--max-df", type=_max_df, default=1.0,
                   help="drop features in more documents than this (a proportion, or a count)")
    p.add_argument("--min-count", type=_positive_int, default=1,
                   help="for --kind pmi: drop words seen fewer times")
    p.add_argument("--window", type=_positive_int, default=5,
                   help="for --kind pmi: co-occurrence window (words on each side)")
    p.add_argument("-o", "--output", required=True,
                   help="output .npz file (the suffix is added if missing)")
    p.add_argument("--stream", action="store_true",
                   help="accepted for compatibility: the input is always read lazily twice "
                   "(fit, then transform) and the matrix written in chunks")
    p.add_argument("--chunk-docs", type=_positive_int, default=10000,
                   help="documents transformed and written per chunk (without Dask; with "
                   "it, a chunk is a partition)")
    _add_text_options(p)
    _add_input_options(p)
    p.set_defaults(func=cmd_features, subparser=p, flags={"ngram_range": "--ngram", **_INPUT_FLAGS})

    p = sub.add_parser("collocations", help="ranked collocations (phrases) of a corpus",
                       description="Rank the word pairs of a corpus by an association measure.",
                       epilog="example: nlpfeat collocations corpus.txt --measure llr --top 20",
                       formatter_class=_FORMATTER)
    p.add_argument("file", help=_CORPUS_HELP)
    p.add_argument("--measure", choices=list(MEASURES), default="pmi",
                   help="association measure")
    p.add_argument("--top", type=_positive_int, default=30, help="how many phrases to print")
    p.add_argument("--min-count", type=_positive_int, default=5,
                   help="ignore pairs seen fewer times")
    _add_text_options(p)
    _add_input_options(p)
    p.set_defaults(func=cmd_collocations, subparser=p, flags=_INPUT_FLAGS)

    p = sub.add_parser("topics", help="topic model with coherence per topic",
                       description="Fit a topic model and print each topic's top words with "
                       "its coherence. Stop words are removed unless --keep-stop-words.",
                       epilog="example: nlpfeat topics corpus.txt -k 10 --method lda --backend gensim",
                       formatter_class=_FORMATTER)
    p.add_argument("file", help=_CORPUS_HELP)
    p.add_argument("-k", type=_positive_int, default=10, help="number of topics")
    p.add_argument("--method", choices=METHODS, default=METHODS[0], help="topic model")
    p.add_argument("--backend", choices=BACKENDS, default=BACKENDS[0],
                   help="library that fits the model")
    p.add_argument("--coherence", choices=COHERENCE_MEASURES, default=COHERENCE_MEASURES[0],
                   help="coherence measure printed per topic")
    p.add_argument("--n-words", type=_positive_int, default=10, help="top words per topic")
    p.add_argument("--min-df", type=_positive_int, default=2,
                   help="drop words in fewer documents than this")
    p.add_argument("--max-df", type=_max_df, default=1.0,
                   help="drop words in more documents than this (a proportion, or a count)")
    p.add_argument("--stop-words", choices=["english", "chinese"], default=None,
                   help="stop-word list (None: english, or chinese with the jieba and char "
                   "tokenizers)")
    p.add_argument("--keep-stop-words", action="store_true", help="keep stop words")
    p.add_argument("--seed", type=int, default=0, help="random seed of the model")
    _add_text_options(p)
    _add_input_options(p)
    p.set_defaults(func=cmd_topics, subparser=p, flags={"n_components": "-k", **_INPUT_FLAGS})

    p = sub.add_parser("neighbors", help="nearest neighbours in PMI-embedding space",
                       description="Fit PPMI-SVD word vectors and print the nearest neighbours "
                       "of each query word.",
                       epilog="example: nlpfeat neighbors corpus.txt good king --topn 5",
                       formatter_class=_FORMATTER)
    p.add_argument("file", help=_CORPUS_HELP)
    p.add_argument("words", nargs="+", help="query words")
    p.add_argument("--topn", type=_positive_int, default=10, help="neighbours per word")
    p.add_argument("--dim", type=_positive_int, default=50, help="embedding size")
    p.add_argument("--window", type=_positive_int, default=5,
                   help="co-occurrence window (words on each side)")
    p.add_argument("--min-count", type=_positive_int, default=2,
                   help="drop words seen fewer times")
    p.add_argument("--seed", type=int, default=0, help="random seed of the SVD")
    _add_text_options(p)
    _add_input_options(p)
    p.set_defaults(func=cmd_neighbors, subparser=p, flags={"n_components": "--dim", **_INPUT_FLAGS})

    p = sub.add_parser("attention", help="attention weights of a small untrained model over a sentence",
                       description="Print (and plot) the self-attention weights of a small "
                       "untrained model over the tokens of a sentence.",
                       epilog='example: nlpfeat attention "the fat cat sat on the mat" --heads 4 -o fig.png',
                       formatter_class=_FORMATTER)
    p.add_argument("sentence", help="the sentence, or - to read it from stdin")
    p.add_argument("--heads", type=_positive_int, default=1, help="attention heads")
    p.add_argument("--seed", type=int, default=0, help="random seed of the weights")
    p.add_argument("--tokenizer", default="regexp", choices=TOKENIZERS, help="tokenizer")
    p.add_argument("-o", "--output", help="save a heatmap (needs matplotlib)")
    p.set_defaults(func=cmd_attention, subparser=p, flags={})


def build_parser():
    parser = argparse.ArgumentParser(
        prog="nlpfeat",
        description="Classical NLP features and kernel regression: attention is kernel regression.",
        epilog="Run 'nlpfeat COMMAND --help' for a command's options.",
        formatter_class=_FORMATTER,
    )
    parser.add_argument("--version", action="version", version=f"nlpfeat {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="show the full traceback of an error instead of one line")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    _add_compare(sub)
    _add_corpus_commands(sub)
    return parser


def _flag_names(parser, extra):
    """Python parameter name -> command-line flag, for error messages."""
    names = {}
    for action in parser._actions:
        flags = [o for o in action.option_strings if o.startswith("--")] or action.option_strings
        if flags and "_" in action.dest:
            names[action.dest] = flags[0]
    names.update(extra)
    return names


def _in_flags(message, flags):
    """Speak of the command line's flags, not of the Python parameters behind them."""
    for name, flag in sorted(flags.items(), key=lambda kv: -len(kv[0])):
        message = re.sub(rf"(?<![\w-]){re.escape(name)}(?![\w])", flag, message)
    return message


def main(argv=None):
    """Run the command line; returns the exit status (130 after Ctrl-C)."""
    try:
        return _run(argv)
    except KeyboardInterrupt:
        # Results already written stay; no traceback for a deliberate interruption.
        print("nlpfeat: interrupted", file=sys.stderr)
        return 130


def _run(argv):
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help(sys.stderr)
        return 2
    sub_parser = args.subparser
    try:
        args.func(args, sub_parser)
    except BrokenPipeError:  # pragma: no cover - e.g. piping into head
        return 0
    except UsageError as exc:
        if args.debug:
            raise
        sub_parser.error(str(exc))
    except (ValueError, ImportError, OSError) as exc:
        # Invalid parameter values, unreadable input, a missing optional package: the
        # user's to fix, shown as one line; --debug shows where it came from. Anything
        # else (a KeyError, TypeError, ... is a bug) keeps its traceback.
        if args.debug:
            raise
        sub_parser.error(_in_flags(str(exc), _flag_names(sub_parser, args.flags)))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
