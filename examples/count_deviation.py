"""Does the absence of a frequent word add anything over TF-IDF? Polarity and Lee, measured.

TF-IDF rewards what is present and says nothing when a word that should be frequent is
missing. :class:`nlpfeat.text.CountDeviation` scores each of the most frequent words by the
deviation of its count from the count expected from the document's length and the corpus
rate (a signed Poisson z-score, or the signed log-likelihood ratio G), so an absent
frequent word gets a negative value. Two tasks of ``nlpfeat compare``:

* **polarity** (200 movie-review sentences): accuracy of a logistic regression, 5-fold
  stratified cross-validation repeated 3 times (``--quick``: once), with TF-IDF, with the
  deviations alone, and with both side by side; the paired difference (both minus TF-IDF)
  over the same folds is printed with its standard deviation;
* **lee** (50 news articles, 1225 human-rated pairs): Pearson r between the cosine
  similarities of the articles' vectors and the mean ratings, each representation fitted
  on the 300 background articles plus the 50 rated ones (as ``examples/lee_similarity.py``);
  the difference in r comes with a 200-resample bootstrap over the rated pairs.

The verdict is printed as measured, whichever way it goes. With matplotlib installed, every
representation's difference from TF-IDF (with two standard errors) on both tasks is saved
as ``count_deviation_gains.png`` in ``--out``.

Usage::

    python examples/count_deviation.py           # about 30 s
    python examples/count_deviation.py --quick   # fewer repeats
"""
import argparse
import importlib.util

import numpy as np
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import RepeatedStratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline, make_union
from sklearn.preprocessing import FunctionTransformer, normalize
from threadpoolctl import threadpool_limits

from nlpfeat.datasets import load_lee, load_polarity
from nlpfeat.text import CountDeviation, TfidfVectorizer


def scaled(deviation, weight):
    """The deviations, each row scaled to unit length and then by ``weight``."""
    return make_pipeline(deviation, FunctionTransformer(lambda X: weight * normalize(X)))


def polarity(repeats, seed):
    X, y = load_polarity(return_X_y=True)
    cv = RepeatedStratifiedKFold(n_splits=5, n_repeats=repeats, random_state=seed)
    models = {
        "TF-IDF": TfidfVectorizer(),
        "deviation (poisson, 300 words)": scaled(CountDeviation(300), 1.0),
        "deviation (g, 300 words)": scaled(CountDeviation(300, statistic="g"), 1.0),
        "TF-IDF + deviation (poisson)": make_union(TfidfVectorizer(),
                                                   scaled(CountDeviation(300), 1.0)),
        "TF-IDF + deviation (g)": make_union(TfidfVectorizer(),
                                             scaled(CountDeviation(300, statistic="g"), 1.0)),
    }
    scores = {name: cross_val_score(make_pipeline(features, LogisticRegression(C=10.0,
                                                                           max_iter=2000)),
                                    X, y, cv=cv)
              for name, features in models.items()}
    base = scores["TF-IDF"]
    print(f"polarity: accuracy, 5-fold CV x {repeats} (chance 0.5)")
    gains = {}
    for name, s in scores.items():
        diff = s - base
        extra = "" if name == "TF-IDF" else f"   minus TF-IDF {diff.mean():+.3f} ± {diff.std():.3f}"
        print(f"  {name:<32} {s.mean():.3f} ± {s.std():.3f}{extra}")
        # standard error of the mean paired difference (folds are not independent: optimistic)
        gains[name] = (diff.mean(), diff.std(ddof=1) / np.sqrt(diff.size))
    return gains


def pearson(V, human):
    V = normalize(V)
    sims = V @ V.T
    sims = sims.toarray() if sp.issparse(sims) else sims
    return sims[np.triu_indices(V.shape[0], k=1)], float(np.corrcoef(
        sims[np.triu_indices(V.shape[0], k=1)], human)[0, 1])


def lee(seed):
    data = load_lee()
    corpus = list(data.background) + list(data.test)
    human = data.similarity_upper
    tfidf = TfidfVectorizer(stop_words="english").fit(corpus).transform(data.test)
    reps = {"TF-IDF (stop words removed)": tfidf}
    for stat, stop in [("poisson", None), ("g", None), ("poisson", "english")]:
        dev = CountDeviation(1000, statistic=stat, stop_words=stop).fit(corpus
                                                                        ).transform(data.test)
        tag = f"{stat}" + (", no stop words" if stop else "")
        reps[f"deviation ({tag})"] = dev
        reps[f"TF-IDF + deviation ({tag})"] = sp.hstack([normalize(tfidf),
                                                         sp.csr_matrix(normalize(dev))])
    rng = np.random.default_rng(seed)
    boot = rng.integers(0, human.size, size=(200, human.size))
    base_sims, base_r = pearson(tfidf, human)
    print("\nlee: Pearson r with the human ratings (1225 pairs)")
    gains = {}
    for name, V in reps.items():
        sims, r = pearson(V, human)
        line = f"  {name:<42} {r:.3f}"
        if name != "TF-IDF (stop words removed)":
            diffs = [np.corrcoef(sims[b], human[b])[0, 1] - np.corrcoef(base_sims[b],
                                                                          human[b])[0, 1]
                     for b in boot]
            gains[name] = (r - base_r, float(np.std(diffs)))
            line += f"   minus TF-IDF {r - base_r:+.3f} (bootstrap sd {np.std(diffs):.3f})"
        print(line)
    return gains


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="one CV repeat instead of three")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="nlpfeat-examples",
                   help="folder for the figure (default: ./nlpfeat-examples)")
    args = p.parse_args(argv)
    pol = polarity(1 if args.quick else 3, args.seed)
    lee_gains = lee(args.seed)
    print("\nVerdict: the best TF-IDF + deviation combination against TF-IDF alone "
          "(a difference within 2 standard errors counts as none)")
    for task, gains in [("polarity", pol), ("lee", lee_gains)]:
        name, (gain, se) = max(((k, v) for k, v in gains.items() if "+" in k),
                               key=lambda item: item[1][0])
        word = ("adds" if gain > 2 * se else "hurts" if gain < -2 * se
                else "no significant difference")
        print(f"  {task}: {name!r} {gain:+.3f} (se {se:.3f}): {word}")
    save_figure({"polarity: accuracy": pol, "lee: Pearson r": lee_gains}, args.out)


def save_figure(tasks, out):
    """Each representation minus TF-IDF, with two standard errors, one panel per task."""
    if importlib.util.find_spec("matplotlib") is None:
        print('\n(figure skipped: matplotlib is not installed; pip install "nlpfeat[viz]")')
        return
    import matplotlib.pyplot as plt

    from nlpfeat import viz

    fig, axes = plt.subplots(1, len(tasks), figsize=(11, 3.6), layout="constrained")
    for ax, (task, gains) in zip(axes, tasks.items()):
        names = [name for name in gains if name != "TF-IDF"]
        gain, se = (np.array([gains[name][i] for name in names]) for i in (0, 1))
        ax.barh(range(len(names)), gain, xerr=2 * se, capsize=3,
                color=["C1" if "+" in name else "C0" for name in names])
        ax.set_yticks(range(len(names)), labels=names, fontsize="small")
        ax.invert_yaxis()
        ax.axvline(0, color="k", lw=1)
        ax.set(title=task, xlabel="difference from TF-IDF (bars: 2 standard errors)")
    fig.suptitle("Count deviations alone (blue) and beside TF-IDF (orange), minus TF-IDF")
    path = viz.save_figure(fig, out, "count_deviation_gains.png", dpi=100)
    print(f"\nsaved {path}")


if __name__ == "__main__":
    with threadpool_limits(1):      # small matrices: BLAS threads only contend
        main()
