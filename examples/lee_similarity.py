"""Lee document similarity: which features agree with people on which news stories are alike?

Lee, Pincombe and Welsh (2005) asked people to rate the similarity of every pair of 50
short news articles. Each feature set below maps the 50 articles to vectors (fitted,
without the ratings, on the 300 background articles plus the 50 rated ones), the cosine
similarity of every pair is taken, and the Pearson correlation of the 1225 pairwise
similarities with the mean human ratings is printed (the protocol of gensim's
``test_lee.py``, which asks r > 0.6 of its log-entropy LSI, "the value achieved in the
original paper"; that model is run here too, as the reference).

Feature sets:

* gensim's reference: stemmed tokens, log-entropy weights, LSI, fitted on the background;
* bag of words and TF-IDF (English stop words removed);
* LSI: TF-IDF then a truncated SVD;
* PPMI-SVD word vectors (:class:`nlpfeat.text.PMIEmbedding`) averaged per article;
* the same vectors pooled by kernel attention (:class:`nlpfeat.text.KernelAttentionPooling`):
  a Nadaraya-Watson average of the article's word vectors, weighted by a Gaussian kernel
  of their distance to the article's (idf-weighted) mean vector. The bandwidth is the
  temperature: a huge one gives the plain mean back, the median heuristic down-weights
  outlying words a little, a small one (or Scott's rule, in 50-200 dimensions) keeps only
  the few words nearest the centre and loses information;
* the locally weighted bag of words (:class:`nlpfeat.text.LocallyWeightedBagOfWords`),
  whose local histograms also compare where in the article words occur (one position and
  a huge bandwidth is the l1-normalised bag of words).

Usage::

    python examples/lee_similarity.py            # 200 SVD components
    python examples/lee_similarity.py --quick    # 50 components
"""
import argparse
import time

import numpy as np
from sklearn.decomposition import TruncatedSVD
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import normalize

from nlpfeat.datasets import load_lee
from nlpfeat.text import (
    BagOfWords,
    KernelAttentionPooling,
    LocallyWeightedBagOfWords,
    PMIEmbedding,
    TfidfVectorizer,
)


def pairwise_correlation(X, human):
    """Pearson correlation between the cosine similarities of the rows and the ratings."""
    Xn = normalize(X)
    sims = np.asarray((Xn @ Xn.T).todense() if hasattr(Xn, "todense") else Xn @ Xn.T)
    return float(np.corrcoef(sims[np.triu_indices(len(sims), k=1)], human)[0, 1])


def report(name, X, seconds, lee, results):
    results[name] = pairwise_correlation(X, lee.similarity_upper)
    print(f"{name:<42} {results[name]:>9.3f} {X.shape[1]:>7} {seconds:>8.2f}")


def score(name, model, corpus, lee, results):
    """Fit on ``corpus``, transform the rated articles, print and store the correlation."""
    start = time.perf_counter()
    X = model.fit(corpus).transform(lee.test)
    report(name, X, time.perf_counter() - start, lee, results)


def gensim_reference(lee, n_topics, results):
    """gensim's test_lee.py model: preprocess_documents, log-entropy, LSI on the background."""
    from gensim import corpora, matutils, models
    from gensim.parsing.preprocessing import preprocess_documents

    start = time.perf_counter()
    background, test = preprocess_documents(lee.background), preprocess_documents(lee.test)
    dictionary = corpora.Dictionary(background)
    log_ent = models.LogEntropyModel([dictionary.doc2bow(doc) for doc in background])
    lsi = models.LsiModel(log_ent[[dictionary.doc2bow(doc) for doc in background]],
                          id2word=dictionary, num_topics=n_topics, random_seed=0)
    X = matutils.corpus2dense(lsi[log_ent[[dictionary.doc2bow(doc) for doc in test]]],
                              num_terms=n_topics).T
    report("gensim log-entropy LSI (reference)", X, time.perf_counter() - start, lee,
           results)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="50 SVD components")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    lee = load_lee()
    corpus = lee.background + lee.test
    n_components = 50 if args.quick else 200
    print(f"Lee corpus: fit on {len(corpus)} articles, score the {len(lee.test)} rated ones "
          f"({len(lee.similarity_upper)} pairs); {n_components} SVD components.\n")
    print(f"{'features':<42} {'Pearson r':>9} {'dims':>7} {'seconds':>8}")
    text = dict(stop_words="english")
    results = {}
    gensim_reference(lee, n_components, results)
    score("bag of words", BagOfWords(norm="l2", **text), corpus, lee, results)
    score("TF-IDF", TfidfVectorizer(**text), corpus, lee, results)
    score("LSI (TF-IDF + SVD)", make_pipeline(TfidfVectorizer(**text), TruncatedSVD(
        n_components, random_state=args.seed)), corpus, lee, results)
    pmi = PMIEmbedding(n_components=n_components, min_count=2, random_state=args.seed, **text)
    score("PPMI-SVD, mean pooling", pmi, corpus, lee, results)

    # Attention pooling over the fitted word vectors (not refitted): the query is the
    # article's (idf-weighted) mean vector, the bandwidth the temperature.
    pool = dict(input="content", **text)
    median = KernelAttentionPooling(pmi, **pool).fit(corpus).bandwidth_
    for query, bandwidth, label in [("mean", "median", "median"), ("idf", "median", "median"),
                                    ("mean", median / 4, "median/4"), ("mean", "scott", "scott"),
                                    ("mean", 1e6, "1e6 (= mean)")]:
        score(f"PPMI-SVD, attention q={query}, h={label}", KernelAttentionPooling(
            pmi, query=query, bandwidth=bandwidth, **pool), corpus, lee, results)
    print(f"  (median token-to-query distance: {median:.3f})")

    for n_positions, bandwidth in [(1, 1e6), (3, 0.25), (5, 0.1)]:
        score(f"lowbow {n_positions} positions, h={bandwidth:g}", LocallyWeightedBagOfWords(
            n_positions=n_positions, bandwidth=bandwidth, **text), corpus, lee, results)
    best = max(results, key=results.get)
    print(f"\nBest: {best} (r = {results[best]:.3f}).")


if __name__ == "__main__":
    main()
