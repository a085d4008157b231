"""Speed of ``HashingVectorizer().transform`` against scikit-learn's, same run, same output.

Corpora: gensim's Lee background corpus (300 news documents, repeated ``--times`` times)
and the synthetic Zipf corpus of ``bench_scale.py`` (``--zipf-tokens`` tokens, its
generator and seed). Rows (each ``transform`` of the list of strings): the defaults;
``ngram_range=(1, 2)``; ``analyzer="char_wb", ngram_range=(2, 4)``.

Every row first checks that both matrices are equal bit for bit (indptr, indices, data),
then times ours and the peer in turn, ``--repeat`` times each, in CPU seconds of this
process (``time.process_time``: on a shared machine wall time measures the neighbours);
reported: the best of each, MB/s of UTF-8 text per CPU second, the ratio of the bests
and the range of the per-round ratios. One thread (BLAS limited, numba single-threaded).
Run: ``OMP_NUM_THREADS=1 python benchmarks/bench_hashing.py`` (about a minute) or
``--quick``.
"""
import argparse
import gc
import os
import sys
import tempfile
import time

import numpy as np
from threadpoolctl import threadpool_limits

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), HERE]     # this checkout's nlpfeat, then bench_scale
from bench_scale import generate  # noqa: E402  (the Zipf corpus, one generator)

ROWS = {
    "default": {},
    "ngram (1, 2)": {"ngram_range": (1, 2)},
    "char_wb (2, 4)": {"analyzer": "char_wb", "ngram_range": (2, 4)},
}
SKLEARN_PATTERN = r"(?u)\b\w\w+\b"


def cpu_seconds(fn):
    gc.collect()
    start = time.process_time()
    result = fn()
    return time.process_time() - start, result


def lee_docs(times):
    from gensim.test.utils import datapath

    from nlpfeat.datasets import Corpus
    return list(Corpus(datapath("lee_background.cor"))) * times


def zipf_docs(n_tokens):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "zipf.txt")
        generate(path, n_tokens, 2**20 + 1)
        with open(path, encoding="utf-8") as fh:
            return fh.read().splitlines()


def compare(docs, kwargs, repeat):
    from sklearn.feature_extraction.text import HashingVectorizer as SklearnHashing

    from nlpfeat.text import HashingVectorizer

    pattern = {"token_pattern": SKLEARN_PATTERN} if kwargs.get("analyzer") is None else {}
    ours = HashingVectorizer(**kwargs, **pattern)
    peer = SklearnHashing(**kwargs)
    ours.transform(docs[:50])                       # compiled kernels loaded, not timed
    a, b = ours.transform(docs), peer.transform(docs)
    same = (np.array_equal(a.indptr, b.indptr) and np.array_equal(a.indices, b.indices)
            and np.array_equal(a.data, b.data))
    ours_s, peer_s = [], []
    for _ in range(repeat):
        ours_s.append(cpu_seconds(lambda: ours.transform(docs))[0])
        peer_s.append(cpu_seconds(lambda: peer.transform(docs))[0])
    return same, np.array(ours_s), np.array(peer_s)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--times", type=int, default=10, help="Lee corpus repetitions")
    parser.add_argument("--zipf-tokens", type=float, default=2e6)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.times, args.zipf_tokens, args.repeat = 2, 2e5, 2
    corpora = {f"Lee x{args.times}": lee_docs(args.times),
               f"Zipf {args.zipf_tokens:.0e} tokens": zipf_docs(int(args.zipf_tokens))}
    print(f"{'corpus':<22} {'row':<16} {'MB':>6} {'same':>5} {'ours s':>8} {'peer s':>8} "
          f"{'ours MB/s':>10} {'peer MB/s':>10} {'ratio':>6} {'range':>11}")
    with threadpool_limits(1):
        for name, docs in corpora.items():
            mb = sum(len(doc.encode("utf-8")) for doc in docs) / 1e6
            for row, kwargs in ROWS.items():
                same, ours, peer = compare(docs, kwargs, args.repeat)
                ratios = peer / ours
                print(f"{name:<22} {row:<16} {mb:6.1f} {str(same):>5} {ours.min():8.3f} "
                      f"{peer.min():8.3f} {mb / ours.min():10.1f} {mb / peer.min():10.1f} "
                      f"{peer.min() / ours.min():6.2f} {ratios.min():5.2f}-{ratios.max():<5.2f}",
                      flush=True)


if __name__ == "__main__":
    main()
