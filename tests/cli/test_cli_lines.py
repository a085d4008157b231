"""Every path of the corpus commands reads the same lines: Corpus' rule (``"\\n"`` only, a
``"\\r"`` before it dropped, compression told by the magic bytes), on the local path, on
Dask (files split in blocks of a few bytes) and from stdin, row by row, doc ids included."""
import bz2
import gzip
import lzma

import numpy as np
import pytest
from scipy import sparse
from test_cli import run

from nlpfeat.datasets import Corpus

#: name -> bytes of a file, each a way lines can end or look.
FILES = {
    "a_lone_cr.txt": b"one two\rthree\nfour five\n",
    "b_crlf.txt": b"alpha beta\r\ngamma\r\n\r\ndelta\r\n",
    "c_no_final_newline.txt": b"first line\nlast line without newline",
    "d_empty_lines.txt": b"\n\nword\n\n\nother word\n\n",
    "e_bom.txt": "\ufeffstarts with a mark\nsecond\n".encode("utf-8"),
    "f_separators.txt": "form\ffeed\nnext\u0085line\nsep\u2028arator\n".encode("utf-8"),
    "g_cr_at_end.txt": b"ends with cr\r",
    "h_multibyte.txt": "caf\u00e9 na\u00efve \u6211\u7231 NLP\n\u00e9\u00e9\u00e9 \u6211\u7231\n".encode(),
}
COMPRESSED = {
    "i_gzip.txt.gz": gzip.compress(b"zipped\rline\r\nzipped two\n\nlast"),
    "j_bzip2.txt.bz2": bz2.compress(b"bz one\rstill one\nbz two\n"),
    "k_xz.txt.xz": lzma.compress(b"xz one\r\nxz\ftwo\n"),
    "l_gzip_without_suffix.txt": gzip.compress(b"magic bytes\rtell\nnot the name\n"),
    "m_plain_named_gz.txt.gz": b"plain text\rnamed gz\nsecond\n",
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lines")
    for name, data in {**FILES, **COMPRESSED}.items():
        (folder / name).write_bytes(data)
    return folder


def _load(path):
    data = np.load(path)
    return sparse.load_npz(path), list(data["feature_names"]), list(data["doc_ids"])


def _assert_same_output(a, b):
    (X, names, ids), (Y, other_names, other_ids) = a, b
    assert ids == other_ids
    assert names == other_names
    assert X.shape == Y.shape
    np.testing.assert_allclose(X.toarray(), Y.toarray(), rtol=1e-12, atol=1e-15)


def test_a_lone_carriage_return_does_not_split_a_line(folder):
    assert list(Corpus(folder / "a_lone_cr.txt")) == ["one two\rthree", "four five"]
    assert list(Corpus(folder / "g_cr_at_end.txt")) == ["ends with cr"]
    assert next(iter(Corpus(folder / "m_plain_named_gz.txt.gz"))) == "plain text\rnamed gz"


def test_local_dask_and_corpus_read_the_same_rows(tmp_path, folder, dask_client):
    pattern = str(folder / "*")
    corpus = Corpus(pattern)
    expected_ids = [f"{path}:{line}" for (path, line), _ in corpus.iter_with_ids()]
    run("features", pattern, "--kind", "bow", "-o", tmp_path / "local.npz")
    local = _load(tmp_path / "local.npz")
    assert local[2] == expected_ids
    assert local[0].shape[0] == len(list(corpus))
    # blocks of 21 bytes: most lines of the uncompressed files start in another block
    run("features", pattern, "--kind", "bow", "--blocksize", 0.00002, "--scheduler",
        dask_client.scheduler.address, "-o", tmp_path / "dask.npz")
    _assert_same_output(_load(tmp_path / "dask.npz"), local)


@pytest.mark.slow
def test_a_single_file_on_a_local_cluster_keeps_its_rows(tmp_path, folder):
    """The issue's case: ``--dask-workers 1`` wrote 3 rows for a file of 2 lines."""
    path = folder / "a_lone_cr.txt"
    run("features", path, "-o", tmp_path / "local.npz")
    _, _, err = run("features", path, "--dask-workers", 1, "-o", tmp_path / "dask.npz")
    local, on_dask = _load(tmp_path / "local.npz"), _load(tmp_path / "dask.npz")
    assert local[2] == ["1", "2"]
    _assert_same_output(on_dask, local)
    # the workers are given time to exit: none is killed with "Worker process still
    # alive after 4.0 seconds, killing", and nothing else is said on stderr
    assert "still alive" not in err and "killing" not in err
    assert err == ""


@pytest.mark.parametrize("compress", [False, True])
def test_stdin_reads_the_same_rows_locally_and_on_dask(tmp_path, dask_client, compress):
    data = b"".join(FILES.values())
    data = gzip.compress(data) if compress else data
    outputs = []
    for extra in ([], ["--blocksize", 0.00002, "--scheduler", dask_client.scheduler.address]):
        out = tmp_path / f"stdin{len(outputs)}.npz"
        run("features", "-", "--kind", "tfidf", *extra, "-o", out, stdin=data)
        outputs.append(_load(out))
    _assert_same_output(outputs[1], outputs[0])
    (tmp_path / "copy.txt").write_bytes(data)
    assert len(outputs[0][2]) == len(list(Corpus(tmp_path / "copy.txt")))


@pytest.mark.parametrize("dask", [False, True])
def test_a_truncated_compressed_file_names_the_file_and_line(tmp_path, dask_client, dask):
    full = gzip.compress("\n".join(f"line {i}" for i in range(20000)).encode())
    path = tmp_path / "cut.txt.gz"
    path.write_bytes(full[: len(full) // 2])
    extra = ["--scheduler", dask_client.scheduler.address] if dask else []
    code, _, err = run("features", path, *extra, "-o", tmp_path / "X.npz", check=False)
    assert code == 2 and "Traceback" not in err, err
    assert f"{path}, after line " in err and "truncated" in err


@pytest.mark.parametrize("dask", [False, True])
def test_bad_bytes_in_a_later_block_name_their_line(tmp_path, dask_client, dask):
    """The line number counts the lines of the blocks before the failing one."""
    lines = [f"line number {i}" for i in range(1, 1000)]      # line 901 at byte 13,000
    path = tmp_path / "late.txt"
    path.write_bytes(("\n".join(lines[:900]) + "\nco").encode() + b"\xfb" + b"t\n"
                     + "\n".join(lines[900:]).encode())
    extra = (["--blocksize", 0.001, "--scheduler", dask_client.scheduler.address] if dask
             else [])
    code, _, err = run("features", path, *extra, "-o", tmp_path / "X.npz", check=False)
    assert code == 2 and "Traceback" not in err, err
    assert f"{path}, line 901: bytes that are not valid utf-8" in err
    path.write_bytes(("\n".join(lines[:900]) + "\n").encode() + b"bin\x00ary\n")
    code, _, err = run("features", path, *extra, "-o", tmp_path / "X.npz", check=False)
    assert code == 2 and "Traceback" not in err, err
    assert f"{path}, line 901: a NUL byte" in err
