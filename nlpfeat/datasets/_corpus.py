"""Reading a corpus from disk: one document per line of a file, or per file of a folder.

:class:`Corpus` is the re-iterable, lazily read corpus of :mod:`nlpfeat.datasets`
(gensim's ``LineSentence`` and ``TextDirectoryCorpus`` are the models): each iteration
opens the files again, so two-pass algorithms work and memory does not grow with the
corpus. The rule of "one document per line" lives here once, for every reader: lines end
at ``"\\n"`` only (one ``"\\r"`` before it is dropped), so that document i is line i of the
file; compressed files are told by their magic bytes. :func:`split_lines` applies it to a
text in memory, :class:`Corpus` to files, and :func:`split_blocks` with
:func:`read_blocks` to byte ranges of files read in parallel (the command line's Dask
path), with the same lines and the same errors.
"""
import bz2
import codecs
import glob
import gzip
import lzma
import os
import zlib
from typing import NamedTuple

from nlpfeat._progress import progress_bar

__all__ = ["Block", "Corpus", "partition_blocks", "read_blocks", "split_blocks",
           "split_lines"]

#: Compressed formats read transparently, by their magic bytes (whatever the name says).
_MAGIC = ((b"\x1f\x8b", gzip.open), (b"BZh", bz2.open), (b"\xfd7zXZ\x00", lzma.open))
#: Bytes per read (at most; ``read1``, so that a compressed file yields what it decompressed
#: before an error): a line longer than this is assembled from several reads.
_READ_BYTES = 1 << 20
#: A NUL byte within this many bytes of the start of a file: a binary file (later: a
#: binary part of a text file, named by its line).
_BINARY_HEAD = 8192
#: Codecs whose decoding depends on a state carried across lines: never split in blocks.
_STATEFUL_CODECS = ("iso2022", "hz", "utf-7")


def split_lines(text):
    """Split ``text`` into lines on ``"\\n"`` (and ``"\\r\\n"``) only.

    ``str.splitlines`` also splits on a lone ``"\\r"``, form feeds, U+0085, U+2028 and other
    separators, so line i of a file would no longer be document i. A final newline does not
    start an empty last document; blank lines in between are kept (as empty strings).

    Examples
    --------
    >>> split_lines("a\\fb\\r\\n\\nc\\rd\\n")
    ['a\\x0cb', '', 'c\\rd']
    """
    lines, rest = _complete_lines(text)
    if rest:
        lines.append(_without_cr(rest))
    return lines


def _complete_lines(text):
    """The lines of ``text`` that end in ``"\\n"``, without it (and one ``"\\r"`` before it),
    and the rest after the last ``"\\n"``: the one rule of a line, for every reader."""
    lines = text.split("\n")
    rest = lines.pop()
    return [_without_cr(line) for line in lines], rest


def _without_cr(line):
    return line.removesuffix("\r")


def _opener(path):
    """How ``path`` is opened: by the compressed format its first bytes name, else as is."""
    with open(path, "rb") as probe:
        head = probe.read(8)
    for magic, opener in _MAGIC:
        if head.startswith(magic):
            return opener
    return open


class Block(NamedTuple):
    """The lines of ``file`` that start at a byte in ``[start, stop)`` (``stop`` None: up to
    the end of the file); ``Block(file)`` is the whole file."""

    file: str
    start: int = 0
    stop: int | None = None


def _splits_at_newline_bytes(encoding):
    """Whether a ``b"\\n"`` byte is always a line end in ``encoding`` and a line decodes
    alone (not UTF-16/32, whose characters hold such bytes, nor a stateful codec)."""
    name = codecs.lookup(encoding).name
    return "\n".encode(encoding) == b"\n" and not name.startswith(_STATEFUL_CODECS)


def split_blocks(files, blocksize=None, encoding="utf-8"):
    """Blocks of about ``blocksize`` bytes covering ``files``, in order.

    A line belongs to the block in which it starts, so reading the blocks one after another
    (:func:`read_blocks`) gives the lines of the files, each once. A compressed file (told
    by its magic bytes, as :class:`Corpus` reads it), a file of an encoding in which
    ``b"\\n"`` can be part of a character, and every file when ``blocksize`` is None, is
    one block.

    Examples
    --------
    >>> import os, tempfile
    >>> from nlpfeat.datasets._corpus import read_blocks, split_blocks
    >>> path = os.path.join(tempfile.mkdtemp(), "lines.txt")
    >>> with open(path, "wb") as fh:
    ...     _ = fh.write(b"one\\r\\ntwo\\rstill two\\nthree")
    >>> blocks = split_blocks([path], blocksize=10)
    >>> [(b.start, b.stop) for b in blocks]
    [(0, 10), (10, 20), (20, None)]
    >>> [read_blocks([b]) for b in blocks]
    [['one', 'two\\rstill two'], ['three'], []]
    """
    whole = blocksize is None or not _splits_at_newline_bytes(encoding)
    blocks = []
    for name in files:
        size = os.path.getsize(name)
        if whole or size <= blocksize or _opener(name) is not open:
            blocks.append(Block(name))
            continue
        starts = range(0, size, blocksize)
        blocks.extend(Block(name, start, start + blocksize) for start in starts[:-1])
        blocks.append(Block(name, starts[-1]))
    return blocks


def partition_blocks(files, blocksize, *, unit="line", encoding="utf-8"):
    """The blocks of each partition of a bag of the documents of ``files``, in order: one
    block of about ``blocksize`` bytes of lines each (:func:`split_blocks`), or with
    ``unit="file"`` runs of consecutive whole files of about ``blocksize`` bytes together."""
    if unit == "line":
        return [[block] for block in split_blocks(files, blocksize, encoding)]
    partitions, size = [], blocksize
    for block in split_blocks(files):
        if size >= blocksize:
            partitions.append([])
            size = 0
        partitions[-1].append(block)
        size += os.path.getsize(block.file)
    return partitions


def read_blocks(blocks, unit="line", encoding="utf-8", errors="strict"):
    """The documents of ``blocks`` (of :func:`split_blocks`), in order, as :class:`Corpus`
    reads them: their lines, or (``unit="file"``, whole-file blocks) one document per file.

    An error names the file and the line, counted from the start of the file.
    """
    documents = []
    for block in blocks:
        lines = (line for _, line in _Lines(block.file, encoding, errors, block))
        if unit == "file":
            documents.append(_file_document(lines))
        else:
            documents.extend(lines)
    return documents


def _file_document(lines):
    """A file as one document (``unit="file"``): its lines joined by spaces."""
    return " ".join(lines)


class _Span:
    """The bytes of a plain file's lines that start in ``[start, stop)``, read with
    ``read1`` as a file is: from the first line start at or after ``start`` (:attr:`first`)
    to the end of the line in which ``stop`` falls."""

    def __init__(self, name, start, stop):
        self.name, self._stop = name, stop
        self._fh = open(name, "rb")  # noqa: SIM115 - closed by __exit__, as a file is
        self.first = self._pos = self._line_start(start)
        self._done = stop is not None and self.first >= stop

    def _line_start(self, start):
        """Seek to the first line that starts at or after byte ``start``; its offset."""
        if start == 0:
            return 0
        offset = start - 1                  # a line starts after a newline
        self._fh.seek(offset)
        while data := self._fh.read1(_READ_BYTES):
            at = data.find(b"\n")
            if at >= 0:
                self._fh.seek(offset + at + 1)
                return offset + at + 1
            offset += len(data)
        return offset

    def read1(self, n):
        if self._done:
            return b""
        if self._stop is None:
            return self._fh.read1(n)
        if self._pos < self._stop:
            data = self._fh.read1(min(n, self._stop - self._pos))
            self._pos += len(data)
            # a line that starts at ``stop`` is the next block's
            self._done = not data or (self._pos >= self._stop and data.endswith(b"\n"))
            return data
        data = self._fh.read1(n)            # past ``stop``: the rest of the last line
        at = data.find(b"\n")
        self._done = not data or at >= 0
        return data[: at + 1] if at >= 0 else data

    def bytes_read(self):
        """Bytes of the file read so far, from the start of the span."""
        return self._fh.tell() - self.first

    def lines_before(self):
        """Lines of the file before this span (read again: only an error needs them)."""
        count, left = 0, self.first
        with open(self.name, "rb") as fh:
            while left and (data := fh.read(min(left, _READ_BYTES))):
                count += data.count(b"\n")
                left -= len(data)
        return count

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._fh.close()


class _Whole:
    """A whole file, decompressed by its magic bytes, with the interface of :class:`_Span`."""

    first = 0

    def __init__(self, name):
        opener = _opener(name)
        self._raw = open(name, "rb")  # noqa: SIM115 - closed by __exit__
        self._fh = self._raw if opener is open else opener(self._raw, "rb")
        self.read1 = self._fh.read1

    def lines_before(self):
        return 0

    def bytes_read(self):
        """Bytes of the file on disk read so far (of the compressed stream, if it is one)."""
        return self._raw.tell()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._fh.close()
        self._raw.close()


class Corpus:
    """A corpus on disk, read lazily and re-iterable: one document per line, or per file.

    Parameters
    ----------
    path : str, os.PathLike or list of them
        A text file (one document per line), a folder (one document per file of the
        folder and its sub-folders matching ``pattern``), a glob pattern such as
        ``"news-*.txt.gz"`` (its files in sorted order, one document per line), or a list
        of files. Files compressed with gzip, bzip2 or xz are read transparently.
    unit : {"line", "file"} or None, default=None
        What a document is: a line, or a whole file (its lines joined by spaces). None
        means "file" for a folder and "line" otherwise.
    pattern : str, optional
        Which files of a folder are read, a glob on the file name: by default
        ``"*.txt"``; compressed variants such as ``"*.txt.gz"`` need their own pattern,
        e.g. ``"*.txt*"``.
    encoding : str, default="utf-8"
        Text encoding of the files; a UTF-8 byte-order mark at the start of a file is
        dropped.
    errors : {"strict", "replace", "ignore", ...}, default="strict"
        What to do with bytes that do not decode (as :func:`codecs.decode`): under
        "strict" an undecodable line raises a ValueError naming the file and the line.
    skip_blank : bool, default=False
        Drop blank (empty or whitespace-only) documents. By default they are kept, so that
        document i is line i of the input and labels in a parallel file stay aligned.
    progress : bool, default=False
        Show a progress bar (tqdm, on stderr) over the files' bytes while iterating, with
        the rate in MB/s; for compressed files, bytes of the compressed files (their
        decompressed size is not known before they are read). An estimator given the
        corpus with ``verbose=1`` shows the same bar.

    Attributes
    ----------
    files : list of str
        The files read, in order (resolved when the corpus is made: a missing file, an
        empty folder or a glob that matches nothing raises at once).

    Examples
    --------
    >>> import os, tempfile
    >>> from nlpfeat.datasets import Corpus
    >>> from nlpfeat.text import BagOfWords
    >>> folder = tempfile.mkdtemp()
    >>> path = os.path.join(folder, "news.txt")
    >>> with open(path, "w", encoding="utf-8") as fh:
    ...     _ = fh.write("the cat sat\\n\\nthe dog ran\\n")
    >>> corpus = Corpus(path)
    >>> list(corpus)
    ['the cat sat', '', 'the dog ran']
    >>> BagOfWords().fit_transform(corpus).shape   # read twice: fit, then transform
    (3, 5)
    """

    def __init__(self, path, *, unit=None, pattern="*.txt", encoding="utf-8", errors="strict",
                 skip_blank=False, progress=False):
        import codecs

        try:
            codecs.lookup(encoding)
        except (LookupError, TypeError):
            raise ValueError(f"unknown encoding {encoding!r}; use e.g. 'utf-8' or "
                             "'latin-1'.") from None
        try:
            codecs.lookup_error(errors)
        except (LookupError, TypeError):
            raise ValueError(f"unknown errors policy {errors!r}; use 'strict', 'replace' "
                             "or 'ignore'.") from None
        if unit not in (None, "line", "file"):
            raise ValueError(f"unit must be 'line', 'file' or None; got {unit!r}.")
        self.path = path
        self.encoding = encoding
        self.errors = errors
        self.skip_blank = skip_blank
        self.progress = progress
        self.files, folder = self._resolve(path, pattern)
        self.unit = unit or ("file" if folder else "line")

    @staticmethod
    def _resolve(path, pattern):
        if isinstance(path, (list, tuple)):
            files = [os.fspath(p) for p in path]
            missing = [f for f in files if not os.path.isfile(f)]
            if missing:
                raise FileNotFoundError(f"no such file: {missing[0]!r}"
                                        + (f" (and {len(missing) - 1} more)" if len(missing) > 1
                                           else ""))
            if not files:
                raise ValueError("the list of files is empty.")
            return files, False
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a file, a folder, a glob pattern or a list of files; "
                            f"got {type(path).__name__}.")
        path = os.fspath(path)
        if os.path.isdir(path):
            files = sorted(f for f in glob.glob(os.path.join(glob.escape(path), "**", pattern),
                                                recursive=True) if os.path.isfile(f))
            if not files:
                raise ValueError(f"the folder {path!r} holds no file matching {pattern!r}; "
                                 "pass pattern='*' to read every file.")
            return files, True
        if os.path.isfile(path):
            return [path], False
        if glob.has_magic(path):
            files = sorted(f for f in glob.glob(path) if os.path.isfile(f))
            if not files:
                raise ValueError(f"the pattern {path!r} matches no file.")
            return files, False
        raise FileNotFoundError(f"no such file or folder: {path!r}.")

    def __repr__(self):
        return (f"Corpus({self.path!r}, unit={self.unit!r}, {len(self.files)} file"
                f"{'s' if len(self.files) != 1 else ''})")

    def __iter__(self):
        for _, document in self.iter_with_ids():
            yield document

    def to_bag(self, blocksize=32 * 2**20):
        """The documents as a ``dask.bag.Bag``, read on the workers by this corpus' rule:
        the documents of iterating the corpus, in the same order (needs dask).

        ``dask.bag.read_text`` would split lines at a lone ``"\\r"`` too (universal
        newlines) and tell compression by the file name; this bag reads each partition
        as :class:`Corpus` reads its files, with the same errors (naming the file, by
        its absolute path, and the line).

        Parameters
        ----------
        blocksize : int, default=33554432 (32 MiB)
            Bytes of the files per partition: a file of lines is cut into blocks of
            about this size (a compressed file, or one of UTF-16 or UTF-32, is one
            partition); whole files (``unit="file"``) are grouped to about this size.

        Returns
        -------
        bag : dask.bag.Bag of str
            One partition per block of lines, or run of whole files, in the corpus'
            order (those of :func:`partition_blocks`, which the command line's Dask path
            uses to number the rows).

        Examples
        --------
        >>> bag = Corpus("news-*.txt.gz").to_bag()               # doctest: +SKIP
        >>> BagOfWords(min_df=5).fit(bag)                         # doctest: +SKIP
        """
        import dask
        import dask.bag as db

        files = [os.path.abspath(f) for f in self.files]     # as any worker finds them
        read = dask.delayed(read_blocks, pure=True)
        bag = db.from_delayed([
            read(blocks, self.unit, self.encoding, self.errors)
            for blocks in partition_blocks(files, blocksize, unit=self.unit,
                                           encoding=self.encoding)])
        return bag.filter(_not_blank) if self.skip_blank else bag

    def iter_with_ids(self):
        """Yield ``(id, document)``: id is ``(file, line number)`` or the file name.

        Line numbers count from 1 and include the blank lines that ``skip_blank`` drops,
        so an id always points at the line the document came from.
        """
        return self._with_ids(int(bool(self.progress)), "reading corpus")

    def __nlpfeat_progress__(self, desc):
        """The documents, with a bar over the bytes of the files read from disk (the hook
        of :func:`nlpfeat._progress.track`: an estimator's ``verbose`` shows it)."""
        return (document for _, document in self._with_ids(1, desc))

    def _with_ids(self, verbose, desc):
        # The bar counts bytes as they come off the disk, against the files' sizes on disk:
        # for a compressed file, bytes of the compressed stream (its decompressed size is
        # not known before it is read), so the total is never too small or too large.
        total = None
        if verbose:
            total = sum(os.path.getsize(f) for f in self.files)
            if any(_opener(f) is not open for f in self.files):
                desc += " (compressed bytes)"
        with progress_bar(verbose, desc, total=total, unit="B", unit_scale=True) as bar:
            for name in self.files:
                lines = _Lines(name, self.encoding, self.errors,
                               progress=bar if verbose else None)
                if self.unit == "file":
                    text = _file_document(line for _, line in lines)
                    if not self.skip_blank or _not_blank(text):
                        yield name, text
                    continue
                for number, line in lines:
                    if not self.skip_blank or _not_blank(line):
                        yield (name, number), line


def _not_blank(document):
    return bool(document.strip())


class _Lines:
    """``(line number, text)`` of the lines of one file, or of one :class:`Block` of it,
    read in chunks of bytes and decoded with checks (numbers count from the block's first
    line; an error names the line counted from the start of the file)."""

    def __init__(self, name, encoding, errors, block=None, *, progress=None):
        self.name, self.encoding, self.errors = name, encoding, errors
        self.block, self.progress = block, progress
        self.check_nul = "16" not in encoding and "32" not in encoding

    def _open(self):
        block = self.block
        if block is None or (block.start == 0 and block.stop is None):
            return _Whole(self.name)
        return _Span(self.name, block.start, block.stop)

    def __iter__(self):
        self.number, source = 0, None        # lines yielded so far
        try:
            with self._open() as source:
                yield from self._read(source)
        except (EOFError, OSError, zlib.error, lzma.LZMAError) as exc:
            before = source.lines_before() if source is not None else 0
            raise _read_error(self.name, before + self.number, exc) from None

    def _read(self, source):
        decoder = codecs.getincrementaldecoder(self.encoding)(errors=self.errors)
        pending, offset = "", source.first   # bytes of the file before ``chunk``
        done = 0                             # bytes read from disk, told to the bar
        at_start = offset == 0               # no character but marks decoded yet
        while True:
            chunk = source.read1(_READ_BYTES)    # a truncated file: lines so far kept
            if self.check_nul and b"\x00" in chunk:
                raise self._nul_error(source, chunk, offset)
            if self.progress is not None:
                self.progress.update(source.bytes_read() - done)
                done = source.bytes_read()
            try:
                text = decoder.decode(chunk, final=not chunk)
            except UnicodeDecodeError as exc:
                line = source.lines_before() + self.number
                raise _decode_error(self.name, self.encoding, exc, line, pending) from None
            if at_start:     # byte-order marks at the start of a file, however chunked
                text = text.lstrip("\ufeff")
                at_start = not text
            offset += len(chunk)
            if not chunk:
                if pending + text:
                    self.number += 1
                    yield self.number, _without_cr(pending + text)
                return
            lines, pending = _complete_lines(pending + text)
            for line in lines:
                self.number += 1
                yield self.number, line

    def _nul_error(self, source, chunk, offset):
        """The ValueError of a NUL byte in ``chunk`` (at byte ``offset`` of the file): near
        the start of a file, a binary file; later, a binary part, named by its line."""
        at = chunk.index(b"\x00")
        if offset + at < _BINARY_HEAD:
            return ValueError(f"{self.name}: this looks like a binary file (it holds NUL "
                              "bytes), not text; pass text files only.")
        line = source.lines_before() + self.number + 1 + chunk[:at].count(b"\n")
        return ValueError(f"{self.name}, line {line}: a NUL byte; this part of the file "
                          "looks binary, not text; pass text files only.")


def _decode_error(name, encoding, exc, number, pending):
    """The ValueError of undecodable bytes, naming their line (``number`` lines precede the
    block, ``pending`` is the start of the current line)."""
    line = number + 1 + (pending + exc.object[:exc.start].decode(encoding, "replace")).count("\n")
    return ValueError(f"{name}, line {line}: bytes that are not valid {encoding} "
                      f"({exc.reason}); pass the right encoding=, or errors='replace'.")


def _read_error(name, number, exc):
    """The error of a file that cannot be read after ``number`` lines."""
    if isinstance(exc, FileNotFoundError):
        return FileNotFoundError(f"{name}: the file disappeared while the corpus was read.")
    return ValueError(f"{name}, after line {number}: the file cannot be read ({exc}); "
                      "a compressed file may be truncated or corrupt.")
