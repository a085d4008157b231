"""Quickstart: text -> TF-IDF -> Nadaraya-Watson classifier, next to logistic regression.

A scikit-learn Pipeline on raw sentences: :class:`nlpfeat.text.TfidfVectorizer` turns each
sentence into a TF-IDF vector (a word counts where it is more frequent than in the corpus
at large), then either

* :class:`nlpfeat.kernels.NadarayaWatsonClassifier` with ``metric="cosine"``: the class
  probabilities of a new sentence are the kernel-weighted class frequencies of the training
  sentences, p(c | x) = sum_i K(d(x, x_i) / h) [y_i = c] / sum_j K(d(x, x_j) / h), with the
  cosine distance d and the bandwidth h chosen by leave-one-out on the training folds.
  With the Gaussian kernel these weights are softmax attention: the query is the new
  sentence, the keys the training sentences, the values their labels. The script prints
  the training sentences one test sentence attends to most;
* scikit-learn's ``LogisticRegression``, the usual linear baseline,

and a majority-class ``DummyClassifier`` that marks chance (0.5).

The data are the 200 movie-review sentences of Pang & Lee shipped with gensim
(:func:`nlpfeat.datasets.load_polarity`). The file is sorted, 100 negative then 100
positive, so cross-validation must shuffle and stratify (here ``RepeatedStratifiedKFold``);
unshuffled folds would hold mostly one class. Be honest about the result: with 160 training
sentences per fold, both models land near chance and their fold-to-fold spread is about as
large as the gap between them. This example shows the API, not a winner.

Usage::

    python examples/quickstart_pipeline.py          # 5 x 5 folds; figure in ./nlpfeat-examples/
    python examples/quickstart_pipeline.py --quick  # 5 x 1 folds
"""
import argparse
import os

import numpy as np
from sklearn.dummy import DummyClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import RepeatedStratifiedKFold, cross_validate
from sklearn.pipeline import make_pipeline
from threadpoolctl import threadpool_limits

from nlpfeat.datasets import load_polarity
from nlpfeat.kernels import NadarayaWatsonClassifier
from nlpfeat.text import TfidfVectorizer


def make_models():
    return {
        "TF-IDF -> NadarayaWatsonClassifier (cosine)": make_pipeline(
            TfidfVectorizer(), NadarayaWatsonClassifier(metric="cosine", bandwidth="loo")),
        "TF-IDF -> LogisticRegression": make_pipeline(
            TfidfVectorizer(), LogisticRegression(max_iter=1000)),
        "majority class (chance)": DummyClassifier(strategy="most_frequent"),
    }


def cross_validated(models, docs, y, n_repeats, seed):
    cv = RepeatedStratifiedKFold(n_splits=5, n_repeats=n_repeats, random_state=seed)
    scores = {}
    for name, model in models.items():
        result = cross_validate(model, docs, y, cv=cv, scoring="accuracy")
        scores[name] = result["test_score"]
    return scores


def explain_one(docs, y, seed):
    """Fit NW on all but one sentence and show the training sentences it attends to."""
    rng = np.random.RandomState(seed)
    test = int(rng.randint(len(docs)))
    train = np.delete(np.arange(len(docs)), test)
    model = make_pipeline(TfidfVectorizer(),
                          NadarayaWatsonClassifier(metric="cosine", bandwidth="loo"))
    model.fit([docs[i] for i in train], y[train])
    nw = model[-1]
    weights = nw.attention_weights(model[0].transform([docs[test]]))
    weights = np.ravel(weights.toarray() if hasattr(weights, "toarray") else weights)
    proba = model.predict_proba([docs[test]])[0]
    print(f"\nOne query, read as attention (bandwidth chosen by leave-one-out: "
          f"{float(np.mean(nw.bandwidth_)):.3g}):")
    print(f'  query [{"neg" if y[test] == 0 else "pos"}]: "{docs[test][:90]}"')
    print(f"  P(neg), P(pos) = {proba[0]:.3f}, {proba[1]:.3f}; the 3 keys with most weight:")
    for j in np.argsort(weights)[::-1][:3]:
        label = "neg" if y[train[j]] == 0 else "pos"
        print(f'    {weights[j]:.3f} [{label}] "{docs[train[j]][:80]}"')


def save_figure(scores, out):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print('(figure skipped: matplotlib is not installed; pip install "nlpfeat[viz]")')
        return
    os.makedirs(out, exist_ok=True)
    fig, ax = plt.subplots(figsize=(7, 3.2))
    names = list(scores)
    rng = np.random.RandomState(0)
    for row, name in enumerate(names):
        s = scores[name]
        ax.scatter(s, row + rng.uniform(-0.15, 0.15, len(s)), s=14, alpha=0.6)
        ax.errorbar(s.mean(), row, xerr=s.std(), fmt="k|", ms=18, capsize=4)
    ax.set_yticks(np.arange(len(names)), labels=names)
    ax.invert_yaxis()
    ax.axvline(0.5, color="k", ls=":", lw=1, label="chance")
    ax.set_xlabel("accuracy per CV fold (bars: mean ± std)")
    ax.set_title("Polarity, 200 sentences: fold accuracies (stratified, shuffled CV)")
    ax.legend(loc="lower right", fontsize="small")
    path = os.path.join(out, "quickstart_polarity_cv.png")
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    print(f"\nsaved {path}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="one CV repeat instead of five")
    parser.add_argument("--out", default="nlpfeat-examples",
                        help="folder for the figure (default: ./nlpfeat-examples)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    data = load_polarity()
    docs, y = list(data.data), np.asarray(data.target)
    n_repeats = 1 if args.quick else 5
    print(f"{len(docs)} sentences ({np.bincount(y)[0]} neg, {np.bincount(y)[1]} pos), "
          f"stratified shuffled 5-fold CV x {n_repeats} repeat(s)\n")
    scores = cross_validated(make_models(), docs, y, n_repeats, args.seed)
    print(f"{'model':<46}{'accuracy (mean ± std over folds)':>34}")
    for name, s in scores.items():
        print(f"{name:<46}{s.mean():>25.3f} ± {s.std():.3f}")
    nw, lr = (scores[n] for n in list(scores)[:2])
    gap, spread = lr - nw, max(nw.std(), lr.std())
    print(f"\nLogisticRegression - NW, fold by fold: {gap.mean():+.3f} ± {gap.std():.3f}; "
          f"one test fold holds {len(docs) // 5} sentences, so one sentence is "
          f"{5 / len(docs):.3f} of its accuracy.")
    verdict = ("smaller than" if abs(gap.mean()) < spread else "about as large as")
    print(f"Both models are near chance (0.5) and the gap is {verdict} the fold-to-fold "
          f"spread of either model (± {spread:.3f}): 200 sentences cannot rank them. "
          "This example shows the API, not a winner.")
    explain_one(docs, y, args.seed)
    save_figure(scores, args.out)


if __name__ == "__main__":
    with threadpool_limits(1):      # small matrices: BLAS threads only contend
        main()
