"""Input and output of the corpus commands: the corpus read lazily from a file, a folder,
a glob or stdin, and a sparse matrix written to a .npz chunk by chunk.

Errors a user can fix are raised as :class:`UsageError`, which the parser prints as one
line after the usage.
"""
import contextlib
import glob
import os
import shutil
import sys
import tempfile
from itertools import islice


class UsageError(Exception):
    """An error the user can fix; printed as one line after the usage."""


def decode(raw, name):
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
        for name, doc in self.corpus.iter_with_ids():
            if self.skip_blank and not doc.strip():
                skipped += 1
                continue
            yield self.doc_id(name), doc
        self.skipped = skipped

    def renamed(self, message):
        """``message`` naming the input as the user did: the files by the names given (Dask
        workers read them by their absolute paths), stdin's temporary file as ``<stdin>``."""
        names = {os.path.abspath(f): f for f in self.corpus.files}
        if self.shown is not None:
            names = {path: self.shown for path in (*names, *self.corpus.files)}
        for path in sorted(names, key=len, reverse=True):
            message = message.replace(path, names[path])
        return message

    def __iter__(self):
        return (doc for _, doc in self.with_ids())

    def report_skipped(self):
        if self.skip_blank and self.skipped:
            print(f"{self.shown or self.source}: skipped {self.skipped} blank document(s) "
                  "(--skip-blank)", file=sys.stderr)


class Lowercased:
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
    options = dict(encoding=args.encoding, errors=args.errors, pattern=args.pattern)
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
        except ValueError as exc:     # a folder or a glob without a file to read
            if os.path.isdir(source) and "matching" in str(exc):
                raise UsageError(f"{source}: the folder holds no file matching --pattern "
                                 f"'{args.pattern}'; pass e.g. --pattern '*' to read every "
                                 "file (each file is one document).") from None
            raise UsageError(str(exc)) from None
        docs = Documents(corpus, source, skip_blank=args.skip_blank, shown=shown)
        try:
            if not any(doc.strip() for doc in docs):    # reads up to the first non-blank one
                raise UsageError(f"{shown or args.file}: no documents found (the input is "
                                 "empty or blank).")
            corpus.progress = getattr(args, "progress", False)   # a bar per pass from here
            yield docs
        except ValueError as exc:     # an unreadable line, read here or on a Dask worker
            message = docs.renamed(str(exc))
            if message == str(exc):
                raise
            raise ValueError(message) from None


def output_path(path, suffix=None, *, flag="-o"):
    """Check an output file before any work; returns the name written.

    A path that exists and is not a regular file (``/dev/null``, ``/dev/stdout``, a named
    pipe) is written as given, without ``suffix``, as other tools write to it; any other
    path gets ``suffix`` (numpy would add it itself) and must lie in an existing folder
    the process can write in, so that an error names the user's path, not a temporary file.
    """
    if is_special_file(path):
        return path
    if suffix and not path.endswith(suffix):
        path += suffix
    folder = os.path.dirname(os.path.abspath(path))
    shown = os.path.dirname(path) or "."
    if not os.path.isdir(folder):
        raise UsageError(f"{flag} {path}: the folder {shown} does not exist; create it "
                         f"first or choose another path.")
    if os.path.isdir(path):
        raise UsageError(f"{flag} {path}: is a folder; give a file name.")
    exists = os.path.exists(path)
    try:   # the temporary files of the chunks go to the folder too
        if exists:
            open(path, "ab").close()
        tempfile.TemporaryFile(dir=folder, prefix=".nlpfeat-").close()
    except OSError as exc:
        what = "cannot write it" if exists else f"cannot write in the folder {shown}"
        raise UsageError(f"{flag} {path}: {what} ({exc.strerror}); choose another "
                         "path.") from None
    return path


def is_special_file(path):
    """Whether ``path`` exists and is neither a regular file nor a folder (a device, a
    pipe), or is a name under /dev (``/dev/stdout`` redirected to a file)."""
    if not os.path.exists(path) or os.path.isdir(path):
        return False
    return not os.path.isfile(path) or os.path.abspath(path).startswith("/dev/")


@contextlib.contextmanager
def open_output(path):
    """``path`` opened for binary writing; an error while writing (a full disk, a closed
    pipe) is a :class:`UsageError` that names ``path``."""
    try:
        with open(path, "wb") as fh:
            yield fh
    except OSError as exc:
        if isinstance(exc, BrokenPipeError):
            raise
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}.") from None


class CsrWriter:
    """A CSR matrix written to a .npz in row chunks: the chunks' data and indices go to
    temporary files next to the output (never all in memory), then into the archive."""

    def __init__(self, output):
        self.output = output
        self.n_rows = self.nnz = 0
        self.row_nnz, self.ids, self.dtype = [], [], None

    def __enter__(self):
        import numpy as np

        # Next to the output (same disk), or in the system's temporary folder for a device
        # or a pipe.
        folder = None if is_special_file(self.output) else os.path.dirname(
            os.path.abspath(self.output))
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


def write_in_chunks(estimator, docs, writer, chunk_docs):
    """Transform ``docs`` with the fitted ``estimator`` and append the rows, a chunk at a time."""
    pairs = docs.with_ids()
    while True:
        chunk = list(islice(pairs, chunk_docs))
        if not chunk:
            break
        writer.append(estimator.transform([doc for _, doc in chunk]), [i for i, _ in chunk])


def _write_npz(path, arrays, raw, block=1 << 24):
    """A compressed .npz of ``arrays`` plus ``raw`` arrays copied from files block by block.

    ``raw`` maps a name to ``(file, dtype, length)``: the file holds the array's bytes.
    """
    import zipfile

    import numpy as np

    with open_output(path) as out, \
            zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, allowZip64=True) as zf:
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
