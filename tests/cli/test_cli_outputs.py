"""The first hour, second pass (issue 29): what the command line shows and where it writes.

These call ``main`` in-process (the subprocess tests of ``test_cli.py`` cover the entry
point): a long text's attention is capped and says so, a folder's files are chosen with
``--pattern``, a comparison no model applies to is refused, and ``-o`` names the user's
path when it cannot be written and writes a device or a pipe as given.
"""
import io
import os
import threading

import numpy as np
import pytest
from scipy import sparse

from nlpfeat.cli import build_parser, main


def _run(capsys, *args):
    """``(exit status, stdout, stderr)`` of ``nlpfeat ARGS`` run in this process."""
    try:
        code = main([str(a) for a in args])
    except SystemExit as exc:    # argparse's error: usage, one line, exit 2
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("the cat sat on the mat\nthe dog ran\n", encoding="utf-8")
    return path


# ----------------------------------------------------------------------------- attention
def test_attention_of_a_long_text_shows_the_first_tokens_and_says_so(capsys, tmp_path,
                                                                     monkeypatch):
    words = [f"w{i}" for i in range(90)]          # 90 distinct tokens
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(" ".join(words).encode())))
    figure = tmp_path / "fig.png"
    code, out, _ = _run(capsys, "attention", "-", "-o", figure)
    assert code == 0
    assert "the text has 90 tokens: the model attends over the first 40" in out
    assert "--max-tokens 0" in out
    rows = [line for line in out.splitlines() if line.startswith("w")]
    assert [line.split()[0] for line in rows] == words[:40]
    header = next(line for line in out.splitlines() if line.strip().startswith("w0 "))
    assert header.split() == words[:40]
    assert max(len(line) for line in out.splitlines()) < 400
    assert figure.stat().st_size > 1000
    # Each shown row is the attention of a query over the shown keys: it sums to one.
    sums = [sum(float(v) for v in line.split()[1:]) for line in rows]
    assert np.allclose(sums, 1.0, atol=40 * 0.0005 + 1e-9)

    code, out, _ = _run(capsys, "attention", " ".join(words[:12]), "--max-tokens", 0)
    assert code == 0 and "attends over the first" not in out
    assert len([line for line in out.splitlines() if line.startswith("w")]) == 12
    code, out, _ = _run(capsys, "attention", " ".join(words), "--max-tokens", 0)
    assert len([line for line in out.splitlines() if line.startswith("w")]) == 90


def test_attention_max_tokens_is_checked(capsys):
    code, _, err = _run(capsys, "attention", "a b c", "--max-tokens", -1)
    assert code == 2 and "--max-tokens" in err and "integer >= 0" in err


def test_sentence_attention_max_tokens_keeps_rows_normalised():
    from nlpfeat.compare import sentence_attention

    tokens, weights = sentence_attention("the fat cat sat on the mat", n_heads=2, max_tokens=4)
    assert tokens == ["the", "fat", "cat", "sat"] and weights.shape == (2, 4, 4)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, rtol=1e-12)
    for bad in (0, -3, 2.5, "4"):
        with pytest.raises(ValueError, match="max_tokens"):
            sentence_attention("a b c", max_tokens=bad)


# ----------------------------------------------------------------------------- compare
def test_compare_with_no_model_that_applies_exits_2(capsys, tmp_path):
    out_dir = tmp_path / "cmp"
    code, out, err = _run(capsys, "compare", "--task", "lee", "--models", "knn", "--out",
                          out_dir, "--no-progress")
    assert code == 2 and out == ""
    assert "no model of ['knn'] applies to the task(s) ['lee']" in err
    assert "lee: bow, tfidf" in err          # says what would apply
    assert not out_dir.exists()              # no header-only table
    code, _, err = _run(capsys, "compare", "--task", "sine", "--models", "torch-mha",
                        "--out", out_dir)
    assert code == 2 and "torch-mha needs --with-torch" in err


# ----------------------------------------------------------------------------- --pattern
def test_a_folder_without_txt_files_suggests_pattern_which_reads_one_document_per_file(
        capsys, tmp_path):
    folder = tmp_path / "notes"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.md").write_text("first line of a\nsecond line of a\n", encoding="utf-8")
    (folder / "sub" / "b.md").write_text("only line of b\n", encoding="utf-8")
    (folder / "skip.log").write_text("not read\n", encoding="utf-8")
    code, _, err = _run(capsys, "features", folder, "-o", tmp_path / "x.npz")
    assert code == 2
    assert "holds no file matching --pattern '*.txt'" in err and "--pattern '*'" in err
    assert "pattern=" not in err             # the Python spelling is not a CLI option
    code, _, _ = _run(capsys, "features", folder, "--pattern", "*.md", "--kind", "bow",
                      "-o", tmp_path / "x.npz")
    assert code == 0
    data = np.load(tmp_path / "x.npz")
    assert list(data["doc_ids"]) == ["a.md", os.path.join("sub", "b.md")]   # one per file
    X = sparse.load_npz(tmp_path / "x.npz")
    names = list(data["feature_names"])
    assert X.shape[0] == 2 and X[0, names.index("second")] == 1
    code, out, _ = _run(capsys, "collocations", folder, "--pattern", "*", "--min-count", 1)
    assert code == 0 and "rank" in out


# ----------------------------------------------------------------------------- -o
def test_an_unwritable_output_folder_is_named_as_given(capsys, corpus):
    # /proc refuses new files even to root, unlike a folder without write permission.
    if not os.path.isdir("/proc/self"):
        pytest.skip("needs /proc")
    code, out, err = _run(capsys, "features", corpus, "-o", "/proc/x.npz")
    assert code == 2 and out == ""
    assert "-o /proc/x.npz: cannot write in the folder /proc" in err
    assert ".nlpfeat-" not in err            # not the hidden temporary file's name


@pytest.mark.parametrize("kind", ["tfidf", "pmi"])
def test_a_named_pipe_is_written_as_given(capsys, tmp_path, corpus, kind):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(open(fifo, "rb").read()))
    reader.start()
    code, out, err = _run(capsys, "features", corpus, "--kind", kind, "-o", fifo)
    reader.join(timeout=60)
    assert code == 0
    assert sorted(os.listdir(tmp_path)) == ["c.txt", "pipe"]     # no pipe.npz beside it
    archive = np.load(io.BytesIO(received[0]))
    assert sparse.load_npz(io.BytesIO(received[0])).shape[0] == (2 if kind == "tfidf" else
                                                                  len(archive["row_names"]))
    assert out == "" and f"to {fifo}" in err   # the report leaves the data stream alone


def test_a_full_device_is_a_clear_error(capsys, corpus):
    if not os.path.exists("/dev/full"):
        pytest.skip("needs /dev/full")
    code, out, err = _run(capsys, "features", corpus, "-o", "/dev/full")
    assert code == 2 and "cannot write /dev/full: No space left on device" in err
    assert not os.path.exists("/dev/full.npz")


def test_a_required_option_shows_no_default():
    parser = build_parser("features")
    text = parser._subparsers._group_actions[0].choices["features"].format_help()
    block = text[text.index("-o OUTPUT, --output OUTPUT"):text.index("--stream")]
    assert "(default:" not in block
    assert "(default:" in text[text.index("--stream"):]    # the others keep theirs
