"""Progress bars of the command line: on a terminal by default, never into a pipe, none with
``--no-progress``; and the Dask path's local cluster shuts down without a word."""
import fcntl
import os
import pty
import struct
import subprocess
import termios

import pytest
from test_cli import ROOT, _command, run

#: What a bar of the corpus commands writes (tqdm's rate in bytes per second).
BAR = "reading corpus"


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("progress") / "docs.txt"
    path.write_text("the cat sat on the mat\nthe dog ran\n" * 50, encoding="utf-8")
    return path


def _run_on_a_terminal(*args):
    """Exit status, stdout and what the command wrote to stderr, a pseudo-terminal."""
    leader, follower = pty.openpty()
    # a terminal of 100 x 24 characters (a new pseudo-terminal has none: tqdm would fit
    # its bar into 0 columns)
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONWARNINGS="ignore",
               PYTHONPATH=os.pathsep.join([ROOT] + [p for p in [os.environ.get("PYTHONPATH")]
                                                    if p]))
    proc = subprocess.Popen(_command() + [str(a) for a in args], env=env,
                            stdout=subprocess.PIPE, stderr=follower, stdin=subprocess.DEVNULL)
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 1 << 16)
        except OSError:              # EIO: the process closed its end
            break
        if not data:
            break
        chunks.append(data)
    out = proc.stdout.read().decode("utf-8")
    proc.wait(timeout=600)
    os.close(leader)
    return proc.returncode, out, b"".join(chunks).decode("utf-8", "replace")


def test_a_terminal_shows_the_bars_of_both_passes(small_corpus, tmp_path):
    code, out, err = _run_on_a_terminal("features", small_corpus, "--kind", "bow",
                                        "-o", tmp_path / "X.npz")
    assert code == 0, err
    assert err.count(BAR) >= 2 and "B/s" in err          # fit, then transform
    assert "100%" in err
    assert BAR not in out


@pytest.mark.slow
def test_no_progress_shows_none_on_a_terminal(small_corpus, tmp_path):
    code, out, err = _run_on_a_terminal("features", small_corpus, "--no-progress",
                                        "-o", tmp_path / "X.npz")
    assert code == 0, err
    assert BAR not in err and "%|" not in err


def test_a_pipe_gets_no_bar(small_corpus, tmp_path):
    _, out, err = run("features", small_corpus, "-o", tmp_path / "X.npz")
    assert err == ""
    assert "wrote a 100 x" in out


@pytest.mark.parametrize("command", ["compare", "features", "collocations", "topics",
                                     "neighbors", "attention"])
def test_every_subcommand_takes_no_progress(command):
    from nlpfeat.cli import build_parser

    parser = build_parser(command)
    first = {"compare": [], "attention": ["a sentence"], "neighbors": ["f", "word"]}
    args = parser.parse_args([command, *first.get(command, ["f"]), "--no-progress",
                              *(["-o", "x"] if command == "features" else [])])
    assert args.no_progress
