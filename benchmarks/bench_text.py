"""Speed and peak memory of nlpfeat's text vectorizers against scikit-learn and gensim, same run.

Corpus: the Wikipedia sample (250 articles, gensim's test data) repeated ``--times`` times
(10 by default: 2,500 documents, 23 MB of text). Rows, each fit_transform on the raw strings:

* ``BagOfWords()`` vs scikit-learn ``CountVectorizer()`` (outputs checked identical);
* ``TfidfVectorizer()`` vs scikit-learn ``TfidfVectorizer()`` (max |diff| printed);
* ``TfidfVectorizer(ngram_range=(1, 3))`` vs scikit-learn with the same setting;
* ``TfidfVectorizer(smartirs="nfc")`` vs gensim ``Dictionary`` + ``doc2bow`` + ``TfidfModel``
  + ``corpus2csc`` on the same tokens (the gensim pipeline is given nlpfeat's tokenizer).

Time is the best of ``--repeat`` runs (ours and the peer alternate); peak memory is
``tracemalloc``'s peak over one separate run (Python and numpy allocations). One BLAS thread.
Run: ``python benchmarks/bench_text.py`` (a few minutes on 2 cores; ``--rows`` picks rows)
or ``--quick``.

``--text-pass`` times the compiled text pass (issue 26) instead, in CPU seconds (best of
``--repeat`` in turn; on a shared machine wall time is noise, CPU time much less so) and
MB/s of UTF-8 text per core, on three inputs: the Wikipedia sample, Lee's background
corpus and ``bench_scale.py``'s Zipf corpus (``--zipf-tokens``): ``BagOfWords()`` vs
``CountVectorizer()`` and vs today's Python path of nlpfeat (the private switch
``_compiled_text = False``), ``TfidfVectorizer()`` vs scikit-learn's, and
``BagOfWords(n_jobs=2)`` vs ``n_jobs=1`` (wall and CPU); every output is checked equal.
``--text-pass --ngrams`` times ``BagOfWords(ngram_range=(1, 2))`` (word n-grams from id
sequences on the pass) vs ``CountVectorizer(ngram_range=(1, 2))`` and vs the Python path,
on the Wikipedia sample and Lee's background corpus, the same way.
``--text-pass --stages`` prints where ``BagOfWords()`` / ``TfidfVectorizer()`` spend their
CPU on the three inputs: cProfile's internal time, best of 3, grouped by stage.
``--text-pass --char`` times ``BagOfWords(analyzer="char_wb", ngram_range=(2, 4))`` vs
``CountVectorizer`` with the same settings and vs the Python path, and
``PositionalBagOfWords()`` (words; also ``position="log"``) and
``PositionalBagOfWords(analyzer="char")`` vs the Python path (no peer), on the Wikipedia sample (x1) and Lee's background corpus.
"""
import argparse
import gc
import time
import tracemalloc

from threadpoolctl import threadpool_limits

from nlpfeat.datasets import load_wiki_sample
from nlpfeat.text import BagOfWords, TfidfVectorizer


def timed(fn):
    gc.collect()
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def peak_mib(fn):
    """Peak traced memory (MiB) of one call of ``fn``."""
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def gensim_tfidf(docs):
    from gensim.corpora import Dictionary
    from gensim.matutils import corpus2csc
    from gensim.models import TfidfModel

    analyze = TfidfVectorizer().build_analyzer()
    tokens = [analyze(doc) for doc in docs]
    dictionary = Dictionary(tokens)
    corpus = [dictionary.doc2bow(t) for t in tokens]
    model = TfidfModel(dictionary=dictionary, smartirs="nfc")
    X = corpus2csc(model[corpus], num_terms=len(dictionary), num_docs=len(docs)).T.tocsr()
    return X, dictionary


def compare(ours_fn, peer_fn, repeat):
    """Best times (alternating runs) and the last results."""
    ours_times, peer_times = [], []
    for _ in range(repeat):
        t, ours_result = timed(ours_fn)
        ours_times.append(t)
        t, peer_result = timed(peer_fn)
        peer_times.append(t)
    return min(ours_times), min(peer_times), ours_result, peer_result


def sklearn_rows():
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.feature_extraction.text import TfidfVectorizer as SklearnTfidf

    return [
        ("BagOfWords()", BagOfWords(), "sklearn CountVectorizer()", CountVectorizer()),
        ("TfidfVectorizer()", TfidfVectorizer(), "sklearn TfidfVectorizer()", SklearnTfidf()),
        ("TfidfVectorizer(ngram_range=(1,3))", TfidfVectorizer(ngram_range=(1, 3)),
         "sklearn TfidfVectorizer(ngram_range=(1,3))", SklearnTfidf(ngram_range=(1, 3))),
    ]


def difference(X, Y, ours, peer):
    if list(ours.get_feature_names_out()) != list(peer.get_feature_names_out()):
        return "feature names DIFFER"
    return f"max |diff| {abs(X - Y).max():.1e}" if X.dtype.kind == "f" else \
        ("identical" if (X != Y).nnz == 0 else "DIFFER")


def report(name, t_ours, t_peer, m_ours, m_peer, peer_name, note):
    print(f"{name:<36} {t_ours:7.2f} s {m_ours:8.1f} MiB | {peer_name:<44} {t_peer:7.2f} s "
          f"{m_peer:8.1f} MiB | speed-up {t_peer / t_ours:5.2f}x  memory {m_ours / m_peer:5.2f}x"
          f"  {note}", flush=True)


def run_sklearn_row(row, docs, repeat):
    name, ours, peer_name, peer = row
    t_ours, t_peer, X, Y = compare(lambda: ours.fit_transform(docs),
                                   lambda: peer.fit_transform(docs), repeat)
    note = difference(X, Y, ours, peer)
    del X, Y
    m_ours = peak_mib(lambda: ours.fit_transform(docs))
    m_peer = peak_mib(lambda: peer.fit_transform(docs))
    report(name, t_ours, t_peer, m_ours, m_peer, peer_name, note)


def run_gensim_row(docs, repeat):
    ours = TfidfVectorizer(smartirs="nfc")
    t_ours, t_peer, X, (Y, dictionary) = compare(lambda: ours.fit_transform(docs),
                                                 lambda: gensim_tfidf(docs), repeat)
    columns = [dictionary.token2id[t] for t in ours.get_feature_names_out()]
    note = f"max |diff| {abs(X - Y[:, columns]).max():.1e}"
    del X, Y
    m_ours = peak_mib(lambda: ours.fit_transform(docs))
    m_peer = peak_mib(lambda: gensim_tfidf(docs))
    report('TfidfVectorizer(smartirs="nfc")', t_ours, t_peer, m_ours, m_peer,
           "gensim Dictionary+TfidfModel(smartirs=nfc)", note)


ROWS = ("bow", "tfidf", "tfidf13", "gensim")


def cpu_timed(fn):
    """``(cpu_s, wall_s, result)`` of one call of ``fn``."""
    gc.collect()
    cpu, wall = time.process_time(), time.perf_counter()
    result = fn()
    return time.process_time() - cpu, time.perf_counter() - wall, result


def in_turn(fns, repeat):
    """Best CPU and wall seconds of each of ``fns`` (run in turn ``repeat`` times), the
    spread (worst / best CPU) and the last results."""
    cpu = [[] for _ in fns]
    wall = [[] for _ in fns]
    results = [None] * len(fns)
    for _ in range(repeat):
        for k, fn in enumerate(fns):
            c, w, results[k] = cpu_timed(fn)
            cpu[k].append(c)
            wall[k].append(w)
    return [(min(c), min(w), max(c) / min(c)) for c, w in zip(cpu, wall)], results


def python_path(estimator):
    estimator._compiled_text = False
    return estimator


def text_pass_inputs(zipf_tokens=None, wiki_times=3):
    """The Wikipedia sample x``wiki_times``, Lee's background corpus and, with
    ``zipf_tokens``, the Zipf corpus of ``bench_scale.py``."""
    import os
    import tempfile

    from nlpfeat.datasets import load_lee

    inputs = [(f"Wikipedia sample x{wiki_times}", load_wiki_sample().data * wiki_times),
              ("Lee background", list(load_lee().background))]
    if zipf_tokens is None:
        return inputs
    from bench_scale import corpus_file

    data_dir = os.path.join(tempfile.gettempdir(), "nlpfeat-bench-text-pass")
    os.makedirs(data_dir, exist_ok=True)
    with open(corpus_file(data_dir, zipf_tokens, 2**20 + 1), encoding="utf-8") as fh:
        zipf = fh.read().splitlines()
    return inputs + [(f"Zipf {zipf_tokens / 1e6:.0f}M tokens", zipf)]


def bow_in_turn(docs, mb, repeat, **kwargs):
    """``BagOfWords(**kwargs)`` compiled, its Python path and ``CountVectorizer(**kwargs)``
    timed in turn on ``docs`` (``mb`` MB of UTF-8), outputs compared."""
    from sklearn.feature_extraction.text import CountVectorizer

    ours, python = BagOfWords(**kwargs), python_path(BagOfWords(**kwargs))
    peer = CountVectorizer(**kwargs)
    (t_ours, t_py, t_peer), (X, Xp, Y) = in_turn(
        [lambda: ours.fit_transform(docs), lambda: python.fit_transform(docs),
         lambda: peer.fit_transform(docs)], repeat)
    same = (X != Y).nnz == 0 and (X != Xp).nnz == 0 and \
        list(ours.get_feature_names_out()) == list(peer.get_feature_names_out())
    for label, t in (("BagOfWords compiled", t_ours), ("BagOfWords Python path", t_py),
                     ("sklearn CountVectorizer", t_peer)):
        print(f"  {label:<28} {t[0]:7.3f} CPU s (spread {t[2]:.2f}) {mb / t[0]:7.1f} MB/s "
              f"per core  wall {t[1]:7.3f} s")
    print(f"  -> {t_peer[0] / t_ours[0]:.1f}x CountVectorizer, {t_py[0] / t_ours[0]:.1f}x "
          f"the Python path (CPU); {X.shape[1]} features; outputs "
          f"{'identical' if same else 'DIFFER'}", flush=True)


def run_text_pass(repeat, zipf_tokens):
    from sklearn.feature_extraction.text import TfidfVectorizer as SklearnTfidf

    BagOfWords().fit_transform(["warm up the compiled pass"])
    for name, docs in text_pass_inputs(zipf_tokens):
        mb = sum(len(doc.encode("utf-8")) for doc in docs) / 1e6
        print(f"\n{name}: {len(docs)} documents, {mb:.1f} MB UTF-8; CPU s best of {repeat} in "
              f"turn (spread = worst/best)", flush=True)
        bow_in_turn(docs, mb, repeat)
        ours, peer = TfidfVectorizer(), SklearnTfidf()
        (t_ours, t_peer), (X, Y) = in_turn([lambda: ours.fit_transform(docs),
                                            lambda: peer.fit_transform(docs)], repeat)
        print(f"  TfidfVectorizer() {t_ours[0]:.3f} CPU s ({mb / t_ours[0]:.1f} MB/s) vs "
              f"sklearn {t_peer[0]:.3f} ({mb / t_peer[0]:.1f} MB/s): "
              f"{t_peer[0] / t_ours[0]:.1f}x; max |diff| {abs(X - Y).max():.1e}")
        one, two = BagOfWords(n_jobs=1), BagOfWords(n_jobs=2)
        (t_one, t_two), (X1, X2) = in_turn([lambda: one.fit_transform(docs),
                                            lambda: two.fit_transform(docs)], repeat)
        print(f"  n_jobs=2 vs 1: wall {t_one[1]:.3f} / {t_two[1]:.3f} s = "
              f"{t_one[1] / t_two[1]:.2f}x, CPU {t_one[0]:.3f} / {t_two[0]:.3f} s; outputs "
              f"{'identical' if (X1 != X2).nnz == 0 else 'DIFFER'}", flush=True)


def run_ngrams(repeat, ngram_range=(1, 2)):
    BagOfWords(ngram_range=ngram_range).fit_transform(["warm up the compiled pass"])
    for name, docs in text_pass_inputs():
        mb = sum(len(doc.encode("utf-8")) for doc in docs) / 1e6
        print(f"\n{name}: {len(docs)} documents, {mb:.1f} MB UTF-8; ngram_range={ngram_range}; "
              f"CPU s best of {repeat} in turn (spread = worst/best)", flush=True)
        bow_in_turn(docs, mb, repeat, ngram_range=ngram_range)


#: Stages of the text pass and the names (cProfile's ``file:line(function)``) in them.
STAGES = [
    ("encode", ("_encoded", "'encode'", "_padded_buffer", "'join' of 'str'", "isascii")),
    ("lowering check", ("_holding", "lowered_whole", "'lower'")),
    ("scan + numbering", ("_scan_number", "_scan", "_number", "add_spans", "add_table",
                          "token_spans", "_scanned")),
    ("new types (str, vocabulary)", ("_new_tokens", "_terms", "_fresh_terms", "strings",
                                     "_gather_ids", "'update'", "isdisjoint", "fromkeys",
                                     "'split'", "'decode'", "_term_of_new", "terms_of",
                                     "grown")),
    ("counting (rows)", ("_rows", "_counted")),
    ("statistics (TermCounts.add)", ("_term_counts.py:118", "bincount")),
    ("CSR build", ("CsrBuilder", "_resized", "'resize'", "append", "to_csr")),
    ("vocabulary / sort", ("sorted_terms", "term_order", "terms_by_id", "_learn_vocabulary",
                           "prefix_keys", "argsort", "_is_range")),
    ("min_df/max_df pruning", ("prune_mask", "check_df_bounds")),
    ("column reorder", ("remap_columns", "renumber", "csr_sort_indices", "_sorted_csr",
                        "sort_indices")),
    ("Tfidf weights + transform", ("_tfidf.py", "normalize_rows", "_schemes.py",
                                   "_fit_weights")),
]


def stage_times(fn, repeat=3):
    """``(total, {stage: seconds})`` of the least total of ``repeat`` profiled calls."""
    import cProfile
    import pstats

    best = None
    for _ in range(repeat):
        profiler = cProfile.Profile()
        profiler.enable()
        fn()
        profiler.disable()
        stats = pstats.Stats(profiler).stats
        sums = {}
        for (path, line, name), row in stats.items():
            key = f"{path}:{line}({name})"
            stage = next((s for s, names in STAGES if any(n in key for n in names)), "other")
            sums[stage] = sums.get(stage, 0.0) + row[2]
        total = sum(sums.values())
        if best is None or total < best[0]:
            best = (total, sums)
    return best


def run_stages(zipf_tokens):
    BagOfWords().fit_transform(["warm up é"])
    TfidfVectorizer().fit_transform(["warm up é"])
    for name, docs in text_pass_inputs(zipf_tokens):
        for cls in (BagOfWords, TfidfVectorizer):
            cls().fit_transform(docs)
            total, sums = stage_times(lambda: cls().fit_transform(docs))
            parts = ", ".join(f"{s} {sums[s] * 1e3:.0f}" for s, _ in STAGES + [("other", ())]
                              if sums.get(s, 0) >= 5e-4)
            print(f"{name} | {cls.__name__} | total {total * 1e3:.0f} ms | {parts}",
                  flush=True)


def positional_in_turn(docs, mb, repeat, **kwargs):
    """``PositionalBagOfWords(**kwargs)`` compiled and its Python path timed in turn."""
    from nlpfeat.text import PositionalBagOfWords

    ours, python = PositionalBagOfWords(**kwargs), python_path(PositionalBagOfWords(**kwargs))
    (t_ours, t_py), (X, Xp) = in_turn([lambda: ours.fit_transform(docs),
                                       lambda: python.fit_transform(docs)], repeat)
    same = (X != Xp).nnz == 0 and ours.vocabulary_ == python.vocabulary_
    for label, t in (("compiled", t_ours), ("Python path", t_py)):
        print(f"  PositionalBagOfWords({', '.join(f'{k}={v!r}' for k, v in kwargs.items())}) "
              f"{label:<12} {t[0]:7.3f} CPU s (spread {t[2]:.2f}) {mb / t[0]:7.1f} MB/s "
              f"per core  wall {t[1]:7.3f} s")
    print(f"  -> {t_py[0] / t_ours[0]:.1f}x the Python path (CPU); {X.shape[1]} features; "
          f"outputs {'identical' if same else 'DIFFER'}", flush=True)


def run_char(repeat):
    from nlpfeat.text import PositionalBagOfWords

    char_wb = {"analyzer": "char_wb", "ngram_range": (2, 4)}
    BagOfWords(**char_wb).fit_transform(["warm up the compiled pass"])
    PositionalBagOfWords().fit_transform(["warm up the compiled pass"])
    PositionalBagOfWords(analyzer="char").fit_transform(["warm up the compiled pass"])
    for name, docs in text_pass_inputs(wiki_times=1):
        mb = sum(len(doc.encode("utf-8")) for doc in docs) / 1e6
        print(f"\n{name}: {len(docs)} documents, {mb:.1f} MB UTF-8; CPU s best of {repeat} in "
              f"turn (spread = worst/best)", flush=True)
        print(f"  {char_wb}")
        bow_in_turn(docs, mb, repeat, **char_wb)
        positional_in_turn(docs, mb, repeat)
        positional_in_turn(docs, mb, repeat, position="log")
        positional_in_turn(docs, mb, repeat, analyzer="char")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--times", type=int, default=10, help="copies of the Wikipedia sample")
    parser.add_argument("--repeat", type=int, default=2, help="timing runs (best is kept)")
    parser.add_argument("--rows", default=",".join(ROWS),
                        help=f"comma-separated subset of {','.join(ROWS)}")
    parser.add_argument("--quick", action="store_true", help="1 copy, 1 run, skip trigrams")
    parser.add_argument("--text-pass", action="store_true",
                        help="time the compiled text pass (CPU s, MB/s per core)")
    parser.add_argument("--zipf-tokens", type=int, default=2_000_000,
                        help="tokens of the Zipf corpus of --text-pass")
    parser.add_argument("--ngrams", action="store_true",
                        help="with --text-pass: word bigrams (ngram_range=(1, 2)) instead")
    parser.add_argument("--stages", action="store_true",
                        help="with --text-pass: CPU per stage (cProfile) instead")
    parser.add_argument("--char", action="store_true",
                        help="with --text-pass: char_wb n-grams and PositionalBagOfWords")
    args = parser.parse_args(argv)
    if args.text_pass and args.stages:
        with threadpool_limits(1):
            run_stages(args.zipf_tokens)
        return
    if args.text_pass and args.char:
        with threadpool_limits(1):
            run_char(max(args.repeat, 3))
        return
    if args.text_pass and args.ngrams:
        with threadpool_limits(1):
            run_ngrams(max(args.repeat, 3))
        return
    if args.text_pass:
        with threadpool_limits(1):
            run_text_pass(max(args.repeat, 3), args.zipf_tokens)
        return
    rows = args.rows.split(",")
    if args.quick:
        args.times, args.repeat = 1, 1
        rows = [r for r in rows if r != "tfidf13"]
    docs = load_wiki_sample().data * args.times
    print(f"Wikipedia sample x{args.times}: {len(docs)} documents, "
          f"{sum(map(len, docs)) / 1e6:.1f} M characters; best of {args.repeat} runs; "
          f"peak memory by tracemalloc")
    with threadpool_limits(1):
        for key, row in zip(ROWS, sklearn_rows()):
            if key in rows:
                run_sklearn_row(row, docs, args.repeat)
        if "gensim" in rows:
            run_gensim_row(docs, args.repeat)


if __name__ == "__main__":
    main()
