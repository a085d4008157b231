"""A Chinese text pipeline: characters or jieba words -> TF-IDF -> classifiers; collocations; PMI.

Chinese is written without spaces, so the first choice is the token:

* characters (``tokenizer="char"``): no dictionary, no segmentation errors; a word such as
  天气 (weather) becomes two tokens, 天 and 气;
* character uni- and bigrams (``ngram_range=(1, 2)``): adjacent pairs approximate the
  two-character words that dominate modern Chinese, still without a dictionary;
* jieba words (``tokenizer="jieba"``, the optional ``nlpfeat[zh]`` extra): a dictionary
  and an HMM segment the text into words.

Each feeds :class:`nlpfeat.text.TfidfVectorizer` (a term counts where it is more frequent
than in the corpus at large), then scikit-learn's ``LogisticRegression`` or
:class:`nlpfeat.kernels.NadarayaWatsonClassifier` (cosine distance; class probabilities are
the kernel-weighted label frequencies of the training sentences, i.e. attention over
them). The data are the 405 short sentences of the bundled Chinese toy corpus
(:func:`nlpfeat.datasets.load_toy_corpus`) with 7 topic labels (animals, economy, food,
people, sports, technology, weather); the majority class is 17%. Each topic's sentences
share their own words, so all six pipelines score close to 100%: the point is the
pipeline, not a ranking.

Then two corpus statistics on character tokens:

* collocations, scored by normalised PMI, npmi = ln(p(a, b) / (p(a) p(b))) / -ln p(a, b):
  adjacent characters that occur together far more often than chance are mostly words,
  so the top pairs recover words of the corpus without a dictionary;
* PMI embeddings (the truncated SVD of the positive PMI matrix over a window): words with
  similar contexts get similar vectors. The neighbours of 好 (good) include its antonym
  坏 (bad): PMI measures substitutability, not synonymy; "good" and "bad" fit the same
  contexts (这是一个好人 / 这是一个坏人).

With matplotlib installed, the accuracy of every fold for each pipeline is saved as
``chinese_text_cv.png`` in ``--out``.

Usage::

    python examples/chinese_text.py            # 5-fold CV x 3 repeats
    python examples/chinese_text.py --quick    # 3-fold CV, one repeat
"""
import argparse
import importlib.util

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import RepeatedStratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from threadpoolctl import threadpool_limits

from nlpfeat.datasets import load_toy_corpus
from nlpfeat.kernels import NadarayaWatsonClassifier
from nlpfeat.text import Collocations, PMIEmbedding, TfidfVectorizer

FEATURES = {
    "characters": dict(tokenizer="char"),
    "character 1-2 grams": dict(tokenizer="char", ngram_range=(1, 2)),
    "jieba words": dict(tokenizer="jieba"),
}
CLASSIFIERS = {
    "LogisticRegression": lambda: LogisticRegression(max_iter=2000),
    "NW (cosine)": lambda: NadarayaWatsonClassifier(metric="cosine", bandwidth="loo"),
}


def accuracy_table(docs, y, quick, seed):
    cv = RepeatedStratifiedKFold(n_splits=3 if quick else 5, n_repeats=1 if quick else 3,
                                 random_state=seed)
    print(f"Topic classification, {len(docs)} sentences, 7 topics (majority class "
          f"{np.bincount(y).max() / len(y):.2f}); accuracy, mean ± std over "
          f"{cv.get_n_splits()} stratified shuffled CV folds")
    print(f"{'tokens':<22}" + "".join(f"{name:>22}" for name in CLASSIFIERS) + f"{'features':>10}")
    folds = {}
    for label, options in FEATURES.items():
        if options["tokenizer"] == "jieba" and importlib.util.find_spec("jieba") is None:
            print(f"{label:<22}(skipped: jieba is not installed; pip install \"nlpfeat[zh]\")")
            continue
        cells = []
        for name, make in CLASSIFIERS.items():
            scores = cross_val_score(make_pipeline(TfidfVectorizer(**options), make()), docs, y,
                                     cv=cv, scoring="accuracy")
            folds[f"{label}, {name}"] = scores
            cells.append(f"{scores.mean():.3f} ± {scores.std():.3f}")
        n_features = len(TfidfVectorizer(**options).fit(docs).vocabulary_)
        print(f"{label:<22}" + "".join(f"{c:>22}" for c in cells) + f"{n_features:>10}")
    print("The toy sentences of each topic share their own vocabulary, so every pipeline is "
          "near perfect here: characters alone suffice, and no segmenter is needed. This is a "
          "demo of the API on a small written corpus, not a benchmark.")
    return folds


def save_figure(folds, y, out):
    """Every CV fold's accuracy per pipeline, against the majority class."""
    if importlib.util.find_spec("matplotlib") is None:
        print('\n(figure skipped: matplotlib is not installed; pip install "nlpfeat[viz]")')
        return
    import matplotlib.pyplot as plt

    from nlpfeat import viz

    fig, ax = plt.subplots(figsize=(7.5, 0.45 * len(folds) + 1.2), layout="constrained")
    rng = np.random.RandomState(0)
    for row, scores in enumerate(folds.values()):
        ax.plot(scores, row + rng.uniform(-0.15, 0.15, scores.size), "o", ms=5, alpha=0.6)
        ax.errorbar(scores.mean(), row, xerr=scores.std(), fmt="k|", ms=16, capsize=4)
    ax.set_yticks(range(len(folds)), labels=list(folds))
    ax.invert_yaxis()
    ax.axvline(np.bincount(y).max() / len(y), color="k", ls=":", lw=1, label="majority class")
    ax.set_xlim(0, 1.02)
    ax.set_xlabel("accuracy per CV fold (bars: mean ± std)")
    fig.suptitle(f"Chinese toy corpus ({len(y)} sentences, 7 topics): TF-IDF pipelines")
    ax.legend(loc="lower left", fontsize="small")
    path = viz.save_figure(fig, out, "chinese_text_cv.png", dpi=100, bbox_inches="tight")
    print(f"\nsaved {path}")


def top_collocations(docs, n=12):
    coll = Collocations(measure="npmi", min_count=10, input="content", tokenizer="regexp")
    coll.fit(docs)
    print(f"\nTop {n} character collocations by npmi (pairs seen at least 10 times; "
          "1.0 = the two characters only ever occur together):")
    pairs = [f"{''.join(pair)} {score:.2f}" for pair, score in coll.scores_[:n]]
    for start in range(0, len(pairs), 6):
        print("  " + "   ".join(pairs[start:start + 6]))


def pmi_neighbours(docs, seed, words=("好", "坏", "热"), topn=6):
    emb = PMIEmbedding(n_components=50, window=2, min_count=3, input="content",
                       tokenizer="regexp", random_state=seed).fit(docs)
    print(f"\nPMI-embedding neighbours (characters, window 2, {len(emb.vocabulary_)} "
          "characters, cosine similarity):")
    for word in words:
        neighbours = ", ".join(f"{w} {s:.2f}" for w, s in emb.most_similar(word, topn=topn))
        print(f"  {word}: {neighbours}")
    print("  好 (good) and 坏 (bad) share contexts: PMI measures substitutability, not synonymy.")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="3-fold CV, one repeat (for CI)")
    parser.add_argument("--out", default="nlpfeat-examples",
                        help="folder for the figure (default: ./nlpfeat-examples)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    data = load_toy_corpus("zh")
    docs, y = list(data.data), np.asarray(data.target)
    folds = accuracy_table(docs, y, args.quick, args.seed)
    top_collocations(docs)
    pmi_neighbours(docs, args.seed)
    save_figure(folds, y, args.out)


if __name__ == "__main__":
    with threadpool_limits(1):      # small matrices: BLAS threads only contend
        main()
