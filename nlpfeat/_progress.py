"""Progress bars on stderr for long work: the one place where nlpfeat makes a tqdm bar.

Every estimator and function whose work grows with the corpus or the sample takes
``verbose`` (scikit-learn's meaning: 0, the default, is silent; 1 or more shows bars). The
bars go to ``sys.stderr`` (looked up when a bar starts, so that a redirected stderr gets
them) and never change a result: :func:`track` yields the very items it is given.

- :func:`progress_bar`: a bar over a known or unknown number of steps (epochs, rows,
  models), or an object that accepts the same calls and shows nothing.
- :func:`track`: the documents of a corpus, counted as they are read. An input that knows
  its size on disk (a :class:`nlpfeat.datasets.Corpus`, through its
  ``__nlpfeat_progress__`` hook) counts bytes with the rate in MB/s instead.
- :func:`stderr_is_terminal`: the command line's default (bars on a terminal only).
"""
import sys
from itertools import islice

__all__ = ["progress_bar", "stderr_is_terminal", "track"]


class _Silent:
    """The interface of a tqdm bar that nlpfeat uses, doing nothing (``verbose=0``)."""

    def update(self, n=1):
        pass

    def set_postfix(self, *args, **kwargs):
        pass

    def clear(self):
        pass

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def progress_bar(verbose, desc, *, total=None, unit="it", unit_scale=False, leave=True,
                 delay=0.0):
    """A tqdm bar on stderr when ``verbose`` (an int, 0: silent), else a silent stand-in.

    Both have ``update(n)``, ``set_postfix(**values)``, ``clear()``, ``close()`` and work
    as context managers; ``delay`` seconds pass before a bar first shows (none for work
    that ends sooner). ``total=None`` shows a count and a rate without a percentage: the choice for
    an input whose size is not known (a generator, a compressed stream's decompressed
    size), never a guessed total. With ``unit="B"`` and ``unit_scale`` the rate reads MB/s.

    Examples
    --------
    >>> from nlpfeat._progress import progress_bar
    >>> with progress_bar(0, "fitting", total=3) as bar:   # verbose=0: nothing is shown
    ...     bar.update(3)
    """
    if not verbose:
        return _Silent()
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit=unit, unit_scale=unit_scale, leave=leave,
                delay=delay, file=sys.stderr, dynamic_ncols=True)


def track(documents, verbose, desc, *, unit="doc"):
    """``documents`` itself when not ``verbose``; else an iterator over the same items that
    moves a bar as they are read.

    The total is ``len(documents)`` when it has one (a list, an array); a corpus read from
    disk that defines ``__nlpfeat_progress__(desc)`` (as :class:`nlpfeat.datasets.Corpus`
    does) gives its own iterator, which counts the bytes of its files; anything else (a
    generator) shows a count without a total. The items are never copied, reordered or
    dropped, and a one-shot iterator is still read once (a few hundred items ahead of
    the caller: the bar moves once per batch).

    Examples
    --------
    >>> from nlpfeat._progress import track
    >>> docs = ["a b", "c"]
    >>> track(docs, 0, "reading") is docs
    True
    >>> list(track(docs, 1, "reading"))           # doctest: +SKIP
    ['a b', 'c']
    """
    if not verbose:
        return documents
    own = getattr(documents, "__nlpfeat_progress__", None)
    if own is not None:
        return own(desc)
    try:
        total = len(documents)
    except TypeError:
        total = None
    return _tracked(documents, desc, total, unit)


#: Items read per update of a bar: one tqdm call per item costs more than counting a
#: short document (``benchmarks/bench_progress.py``).
_STEP = 512


def _tracked(documents, desc, total, unit):
    items = iter(documents)
    with progress_bar(1, desc, total=total, unit=unit) as bar:
        while batch := list(islice(items, _STEP)):
            yield from batch
            bar.update(len(batch))


def stderr_is_terminal():
    """Whether ``sys.stderr`` is a terminal: the command line shows bars by default then,
    never into a log file or a pipe."""
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):     # replaced by an object without it, or closed
        return False
