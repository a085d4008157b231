"""Reading a corpus from disk: one document per line of a file, or per file of a folder.

:class:`Corpus` is the re-iterable, lazily read corpus of :mod:`nlpfeat.datasets`
(gensim's ``LineSentence`` and ``TextDirectoryCorpus`` are the models): each iteration
opens the files again, so two-pass algorithms work and memory does not grow with the
corpus. :func:`split_lines` is the one rule of "one document per line" that the command
line shares: split on newlines only, so that document i is line i of the file.
"""
import bz2
import glob
import gzip
import lzma
import os
import zlib

__all__ = ["Corpus", "split_lines"]

#: Compressed formats read transparently, by their magic bytes (whatever the name says).
_MAGIC = ((b"\x1f\x8b", gzip.open), (b"BZh", bz2.open), (b"\xfd7zXZ\x00", lzma.open))
#: Bytes per read (at most; ``read1``, so that a compressed file yields what it decompressed
#: before an error): a line longer than this is assembled from several reads.
_READ_BYTES = 1 << 20


def split_lines(text):
    """Split ``text`` into lines on ``"\\n"`` (and ``"\\r\\n"``) only.

    ``str.splitlines`` also splits on form feeds, U+0085, U+2028 and other separators, so
    line i of a file would no longer be document i. A final newline does not start an
    empty last document; blank lines in between are kept (as empty strings).

    Examples
    --------
    >>> split_lines("a\\fb\\r\\n\\nc\\n")
    ['a\\x0cb', '', 'c']
    """
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _open_binary(path):
    with open(path, "rb") as probe:
        head = probe.read(8)
    for magic, opener in _MAGIC:
        if head.startswith(magic):
            return opener(path, "rb")
    return open(path, "rb")


def _binary_file_error(name, block, number, first):
    """Raise the ValueError of a NUL byte in ``block``: at the start of a file, a binary
    file; later, a binary part (named by its line: ``number`` lines precede ``block``)."""
    at = block.index(b"\x00")
    if first and at < 8192:
        raise ValueError(f"{name}: this looks like a binary file (it holds NUL bytes), not "
                         "text; pass text files only.")
    line = number + 1 + block[:at].count(b"\n")
    raise ValueError(f"{name}, line {line}: a NUL byte; this part of the file looks binary, "
                     "not text; pass text files only.")


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
        Show a progress bar (tqdm, on stderr) over the files' bytes while iterating.

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

    def iter_with_ids(self):
        """Yield ``(id, document)``: id is ``(file, line number)`` or the file name.

        Line numbers count from 1 and include the blank lines that ``skip_blank`` drops,
        so an id always points at the line the document came from.
        """
        bar = None
        if self.progress:
            from tqdm.auto import tqdm

            total = sum(os.path.getsize(f) for f in self.files)
            bar = tqdm(total=total, unit="B", unit_scale=True, desc="reading corpus")
        try:
            for name in self.files:
                if self.unit == "file":
                    text = " ".join(line for _, line in self._lines(name, bar))
                    if not (self.skip_blank and not text.strip()):
                        yield name, text
                    continue
                for number, line in self._lines(name, bar):
                    if not (self.skip_blank and not line.strip()):
                        yield (name, number), line
        finally:
            if bar is not None:
                bar.close()

    def _lines(self, name, bar):
        """``(line number, text)`` of one file, read in blocks, decoded with checks."""
        import codecs

        decoder = codecs.getincrementaldecoder(self.encoding)(errors=self.errors)
        number, pending, first = 0, "", True
        check_nul = "16" not in self.encoding and "32" not in self.encoding
        try:
            with _open_binary(name) as fh:
                while True:
                    block = fh.read1(_READ_BYTES)   # a truncated file: lines so far kept
                    if check_nul and b"\x00" in block:
                        _binary_file_error(name, block, number, first)
                    if bar is not None:
                        bar.update(len(block))
                    try:
                        text = decoder.decode(block, final=not block)
                    except UnicodeDecodeError as exc:
                        raise _decode_error(name, self.encoding, exc, number, pending) from None
                    if first:
                        text = text.lstrip("\ufeff") if text.startswith("\ufeff") else text
                        first = False
                    text = pending + text
                    if not block:
                        if text:
                            number += 1
                            yield number, text[:-1] if text.endswith("\r") else text
                        return
                    lines = text.split("\n")
                    pending = lines.pop()
                    for line in lines:
                        number += 1
                        yield number, line[:-1] if line.endswith("\r") else line
        except (EOFError, OSError, zlib.error, lzma.LZMAError) as exc:
            raise _read_error(name, number, exc) from None


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
