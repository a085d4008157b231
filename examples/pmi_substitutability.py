"""Does PMI capture substitutability rather than synonymy? Antonyms as nearest neighbours.

Words that can replace each other in a sentence share contexts, and PMI vectors compare
contexts, so "good" and "bad" ("a good film" / "a bad film") should look alike even though
they mean opposite things. This script ranks each word's antonym among the word's nearest
neighbours (rank 1 = the nearest word of the whole vocabulary) under

* sparse PPMI rows (no dimension reduction), cosine similarity, and
* PPMI-SVD (``PMIEmbedding``, 100 dimensions or fewer on a small corpus),

each with a context window of 2 and of 5 tokens, on

* English: the Wikipedia sample + the Lee background corpus (Porter-stemmed, so the words
  appear stemmed: ``peac`` for peace), frequent words only;
* Chinese: nlpfeat's toy corpus, one token per character (好/坏, 冷/热, ...).

The table lets the reader see where the claim holds: a small rank (an antonym among the
10 nearest words out of thousands) supports it; a large one does not. With matplotlib
installed, the ranks are drawn per representation and language, on a log scale, in
``pmi_substitutability.png`` in ``--out``. Run ``python examples/pmi_substitutability.py``
(under a minute) or ``--quick``.
"""
import argparse
import importlib.util

import numpy as np
from sklearn.preprocessing import normalize
from threadpoolctl import threadpool_limits

from nlpfeat.datasets import load_lee, load_toy_corpus, load_wiki_sample
from nlpfeat.text import PMIEmbedding, cooccurrence, pmi

ENGLISH_PAIRS = [("good", "bad"), ("hot", "cold"), ("black", "white"), ("strong", "weak"),
                 ("rich", "poor"), ("big", "small"), ("high", "low"), ("long", "short"),
                 ("young", "old"), ("war", "peace"), ("north", "south"), ("east", "west"),
                 ("large", "small"), ("early", "late"), ("win", "lose"), ("day", "night"),
                 ("male", "female"), ("dark", "light"), ("begin", "end")]
CHINESE_PAIRS = [("好", "坏"), ("强", "弱"), ("大", "小"), ("冷", "热"), ("高", "低"),
                 ("富", "穷"), ("快", "慢"), ("上", "下")]


def english_corpus():
    """Token lists: Wikipedia sample (already stemmed) + Lee background, same preprocessing."""
    from gensim.parsing.porter import PorterStemmer
    from gensim.parsing.preprocessing import preprocess_string

    docs = [doc.split() for doc in load_wiki_sample().data]
    docs += [preprocess_string(doc) for doc in load_lee().background]
    stem = PorterStemmer().stem
    return docs, [(stem(a), stem(b)) for a, b in ENGLISH_PAIRS]


def chinese_corpus():
    """Token lists of the Chinese toy corpus, one token per CJK character."""
    docs = [[char for char in doc if "\u4e00" <= char <= "\u9fff"]
            for doc in load_toy_corpus("zh").data]
    return docs, CHINESE_PAIRS


def rank_of(similarities, word, other):
    """1 + the number of words (other than ``word``) more similar to ``word`` than ``other``."""
    sims = np.delete(similarities, word)
    return 1 + int(np.sum(sims > similarities[other]))


def ppmi_ranks(docs, pairs, window, min_count):
    """Antonym ranks under cosine similarity of sparse PPMI rows."""
    counts, vocab = cooccurrence(docs, window, min_count=min_count)
    rows = normalize(pmi(counts, "ppmi"))
    ranks = []
    for a, b in pairs:
        sims = (rows @ rows[vocab[a]].T).toarray().ravel()
        ranks.append(rank_of(sims, vocab[a], vocab[b]))
    return ranks


def svd_ranks(docs, pairs, window, min_count, n_components):
    """Antonym ranks under cosine similarity of PPMI-SVD vectors."""
    model = PMIEmbedding(n_components, window=window, min_count=min_count, input="tokens",
                         lowercase=False, random_state=0).fit(docs)
    unit = normalize(model.embeddings_)
    vocab = model.vocabulary_
    return [rank_of(unit @ unit[vocab[a]], vocab[a], vocab[b]) for a, b in pairs]


def study(name, docs, pairs, *, min_count, frequent, windows, n_components):
    counts = {}
    for doc in docs:
        for token in doc:
            counts[token] = counts.get(token, 0) + 1
    kept = [(a, b) for a, b in pairs if min(counts.get(a, 0), counts.get(b, 0)) >= frequent]
    skipped = [f"{a}/{b}" for a, b in pairs if (a, b) not in kept]
    n_vocab = sum(c >= min_count for c in counts.values())
    columns = {}
    for window in windows:
        columns[f"PPMI w{window}"] = ppmi_ranks(docs, kept, window, min_count)
        columns[f"SVD{n_components} w{window}"] = svd_ranks(docs, kept, window, min_count,
                                                            n_components)
    print(f"\n{name}: {len(docs)} documents, {n_vocab} words seen >= {min_count} times; "
          f"pairs whose words occur >= {frequent} times"
          + (f" (skipped as rare: {', '.join(skipped)})" if skipped else ""))
    print(f"{'word':>8} {'antonym':>8} {'counts':>12} " + " ".join(f"{c:>10}" for c in columns))
    for i, (a, b) in enumerate(kept):
        cells = " ".join(f"{columns[c][i]:>10}" for c in columns)
        print(f"{a:>8} {b:>8} {counts[a]:>5}/{counts[b]:<6} {cells}")
    summary = " ".join(f"{sum(r <= 10 for r in col):>7}/{len(kept):<2}" for col in columns.values())
    print(f"{'antonym within the 10 nearest':>31} {summary}")
    return columns


def save_figure(studies, out):
    """The antonyms' ranks, one column of points per representation, one panel per corpus."""
    if importlib.util.find_spec("matplotlib") is None:
        print('\n(figure skipped: matplotlib is not installed; pip install "nlpfeat[viz]")')
        return
    import matplotlib
    import matplotlib.pyplot as plt

    from nlpfeat import viz

    fig, axes = plt.subplots(1, len(studies), figsize=(4.5 * len(studies), 3.8), sharey=True,
                             layout="constrained")
    rng = np.random.RandomState(0)
    lowest = 3 * max(max(ranks) for columns in studies.values() for ranks in columns.values())
    for ax, (name, columns) in zip(axes, studies.items()):
        for x, ranks in enumerate(columns.values()):
            ranks = np.asarray(ranks)
            ax.plot(x + rng.uniform(-0.12, 0.12, ranks.size), ranks, "o", ms=4, alpha=0.6)
            ax.text(x, lowest / 1.5, f"{np.sum(ranks <= 10)}/{ranks.size} within 10",
                    ha="center", va="bottom", fontsize="small")
        ax.axhline(10.5, color="k", ls=":", lw=1)
        ax.text(len(columns) - 0.55, 10.5, "the 10 nearest words", ha="right", va="bottom",
                fontsize="small")
        ax.set_xticks(range(len(columns)), labels=list(columns))
        ax.set_xlim(-0.5, len(columns) - 0.5)
        ax.set_title(name)
    axes[0].set_yscale("log")
    axes[0].set_ylim(lowest, 0.7)               # rank 1 (the nearest word) on top
    axes[0].yaxis.set_major_formatter(matplotlib.ticker.StrMethodFormatter("{x:g}"))
    axes[0].set_ylabel("antonym's rank (1 = the nearest word)")
    fig.suptitle("PMI similarity: how near is a word's antonym among all words?")
    path = viz.save_figure(fig, out, "pmi_substitutability.png", dpi=100)
    print(f"\nsaved {path}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="window 2 only")
    parser.add_argument("--out", default="nlpfeat-examples",
                        help="folder for the figure (default: ./nlpfeat-examples)")
    args = parser.parse_args(argv)
    windows = (2,) if args.quick else (2, 5)
    docs, pairs = english_corpus()
    studies = {"English (stemmed)": study(
        "English (Wikipedia sample + Lee background, stemmed)", docs, pairs, min_count=5,
        frequent=30, windows=windows, n_components=100)}
    docs, pairs = chinese_corpus()
    studies["Chinese toy corpus (characters)"] = study(
        "Chinese toy corpus (characters)", docs, pairs, min_count=2, frequent=10,
        windows=windows, n_components=20)
    print("\nReading: rank 1 means the antonym is the single most similar word. Small ranks "
          "support 'PMI measures substitutability': the opposite word shares the contexts.")
    save_figure(studies, args.out)


if __name__ == "__main__":
    with threadpool_limits(1):      # small matrices: BLAS threads only contend
        main()
