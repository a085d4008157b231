"""Semantic units: do clusters of PMI word vectors merge antonyms, and do they help?

Many words say the same thing (glad, happy, pleased; 高兴, 开心, 愉快); counting them as one
unit shrinks the feature space. :class:`nlpfeat.text.SemanticUnitBagOfWords` clusters word
vectors into units and counts units per document. The concept notes warn that PMI vectors
capture substitutability, not synonymy: "good" and "bad" fit the same contexts. Measured
here:

1. **Antonyms merged.** On nlpfeat's toy corpora, written so that antonyms occur in
   identical contexts (``load_toy_corpus``: good/bad, hot/cold, 好/坏, 冷/热, ...), PPMI-SVD
   vectors (:class:`nlpfeat.text.PMIEmbedding`) are clustered into units by k-means and by
   average-linkage agglomerative clustering on cosine distance; the script lists the units
   that hold both words of an antonym pair. Then the same on the vectors used for the two
   tasks below (fitted on the Lee background articles plus the polarity sentences).
2. **polarity** (200 sentences): accuracy of a logistic regression, 5-fold stratified CV
   repeated 3 times (``--quick``: once), on bag of words and on unit counts. The vectors,
   the units and the vocabulary are fitted once on all texts without their labels (an
   unsupervised, transductive step); only the classifier sees labels, inside the folds.
3. **lee** (1225 rated pairs): Pearson r between the cosine similarities of the 50
   articles (bag of words or unit counts, English stop words removed) and the human ratings.

With matplotlib installed, the gain of unit counts over the bag of words against the
number of units (both tasks) is saved as ``semantic_units_gain.png`` in ``--out``.

Usage::

    python examples/semantic_units.py           # about 30 s
    python examples/semantic_units.py --quick   # fewer units settings and CV repeats
"""
import argparse
import importlib.util

import numpy as np
from sklearn.feature_extraction.text import TfidfTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import RepeatedStratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import normalize
from threadpoolctl import threadpool_limits

from nlpfeat.datasets import load_lee, load_polarity, load_toy_corpus
from nlpfeat.text import BagOfWords, PMIEmbedding, SemanticUnitBagOfWords

PAIRS = {
    "en": [("good", "bad"), ("hot", "cold"), ("strong", "weak"), ("rich", "poor"),
           ("big", "small"), ("black", "white"), ("fast", "slow"), ("high", "low"),
           ("cheap", "expensive"), ("happy", "sad"), ("old", "young"), ("new", "old"),
           ("rose", "fell"), ("fresh", "stale")],
    "zh": [("好", "坏"), ("好", "差"), ("冷", "热"), ("大", "小"), ("富", "穷"), ("黑", "白"),
           ("快", "慢"), ("高", "低"), ("强", "弱"), ("新", "旧")],
}
TASK_PAIRS = [("good", "bad"), ("best", "worst"), ("funny", "boring"), ("love", "hate"),
              ("great", "terrible"), ("smart", "stupid"), ("better", "worse")]


def merged_antonyms(units, pairs):
    """Antonym pairs whose two words are in one unit, with that unit's first words."""
    out = []
    for a, b in pairs:
        ua, ub = units.unit_of_word_.get(a), units.unit_of_word_.get(b)
        if ua is not None and ua == ub:
            out.append((a, b, units.units_[ua][:8]))
    return out


def antonyms_on_toy(n_units, seed):
    print(f"1. Antonyms in one unit ({n_units} units of PPMI-SVD vectors, toy corpora)")
    for language in ("en", "zh"):
        docs = load_toy_corpus(language).data
        emb = PMIEmbedding(n_components=50, min_count=3, random_state=seed).fit(docs)
        vectors = emb.to_keyedvectors()
        for clustering in ("kmeans", "agglomerative"):
            units = SemanticUnitBagOfWords(vectors, n_units=n_units, clustering=clustering,
                                           random_state=seed).fit(docs)
            pairs = [(a, b) for a, b in PAIRS[language] if a in units.unit_of_word_
                     and b in units.unit_of_word_]
            merged = merged_antonyms(units, pairs)
            print(f"  {language} {clustering:<13} {len(merged)}/{len(pairs)} antonym pairs "
                  f"share a unit")
            for a, b, unit in merged[:6]:
                print(f"      {a}/{b}: {' '.join(unit)}")


def task_vectors(seed, n_components):
    """PPMI-SVD vectors from the Lee background articles and the polarity sentences."""
    texts = list(load_lee().background) + list(load_polarity().data)
    emb = PMIEmbedding(n_components=n_components, min_count=2, random_state=seed).fit(texts)
    return emb.to_keyedvectors()


def polarity(vectors, unit_counts, repeats, seed):
    X_text, y = load_polarity(return_X_y=True)
    cv = RepeatedStratifiedKFold(n_splits=5, n_repeats=repeats, random_state=seed)
    clf = make_pipeline(TfidfTransformer(), LogisticRegression(C=10.0, max_iter=2000))
    bow = BagOfWords().fit_transform(X_text)
    base = cross_val_score(clf, bow, y, cv=cv)
    print(f"\n2. polarity: accuracy, 5-fold CV x {repeats} (tf-idf weighting of the counts, "
          f"logistic regression; chance 0.5)")
    print(f"  {'bag of words':<34} {bow.shape[1]:>6} features  {base.mean():.3f} ± "
          f"{base.std():.3f}")
    results = {}
    for n in unit_counts:
        units = SemanticUnitBagOfWords(vectors, n_units=n, unknown="keep", random_state=seed)
        X = units.fit_transform(X_text)
        s = cross_val_score(clf, X, y, cv=cv)
        diff = s - base
        results[n] = (diff.mean(), diff.std(ddof=1) / np.sqrt(diff.size))
        print(f"  {f'{n} units + {X.shape[1] - n} unknown words':<34} {X.shape[1]:>6} features  "
              f"{s.mean():.3f} ± {s.std():.3f}   minus BoW {diff.mean():+.3f} ± {diff.std():.3f}")
        present = [(a, b) for a, b in TASK_PAIRS if a in units.unit_of_word_
                   and b in units.unit_of_word_ and units.unit_of_word_[a] < n]
        merged = merged_antonyms(units, present)
        print(f"      antonym pairs in one unit: {len(merged)}/{len(present)}"
              + "".join(f"; {a}/{b}: {' '.join(unit)}" for a, b, unit in merged))
    return results


def lee(vectors, unit_counts, seed):
    data = load_lee()
    corpus = list(data.background) + list(data.test)
    human = data.similarity_upper
    upper = np.triu_indices(len(data.test), k=1)

    def r_of(X):
        V = normalize(TfidfTransformer().fit(X[: len(data.background)]).transform(X))
        V = V[len(data.background):]
        return float(np.corrcoef((V @ V.T).toarray()[upper], human)[0, 1])

    bow = BagOfWords(stop_words="english").fit_transform(corpus)
    base = r_of(bow)
    print("\n3. lee: Pearson r with the human ratings (tf-idf weighted counts, fitted on the "
          "background)")
    print(f"  {'bag of words':<34} {bow.shape[1]:>6} features  r = {base:.3f}")
    results = {}
    for n in unit_counts:
        X = SemanticUnitBagOfWords(vectors, n_units=n, unknown="keep", stop_words="english",
                                   random_state=seed).fit_transform(corpus)
        r = r_of(X)
        results[n] = r - base
        print(f"  {f'{n} units + unknown words':<34} {X.shape[1]:>6} features  r = {r:.3f}"
              f"   minus BoW {r - base:+.3f}")
    return results


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="one CV repeat, two unit settings")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="nlpfeat-examples",
                   help="folder for the figure (default: ./nlpfeat-examples)")
    args = p.parse_args(argv)
    unit_counts = (100, 800) if args.quick else (100, 300, 800)
    antonyms_on_toy(60, args.seed)
    vectors = task_vectors(args.seed, 100)
    print(f"\n   task vectors: {len(vectors.index_to_key)} words (Lee background + polarity)")
    pol = polarity(vectors, unit_counts, 1 if args.quick else 3, args.seed)
    lee_gain = lee(vectors, unit_counts, args.seed)
    print("\nVerdict (polarity: a difference within 2 standard errors counts as none):")
    for n, (gain, se) in pol.items():
        word = "helps" if gain > 2 * se else "hurts" if gain < -2 * se else "no significant " \
            "difference"
        print(f"  polarity, {n} units: {gain:+.3f} (se {se:.3f}): {word}")
    for n, gain in lee_gain.items():
        print(f"  lee, {n} units: r {gain:+.3f} against bag of words")
    save_figure(pol, lee_gain, args.out)


def save_figure(pol, lee_gain, out):
    """Gain over the bag of words against the number of units, on both tasks."""
    if importlib.util.find_spec("matplotlib") is None:
        print('\n(figure skipped: matplotlib is not installed; pip install "nlpfeat[viz]")')
        return
    import matplotlib.pyplot as plt

    from nlpfeat import viz

    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.4), layout="constrained")
    n = list(pol)
    gain, se = (np.array([pol[k][i] for k in n]) for i in (0, 1))
    a.errorbar(n, gain, yerr=2 * se, fmt="o-", capsize=4)
    a.set(title="polarity: accuracy minus bag of words\n(bars: 2 standard errors)",
          xlabel="units", ylabel="accuracy difference")
    b.plot(list(lee_gain), list(lee_gain.values()), "o-")
    b.set(title="lee: Pearson r minus bag of words", xlabel="units", ylabel="r difference")
    for ax in (a, b):
        ax.axhline(0, color="k", ls=":", lw=1)
        ax.set_xscale("log")
        ax.set_xticks(n, labels=[str(k) for k in n])
        ax.minorticks_off()
    fig.suptitle("Semantic units (k-means on PPMI-SVD vectors) instead of words")
    path = viz.save_figure(fig, out, "semantic_units_gain.png", dpi=100)
    print(f"\nsaved {path}")


if __name__ == "__main__":
    with threadpool_limits(1):      # small matrices: BLAS threads only contend
        main()
