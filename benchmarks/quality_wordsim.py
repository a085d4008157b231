"""Word similarity: PPMI-SVD (PMIEmbedding) against gensim Word2Vec on the same text.

Both models are trained in this run on the Wikipedia sample (250 articles, already
lower-cased, stop-worded and Porter-stemmed by gensim's ``preprocess_string``) plus the Lee
background corpus (300 news articles, put through the same ``preprocess_string``, so the
two parts share one vocabulary). SimLex-999 and WordSim-353 words are stemmed with the same
(gensim) Porter stemmer. The score is Spearman's rho between the human ratings and the
cosine similarities over the pairs whose two words are in the model's vocabulary; the
coverage (pairs used / pairs in the benchmark) is printed beside it.

Run: ``python benchmarks/quality_wordsim.py`` (about a minute on 2 cores) or ``--quick``.
"""
import argparse
import time

import numpy as np
from scipy.stats import spearmanr
from sklearn.preprocessing import normalize
from threadpoolctl import threadpool_limits

from nlpfeat.datasets import load_lee, load_wiki_sample, load_word_similarity
from nlpfeat.text import PMIEmbedding, cooccurrence, pmi


def corpus():
    """Token lists of the Wikipedia sample + Lee background, one preprocessing for both."""
    from gensim.parsing.preprocessing import preprocess_string

    wiki = [doc.split() for doc in load_wiki_sample().data]
    lee = [preprocess_string(doc) for doc in load_lee().background]
    return wiki + lee


def benchmarks():
    """{name: (stemmed pairs, human scores)} for SimLex-999 and WordSim-353."""
    from gensim.parsing.porter import PorterStemmer

    stem = PorterStemmer().stem
    out = {}
    for name in ("simlex999", "wordsim353"):
        data = load_word_similarity(name)
        pairs = [(stem(a.lower()), stem(b.lower())) for a, b in data.pairs]
        out[name] = (pairs, np.asarray(data.scores))
    return out


def evaluate(similarity, vocabulary, bench):
    """{name: (spearman rho, n covered, n pairs)} for a similarity(word1, word2) function."""
    results = {}
    for name, (pairs, human) in bench.items():
        covered = [i for i, (a, b) in enumerate(pairs) if a in vocabulary and b in vocabulary]
        model = [similarity(*pairs[i]) for i in covered]
        results[name] = (spearmanr(human[covered], model)[0], len(covered), len(pairs))
    return results


def sparse_ppmi(docs, window, min_count):
    """Sparse PPMI rows (no SVD) compared by cosine: the explicit representation."""
    counts, vocab = cooccurrence(docs, window, min_count=min_count)
    rows = normalize(pmi(counts, "ppmi"))

    def similarity(a, b):
        return float(rows[vocab[a]].multiply(rows[vocab[b]]).sum())

    return similarity, vocab


def run_pmi(docs, bench, **params):
    start = time.perf_counter()
    model = PMIEmbedding(input="tokens", lowercase=False, random_state=0, **params).fit(docs)
    seconds = time.perf_counter() - start
    return evaluate(model.similarity, model.vocabulary_, bench), seconds


def run_word2vec(docs, bench, window, min_count, sg, seed=0):
    from gensim.models import Word2Vec

    start = time.perf_counter()
    model = Word2Vec(docs, vector_size=100, window=window, min_count=min_count, sg=sg,
                     workers=1, seed=seed)
    seconds = time.perf_counter() - start
    return evaluate(model.wv.similarity, model.wv.key_to_index, bench), seconds


def row(name, results, seconds):
    cells = [f"{rho:6.3f} ({n}/{total})" for rho, n, total in results.values()]
    return f"{name:<58} {cells[0]:>18} {cells[1]:>18} {seconds:8.2f}"


def main(quick=False):
    docs = corpus()
    bench = benchmarks()
    print(f"corpus: {len(docs)} documents, {sum(map(len, docs))} tokens; Spearman rho "
          f"(covered/all pairs); fit seconds on one thread")
    print(f"{'model':<58} {'SimLex-999':>18} {'WordSim-353':>18} {'seconds':>8}")
    configs = [dict(n_components=100, window=5, min_count=5)]
    if not quick:
        configs += [dict(n_components=100, window=2, min_count=5),
                    dict(n_components=300, window=5, min_count=5),
                    dict(n_components=100, window=5, min_count=5, eig=0.0),
                    dict(n_components=100, window=5, min_count=5, eig=1.0),
                    dict(n_components=100, window=5, min_count=5, alpha=1.0),
                    dict(n_components=100, window=5, min_count=5, shift=5),
                    dict(n_components=100, window=5, min_count=5, n_iter=10),
                    dict(n_components=100, window=5, min_count=2)]
    with threadpool_limits(1):
        for params in configs:
            label = "PMIEmbedding " + " ".join(f"{k}={v}" for k, v in params.items())
            print(row(label, *run_pmi(docs, bench, **params)), flush=True)
        start = time.perf_counter()
        similarity, vocab = sparse_ppmi(docs, 5, 5)
        print(row("sparse PPMI rows window=5 min_count=5", evaluate(similarity, vocab, bench),
                  time.perf_counter() - start), flush=True)
        runs = [(1, "skip-gram", 5), (0, "CBOW", 5), (1, "skip-gram", 2)]
        for sg, name, min_count in runs[: 1 if quick else 3]:
            print(row(f"gensim Word2Vec {name} 100d w=5 min_count={min_count}",
                      *run_word2vec(docs, bench, 5, min_count, sg)), flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one configuration per model")
    main(**vars(parser.parse_args()))
