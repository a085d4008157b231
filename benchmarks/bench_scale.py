"""Corpus scale: throughput, peak memory and growth of the counting estimators, 1M-100M tokens.

Synthetic corpus (``generate``): realistic statistics, reproducible from the seed.

* Unigram law: Zipf-Mandelbrot, ``p(r) ∝ 1 / (r + q)^s`` with ``s = 1.07`` and ``q = 2.7``
  (the exponent measured on English Wikipedia is about 1.07; the Mandelbrot offset
  flattens the head as real corpora do) over ``--types`` word types (2^20 + 1 = 1,048,577
  by default, at least 1M). Word r is rank r written in base 26 with letters, at least two
  letters long (``"ab"``, ``"ac"``, ...), so frequent words are short and every word is
  one token for the default token pattern of nlpfeat and scikit-learn.
* Document lengths: log-normal, ``exp(N(mu=5.0, sigma=0.9))`` tokens (median 148, mean
  about 222; at least 1), as news and Wikipedia paragraphs-to-articles are.
* One document per line, written in blocks of a million tokens to ``--data-dir``
  (``zipf-<size>.txt``; a temporary folder by default, reused if present). The files are
  never part of the repository.

Steps, each in its own Python process (so that its peak RSS, read from ``getrusage`` at
the end, is its own; the RSS after imports, before the step, is shown as "base"). Each
step except the Dask ones first runs untimed on the corpus's first 300 documents (imports
and compiled kernels loaded: a fixed cost that is not corpus work):

* ``bow``: nlpfeat ``BagOfWords().fit_transform`` of the lazily read ``Corpus``;
* ``sk_count``: scikit-learn ``CountVectorizer().fit_transform`` of the same lazy lines
  (same matrix checked: shape, nnz and a checksum of the data and indices);
* ``sk_hashing``: scikit-learn ``HashingVectorizer().transform`` (stateless, no vocabulary);
* ``tfidf``: nlpfeat ``TfidfVectorizer(smartirs="nfc")``: ``fit`` (one streamed pass) then
  ``transform`` (a second pass), the streaming workflow;
* ``gensim_tfidf``: gensim's streaming workflow on the same tokens (nlpfeat's analyzer):
  ``Dictionary`` over a token stream, ``TfidfModel(smartirs="nfc")``, then ``corpus2csc``
  of ``model[doc2bow(...)]`` over a second stream (same weights checked);
* ``cooccurrence``: ``cooccurrence(corpus, window=5, min_count=5)``, streamed (the
  counting and the matrix of the kept words);
* ``pmi_count``: the counting part of the next step alone (the word counts, then the
  pairs of the words kept, stored once per unordered pair);
* ``pmi``: ``PMIEmbedding(100, min_count=5).fit`` end to end: streamed counting, PPMI and
  the randomized truncated SVD;
* ``topics``: ``TopicModel(20)`` (gensim LDA, one pass) ``fit`` on the ``Corpus``: the
  counting streams through ``BagOfWords``, the count matrix is the model's input;
* ``collocations``: ``Collocations(input="content").fit``;
* ``dask1`` / ``dask2``: ``BagOfWords`` ``fit`` then ``transform(...).compute()`` of
  ``dask.bag.read_text(file, blocksize=...)`` on a ``distributed.LocalCluster`` of 1 and
  of 2 worker processes (one thread each); the vocabulary is checked equal to ``bow``'s;
  the time of the ``fit`` alone (the count: vocabulary and statistics) is reported too;
* ``daskml``: dask-ml's ``CountVectorizer`` on the same bag and 2-worker cluster (skipped,
  and said so, when dask-ml is not installed).

Each step runs with this checkout's ``nlpfeat`` first on the path (``PYTHONPATH``), not
an installed copy. Reported per size: seconds, CPU seconds (``time.process_time`` of the step's process; for
the Dask steps plus the CPU time the workers spent during the step), tokens/s of both,
peak and base RSS (MiB), and the load average; then the fitted growth
exponent b of each step (time ∝ size^b, least squares over the sizes run) and the ratios
the issue sets as targets (BagOfWords / CountVectorizer >= 1.3 at 10M, streaming TF-IDF
/ gensim >= 3, 2 workers / 1 worker >= 1.7), in wall and CPU time. Timings depend on the
machine and on what else runs on it: on a loaded machine compare CPU times, except for
the speed-up of 2 workers over 1, which only wall time on otherwise idle cores shows. The
RSS of Dask workers is not in the driver's figure. ``--repeat N`` runs each step N times
in turn (N fresh processes per size): the table shows the run with the least CPU time,
with the range of all runs, and b is fitted to the best and to the median runs, so that
one slow run at 1M (where a step takes well under a second) does not decide b.

Run: ``python benchmarks/bench_scale.py`` (1M, 10M and 100M tokens: hours),
``--sizes 1e6 1e7``, ``--steps bow sk_count``, ``--quick`` (0.2M tokens, a smoke test).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

SEED = 20260414
ZIPF_S, ZIPF_Q = 1.07, 2.7
LENGTH_MU, LENGTH_SIGMA = 5.0, 0.9
STEPS = ["bow", "sk_count", "sk_hashing", "tfidf", "gensim_tfidf", "cooccurrence",
         "pmi_count", "pmi", "topics", "collocations", "dask1", "dask2", "daskml"]
DASK_STEPS = ("dask1", "dask2", "daskml")
WARM_UP_DOCUMENTS = 300
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ----------------------------------------------------------------------------- corpus
def word_forms(n_types):
    """Rank r -> a word of lowercase letters (base 26, at least two letters), vectorized."""
    ranks = np.arange(n_types, dtype=np.int64) + 26          # skip the one-letter words
    n_letters = np.floor(np.log(ranks + 1) / np.log(26)).astype(int) + 1
    letters = np.zeros((n_types, int(n_letters.max())), dtype="U1")
    value = ranks.copy()
    for k in range(letters.shape[1] - 1, -1, -1):
        letters[:, k] = np.array(list("abcdefghijklmnopqrstuvwxyz"))[value % 26]
        value //= 26
    width = letters.shape[1]
    words = ["".join(row[width - n:]) for row, n in zip(letters, n_letters)]
    return np.array(words, dtype=object)


def generate(path, n_tokens, n_types, seed=SEED):
    """Write a corpus of about ``n_tokens`` tokens (whole documents) to ``path``."""
    rng = np.random.default_rng(seed)
    ranks = np.arange(1, n_types + 1, dtype=np.float64)
    cdf = np.cumsum((ranks + ZIPF_Q) ** -ZIPF_S)
    cdf /= cdf[-1]
    words = word_forms(n_types)
    written = 0
    tmp = path + ".part"
    with open(tmp, "w", encoding="utf-8") as fh:
        while written < n_tokens:
            lengths = np.maximum(1, np.round(rng.lognormal(LENGTH_MU, LENGTH_SIGMA, 5000)))
            lengths = lengths.astype(np.int64)
            lengths = lengths[np.cumsum(lengths) <= max(n_tokens - written, lengths[0])]
            if lengths.size == 0:
                break
            ids = np.searchsorted(cdf, rng.random(int(lengths.sum())))
            tokens = words[ids]
            bounds = np.concatenate(([0], np.cumsum(lengths)))
            fh.write("".join(" ".join(tokens[a:b]) + "\n" for a, b in zip(bounds[:-1], bounds[1:])))
            written += int(lengths.sum())
    os.replace(tmp, path)
    return written


def corpus_file(data_dir, n_tokens, n_types):
    path = os.path.join(data_dir, f"zipf-{n_tokens}-{n_types}.txt")
    if not os.path.exists(path):
        start = time.perf_counter()
        generate(path, n_tokens, n_types)
        print(f"generated {path} ({os.path.getsize(path) / 2**20:.0f} MiB) in "
              f"{time.perf_counter() - start:.0f} s", file=sys.stderr)
    return path


# ----------------------------------------------------------------------------- steps
def _rss_mib():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _digest(X, vocabulary=None):
    """Shape, nnz and checksums of a CSR matrix (rows and columns in a fixed order)."""
    X = X.tocsr()
    X.sort_indices()
    out = {"shape": list(X.shape), "nnz": int(X.nnz),
           "sum": float(np.asarray(X.data, dtype=np.float64).sum())}
    if vocabulary is not None:
        out["n_terms"] = len(vocabulary)
        out["index_checksum"] = int((X.indices.astype(np.int64) * 7919 % 1000003).sum())
    return out


def _lines(path):
    from nlpfeat.datasets import Corpus

    return Corpus(path)


def _cluster(n_workers):
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                           dashboard_address=":0")
    return cluster, Client(cluster)


def _warm_up():
    import nlpfeat.text  # noqa: F401

    try:
        import dask_ml.feature_extraction.text  # noqa: F401
    except ImportError:
        pass


def _bag(path, n_tokens):
    import dask.bag as db

    size = os.path.getsize(path)
    return db.read_text(path, blocksize=max(size // 8, 1 << 20))   # about 8 partitions


def _prefix_file(path, n_documents):
    """The first ``n_documents`` lines of ``path`` in a file beside it (made once)."""
    prefix = f"{path}.first{n_documents}"
    if not os.path.exists(prefix):
        with open(path, encoding="utf-8") as src, open(prefix + ".part", "w",
                                                       encoding="utf-8") as dst:
            for _, line in zip(range(n_documents), src):
                dst.write(line)
        os.replace(prefix + ".part", prefix)
    return prefix


def run_step(step, path, n_tokens, *, warm_up=True):
    """Run one step in this process; return its result dict (no timing of imports).

    With ``warm_up`` the step first runs untimed on the corpus's first
    ``WARM_UP_DOCUMENTS`` documents, so that imports and the loading of compiled (numba)
    kernels from their cache, a fixed cost of about 0.3 s, are not counted as corpus work:
    that cost would flatter the growth exponent by slowing the smallest size.
    """
    if warm_up and step not in DASK_STEPS:
        run_step(step, _prefix_file(path, WARM_UP_DOCUMENTS), 0, warm_up=False)
    from nlpfeat.text import (
        BagOfWords,
        Collocations,
        PMIEmbedding,
        TfidfVectorizer,
        cooccurrence,
    )

    base = _rss_mib()
    result = {}
    start, cpu_start = time.perf_counter(), time.process_time()
    if step == "bow":
        bow = BagOfWords()
        result["check"] = _digest(bow.fit_transform(_lines(path)), bow.vocabulary_)
    elif step == "sk_count":
        from sklearn.feature_extraction.text import CountVectorizer

        cv = CountVectorizer()
        result["check"] = _digest(cv.fit_transform(_lines(path)), cv.vocabulary_)
    elif step == "sk_hashing":
        from sklearn.feature_extraction.text import HashingVectorizer

        result["check"] = _digest(HashingVectorizer().transform(_lines(path)))
    elif step == "tfidf":
        tfidf = TfidfVectorizer(smartirs="nfc").fit(_lines(path))
        result["check"] = _digest(tfidf.transform(_lines(path)))
    elif step == "gensim_tfidf":
        from gensim.corpora import Dictionary
        from gensim.matutils import corpus2csc
        from gensim.models import TfidfModel

        analyze = TfidfVectorizer().build_analyzer()
        dictionary = Dictionary(analyze(doc) for doc in _lines(path))
        model = TfidfModel(dictionary=dictionary, smartirs="nfc")
        stream = (model[dictionary.doc2bow(analyze(doc))] for doc in _lines(path))
        X = corpus2csc(stream, num_terms=len(dictionary), dtype=np.float64).T
        result["check"] = _digest(X)
    elif step == "cooccurrence":
        counts, vocabulary = cooccurrence(_lines(path), window=5, min_count=5)
        result["check"] = {"n_terms": len(vocabulary), "nnz": int(counts.nnz)}
    elif step == "pmi_count":            # the counting part of "pmi" alone
        upper, vocabulary, _ = PMIEmbedding(100, min_count=5)._count_pairs(_lines(path))
        result["check"] = {"n_terms": len(vocabulary), "stored_pairs": int(upper.nnz)}
    elif step == "pmi":
        emb = PMIEmbedding(100, min_count=5, random_state=0).fit(_lines(path))
        result["check"] = {"n_terms": len(emb.vocabulary_)}
    elif step == "topics":
        from nlpfeat.text import TopicModel

        model = TopicModel(20, random_state=0).fit(_lines(path))
        result["check"] = {"n_terms": len(model.vocabulary_),
                           "coherence": round(float(model.coherence_.mean()), 4)}
    elif step == "collocations":
        col = Collocations(input="content").fit(_lines(path))
        result["check"] = {"n_phrases": len(getattr(col, "phrases_", getattr(col, "scores_", [])))}
    elif step in ("dask1", "dask2", "daskml"):
        if step == "daskml":
            try:
                from dask_ml.feature_extraction.text import CountVectorizer as DaskCV
            except ImportError:
                return {"skipped": "dask-ml is not installed"}
        cluster, client = _cluster(1 if step == "dask1" else 2)
        try:
            bag = _bag(path, n_tokens).persist()      # read and split the text first
            from distributed import wait

            wait(bag)
            client.run(_warm_up)                      # imports on the workers, not timed
            workers_cpu = sum(client.run(time.process_time).values())
            start, cpu_start = time.perf_counter(), time.process_time()
            if step == "daskml":
                cv = DaskCV()
                X = cv.fit_transform(bag).compute()
                result["check"] = _digest(X, cv.vocabulary_)
            else:
                bow = BagOfWords().fit(bag)
                result["fit_seconds"] = time.perf_counter() - start
                result["check"] = _digest(bow.transform(bag).compute(), bow.vocabulary_)
            result["partitions"] = bag.npartitions
            result["workers_cpu_seconds"] = (sum(client.run(time.process_time).values())
                                             - workers_cpu)
        finally:
            client.close()
            cluster.close()
    else:
        raise ValueError(f"unknown step {step!r}")
    result["seconds"] = time.perf_counter() - start
    result["cpu_seconds"] = time.process_time() - cpu_start + result.get("workers_cpu_seconds", 0)
    result["base_mib"] = base
    return result


def best_run(runs):
    """The run with the least CPU time, with the CPU seconds of all runs (``cpu_runs``) and
    their median (``cpu_median``); a failed run only when every run failed."""
    done = [r for r in runs if "cpu_seconds" in r]
    if not done:
        return runs[-1]
    best = dict(min(done, key=lambda r: r["cpu_seconds"]))
    if len(runs) > 1:
        best["cpu_runs"] = [r["cpu_seconds"] for r in done]
        best["cpu_median"] = float(np.median(best["cpu_runs"]))
    return best


def run_in_subprocess(step, path, n_tokens, nice):
    command = [sys.executable, os.path.abspath(__file__), "--step", step, "--file", path,
               "--tokens", str(n_tokens)]
    if nice:
        command = ["nice", "-n", str(nice)] + command
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([ROOT] + [p for p in [env.get("PYTHONPATH")] if p])
    proc = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else
                f"exit {proc.returncode}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ----------------------------------------------------------------------------- report
def growth_exponent(sizes, seconds):
    """Least-squares slope of log(time) on log(size): time ∝ size^b."""
    pairs = [(s, t) for s, t in zip(sizes, seconds) if t and t > 0]
    if len(pairs) < 2:
        return None
    x, y = np.log([p[0] for p in pairs]), np.log([p[1] for p in pairs])
    return float(np.polyfit(x, y, 1)[0])


def report(results, sizes, steps):
    print(f"\nload average when the report was made: {_load_average()} "
          f"({os.cpu_count()} CPUs)")
    print("\n| step | tokens | seconds | CPU seconds | tokens/s | tokens/CPU s | peak RSS MiB "
          "| base RSS MiB | check |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for size in sizes:
        for step in steps:
            r = results[size][step]
            if "seconds" not in r:
                print(f"| {step} | {size:.0e} | - | - | - | - | - | - | "
                      f"{r.get('skipped') or r.get('error')} |")
                continue
            cpu = r.get("cpu_seconds")
            if "cpu_runs" in r:
                cpu_text = (f"{cpu:.2f} ({min(r['cpu_runs']):.2f}-{max(r['cpu_runs']):.2f}, "
                            f"{len(r['cpu_runs'])} runs)")
            else:
                cpu_text = f"{cpu:.2f}"
            print(f"| {step} | {size:.0e} | {r['seconds']:.2f} | {cpu_text} | "
                  f"{size / r['seconds']:,.0f} | {size / cpu:,.0f} | {r['peak_mib']:.0f} | "
                  f"{r['base_mib']:.0f} | {json.dumps(r.get('check'))} |")
    if len(sizes) > 1:
        print("\n| step | growth exponent b (time ∝ size^b), wall | b, CPU | b, median CPU |")
        print("|---|---:|---:|---:|")
        for step in steps:
            b = [growth_exponent(sizes, [results[s][step].get(key) for s in sizes])
                 for key in ("seconds", "cpu_seconds", "cpu_median")]
            print("| " + " | ".join([step] + ["-" if x is None else f"{x:.2f}" for x in b])
                  + " |")
    print()
    for size in sizes:
        r = results[size]

        for a, b, target, what in (("bow", "sk_count", 1.3, "BagOfWords / CountVectorizer"),
                                   ("tfidf", "gensim_tfidf", 3.0, "TfidfVectorizer / gensim"),
                                   ("dask2", "dask1", 1.7, "2 workers / 1 worker")):
            if "seconds" in r.get(a, {}) and "seconds" in r.get(b, {}):
                value = r[b]["seconds"] / r[a]["seconds"]
                cpu = r[b]["cpu_seconds"] / r[a]["cpu_seconds"]
                print(f"{size:.0e} tokens: {what} throughput ratio {value:.2f} wall, "
                      f"{cpu:.2f} CPU (target >= {target}"
                      f"{', wall' if a == 'dask2' else ''})")
                if a == "dask2" and "fit_seconds" in r[a] and "fit_seconds" in r[b]:
                    print(f"{size:.0e} tokens: {what}, the count alone (fit: vocabulary and "
                          f"statistics): {r[b]['fit_seconds'] / r[a]['fit_seconds']:.2f} wall "
                          f"({r[b]['fit_seconds']:.1f} s / {r[a]['fit_seconds']:.1f} s)")
        same = [r[s].get("check", {}).get("n_terms")
                for s in ("bow", "sk_count", "dask1", "dask2", "daskml") if "check" in r.get(s, {})]
        if len(same) > 1:
            print(f"{size:.0e} tokens: vocabulary sizes of bow / sk_count / dask1 / dask2 / daskml "
                  f"{same} ({'equal' if len(set(same)) == 1 else 'DIFFERENT'})")


def _load_average():
    try:
        return " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", nargs="+", type=float, default=[1e6, 1e7, 1e8],
                        help="corpus sizes in tokens")
    parser.add_argument("--steps", nargs="+", choices=STEPS, default=STEPS)
    parser.add_argument("--types", type=int, default=2**20 + 1, help="word types of the law")
    parser.add_argument("--data-dir", default=os.path.join(tempfile.gettempdir(),
                                                           "nlpfeat-bench-scale"))
    parser.add_argument("--quick", action="store_true", help="0.2M tokens only (smoke test)")
    parser.add_argument("--nice", type=int, default=0, help="run the steps under nice -n")
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs of each step per size (best and median reported)")
    parser.add_argument("--step", help=argparse.SUPPRESS)
    parser.add_argument("--file", help=argparse.SUPPRESS)
    parser.add_argument("--tokens", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.step:      # a child process: one step, one JSON line
        import resource

        result = run_step(args.step, args.file, args.tokens)
        result["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps(result))
        return
    sizes = [int(2e5)] if args.quick else [int(s) for s in args.sizes]
    os.makedirs(args.data_dir, exist_ok=True)
    results = {}
    for size in sizes:
        path = corpus_file(args.data_dir, size, args.types)
        results[size] = {}
        runs = {step: [] for step in args.steps}
        for _ in range(args.repeat):                 # in turn: drift hits every step
            for step in args.steps:
                runs[step].append(run_in_subprocess(step, path, size, args.nice))
                print(f"{size:.0e} {step}: {json.dumps(runs[step][-1])} (load "
                      f"{_load_average()})", file=sys.stderr)
        for step in args.steps:
            results[size][step] = best_run(runs[step])
    report(results, sizes, args.steps)


if __name__ == "__main__":
    main()
