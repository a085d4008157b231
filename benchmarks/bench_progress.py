"""What ``verbose=1`` costs: a counting fit with its progress bar against the same fit
without, in the same run.

Cases: ``BagOfWords().fit`` on a list of short documents (the bar moves once per document:
the worst case, tiny documents) and on a :class:`~nlpfeat.datasets.Corpus` of the same
text on disk (the bar moves once per MiB read), each timed ``--repeat`` times,
alternating quiet and verbose runs. The bars go to a null stream (tqdm's own drawing is
part of the cost). Prints the fastest of the runs (the least disturbed on a shared
machine), MB/s of text and the ratio verbose / quiet, with the spread (min-max) of the
ratio of the paired runs; and the bar's own cost per document, iterating the list through
it and without it.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/bench_progress.py           # about a minute
    OMP_NUM_THREADS=1 python benchmarks/bench_progress.py --quick   # seconds
"""
import argparse
import contextlib
import io
import os
import tempfile
import time

from nlpfeat._progress import track
from nlpfeat.datasets import Corpus
from nlpfeat.text import BagOfWords

WORDS = ("the cat sat on the mat while a dog ran past the old red barn and every bird "
         "sang").split()


def _documents(n_docs, seed=0):
    import numpy as np

    rng = np.random.RandomState(seed)
    lengths = rng.randint(3, 15, n_docs)
    ids = rng.randint(0, len(WORDS), lengths.sum())
    words, docs, start = np.array(WORDS), [], 0
    for n in lengths:
        docs.append(" ".join(words[ids[start:start + n]]))
        start += n
    return docs


def _time(fit, data):
    start = time.perf_counter()
    with contextlib.redirect_stderr(io.StringIO()):
        fit(data)
    return time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke run)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    n_docs = 20_000 if args.quick else 300_000
    repeat = 2 if args.quick else args.repeat
    docs = _documents(n_docs)
    megabytes = sum(len(d) + 1 for d in docs) / 1e6
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "docs.txt")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write("\n".join(docs) + "\n")
        inputs = {"list of str": docs, "Corpus on disk": Corpus(path)}
        print(f"BagOfWords().fit, {n_docs} documents ({megabytes:.1f} MB of text), "
              f"{repeat} runs each, fastest")
        print(f"{'input':<16} {'quiet s':>8} {'verbose s':>10} {'quiet MB/s':>11} "
              f"{'ratio':>6} {'ratio spread':>14}")
        fastest = {}
        for name, data in inputs.items():
            quiet, loud = [], []
            for _ in range(repeat):
                quiet.append(_time(BagOfWords().fit, data))
                loud.append(_time(BagOfWords(verbose=1).fit, data))
            ratios = [b / a for a, b in zip(quiet, loud)]
            q, v = min(quiet), min(loud)
            fastest.setdefault("list", q)           # the list's, for the line below
            print(f"{name:<16} {q:>8.3f} {v:>10.3f} {megabytes / q:>11.1f} {v / q:>6.3f} "
                  f"{min(ratios):>6.3f}-{max(ratios):.3f}")
        bare = min(_time(lambda d: sum(1 for _ in d), docs) for _ in range(repeat))
        tracked = min(_time(lambda d: sum(1 for _ in track(d, 1, "bar")), docs)
                      for _ in range(repeat))
        print(f"the bar alone: {1e9 * (tracked - bare) / n_docs:.0f} ns per document "
              f"(BagOfWords: {1e9 * fastest['list'] / n_docs:.0f} ns per document)")


if __name__ == "__main__":
    main()
