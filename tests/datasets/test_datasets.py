"""Tests of nlpfeat.datasets: counts, decoding, matrix layout, labels, determinism, errors.

Expected values are computed independently from the raw bytes of gensim's files where
possible, so a loader that mis-splits or mis-decodes a file fails here.
"""
import importlib
import importlib.resources
import re
import socket

import numpy as np
import pytest
from gensim.test.utils import datapath

from nlpfeat.datasets import (
    load_lee,
    load_polarity,
    load_toy_corpus,
    load_wiki_sample,
    load_word_similarity,
    make_nw_regression,
)


def _raw(name):
    with open(datapath(name), "rb") as f:
        return f.read()


@pytest.fixture(scope="module")
def lee():
    return load_lee()


@pytest.fixture(scope="module")
def polarity():
    return load_polarity()


# --------------------------------------------------------------------------- Lee corpus
def test_lee_document_counts_match_raw_lines(lee):
    for field, name, expected in [("background", "lee_background.cor", 300),
                                  ("test", "lee.cor", 50)]:
        raw = _raw(name)
        assert not raw.endswith(b"\n")  # why `wc -l` says 299 / 49
        assert raw.count(b"\n") + 1 == expected
        docs = lee[field]
        assert len(docs) == expected
        assert all(isinstance(d, str) and d and d == d.strip() for d in docs)
        assert docs == [line.decode("latin-1").strip() for line in raw.split(b"\n")]


def test_lee_pound_sign_is_decoded(lee):
    assert b"\xa3" in _raw("lee.cor")
    with pytest.raises(UnicodeDecodeError):
        _raw("lee.cor").decode("utf-8")
    hits = [i for i, doc in enumerate(lee.test) if "£" in doc]
    assert hits == [40]
    assert "£3,000" in lee.test[40]
    text = " ".join(lee.test + lee.background)
    assert "\ufffd" not in text and "Â£" not in text


def test_lee_similarity_is_symmetric_with_unit_diagonal(lee):
    S = lee.similarity
    assert S.shape == (50, 50) and S.dtype == np.float64
    np.testing.assert_array_equal(S, S.T)
    np.testing.assert_array_equal(np.diag(S), np.ones(50))
    off = S[~np.eye(50, dtype=bool)]
    assert off.min() == pytest.approx(0.2) and off.max() == 1.0


def test_lee_similarity_mirrors_the_upper_triangular_file(lee):
    upper = np.loadtxt(datapath("similarities0-1.txt"))
    assert np.all(np.tril(upper, k=-1) == 0)  # the file really is upper-triangular
    iu = np.triu_indices(50, k=1)
    np.testing.assert_array_equal(lee.similarity[iu], upper[iu])
    np.testing.assert_array_equal(lee.similarity.T[iu], upper[iu])
    np.testing.assert_array_equal(lee.similarity_upper, upper[iu])
    assert lee.similarity_upper.shape == (1225,)
    assert lee.similarity[0, 1] == lee.similarity[1, 0] == pytest.approx(0.3)


def test_lee_background_duplicates_are_kept(lee):
    assert len(set(lee.background)) == 293
    assert lee.background[104] == lee.background[112]
    assert not set(lee.test) & set(lee.background)


# --------------------------------------------------------------------------- polarity
def test_polarity_counts_labels_and_order(polarity):
    assert len(polarity.data) == 200
    assert polarity.target.dtype == np.int64 and polarity.target.shape == (200,)
    np.testing.assert_array_equal(np.bincount(polarity.target), [100, 100])
    assert list(polarity.target_names) == ["neg", "pos"]
    raw_labels = [line.split(b" ", 1)[0] for line in _raw("pang_lee_polarity.cor").splitlines()]
    expected = [int(label == b"__label__pos") for label in raw_labels]
    np.testing.assert_array_equal(polarity.target, expected)
    assert not any("__label__" in s or s != s.strip() for s in polarity.data)


def test_polarity_decodes_windows_1252(polarity):
    assert b"\x97" in _raw("pang_lee_polarity.cor")
    text = " ".join(polarity.data)
    assert text.count("—") == 3 and "\x97" not in text
    assert "clichés" in text and "amélie" in text


def test_polarity_return_X_y(polarity):
    X, y = load_polarity(return_X_y=True)
    assert X == polarity.data
    np.testing.assert_array_equal(y, polarity.target)


# --------------------------------------------------------------------------- Wikipedia
def test_wiki_sample_is_preprocessed_text():
    wiki = load_wiki_sample()
    raw = _raw("head500.noblanks.cor")
    assert raw.count(b"\r\n") == 250 and len(wiki.data) == 250
    tokens = [t for doc in wiki.data for t in doc.split(" ")]
    assert len(tokens) == 331_339 and "" not in tokens
    assert not any("\r" in doc or doc != doc.lower() for doc in wiki.data)
    vocabulary = set(tokens)
    assert {"the", "of", "is", "anarchism", "philosophy"}.isdisjoint(vocabulary)
    assert {"anarch", "philosophi", "encyclopædia"} <= vocabulary
    assert "Porter" in wiki.DESCR and "stop words" in wiki.DESCR


# --------------------------------------------------------------------------- word pairs
@pytest.mark.parametrize(
    "name, n_pairs, first, last",
    [("simlex999", 999, ("old", "new", 1.58), ("attend", "arrive", 6.08)),
     ("wordsim353", 353, ("love", "sex", 6.77), ("architecture", "century", 3.78))],
)
def test_word_similarity(name, n_pairs, first, last):
    ds = load_word_similarity(name)
    assert len(ds.pairs) == n_pairs and ds.scores.shape == (n_pairs,)
    assert ds.scores.dtype == np.float64
    assert (*ds.pairs[0], float(ds.scores[0])) == first
    assert (*ds.pairs[-1], float(ds.scores[-1])) == last
    assert ds.scale == (0.0, 10.0)
    assert np.all((ds.scores >= 0) & (ds.scores <= 10))
    assert not any(w.startswith("#") for pair in ds.pairs for w in pair)
    n_comments = sum(line.startswith(b"#") for line in _raw(ds.filename).splitlines())
    assert n_comments == 2
    assert ds.name == name


def test_wordsim353_keeps_case_and_duplicates():
    ds = load_word_similarity("wordsim353")
    assert ("Jerusalem", "Israel") in ds.pairs
    assert ds.pairs.count(("money", "cash")) == 2


@pytest.mark.parametrize("name", ["simlex", "SimLex999", "", None, 999])
def test_word_similarity_rejects_unknown_names(name):
    with pytest.raises(ValueError, match="must be a str among") as excinfo:
        load_word_similarity(name)
    assert "'simlex999'" in str(excinfo.value) and "'wordsim353'" in str(excinfo.value)


# --------------------------------------------------------------------------- toy corpora
CLASSICS = {
    "en": ["the fat cat sat on the mat"],
    "zh": ["这是一个好人", "这是一个坏人",
           "张三和李四去宴会，前者一直在聊天，后者不理前者，一直认真品尝美食。"],
}
ANTONYMS = {
    "en": [("good", "bad"), ("hot", "cold"), ("strong", "weak"), ("rich", "poor"),
           ("big", "small"), ("black", "white")],
    "zh": [("好", "坏"), ("冷", "热"), ("大", "小"), ("富", "穷"), ("黑", "白"), ("强", "弱")],
}
TOPICS = ["animals", "economy", "food", "people", "sports", "technology", "weather"]


@pytest.mark.parametrize("language", ["en", "zh"])
def test_toy_corpus_content(language):
    ds = load_toy_corpus(language)
    assert 300 <= len(ds.data) <= 500 and len(set(ds.data)) == len(ds.data)
    assert list(ds.target_names) == TOPICS
    assert ds.target.dtype == np.int64 and ds.target.shape == (len(ds.data),)
    assert ds.target.min() == 0 and np.bincount(ds.target).min() >= 30
    for sentence in CLASSICS[language]:
        assert sentence in ds.data
    assert ds.language == language and "toy" in ds.DESCR


@pytest.mark.parametrize("language", ["en", "zh"])
def test_toy_corpus_antonyms_share_contexts(language):
    data = set(load_toy_corpus(language).data)
    for a, b in ANTONYMS[language]:
        if language == "en":
            swapped = {re.sub(rf"\b{a}\b", b, s) for s in data if re.search(rf"\b{a}\b", s)}
        else:
            swapped = {s.replace(a, b) for s in data if a in s}
        assert len(swapped & data) >= 3, (a, b)


def test_toy_corpus_files_are_utf8_and_reproducible():
    generator = importlib.import_module("nlpfeat._data._make_toy_corpora")
    data_dir = importlib.resources.files("nlpfeat._data")
    for name, classics, templates in [
        ("toy_en.txt", generator.EN_CLASSICS, generator.EN_TEMPLATES),
        ("toy_zh.txt", generator.ZH_CLASSICS, generator.ZH_TEMPLATES),
    ]:
        raw = data_dir.joinpath(name).read_bytes()
        assert not raw.startswith(b"\xef\xbb\xbf") and b"\r" not in raw
        rows = generator.build(classics, templates)
        assert raw.decode("utf-8") == "".join(f"{s}\t{t}\n" for s, t in rows)


def test_toy_corpus_format_unlabelled_and_comment_lines(monkeypatch, tmp_path):
    import nlpfeat.datasets as datasets

    readme = importlib.resources.files("nlpfeat._data").joinpath("README.md").read_bytes()
    (tmp_path / "README.md").write_bytes(readme)
    (tmp_path / "toy_en.txt").write_text(
        "# a comment\nthe cat sat\tanimals\n\nno label here\nrates rose\teconomy\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(datasets._loaders, "files", lambda package: tmp_path)
    X, y = datasets.load_toy_corpus("en", return_X_y=True)
    assert X == ["the cat sat", "no label here", "rates rose"]
    np.testing.assert_array_equal(y, [0, -1, 1])


@pytest.mark.parametrize("language", ["english", "EN", "fr", None])
def test_toy_corpus_rejects_unknown_language(language):
    with pytest.raises(ValueError, match="must be a str among") as excinfo:
        load_toy_corpus(language)
    assert "'en'" in str(excinfo.value) and "'zh'" in str(excinfo.value)


# --------------------------------------------------------------------------- regression
@pytest.mark.parametrize("seed", [0, 1, 42])
@pytest.mark.parametrize("n_samples", [1, 7, 200])
def test_make_nw_regression_shapes_and_formula(seed, n_samples):
    X, y, y_true = make_nw_regression(n_samples, noise=0.3, return_true=True, random_state=seed)
    assert X.shape == (n_samples, 1) and y.shape == y_true.shape == (n_samples,)
    assert X.dtype == y.dtype == np.float64
    assert np.all((X >= 0) & (X < 5))
    np.testing.assert_allclose(y_true, 2 * np.sin(X[:, 0]) + X[:, 0] ** 0.8, rtol=1e-15)
    X0, y0 = make_nw_regression(n_samples, noise=0.0, random_state=seed)
    np.testing.assert_array_equal(X0, X)  # x is drawn before the noise
    np.testing.assert_array_equal(y0, y_true)


def test_make_nw_regression_is_deterministic():
    a = make_nw_regression(30, noise=0.5, random_state=3)
    b = make_nw_regression(30, noise=0.5, random_state=np.random.RandomState(3))
    c = make_nw_regression(30, noise=0.5, random_state=4)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    assert not np.array_equal(a[0], c[0])


def test_make_nw_regression_noise_and_sort():
    X, y, y_true = make_nw_regression(20_000, noise=0.5, return_true=True, random_state=0)
    assert np.std(y - y_true) == pytest.approx(0.5, rel=0.03)
    assert np.mean(y - y_true) == pytest.approx(0.0, abs=0.02)
    Xs, ys, ts = make_nw_regression(20_000, noise=0.5, sort=True, return_true=True,
                                    random_state=0)
    order = np.argsort(X[:, 0], kind="stable")
    assert np.all(np.diff(Xs[:, 0]) >= 0)
    np.testing.assert_array_equal(Xs, X[order])
    np.testing.assert_array_equal(ys, y[order])  # each x keeps its own noise
    np.testing.assert_array_equal(ts, y_true[order])


@pytest.mark.parametrize(
    "kwargs, match",
    [({"n_samples": 0}, "n_samples"), ({"n_samples": 2.5}, "n_samples"),
     ({"noise": -0.1}, "noise"), ({"random_state": "seed"}, "random_state")],
)
def test_make_nw_regression_rejects_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_nw_regression(**kwargs)


# --------------------------------------------------------------------------- all loaders
LOADERS = [
    (load_lee, ()), (load_polarity, ()), (load_wiki_sample, ()),
    (load_word_similarity, ("simlex999",)), (load_word_similarity, ("wordsim353",)),
    (load_toy_corpus, ("en",)), (load_toy_corpus, ("zh",)),
]


def test_nothing_touches_the_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a dataset loader tried to open a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    for loader, args in LOADERS:
        assert loader(*args)
    make_nw_regression(5, random_state=0)


@pytest.mark.parametrize("loader, args", LOADERS)
def test_descr_is_the_datasets_readme_section(loader, args):
    descr = loader(*args).DESCR
    assert descr.startswith(f"## `{loader.__name__}(")
    for word in ("Origin", "License", "Cite"):
        assert f"**{word}.**" in descr
    assert "\n## " not in descr  # one section only


def test_subpackages_are_imported_lazily():
    # the top level's names load their subpackages on first use (what importing a
    # subpackage does not load: tests/test_architecture.py)
    import subprocess
    import sys

    code = ("import nlpfeat; from nlpfeat import *; import sys; "
            "print(NadarayaWatsonRegressor.__name__, BagOfWords.__name__, "
            "AttentionRegressor.__name__, len(nlpfeat.__all__), 'layers' in nlpfeat.__all__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out[:3] == ["NadarayaWatsonRegressor", "BagOfWords", "AttentionRegressor"]
    assert int(out[3]) > 20 and out[4] == "False"


def test_text_uses_only_the_kernels_shared_api():
    import ast
    from pathlib import Path

    import nlpfeat

    root = Path(nlpfeat.__file__).parent
    for path in (root / "text").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and \
                    node.module.startswith("nlpfeat.kernels."):
                assert node.module == "nlpfeat.kernels._shared", (path.name, node.module)
