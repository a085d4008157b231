"""``verbose``: the progress bars of long work (nlpfeat._progress). Off by default; on, a bar
on stderr and the same output, bit for bit, as without it."""
import gzip

import numpy as np
import pytest
import scipy.sparse as sp

from nlpfeat._progress import progress_bar, track
from nlpfeat.datasets import Corpus
from nlpfeat.text import (
    BagOfWords,
    Collocations,
    CountDeviation,
    DependencyBagOfWords,
    ExplicitSemanticAnalysis,
    HashingVectorizer,
    LocallyWeightedBagOfWords,
    PMIEmbedding,
    PositionalBagOfWords,
    SemanticUnitBagOfWords,
    TfidfVectorizer,
    TopicModel,
    cooccurrence,
)

DOCS = ["the cat sat on the mat", "the dog sat on the rug", "a cat and a dog",
        "the mat and the rug", "stocks and bonds pay", "bonds and stocks fall"] * 3
WORDS = sorted(set(" ".join(DOCS).split()))

CONLLU = ("1\tthe\tthe\tDET\t_\t_\t2\tdet\t_\t_\n"
          "2\tcat\tcat\tNOUN\t_\t_\t3\tnsubj\t_\t_\n"
          "3\tsleeps\tsleep\tVERB\t_\t_\t0\troot\t_\t_\n")

#: (estimator, its documents, what its bar is called)
CASES = [
    (BagOfWords(), DOCS, "BagOfWords"),
    (TfidfVectorizer(ngram_range=(1, 2)), DOCS, "TfidfVectorizer"),
    (PositionalBagOfWords(), DOCS, "PositionalBagOfWords"),
    (CountDeviation(max_features=5), DOCS, "CountDeviation"),
    (DependencyBagOfWords(), [CONLLU] * 4, "DependencyBagOfWords"),
    (Collocations(min_count=1), DOCS, "Collocations"),
    (Collocations(min_count=1, input="tokens"), [d.split() for d in DOCS], "Collocations"),
    (PMIEmbedding(n_components=2, window=2, min_count=1, random_state=0), DOCS,
     "PMIEmbedding"),
    (TopicModel(n_components=2, backend="sklearn", random_state=0), DOCS, "BagOfWords"),
    (TopicModel(n_components=2, method="lsi", random_state=0), DOCS,
     "TopicModel: LSI over the documents"),
    (TopicModel(n_components=2, max_iter=2, random_state=0), DOCS,
     "TopicModel: pass over the documents"),
    (ExplicitSemanticAnalysis(topn=2), DOCS, "TfidfVectorizer"),
    (LocallyWeightedBagOfWords(), DOCS, "LocallyWeightedBagOfWords"),
    (HashingVectorizer(n_features=64), DOCS, "HashingVectorizer"),
    (SemanticUnitBagOfWords(dict(zip(WORDS, np.eye(len(WORDS)))), n_units=2,
                            random_state=0), DOCS, "SemanticUnitBagOfWords"),
]


def _same(a, b):
    if sp.issparse(a):
        a, b = a.toarray(), b.toarray()
    if isinstance(a, list):
        return a == b
    return np.array_equal(a, b)


@pytest.mark.parametrize("estimator, docs, name", CASES,
                         ids=[f"{type(c[0]).__name__}-{i}" for i, c in enumerate(CASES)])
def test_verbose_shows_a_bar_on_stderr_and_changes_no_output(estimator, docs, name, capsys):
    assert estimator.get_params()["verbose"] == 0          # off by default
    quiet = estimator.fit(docs).transform(docs)
    silent = capsys.readouterr()
    assert silent.err == "" and silent.out == ""
    loud = estimator.set_params(verbose=1).fit(docs).transform(docs)
    shown = capsys.readouterr()
    assert name in shown.err and "100%" in shown.err
    assert shown.out == ""                                 # stdout is the user's
    assert _same(quiet, loud)


def test_cooccurrence_shows_a_bar_and_counts_the_same(capsys):
    quiet, vocabulary = cooccurrence(DOCS, window=2)
    assert capsys.readouterr().err == ""
    loud, same_vocabulary = cooccurrence((d for d in DOCS), window=2, verbose=1)
    err = capsys.readouterr().err
    assert "cooccurrence: documents" in err and f"{len(DOCS)}doc" in err.replace(" ", "")
    assert same_vocabulary == vocabulary and (quiet != loud).nnz == 0


def test_verbose_is_validated():
    with pytest.raises(ValueError, match="verbose"):
        BagOfWords(verbose="loud").fit(DOCS)


def test_track_yields_the_same_items_once():
    one_shot = (d for d in DOCS)
    assert list(track(one_shot, 1, "reading")) == DOCS
    assert list(one_shot) == []
    assert track(DOCS, 0, "reading") is DOCS


class _Bar:
    """tqdm as the bars of nlpfeat call it, recording the total and the updates."""

    made = []

    def __init__(self, total=None, **kwargs):
        self.total, self.desc, self.done = total, kwargs["desc"], 0
        self.made.append(self)

    def update(self, n=1):
        self.done += n

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.fixture
def bars(monkeypatch):
    import tqdm.auto

    _Bar.made = []
    monkeypatch.setattr(tqdm.auto, "tqdm", _Bar)
    return _Bar.made


def test_a_corpus_counts_its_bytes_on_disk(tmp_path, bars):
    plain = tmp_path / "plain.txt"
    plain.write_bytes(b"one two\nthree four\n" * 1000)
    packed = tmp_path / "packed.txt.gz"
    packed.write_bytes(gzip.compress(b"one two\nthree four\n" * 50_000))
    X = BagOfWords(verbose=1).fit_transform(Corpus([plain, packed]))
    assert X.shape[0] == 102_000
    (bar,) = bars
    # the compressed file counts its compressed bytes: the total is the files' sizes on
    # disk, and it is what the bar reaches (never 2.3 MB of text out of a 1 MB total)
    size = plain.stat().st_size + packed.stat().st_size
    assert bar.total == size and bar.done == size
    assert "compressed bytes" in bar.desc


def test_a_corpus_bar_shows_mb_per_second(tmp_path, capsys):
    path = tmp_path / "docs.txt"
    path.write_text("\n".join(DOCS), encoding="utf-8")
    BagOfWords(verbose=1).fit(Corpus(path))
    err = capsys.readouterr().err
    assert "B/s" in err and "BagOfWords: documents" in err and "compressed" not in err


def test_the_bandwidth_searches_by_an_optimiser_show_their_steps(bars):
    from nlpfeat.kernels import NadarayaWatsonRegressor

    rng = np.random.RandomState(0)
    X = rng.uniform(size=(40, 2))
    X[:, 1] = rng.randint(0, 3, 40)
    y = X[:, 0] + 0.1 * rng.normal(size=40)
    for params in ({"bandwidth": "loo-ard"}, {"bandwidth": "aic"},
                   {"bandwidth": "loo-ard", "var_type": "cu"}):
        quiet = NadarayaWatsonRegressor(**params).fit(X, y)
        assert not bars
        loud = NadarayaWatsonRegressor(verbose=1, **params).fit(X, y)
        assert bars and all(bar.done > 0 for bar in bars), params
        np.testing.assert_array_equal(loud.bandwidth_, quiet.bandwidth_)
        bars.clear()


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_the_attention_regressors_show_epochs_with_the_loss(capsys):
    from nlpfeat.attention import AttentionRegressor

    rng = np.random.RandomState(0)
    X, y = rng.normal(size=(40, 2)), rng.normal(size=40)
    quiet = AttentionRegressor(max_iter=3, random_state=0).fit(X, y)
    assert capsys.readouterr().err == ""
    loud = AttentionRegressor(max_iter=3, random_state=0, verbose=1).fit(X, y)
    err = capsys.readouterr().err
    assert "epoch" in err and "loss=" in err
    np.testing.assert_array_equal(quiet.predict(X), loud.predict(X))


def test_a_silent_bar_takes_every_call():
    with progress_bar(0, "nothing", total=3) as bar:
        bar.update(2)
        bar.set_postfix(loss="1.0")
        bar.clear()


def test_a_dask_bag_shows_no_bar_from_its_workers(capsys):
    dask = pytest.importorskip("dask")
    import dask.bag as db

    bag = db.from_sequence(DOCS, npartitions=3)
    with dask.config.set(scheduler="synchronous"):      # the workers' code, run here
        loud = BagOfWords(verbose=1).fit(bag)
    assert capsys.readouterr().err == ""
    assert loud.vocabulary_ == BagOfWords().fit(DOCS).vocabulary_
