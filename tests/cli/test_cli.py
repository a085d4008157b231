"""The command line: ``main`` in this process for what it prints and writes, and its real
entry point in a subprocess (``run_process``) where the process itself is the subject: the
installed script, exit on Ctrl-C, warnings on stderr, what ``--help`` imports."""
import contextlib
import csv
import io
import math
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import sparse

import nlpfeat
from nlpfeat.datasets import load_toy_corpus


def _command():
    script = Path(sys.executable).with_name("nlpfeat")
    return [str(script)] if script.exists() else [sys.executable, "-m", "nlpfeat"]


#: The checkout whose nlpfeat the tests import: the subprocess runs the same code.
ROOT = str(Path(nlpfeat.__file__).resolve().parents[1])


def run(*args, stdin=None, check=True, warn=False):
    """``(exit status, stdout, stderr)`` of ``nlpfeat ARGS`` run by ``main`` in this process,
    with ``stdin`` (bytes) as standard input and warnings silenced, as ``run_process`` runs
    it (a fresh interpreter costs seconds of imports a call: 38 calls here); with ``warn``
    the warnings are raised to the caller (``pytest.warns``)."""
    from nlpfeat.cli import main

    streams = [io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
               for _ in range(2)]
    stdin = io.TextIOWrapper(io.BytesIO(stdin or b""), encoding="utf-8")
    old_stdin = sys.stdin
    sys.stdin = stdin
    try:
        with contextlib.redirect_stdout(streams[0]), contextlib.redirect_stderr(streams[1]), \
                warnings.catch_warnings():
            if not warn:
                warnings.simplefilter("ignore")
            try:
                code = main([str(a) for a in args])
            except SystemExit as exc:       # argparse's error: usage, one line, exit 2
                code = exc.code
    finally:
        sys.stdin = old_stdin
    out, err = (s.buffer.getvalue().decode("utf-8") for s in streams)
    if check and code != 0:
        raise AssertionError(f"exit {code}\nstdout:\n{out}\nstderr:\n{err}")
    return code, out, err


def run_process(*args, stdin=None, check=True):
    """``(exit status, stdout, stderr)`` of the installed ``nlpfeat ARGS`` in a subprocess."""
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONWARNINGS="ignore",
               PYTHONPATH=os.pathsep.join([ROOT] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    proc = subprocess.run(_command() + [str(a) for a in args], input=stdin, env=env,
                          capture_output=True, timeout=600)
    out, err = proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")
    if check and proc.returncode != 0:
        raise AssertionError(f"exit {proc.returncode}\nstdout:\n{out}\nstderr:\n{err}")
    return proc.returncode, out, err


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("corpus") / "toy_en.txt"
    path.write_text("\n".join(load_toy_corpus("en").data) + "\n", encoding="utf-8")
    return path


def test_version_and_help():
    _, out, _ = run_process("--version")
    assert out.startswith("nlpfeat ")
    _, out, _ = run_process("--help")
    for command in ("compare", "features", "collocations", "topics", "neighbors", "attention"):
        assert command in out


@pytest.mark.parametrize("command", ["compare", "features", "collocations", "topics",
                                     "neighbors", "attention"])
def test_every_subcommand_help_has_an_example(command):
    _, out, _ = run(command, "--help")
    assert "example: nlpfeat " + command in out


@pytest.mark.parametrize("kind", ["bow", "pbow", "tfidf", "pmi"])
def test_features_writes_a_loadable_matrix(corpus, tmp_path, kind):
    target = tmp_path / f"{kind}.npz"
    run("features", corpus, "--kind", kind, "--ngram", 1, 2, "-o", target)
    X = sparse.load_npz(target)
    names = np.load(target)["feature_names"]
    assert X.shape[1] == len(names) > 0
    if kind != "pmi":
        assert X.shape[0] == len(load_toy_corpus("en").data)
    assert np.isfinite(X.data).all()


def test_features_reads_stdin_and_directories(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("the fat cat sat on the mat", encoding="utf-8")
    (folder / "b.txt").write_text("the dog sat on the log", encoding="utf-8")
    run("features", folder, "--kind", "bow", "-o", tmp_path / "dir.npz")
    assert sparse.load_npz(tmp_path / "dir.npz").shape[0] == 2
    run("features", "-", "--kind", "bow", "-o", tmp_path / "stdin.npz",
        stdin="one line here\nanother line there\n".encode("utf-8"))
    assert sparse.load_npz(tmp_path / "stdin.npz").shape[0] == 2


def test_features_chinese_with_char_tokens(tmp_path):
    path = tmp_path / "zh.txt"
    path.write_text("\n".join(load_toy_corpus("zh").data[:50]), encoding="utf-8")
    run("features", path, "--kind", "bow", "--tokenizer", "char", "-o", tmp_path / "zh.npz")
    names = np.load(tmp_path / "zh.npz")["feature_names"]
    assert "好" in set(names)


def test_collocations_table(corpus):
    _, out, _ = run("collocations", corpus, "--measure", "llr", "--topn", 5, "--min-count", 3)
    lines = [line for line in out.splitlines() if line.strip() and line.strip()[0].isdigit()]
    assert len(lines) == 5


def test_topics_prints_coherence(corpus):
    _, out, _ = run("topics", corpus, "-k", 3, "--method", "nmf", "--backend", "sklearn",
                    "--stop-words", "english")
    assert out.count("topic ") == 3
    assert "mean coherence" in out



def test_topics_topn_and_its_deprecated_spelling(corpus):
    """``--topn`` sets the words per topic; ``--n-words`` (its old spelling) still works, with
    a FutureWarning on stderr, and prints the same topics."""
    args = ["topics", corpus, "-k", 2, "--method", "nmf", "--backend", "sklearn"]
    _, out, _ = run(*args, "--topn", 3)
    topics = [line for line in out.splitlines() if line.startswith("topic")]
    assert [len(line.split()) for line in topics] == [6, 6]    # "topic", k, coherence, 3 words
    with pytest.warns(FutureWarning, match="--n-words was renamed --topn"):
        _, old_out, _ = run(*args, "--n-words", 3, warn=True)
    assert old_out == out


def test_collocations_top_is_the_deprecated_spelling_of_topn(corpus):
    args = ["collocations", corpus, "--measure", "llr", "--min-count", 3]
    _, out, _ = run(*args, "--topn", 4)
    with pytest.warns(FutureWarning, match="--top was renamed --topn"):
        _, old_out, _ = run(*args, "--top", 4, warn=True)
    assert old_out == out

def test_neighbors(corpus):
    _, out, _ = run("neighbors", corpus, "good", "nosuchwordxyz", "--topn", 3, "--dim", 10)
    assert out.startswith("good: ")
    assert "nosuchwordxyz: not in the vocabulary" in out


def test_attention_table_and_figure(tmp_path):
    figure = tmp_path / "fat_cat.png"
    _, out, _ = run("attention", "the fat cat sat on the mat", "--heads", 2, "-o", figure)
    assert "head 1" in out and "mat" in out
    assert figure.stat().st_size > 1000


@pytest.mark.parametrize("args, message", [
    (["features", "no/such/file.txt", "-o", "x.npz"], "no such file"),
    (["features", "EMPTY", "-o", "x.npz"], "no documents"),
    (["features", "LATIN1", "-o", "x.npz"], "line 2: bytes that are not valid utf-8"),
    (["features", "EMPTY", "--kind", "nosuchkind", "-o", "x.npz"], "invalid choice"),
    (["topics", "EMPTY", "-k", "0"], "expected a positive integer"),
    (["compare", "--task", "nosuchtask"], "invalid choice"),
])
def test_errors_are_one_line_not_a_traceback(tmp_path, args, message):
    (tmp_path / "empty.txt").write_bytes(b"\n\n")
    (tmp_path / "latin1.txt").write_bytes("first line\nco\u00fbt \u00a33\n".encode("latin-1"))
    args = [str(tmp_path / "empty.txt") if a == "EMPTY" else
            str(tmp_path / "latin1.txt") if a == "LATIN1" else a for a in args]
    code, out, err = run(*args, check=False)
    assert code == 2
    assert message in err
    assert "Traceback" not in err
    if "LATIN1" in args or any(a.endswith("latin1.txt") for a in args):
        assert "latin1.txt" in err


@pytest.mark.slow   # about 40 CPU-s into an empty numba cache; tests/compare covers the harness
def test_compare_quick_writes_every_task_and_model(tmp_path):
    from nlpfeat.compare import TASK_MODELS

    out_dir = tmp_path / "cmp"
    _, out, _ = run("compare", "--quick", "--no-progress", "--seed", 1, "--out", out_dir)
    with open(out_dir / "results.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    seen = {(r["task"], r["model"]) for r in rows}
    expected = {(t, m) for t, models in TASK_MODELS.items() for m in models if m != "torch-mha"}
    assert seen == expected
    assert all(math.isfinite(float(r["mean"])) for r in rows)
    attention_rows = [r for r in rows if r["model"].startswith("attn-")]
    assert attention_rows and all(math.isfinite(float(r["weight_kl"])) for r in attention_rows)
    for figure in ("sine_fits.png", "attention_heatmaps.png", "bandwidth_curve.png"):
        assert (out_dir / figure).stat().st_size > 1000
    for task in ("sine", "diabetes", "polarity", "lee"):
        assert f"== {task}" in out


# ----------------------------------------------------------------------------- first hour
def test_features_row_i_is_line_i(tmp_path):
    # Blank lines stay (as empty rows), a form feed or U+0085 does not split a line, and a
    # byte-order mark does not stick to the first token.
    path = tmp_path / "lines.txt"
    path.write_bytes("\ufeffhello world\n\nform\x0cfeed and\x85next\r\nlast line\n".encode())
    code, out, _ = run("features", path, "--kind", "bow", "--tokenizer", "whitespace",
                       "-o", tmp_path / "X")
    data = np.load(tmp_path / "X.npz")
    X = sparse.load_npz(tmp_path / "X.npz")
    assert X.shape[0] == 4
    assert list(data["doc_ids"]) == ["1", "2", "3", "4"]
    assert X[1].nnz == 0
    assert "hello" in set(data["feature_names"])
    assert str(tmp_path / "X.npz") in out   # the name printed is the file written
    _, _, err = run("features", path, "--kind", "bow", "--skip-blank", "-o", tmp_path / "Y.npz")
    assert "skipped 1 blank" in err
    assert list(np.load(tmp_path / "Y.npz")["doc_ids"]) == ["1", "3", "4"]


def test_features_folder_ids_are_file_names(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "b.txt").write_text("second file", encoding="utf-8")
    (folder / "a.txt").write_text("", encoding="utf-8")
    (folder / "c.txt").write_text("third file here", encoding="utf-8")
    run("features", folder, "--kind", "bow", "-o", tmp_path / "d.npz")
    assert list(np.load(tmp_path / "d.npz")["doc_ids"]) == ["a.txt", "b.txt", "c.txt"]
    assert sparse.load_npz(tmp_path / "d.npz").shape[0] == 3


@pytest.mark.parametrize("args, message", [
    (["features", "CORPUS", "-o", "MISSING/x.npz"], "does not exist"),
    (["compare", "--quick", "--out", "AFILE"], "is an existing file"),
    (["compare", "--quick", "--out", "MISSING/out"], "does not exist"),
    (["attention", "a b c", "-o", "MISSING/fig.png"], "does not exist"),
])
def test_outputs_are_checked_before_any_work(tmp_path, corpus, args, message):
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    subs = {"CORPUS": str(corpus), "AFILE": str(tmp_path / "afile")}
    args = [subs.get(a, a.replace("MISSING", str(tmp_path / "missing"))) for a in args]
    code, out, err = run(*args, check=False)
    assert code == 2 and message in err and "Traceback" not in err
    assert out == ""   # nothing ran


def test_no_subcommand_exits_2_after_help():
    code, _, err = run(check=False)
    assert code == 2 and "COMMAND" in err


@pytest.mark.parametrize("command", ["compare", "features", "collocations", "topics",
                                     "neighbors", "attention"])
def test_help_describes_every_argument_with_its_default(command):
    from nlpfeat.cli import build_parser

    parser = build_parser()
    sub = parser._subparsers._group_actions[0].choices[command]
    for action in sub._actions:
        assert action.help, f"{command} {action.dest} has no help"
    _, out, _ = run(command, "--help")
    if command != "attention":
        assert "(default:" in out


def test_errors_name_the_flags_not_the_parameters(corpus):
    code, _, err = run("neighbors", corpus, "good", "--dim", 100000, check=False)
    assert code == 2 and "--dim" in err and "n_components" not in err


def test_empty_results_say_so(corpus):
    _, out, _ = run("collocations", corpus, "--min-count", 100000)
    assert "no phrase occurs 100000 times" in out
    code, out, err = run("neighbors", corpus, "nosuchwordxyz", "--dim", 5, check=False)
    assert code == 2 and "none of the query words" in err


def test_attention_reads_stdin_and_keeps_long_headers():
    _, out, _ = run("attention", "-", stdin="the extraordinary cat\n".encode())
    assert "extraordinary" in out.splitlines()[2]


def test_topics_remove_stop_words_by_default(corpus):
    _, out, _ = run("topics", corpus, "-k", 2, "--method", "nmf", "--backend", "sklearn")
    words = {w for line in out.splitlines() if line.startswith("topic") for w in line.split()[3:]}
    assert not words & {"the", "of", "and", "to", "a"}
    _, out, _ = run("topics", corpus, "-k", 2, "--method", "nmf", "--backend", "sklearn",
                    "--keep-stop-words", "--min-df", 1)
    assert "stop words were kept" in out


@pytest.mark.slow
def test_ctrl_c_exits_130_without_a_traceback(tmp_path):
    import signal
    import time

    env = dict(os.environ, MPLBACKEND="Agg", PYTHONWARNINGS="ignore")
    # The child gets Ctrl-C's default action even where this test runs with SIGINT
    # ignored (a background job of a shell), which a child would inherit.
    proc = subprocess.Popen(_command() + ["compare", "--no-progress", "--out",
                                          str(tmp_path / "cmp")],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    # Interrupt the work, not the imports: wait for the first task's header.
    assert proc.stdout.readline() is not None
    header = proc.stdout.readline().decode()
    assert header.startswith("== "), header
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    err = err.decode()
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err


@pytest.mark.parametrize("delay", [0.05, 0.5])
def test_ctrl_c_while_the_modules_load_prints_one_line_and_exits_130(tmp_path, delay):
    """Ctrl-C before the work starts (numpy, scikit-learn, numba still importing: seconds
    on a busy machine) once printed a 40-50 line traceback and exited by the signal.

    The signal is sent a moment after ``main`` is entered (the child says when), not after
    a fixed time from the start: on a loaded machine the interpreter's own start-up can
    outlast any fixed delay, and Ctrl-C there is Python's, before nlpfeat runs."""
    import signal
    import time

    env = dict(os.environ, MPLBACKEND="Agg", PYTHONWARNINGS="ignore",
               PYTHONPATH=os.pathsep.join([ROOT] + [p for p in [os.environ.get("PYTHONPATH")]
                                                    if p]))
    code = ("import sys\nfrom nlpfeat.cli import main\nprint('ready', file=sys.stderr, "
            "flush=True)\nsys.exit(main(sys.argv[1:]))")
    proc = subprocess.Popen([sys.executable, "-c", code, "compare", "--no-progress", "--out",
                             str(tmp_path / "cmp")],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert proc.stderr.readline() == b"ready\n"
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    err = err.decode()
    assert proc.returncode == 130, err
    # ours is the last line and there is no traceback; a module interrupted while it
    # loads may print its own note first (scipy 1.10's decorator prints the code it was
    # generating), which nlpfeat cannot silence without hiding real errors
    assert err.splitlines()[-1:] == ["nlpfeat: interrupted"] and "Traceback" not in err, err


def test_importing_the_cli_loads_no_library_module():
    """The command line imports the library inside main, where Ctrl-C is caught."""
    code = ("import sys, nlpfeat.cli; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('numpy', 'scipy', 'sklearn', 'numba') or m.startswith('nlpfeat.text')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT).stdout
    assert out.strip() == "[]", out


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["compare", "--help"]])
def test_help_and_version_import_no_library_module(args):
    """``nlpfeat --help`` once imported scikit-learn, pandas and scipy to list tokenizer
    names (3 s on a quiet machine); the subcommands' options are built only when named."""
    code = ("import sys\nfrom nlpfeat.cli import main\ntry:\n    main(sys.argv[1:])\n"
            "except SystemExit:\n    pass\nprint(sorted(m for m in sys.modules if "
            "m.split('.')[0] in ('scipy', 'sklearn', 'pandas', 'numba')), file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          cwd=ROOT)
    assert proc.stderr.strip().splitlines()[-1] == "[]", proc.stderr
    assert "nlpfeat" in proc.stdout


def test_chinese_neighbours_are_not_punctuation(tmp_path):
    pytest.importorskip("jieba")
    path = tmp_path / "zh.txt"
    path.write_text("\n".join(load_toy_corpus("zh").data), encoding="utf-8")
    _, out, _ = run("neighbors", path, "天气", "--tokenizer", "jieba", "--dim", 20, "--topn", 8)
    assert out.startswith("天气: ") and not {"，", "。", "、"} & set(
        w.split(" (")[0] for w in out.split(": ", 1)[1].split(", "))
    _, out, _ = run("features", path, "--kind", "bow", "--tokenizer", "char",
                    "--keep-punctuation", "-o", tmp_path / "p.npz")
    assert "，" in set(np.load(tmp_path / "p.npz")["feature_names"])


@pytest.mark.parametrize("error, debug, shown", [
    (ValueError("min_df=3 removed all terms"), False, "one line"),
    (ValueError("min_df=3 removed all terms"), True, "traceback"),
    (KeyError("internal"), False, "traceback"),            # a bug, not the user's error
])
def test_user_errors_are_one_line_and_the_rest_keep_their_traceback(
        monkeypatch, capsys, tmp_path, error, debug, shown):
    from nlpfeat import cli
    from nlpfeat.cli import _commands

    def failing(args):
        raise error

    monkeypatch.setattr(_commands, "open_documents", failing)
    argv = (["--debug"] if debug else []) + ["topics", str(tmp_path / "corpus.txt")]
    if shown == "one line":
        with pytest.raises(SystemExit) as exit_info:
            cli.main(argv)
        assert exit_info.value.code == 2 and "removed all terms" in capsys.readouterr().err
    else:
        with pytest.raises(type(error)):
            cli.main(argv)
