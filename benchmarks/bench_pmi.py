"""Speed of co-occurrence counting, collocation scoring and PMIEmbedding, peers in one run.

On the Wikipedia sample (250 articles, ~330k tokens) and Lee's background corpus (300
news articles, ~60k tokens), gensim's test data, one BLAS thread:

* ``Collocations(measure="pmi", input="tokens")`` and ``Collocations("pmi", order=3, input="tokens")`` fit with the
  default parameters (lowercasing, ``min_count=5``) against nltk's
  ``BigramCollocationFinder`` / ``TrigramCollocationFinder.from_documents`` on the
  lowercased tokens (the lowercasing is timed on nltk's side too: the same output from
  the same input) + ``apply_freq_filter`` + ``score_ngrams(pmi)``; the rankings are
  checked equal;
* on the Wikipedia sample also ``lowercase=False`` with ``min_count`` 1 and 5;
* ``Collocations("pmi")`` fit on the raw text (the compiled tokenizer: issue 26) against
  nltk's bigram finder on the same tokens made in Python (tokenizing timed on its side);
* ``Collocations(measure="npmi", input="tokens")`` fit against gensim ``Phrases(scoring="npmi")`` +
  ``export_phrases()`` (every candidate scored, checked identical);
* ``cooccurrence(window=5)`` in tokens per second (default working memory and 64 MiB
  chunks), against a plain dictionary counter;
* ``PMIEmbedding(n_components=100).fit`` end to end on the raw strings, with the SVD in
  float64 (default) and float32, beside gensim ``Word2Vec`` (skip-gram, one worker).

Each timing is the best of ``--repeat`` runs (default 5; nlpfeat and its peer take turns
in each round), wall clock and (in parentheses) CPU time, with the machine's load average
on each row. ``--runs R`` repeats the Collocations rows R times and prints the spread of
the ratios. Run: ``python benchmarks/bench_pmi.py`` (a few minutes on 2 cores),
``--collocations-only --runs 3``, or ``--quick``. It imports the ``nlpfeat`` of the
checkout it lives in (an editable install elsewhere is not what is timed).
"""
import argparse
import gc
import os
import sys
import time
from collections import Counter, defaultdict

# this checkout's nlpfeat, not an installed copy (as bench_scale.py's steps)
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np
from threadpoolctl import threadpool_limits

from nlpfeat.datasets import load_lee, load_wiki_sample
from nlpfeat.text import Collocations, PMIEmbedding, cooccurrence


def best_time(fn, repeat):
    """(best wall seconds, best CPU seconds over ``repeat`` runs, last result).

    The CPU time (all threads of this process) is what a loaded machine distorts least.
    """
    return best_times([fn], repeat)[0]


def best_times(fns, repeat, spread=None):
    """:func:`best_time` of several functions run in turn in every round.

    The speed of a shared virtual machine drifts over seconds (the same fit here took
    0.46 s or 0.85 s); taking turns gives nlpfeat and its peer the same chances. A list
    passed as ``spread`` receives the median wall time of each function.
    """
    walls = np.full((repeat, len(fns)), np.inf)
    cpus = np.full((repeat, len(fns)), np.inf)
    results = [None] * len(fns)
    for r in range(repeat):
        for i, fn in enumerate(fns):
            # start every call from a clean collector, so that no side pays for collecting
            # the other side's objects (the garbage collector stays on while timing)
            gc.collect()
            wall, cpu = time.perf_counter(), time.process_time()
            results[i] = fn()     # frees the previous result inside the timing, for every side
            walls[r, i] = time.perf_counter() - wall
            cpus[r, i] = time.process_time() - cpu
    if spread is not None:
        spread.extend(np.median(walls, axis=0))
    return [((walls[:, i].min(), cpus[:, i].min()), results[i]) for i in range(len(fns))]


def report(name, ours, peer, peer_name, note=""):
    """One row: wall seconds (CPU seconds) of ours and the peer, the wall-time and CPU-time
    ratios, and the load average of the machine (1 minute) when the row was printed."""
    print(f"{name:<36} {ours[0]:7.3f} ({ours[1]:6.3f}) s  {peer_name:<30} "
          f"{peer[0]:7.3f} ({peer[1]:6.3f}) s  {peer[0] / ours[0]:5.1f}x "
          f"(cpu {peer[1] / ours[1]:5.1f}x)  load {os.getloadavg()[0]:.1f}  {note}",
          flush=True)
    return peer[0] / ours[0], peer[1] / ours[1]


def same_ranking(got, expected, rtol=1e-12):
    """The same n-grams, scores equal to ``rtol`` and each ranking sorted by the other's
    scores up to that tolerance (rankings equal up to ties)."""
    ours, theirs = dict(got), dict(expected)
    if ours.keys() != theirs.keys():
        return False
    keys = list(theirs)
    if not np.allclose([ours[k] for k in keys], [theirs[k] for k in keys], rtol=rtol, atol=0):
        return False
    for ranking, scores in ((got, theirs), (expected, ours)):
        s = np.array([scores[k] for k, _ in ranking])
        if not (s[1:] <= s[:-1] + rtol * np.maximum(np.abs(s[1:]), np.abs(s[:-1]))).all():
            return False
    return True


def bench_ngram_pmi(name, docs, repeat, order=2, min_count=5, lowercase=True):
    """nlpfeat against nltk's finder + apply_freq_filter + score_ngrams(pmi)."""
    from nltk.collocations import BigramCollocationFinder, TrigramCollocationFinder
    from nltk.metrics import BigramAssocMeasures, TrigramAssocMeasures

    finder = BigramCollocationFinder if order == 2 else TrigramCollocationFinder
    measures = BigramAssocMeasures if order == 2 else TrigramAssocMeasures

    def nltk_run():
        words = [[w.lower() for w in doc] for doc in docs] if lowercase else docs
        found = finder.from_documents(words)
        found.apply_freq_filter(min_count)
        return found.score_ngrams(measures.pmi)

    coll = Collocations("pmi", order=order, min_count=min_count, lowercase=lowercase, input="tokens")
    medians = []
    (ours, got), (peer, expected) = best_times([lambda: coll.fit(docs).scores_, nltk_run],
                                               repeat, medians)
    params = "defaults" if (min_count, lowercase) == (5, True) else \
        f"min_count={min_count}, lowercase={lowercase}"
    label = f"{name} {('', '', 'bi', 'tri')[order]}gram pmi ({params})"
    ratios = report(label, ours, peer, f"nltk {('', '', 'Bi', 'Tri')[order]}gram finder + "
                    f"score", f"median ratio {medians[1] / medians[0]:.1f}x; {len(got)} "
                    f"n-grams, same ranking: {same_ranking(got, expected)}")
    return label, (*ratios, medians[1] / medians[0])


def bench_npmi(docs, min_count, repeat):
    from gensim.models.phrases import Phrases

    def gensim_run():
        return Phrases(docs, min_count=min_count, threshold=-1.0, scoring="npmi").export_phrases()

    coll = Collocations("npmi", min_count=min_count, lowercase=False, input="tokens")
    medians = []
    (ours, got), (peer, expected) = best_times([lambda: coll.fit(docs).scores_, gensim_run],
                                               repeat, medians)
    got = {"_".join(pair): score for pair, score in got}
    err = max(abs(got[k] - v) for k, v in expected.items())
    return f"npmi phrases (min_count={min_count})", (*report(
        f"npmi phrases (min_count={min_count})", ours, peer, "gensim Phrases + export",
        f"{len(got)} bigrams, max |diff| {err:.1e}"), medians[1] / medians[0])


def dict_counter(docs, window):
    """Peer: a plain Python counter of (word, context) pairs within the window."""
    counts = Counter()
    for doc in docs:
        for i, word in enumerate(doc):
            for context in doc[i + 1:i + 1 + window]:
                counts[word, context] += 1
                counts[context, word] += 1
    return counts


def bench_cooccurrence(docs, repeat):
    n_tokens = sum(map(len, docs))
    peer, reference = best_time(lambda: dict_counter(docs, 5), 1)
    for working_memory in (None, 64):
        ours, (counts, _) = best_time(      # 0.2 s a run: twice the repeats
            lambda: cooccurrence(docs, 5, working_memory=working_memory), 2 * repeat)
        assert counts.sum() == sum(reference.values())
        report(f"cooccurrence window=5 wm={working_memory}", ours, peer, "dict Counter loop",
               f"{n_tokens / ours[0] / 1e6:.2f} M tokens/s wall, "
               f"{n_tokens / ours[1] / 1e6:.2f} cpu (target >= 1.5)")


def bench_embedding(texts, repeat):
    from gensim.models import Word2Vec

    tokens = [text.split() for text in texts]
    peer, _ = best_time(lambda: Word2Vec(tokens, vector_size=100, window=5, min_count=5,
                                         sg=1, workers=1, seed=0), 1)
    models = [PMIEmbedding(n_components=100, dtype=dtype, random_state=0)
              for dtype in (np.float64, np.float32)]
    times = best_times([lambda emb=emb: emb.fit(texts) for emb in models], repeat)
    for emb, (ours, _) in zip(models, times):
        report(f"PMIEmbedding(100, {emb.dtype.__name__}).fit", ours, peer,
               "gensim Word2Vec sg fit (5 ep.)",
               f"target <= 2 s; vocabulary {len(emb.vocabulary_)}")


def bench_text_bigrams(name, texts, repeat, min_count=5):
    """Bigram pmi from the raw text (issue 26): ``Collocations("pmi")`` on the strings
    (the compiled tokenizer numbers the tokens, no str per token) against nltk's finder
    on the same tokens made in Python (nlpfeat's default tokenizer, lowercased: timed on
    nltk's side, the same output from the same input); the rankings are checked equal."""
    from nltk.collocations import BigramCollocationFinder
    from nltk.metrics import BigramAssocMeasures

    from nlpfeat.text.tokenize import get_tokenizer

    tokenize = get_tokenizer()

    def nltk_run():
        found = BigramCollocationFinder.from_documents([tokenize(t.lower()) for t in texts])
        found.apply_freq_filter(min_count)
        return found.score_ngrams(BigramAssocMeasures.pmi)

    coll = Collocations("pmi", min_count=min_count)
    medians = []
    (ours, got), (peer, expected) = best_times([lambda: coll.fit(texts).scores_, nltk_run],
                                               repeat, medians)
    label = f"{name} text bigram pmi (defaults)"
    megabytes = sum(len(text.encode()) for text in texts) / 1e6
    ratios = report(label, ours, peer, "tokenize + nltk Bigram finder",
                    f"median ratio {medians[1] / medians[0]:.1f}x; "
                    f"{megabytes / ours[1]:.1f} MB/s cpu; {len(got)} bigrams, same "
                    f"ranking: {same_ranking(got, expected)}")
    return label, (*ratios, medians[1] / medians[0])


def bench_collocations(docs, lee, repeat, texts=(), lee_texts=()):
    """Every Collocations row once: {label: (wall ratio, cpu ratio, median wall ratio)}."""
    rows = dict([bench_ngram_pmi(name, corpus, repeat, order=order)
                 for name, corpus in (("wiki", docs), ("lee", lee)) for order in (2, 3)])
    rows.update([bench_text_bigrams(name, corpus, repeat)
                 for name, corpus in (("wiki", texts), ("lee", lee_texts)) if corpus])
    rows.update([bench_ngram_pmi("wiki", docs, repeat, min_count=1, lowercase=False),
                 bench_ngram_pmi("wiki", docs, repeat, min_count=5, lowercase=False),
                 bench_npmi(docs, 5, repeat)])
    return rows


def main(quick=False, repeat=5, runs=1, collocations_only=False):
    texts = load_wiki_sample().data
    docs = [text.split() for text in texts]
    lee_texts = list(load_lee().background)
    lee = [text.split() for text in lee_texts]
    if quick:
        texts, docs, lee, lee_texts, repeat = texts[:60], docs[:60], lee[:60], \
            lee_texts[:60], 1
    print(f"Wikipedia sample: {len(docs)} documents, {sum(map(len, docs))} tokens; Lee "
          f"background: {len(lee)} documents, {sum(map(len, lee))} tokens; best of "
          f"{repeat}; one BLAS thread; seconds as wall (cpu)")
    with threadpool_limits(1):
        spread = defaultdict(list)
        for _ in range(runs):
            for label, ratios in bench_collocations(docs, lee, repeat, texts,
                                                    lee_texts).items():
                spread[label].append(ratios)
        if runs > 1:
            print(f"\nCollocations over {runs} runs: ratio to the peer, lowest-highest "
                  f"(each run the best of {repeat})")
            for label, ratios in spread.items():
                wall, cpu, median = np.array(ratios).T
                print(f"  {label:<52} wall {wall.min():5.1f}-{wall.max():5.1f}x  cpu "
                      f"{cpu.min():5.1f}-{cpu.max():5.1f}x  median wall "
                      f"{median.min():5.1f}-{median.max():5.1f}x")
        if collocations_only:
            return
        bench_cooccurrence(docs, repeat)
        bench_embedding(texts, repeat)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="60 documents, one repeat")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--runs", type=int, default=1,
                        help="repeat the Collocations rows and print their spread")
    parser.add_argument("--collocations-only", action="store_true",
                        help="only the Collocations rows (not cooccurrence, PMIEmbedding)")
    main(**vars(parser.parse_args()))
