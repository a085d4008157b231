"""Topics of the Lee news corpus, the number of topics chosen by coherence with GridSearchCV.

``TopicModel.score`` is the mean coherence (NPMI of the top words over 10-token sliding
windows) of the topics on held-out documents, so a plain ``GridSearchCV`` over ``n_components``
picks the model whose topics hang together best on text it has not seen. The chosen model's
topics are then printed with three coherence measures (all higher-is-better: ``c_npmi`` in
[-1, 1], ``u_mass`` <= 0, ``c_v`` about [0, 1]). With matplotlib installed, the chosen
model's topics (top words, their weights and each topic's coherence) are saved as
``topics_lee.png`` in ``--out``.

Usage::

    python examples/topics_lee.py            # under a minute
    python examples/topics_lee.py --quick    # a few seconds
"""
import argparse
import importlib.util

import numpy as np
from sklearn.model_selection import GridSearchCV, KFold
from threadpoolctl import threadpool_limits

from nlpfeat.datasets import load_lee
from nlpfeat.text import BagOfWords, TopicModel, topic_coherence


def lee_tokens():
    """Lee background articles as token lists, and the vocabulary to model.

    Words in at least 3 articles and at most half of them; the token lists keep word order
    (the sliding windows need it) and drop only the words outside the vocabulary.
    """
    docs = load_lee().background
    bow = BagOfWords(stop_words="english", min_df=3, max_df=0.5).fit(docs)
    analyze, vocab = bow.build_analyzer(), bow.vocabulary_
    texts = [[w for w in analyze(doc) if w in vocab] for doc in docs]
    return texts, vocab


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer candidates and passes")
    parser.add_argument("--out", default="nlpfeat-examples",
                        help="folder for the figure (default: ./nlpfeat-examples)")
    args = parser.parse_args(argv)
    grid, passes, folds = ([4, 8], 3, 2) if args.quick else ([5, 10, 20], 10, 3)
    texts, vocab = lee_tokens()
    print(f"Lee background: {len(texts)} articles, {len(vocab)} words\n")

    model = TopicModel(max_iter=passes, random_state=0, vocabulary=vocab, coherence="c_npmi")
    search = GridSearchCV(model, {"n_components": grid},
                          cv=KFold(folds, shuffle=True, random_state=0)).fit(texts)
    print("held-out coherence (mean c_npmi over topics, mean over folds):")
    for k, score, sd in zip(grid, search.cv_results_["mean_test_score"],
                            search.cv_results_["std_test_score"]):
        mark = "  <- best" if k == search.best_params_["n_components"] else ""
        print(f"  n_components={k:<3} {score:7.4f} +- {sd:.4f}{mark}")

    best = search.best_estimator_            # refitted on every article
    topics = best.top_words(8)
    measures = {m: topic_coherence(topics, texts, measure=m, vocabulary=vocab)
                for m in ("c_npmi", "c_v", "u_mass")}
    order = np.argsort(-measures["c_npmi"])
    print(f"\n{best.n_components} topics, most coherent first (c_npmi, c_v, u_mass):")
    for k in order:
        scores = "  ".join(f"{measures[m][k]:6.3f}" for m in measures)
        print(f"  {scores}   {' '.join(topics[k])}")
    save_figure(best, search, measures, args.out)


def save_figure(best, search, measures, out):
    """The chosen model's topics: top words with their weights, the printed coherences."""
    if importlib.util.find_spec("matplotlib") is None:
        print('\n(figure skipped: matplotlib is not installed; pip install "nlpfeat[viz]")')
        return

    from nlpfeat import viz

    fig = viz.plot_topics(best, topn=8)
    for k, ax in enumerate(fig.axes):
        ax.set_title(f"topic {k}\n" + "\n".join(f"{m} {measures[m][k]:.3f}" for m in measures),
                     fontsize="small")
        ax.set_xlabel("word weight", fontsize="small")
    k, score = search.best_params_["n_components"], search.best_score_
    fig.suptitle(f"Lee background: the {k} topics chosen by held-out coherence "
                 f"(mean c_npmi {score:.3f})")
    path = viz.save_figure(fig, out, "topics_lee.png", dpi=100, bbox_inches="tight")
    print(f"\nsaved {path}")


if __name__ == "__main__":
    with threadpool_limits(1):      # small matrices: BLAS threads only contend
        main()
