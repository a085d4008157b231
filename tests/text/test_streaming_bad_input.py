"""Bad corpus files through every counting estimator's chunk path: each error names the
file and the line, and no estimator returns a partial result."""
import bz2
import gzip
import lzma

import pytest

from nlpfeat.datasets import Corpus
from nlpfeat.text import (
    BagOfWords,
    Collocations,
    PMIEmbedding,
    PositionalBagOfWords,
    TfidfVectorizer,
    TopicModel,
    cooccurrence,
)

GOOD = [f"word{i % 50} other{i % 7} text{i % 11} line" for i in range(3000)]

FITS = {
    "BagOfWords": lambda c: BagOfWords(working_memory=0.01).fit(c),
    "TfidfVectorizer": lambda c: TfidfVectorizer(working_memory=0.01).fit(c),
    "PositionalBagOfWords": lambda c: PositionalBagOfWords(working_memory=0.01).fit(c),
    "cooccurrence": lambda c: cooccurrence(c, working_memory=0.01),
    "PMIEmbedding": lambda c: PMIEmbedding(2, min_count=1, working_memory=0.01).fit(c),
    "PMIEmbedding.partial_fit": lambda c: PMIEmbedding(2, min_count=1).partial_fit(c),
    "Collocations": lambda c: Collocations(input="content").fit(c),
    "TopicModel": lambda c: TopicModel(2, backend="sklearn").fit(c),
}


def _truncated(opener, suffix, lines=r"[1-9]\d*"):
    """Half of a compressed file: the lines decompressed before the cut are counted (bzip2
    decompresses whole 900 kB blocks: nothing of this small file's one block)."""
    def make(folder):
        path = folder / f"cut.txt{suffix}"
        full = opener("\n".join(GOOD).encode())
        path.write_bytes(full[: len(full) // 2])
        return path, rf"cut\.txt\S*, after line {lines}: .*truncated or corrupt"
    return make


def _binary_tail(folder):
    path = folder / "tail.txt"
    path.write_bytes(("\n".join(GOOD) + "\n").encode() + b"\x00\x01\x02" * 10)
    return path, rf"tail\.txt, line {len(GOOD) + 1}: a NUL byte; .*looks binary"


def _undecodable(folder):
    path = folder / "latin.txt"
    path.write_bytes(("\n".join(GOOD[:2500]) + "\ncaf\u00e9\n").encode("latin-1"))
    return path, r"latin\.txt, line 2501: bytes that are not valid utf-8"


BAD_FILES = {
    "truncated gzip": _truncated(gzip.compress, ".gz"),
    "truncated bzip2": _truncated(bz2.compress, ".bz2", lines="0"),
    "truncated xz": _truncated(lzma.compress, ".xz"),
    "binary tail": _binary_tail,
    "undecodable": _undecodable,
}


@pytest.mark.parametrize("estimator", list(FITS))
@pytest.mark.parametrize("kind", list(BAD_FILES))
def test_every_chunk_path_names_the_file_and_the_line(tmp_path, estimator, kind):
    path, message = BAD_FILES[kind](tmp_path)
    with pytest.raises(ValueError, match=message):
        FITS[estimator](Corpus(path))


def test_a_binary_file_is_named_at_once(tmp_path):
    path = tmp_path / "image.txt"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + b"\x00" * 100)
    for fit in FITS.values():
        with pytest.raises(ValueError, match=r"image\.txt: this looks like a binary file"):
            fit(Corpus(path))


@pytest.mark.parametrize("make, error, message", [
    (lambda p: p / "missing.txt", FileNotFoundError, r"no such file or folder: '.*missing\.txt'"),
    (lambda p: p / "missing-folder" / "", FileNotFoundError, "no such file or folder"),
    (lambda p: p / "empty", ValueError, r"the folder '.*empty' holds no file matching"),
    (lambda p: [p / "ok.txt", p / "gone.txt"], FileNotFoundError, r"no such file: '.*gone\.txt'"),
])
def test_missing_and_empty_inputs_are_named_before_any_reading(tmp_path, make, error, message):
    (tmp_path / "empty").mkdir()
    (tmp_path / "ok.txt").write_text("a b\n")
    with pytest.raises(error, match=message):
        Corpus(make(tmp_path))
