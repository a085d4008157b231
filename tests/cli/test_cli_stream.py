"""The corpus commands stream their input (files, folders, globs, compressed files, stdin)
and run their counting on Dask with --scheduler / --dask-workers: real subprocesses, a real
LocalCluster, results compared with the in-memory API."""
import gzip
import sys

import numpy as np
import pytest
from scipy import sparse
from test_cli import run

from nlpfeat.datasets import load_toy_corpus
from nlpfeat.text import BagOfWords, TfidfVectorizer


@pytest.fixture(scope="module")
def lines():
    docs = list(load_toy_corpus("en").data)
    docs[5] = ""                     # blank lines stay rows unless --skip-blank
    docs[17] = "   "
    return docs


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory, lines):
    path = tmp_path_factory.mktemp("stream") / "toy.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def corpus_glob(tmp_path_factory, lines):
    """The lines in three files, the middle one gzip-compressed with CRLF line ends."""
    folder = tmp_path_factory.mktemp("glob")
    parts = np.array_split(np.arange(len(lines)), 3)
    for k, rows in enumerate(parts):
        text = ("\r\n" if k == 1 else "\n").join(lines[i] for i in rows) + "\n"
        if k == 1:
            with gzip.open(folder / f"part-{k}.txt.gz", "wt", encoding="utf-8",
                           newline="") as fh:
                fh.write(text)
        else:
            (folder / f"part-{k}.txt").write_text(text, encoding="utf-8")
    names = ["part-0.txt", "part-1.txt.gz", "part-2.txt"]
    ids = [f"{folder / names[k]}:{j + 1}" for k, rows in enumerate(parts)
           for j in range(len(rows))]
    return str(folder / "part-*"), ids


def _load(path):
    data = np.load(path)
    return sparse.load_npz(path), list(data["feature_names"]), list(data["doc_ids"])


def _assert_same_matrix(X, Y):
    assert X.shape == Y.shape
    np.testing.assert_allclose(X.toarray(), Y.toarray(), rtol=1e-12, atol=1e-15)


def test_features_in_small_chunks_equal_the_in_memory_matrix(tmp_path, corpus_file, lines):
    run("features", corpus_file, "--kind", "tfidf", "--chunk-docs", 7, "-o", tmp_path / "X.npz")
    X, names, ids = _load(tmp_path / "X.npz")
    estimator = TfidfVectorizer()
    expected = estimator.fit_transform(lines)
    _assert_same_matrix(X, expected)
    assert names == list(estimator.get_feature_names_out())
    assert ids == [str(i) for i in range(1, len(lines) + 1)]


def test_features_of_a_glob_with_a_compressed_file(tmp_path, corpus_glob, lines):
    pattern, ids = corpus_glob
    run("features", pattern, "--kind", "bow", "--chunk-docs", 10, "-o", tmp_path / "G.npz")
    X, _, got_ids = _load(tmp_path / "G.npz")
    bow = BagOfWords()
    _assert_same_matrix(X, bow.fit_transform(lines))
    assert got_ids == ids


def test_stdin_is_streamed_through_a_temporary_file(tmp_path, lines):
    stdin = ("\n".join(lines) + "\n").encode("utf-8")
    _, _, err = run("features", "-", "--kind", "bow", "--skip-blank", "-o", tmp_path / "S.npz",
                    stdin=stdin)
    assert "<stdin>: skipped 2 blank document(s)" in err
    X, _, ids = _load(tmp_path / "S.npz")
    kept = [i for i, doc in enumerate(lines) if doc.strip()]
    _assert_same_matrix(X, BagOfWords().fit_transform([lines[i] for i in kept]))
    assert ids == [str(i + 1) for i in kept]
    code, _, err = run("features", "-", "-o", tmp_path / "B.npz",
                       stdin=b"fine\nco\xfbt\n", check=False)
    assert code == 2 and "<stdin>, line 2: bytes that are not valid utf-8" in err
    assert "--encoding" in err and "Traceback" not in err
    run("features", "-", "--encoding", "latin-1", "-o", tmp_path / "L.npz",
        stdin=b"fine\nco\xfbt\n")
    assert "coût" in _load(tmp_path / "L.npz")[1]


# ----------------------------------------------------------------------------- Dask
def test_features_on_a_running_scheduler_equal_the_single_machine_output(
        tmp_path, dask_client, corpus_glob):
    pattern, _ = corpus_glob
    kind = "tfidf"
    run("features", pattern, "--kind", kind, "--ngram", 1, 2, "-o", tmp_path / "one.npz")
    _, out, _ = run("features", pattern, "--kind", kind, "--ngram", 1, 2, "--blocksize",
                    0.001, "--scheduler", dask_client.scheduler.address,
                    "-o", tmp_path / "dask.npz")
    assert "counted on 2 Dask worker(s)" in out
    X, names, ids = _load(tmp_path / "one.npz")
    Y, dask_names, dask_ids = _load(tmp_path / "dask.npz")
    _assert_same_matrix(Y, X)
    assert dask_names == names and dask_ids == ids


@pytest.mark.slow    # a local cluster of its own (14 CPU-s); test_cli_lines keeps one
def test_features_on_a_local_cluster_skip_blank_lines_and_keep_line_numbers(
        tmp_path, corpus_file, lines):
    _, _, err = run("features", corpus_file, "--kind", "tfidf", "--skip-blank", "--blocksize",
                    0.001, "--dask-workers", 2, "-o", tmp_path / "D.npz")
    assert "skipped 2 blank document(s)" in err
    X, names, ids = _load(tmp_path / "D.npz")
    kept = [i for i, doc in enumerate(lines) if doc.strip()]
    tfidf = TfidfVectorizer()
    _assert_same_matrix(X, tfidf.fit_transform([lines[i] for i in kept]))
    assert names == list(tfidf.get_feature_names_out())
    assert ids == [str(i + 1) for i in kept]


def test_features_of_a_folder_on_dask(tmp_path, dask_client):
    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    texts = {"b.txt": "second file\nof two lines", "a.txt": "", "sub/c.txt": "third file"}
    for name, text in texts.items():
        (folder / name).write_text(text, encoding="utf-8")
    run("features", folder, "--kind", "bow", "-o", tmp_path / "one.npz")
    run("features", folder, "--kind", "bow", "--scheduler", dask_client.scheduler.address,
        "-o", tmp_path / "dask.npz")
    X, names, ids = _load(tmp_path / "one.npz")
    Y, dask_names, dask_ids = _load(tmp_path / "dask.npz")
    assert ids == dask_ids == ["a.txt", "b.txt", "sub/c.txt"]
    _assert_same_matrix(Y, X)
    assert X[1].sum() == 5 and dask_names == names


def test_topics_on_dask_equal_the_single_machine_topics(corpus_file, dask_client):
    args = ("topics", corpus_file, "-k", 3, "--method", "nmf", "--backend", "sklearn")
    _, single, _ = run(*args)
    _, on_dask, _ = run(*args, "--blocksize", 0.001, "--scheduler",
                        dask_client.scheduler.address)
    assert single.count("topic ") == 3
    assert on_dask == single


def test_without_dask_the_dask_options_say_how_to_install_it(tmp_path, corpus_file, monkeypatch):
    # None in sys.modules: "import dask" raises ImportError, as where it is not installed
    for name in ("dask", "dask.bag", "distributed"):
        monkeypatch.setitem(sys.modules, name, None)
    code, _, err = run("features", corpus_file, "--dask-workers", 2, "-o", tmp_path / "x.npz",
                       check=False)
    # without the Dask options, the same environment works
    run("features", corpus_file, "-o", tmp_path / "y.npz")
    assert code == 2 and "Traceback" not in err, err
    assert 'pip install "nlpfeat[dask]"' in err and "--dask-workers" in err
    assert not (tmp_path / "x.npz").exists()
