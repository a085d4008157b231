"""Window co-occurrence or dependency relations: which modifier-noun pairs does each recover?

In "a square, smooth, heat-resistant, cheap stainless-steel box" (一个方方正正，表面光滑，
耐高温，价格便宜的不锈钢盒子) every modifier describes the box, however far from it it
stands. A window of k tokens pairs a word only with its neighbours; a dependency parse links
each modifier to its noun directly. This script puts both side by side on nlpfeat's
hand-parsed sample (:func:`nlpfeat.datasets.load_dependency_sample`, 12 English and 8 Chinese
sentences):

* for the box sentence in both languages: each modifier, its distance to the noun (in words,
  punctuation left out), and whether a window of 2 or 5 and the dependency features
  (:class:`nlpfeat.text.DependencyBagOfWords`, basic trees and with conjuncts propagated as
  in Enhanced UD) pair it with the noun;
* over the whole sample: the share of the annotated modifier-noun pairs (relations
  ``amod``, ``acl``, ``nmod``, ``compound``, ``nummod``, all on nouns in this sample, and
  conjuncts of such modifiers) that each recovers, and how many distinct word pairs each
  produces in all.

The parses are hand-made and correct by construction, so the dependency features recover
every annotated pair: the figures measure what a window misses and how much it adds, not a
parser's accuracy (a real parser's errors would lower the dependency column). With
matplotlib installed, the share recovered against the number of word pairs produced (the
cost in features) is saved as ``dependency_features.png`` in ``--out``.

Usage::

    python examples/dependency_features.py          # a second or two
    python examples/dependency_features.py --quick  # the same (the sample is small)
"""
import argparse
import importlib.util
import unicodedata

from threadpoolctl import threadpool_limits

from nlpfeat.datasets import load_dependency_sample
from nlpfeat.text import DependencyBagOfWords, cooccurrence

MODIFIERS = {"amod", "acl", "nmod", "compound", "nummod"}


def words_of(block):
    """(forms, upos) of a CoNLL-U sentence, lowercased, punctuation left out."""
    rows = [line.split("\t") for line in block.split("\n") if line and line[0] != "#"]
    rows = [r for r in rows if r[3] != "PUNCT"]
    return [r[1].lower() for r in rows], [r[3] for r in rows]


def dependency_pairs(blocks, propagate_conj):
    """(head, modifier) pairs joined by a modifier relation in the dependency features."""
    dep = DependencyBagOfWords(propagate_conj=propagate_conj).fit(blocks)
    triples = (f.split("|") for f in dep.get_feature_names_out())
    return {(head, modifier) for head, rel, modifier in triples if rel in MODIFIERS}


def window_pairs(blocks, window):
    """Unordered word pairs within ``window`` words of each other (type level)."""
    counts, vocabulary = cooccurrence([words_of(b)[0] for b in blocks], window=window)
    terms = sorted(vocabulary, key=vocabulary.get)
    rows, cols = counts.nonzero()
    return {(terms[i], terms[j]) for i, j in zip(rows, cols)}


def pad(text, width):
    """Left-align ``text`` in ``width`` columns, counting wide (CJK) characters as two."""
    wide = sum(unicodedata.east_asian_width(c) in "WF" for c in text)
    return text + " " * max(0, width - len(text) - wide)


def box_table(block, noun):
    forms, _ = words_of(block)
    basic, enhanced = dependency_pairs([block], False), dependency_pairs([block], True)
    near2, near5 = window_pairs([block], 2), window_pairs([block], 5)
    print(f"  {'modifier':<16} {'distance':>8} {'window 2':>9} {'window 5':>9} "
          f"{'dependency':>11} {'+ conj':>7}")
    mods = sorted({m for n, m in enhanced if n == noun}, key=forms.index)
    for m in mods:
        distance = forms.index(noun) - forms.index(m)
        marks = [(noun, m) in s for s in (near2, near5, basic, enhanced)]
        print(f"  {pad(m, 16)} {distance:>8} " + " ".join(f"{'yes' if x else '-':>{w}}" for x, w in
                                                     zip(marks, (9, 9, 11, 7))))
    return mods


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="same run (kept for the CI smoke test)")
    p.add_argument("--out", default="nlpfeat-examples",
                   help="folder for the figure (default: ./nlpfeat-examples)")
    args = p.parse_args(argv)
    sample = load_dependency_sample()
    print(f"{len(sample.data)} hand-parsed sentences "
          f"({(sample.language == 'en').sum()} English, {(sample.language == 'zh').sum()} "
          f"Chinese)\n")
    for sid, noun in [("en-1", "box"), ("zh-1", "盒子")]:
        block = sample.data[sample.sent_id.index(sid)]
        print(f"{sid}: {sample.text[sample.sent_id.index(sid)]}  (modifiers of {noun!r})")
        box_table(block, noun)
        print()
    gold = dependency_pairs(sample.data, True)
    print(f"Whole sample: {len(gold)} annotated modifier-noun pairs (with conjuncts)")
    print(f"  {'features':<28} {'recovered':>10} {'share':>6} {'word pairs in all':>18}")
    basic = dependency_pairs(sample.data, False)
    all_basic = DependencyBagOfWords().fit(sample.data).vocabulary_
    all_enh = DependencyBagOfWords(propagate_conj=True).fit(sample.data).vocabulary_
    recovered = {}                   # features -> (share recovered, word pairs in all)
    for name, found, total in [("dependency (basic UD)", basic, len(all_basic)),
                               ("dependency (+ conjuncts)", gold, len(all_enh))]:
        hit = len(gold & found)
        recovered[name] = (hit / len(gold), total)
        print(f"  {name:<28} {hit:>6}/{len(gold):<3} {hit / len(gold):>6.2f} {total:>18}")
    for window in (1, 2, 3, 5, 8):
        pairs = window_pairs(sample.data, window)
        hit = sum((n, m) in pairs for n, m in gold)
        recovered[f"window {window}"] = (hit / len(gold), len(pairs) // 2)
        print(f"  {f'window {window}':<28} {hit:>6}/{len(gold):<3} {hit / len(gold):>6.2f} "
              f"{len(pairs) // 2:>18}")
    missed = sorted((n, m) for n, m in gold if (n, m) not in window_pairs(sample.data, 2))
    print("Pairs a window of 2 misses:", ", ".join(f"{m}->{n}" for n, m in missed))
    save_figure(recovered, len(gold), args.out)


def save_figure(recovered, n_gold, out):
    """Share of the annotated pairs recovered against the word pairs produced in all."""
    if importlib.util.find_spec("matplotlib") is None:
        print('\n(figure skipped: matplotlib is not installed; pip install "nlpfeat[viz]")')
        return
    import matplotlib.pyplot as plt

    from nlpfeat import viz

    fig, ax = plt.subplots(figsize=(6.5, 4), layout="constrained")
    windows = {k: v for k, v in recovered.items() if k.startswith("window")}
    share, total = zip(*windows.values())
    ax.plot(total, share, "o-", color="C0", label="window of k words")
    for name, (y, x) in windows.items():
        ax.annotate(name.split()[1], (x, y), textcoords="offset points", xytext=(4, -12),
                    fontsize="small")
    for i, name in enumerate(k for k in recovered if k not in windows):
        y, x = recovered[name]
        ax.plot(x, y, "s", ms=8, color=f"C{i + 1}", label=name)
    ax.set(xlabel="distinct word pairs produced (features)",
           ylabel=f"share of the {n_gold} modifier-noun pairs recovered", ylim=(0, 1.05),
           title="Hand-parsed sample: windows against dependency relations")
    ax.legend(loc="lower right", fontsize="small")
    path = viz.save_figure(fig, out, "dependency_features.png", dpi=100)
    print(f"\nsaved {path}")


if __name__ == "__main__":
    with threadpool_limits(1):      # small matrices: BLAS threads only contend
        main()
