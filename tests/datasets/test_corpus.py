"""nlpfeat.datasets.Corpus: a corpus on disk, lazily read and re-iterable."""
import bz2
import gzip
import lzma

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nlpfeat.datasets import Corpus
from nlpfeat.datasets._corpus import read_blocks, split_blocks, split_lines
from nlpfeat.text import BagOfWords

LINES = ["the cat sat on the mat", "", "a dog\fran home\x85 fast", "last line"]


@pytest.fixture
def text_file(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_bytes(("\ufeff" + "\r\n".join(LINES) + "\n").encode("utf-8"))
    return path


def test_one_document_per_line_newlines_only_bom_dropped(text_file):
    corpus = Corpus(text_file)
    assert list(corpus) == LINES
    assert list(corpus) == LINES            # re-iterable: a second pass reads it again
    ids = [i for i, _ in corpus.iter_with_ids()]
    assert ids == [(str(text_file), n) for n in (1, 2, 3, 4)]
    kept = Corpus(text_file, skip_blank=True)
    assert [i[1] for i, _ in kept.iter_with_ids()] == [1, 3, 4]


@pytest.mark.parametrize("suffix, opener", [(".gz", gzip.open), (".bz2", bz2.open),
                                            (".xz", lzma.open)])
def test_compressed_files_are_read_transparently(tmp_path, suffix, opener):
    path = tmp_path / f"corpus.txt{suffix}"
    with opener(path, "wb") as fh:
        fh.write("\n".join(LINES).encode("utf-8"))
    assert list(Corpus(path)) == LINES


def test_folder_glob_and_list(tmp_path):
    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    (folder / "b.txt").write_text("second\nfile", encoding="utf-8")
    (folder / "a.txt").write_text("first file", encoding="utf-8")
    (folder / "sub" / "c.txt").write_text("third", encoding="utf-8")
    (folder / "notes.md").write_text("not read", encoding="utf-8")
    corpus = Corpus(folder)
    assert corpus.unit == "file"
    assert list(corpus) == ["first file", "second file", "third"]
    assert [i for i, _ in corpus.iter_with_ids()][0].endswith("a.txt")
    lines = Corpus(str(folder / "*.txt"))
    assert list(lines) == ["first file", "second", "file"]
    assert list(Corpus([folder / "b.txt", folder / "a.txt"])) == ["second", "file", "first file"]


def test_long_lines_across_read_blocks(tmp_path, monkeypatch):
    import nlpfeat.datasets._corpus as module

    monkeypatch.setattr(module, "_READ_BYTES", 7)
    path = tmp_path / "long.txt"
    lines = ["x" * 50, "é" * 13, "", "end"]
    path.write_text("\n".join(lines), encoding="utf-8")
    assert list(Corpus(path)) == lines


def test_estimators_read_a_corpus_like_a_list(text_file):
    corpus = Corpus(text_file)
    X = BagOfWords().fit_transform(corpus)
    Y = BagOfWords().fit_transform(LINES)
    assert X.shape[0] == len(LINES)
    np.testing.assert_array_equal(X.toarray(), Y.toarray())


def test_progress_bar(text_file, capsys):
    assert list(Corpus(text_file, progress=True)) == LINES
    assert "reading corpus" in capsys.readouterr().err


@pytest.mark.parametrize("make, error, message", [
    (lambda p: p / "missing.txt", FileNotFoundError, "no such file"),
    (lambda p: p / "empty_dir", ValueError, "holds no file"),
    (lambda p: str(p / "nothing-*.txt"), ValueError, "matches no file"),
])
def test_missing_inputs_are_named(tmp_path, make, error, message):
    (tmp_path / "empty_dir").mkdir()
    with pytest.raises(error, match=message):
        Corpus(make(tmp_path))


def test_truncated_binary_and_undecodable_files_raise_with_the_position(tmp_path):
    full = gzip.compress(("\n".join(["line"] * 2000)).encode())
    (tmp_path / "cut.txt.gz").write_bytes(full[: len(full) // 2])
    with pytest.raises(ValueError, match=r"cut\.txt\.gz, after line \d+: .*truncated"):
        list(Corpus(tmp_path / "cut.txt.gz"))
    (tmp_path / "binary.txt").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(ValueError, match="binary.txt: this looks like a binary file"):
        list(Corpus(tmp_path / "binary.txt"))
    (tmp_path / "latin1.txt").write_bytes("ok\nstill ok\nco\u00fbt\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"latin1\.txt, line 3: .*not valid utf-8"):
        list(Corpus(tmp_path / "latin1.txt"))
    assert list(Corpus(tmp_path / "latin1.txt", encoding="latin-1"))[2] == "co\u00fbt"
    assert list(Corpus(tmp_path / "latin1.txt", errors="replace"))[2] == "co\ufffdt"


@pytest.mark.parametrize("kwargs, message", [
    ({"encoding": "no-such-codec"}, "unknown encoding"),
    ({"errors": "nonsense"}, "unknown errors policy"),
    ({"unit": "paragraph"}, "unit must be"),
])
def test_bad_options(text_file, kwargs, message):
    with pytest.raises(ValueError, match=message):
        Corpus(text_file, **kwargs)


# ------------------------------------------------------- blocks of files read in parallel

#: Characters that end, nearly end or look like line ends, and multi-byte ones.
_PIECES = st.lists(st.sampled_from(["a", "b c", " ", "\n", "\r", "\r\n", "\f", "\x85",
                                    "\u2028", "\u00e9", "\u6211", "\ufeff"]), max_size=40)


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pieces=_PIECES, bom=st.booleans(), blocksize=st.integers(1, 40))
def test_blocks_read_one_after_another_give_the_corpus_lines(tmp_path, pieces, bom,
                                                             blocksize):
    """Whatever the block size (cutting lines, CRLF pairs and characters), every line is
    read once, as Corpus and split_lines read it."""
    text = ("\ufeff" if bom else "") + "".join(pieces)
    path = tmp_path / "blocks.txt"
    path.write_bytes(text.encode("utf-8"))
    expected = list(Corpus(path))
    assert expected == split_lines(text.lstrip("\ufeff"))     # marks at the start dropped
    blocks = split_blocks([str(path)], blocksize)
    assert [line for block in blocks for line in read_blocks([block])] == expected
    assert read_blocks(blocks) == expected


def test_compressed_files_and_wide_encodings_are_one_block(tmp_path):
    plain, packed, wide = tmp_path / "plain.txt", tmp_path / "packed.txt", tmp_path / "w.txt"
    plain.write_bytes(b"one\ntwo\n" * 20)
    packed.write_bytes(gzip.compress(b"one\ntwo\n" * 20))      # no suffix: magic bytes
    wide.write_bytes("one\ntwo\n".encode("utf-16"))
    assert len(split_blocks([str(plain)], 16)) == 10
    assert split_blocks([str(packed)], 16) == [(str(packed), 0, None)]
    assert len(split_blocks([str(wide)], 4, encoding="utf-16")) == 1
    assert read_blocks(split_blocks([str(wide)], 4, "utf-16"), encoding="utf-16") == [
        "one", "two"]
    assert read_blocks(split_blocks([str(plain)], None), unit="file") == [
        " ".join(["one", "two"] * 20)]


def test_an_error_in_a_later_block_names_the_line_of_the_file(tmp_path):
    path = tmp_path / "late.txt"
    path.write_bytes(b"".join(b"line %d\n" % i for i in range(1, 2000)) + b"co\xfbt\n")
    blocks = split_blocks([str(path)], 100)
    with pytest.raises(ValueError, match=r"late\.txt, line 2000: bytes that are not valid"):
        list(Corpus(path))
    with pytest.raises(ValueError, match=r"late\.txt, line 2000: bytes that are not valid"):
        read_blocks(blocks[-2:])
    full = gzip.compress(b"".join(b"line %d\n" % i for i in range(20000)))
    (tmp_path / "cut.gz").write_bytes(full[: len(full) // 2])
    with pytest.raises(ValueError, match=r"cut\.gz, after line \d+: .*truncated"):
        read_blocks(split_blocks([str(tmp_path / "cut.gz")], 100))


def test_byte_order_marks_at_the_start_are_dropped_however_the_file_is_read(tmp_path):
    path = tmp_path / "marks.txt"
    path.write_bytes("\ufeff\ufeffone\n\ufefftwo\n".encode("utf-8"))
    assert list(Corpus(path)) == ["one", "\ufefftwo"]
    for blocksize in (1, 2, 3, 4, 7):
        assert read_blocks(split_blocks([str(path)], blocksize)) == ["one", "\ufefftwo"]


def test_a_bag_of_a_corpus_holds_the_documents_of_iterating_it(tmp_path):
    dask = pytest.importorskip("dask")
    pytest.importorskip("dask.bag")
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_bytes(b"one\rtwo\r\n\r\n  \nthree\nfour")
    (folder / "b.txt").write_bytes("\ufeffcaf\u00e9\n\u6211\u7231\fNLP\n".encode())
    (folder / "c.txt").write_bytes(gzip.compress(b"zipped\rline\nlast\n"))   # by magic
    (folder / "d.txt").write_bytes(b"")
    for corpus in (Corpus(folder / "*.txt"), Corpus(folder / "*.txt", skip_blank=True),
                   Corpus(folder), Corpus(folder, skip_blank=True)):
        for blocksize in (3, 10, 1 << 25):
            bag = corpus.to_bag(blocksize)
            assert dask.compute(bag, scheduler="sync")[0] == list(corpus), (corpus, blocksize)
    assert Corpus(folder / "*.txt").to_bag(10).npartitions == 3 + 2 + 1 + 1   # c.txt whole
    full = gzip.compress(b"".join(b"line %d\n" % i for i in range(20000)))
    (tmp_path / "cut.txt.gz").write_bytes(full[: len(full) // 2])
    with pytest.raises(ValueError, match=r"cut\.txt\.gz, after line \d+: .*truncated"):
        dask.compute(Corpus(tmp_path / "cut.txt.gz").to_bag(), scheduler="sync")
