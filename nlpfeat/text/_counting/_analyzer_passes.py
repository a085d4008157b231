"""The compiled text pass for the other analyzers: character n-grams and positions.

:func:`~._text_pass.text_pass_chunks` runs a pass with the state its options name
(``options.state``): here, the character n-grams of ``analyzer="char"`` / ``"char_wb"``
(:class:`CharPass`: n-grams as spans of a chunk's UTF-8 buffer, :mod:`._char_ids`) and
the (position, n-gram) features of ``PositionalBagOfWords`` (:class:`PositionalPass`:
keys of word ids or code points, :mod:`._position_ids`). Both keep the pass's steps:
a chunk's features numbered in a table of its own (on a thread), then in chunk order in
the pass's table, a feature new to the corpus made ``str`` once and looked up in the
vocabulary, then the CSR rows; a chunk the compiled code refuses (a lone surrogate; for
the character n-grams also U+0000, the separator of the table's strings) is counted by
the Python analyzer, in its turn. So the output equals the Python path's.
"""
from typing import NamedTuple

import numpy as np

from nlpfeat._chunking import chunk_n_rows
from nlpfeat.text._counting._char_ids import char_ngram_spans, encoded_chars
from nlpfeat.text._counting._ngram_ids import first_positions, n_sizes, ngram_strings
from nlpfeat.text._counting._position_ids import key_strings, position_keys
from nlpfeat.text._counting._text_pass import _Ngrams, _Pass
from nlpfeat.text._counting._token_table import TokenTable
from nlpfeat.text._counting._vocabulary import grown

__all__ = ["CharPass", "PositionalPass"]

#: Bytes of temporary memory per character of a chunk: the str and its UTF-8 bytes
#: (twice), plus for each n-gram length counted at most one n-gram per character: its
#: span (two int64), its ids and its CSR entry, and with positions its key.
_BYTES_PER_CHAR, _BYTES_PER_NGRAM = 16, 36


def _chunk_chars(working_memory, ngram_range, key_bytes=0):
    per_char = _BYTES_PER_CHAR + (_BYTES_PER_NGRAM + key_bytes) * n_sizes(ngram_range)
    return chunk_n_rows(per_char, 1 << 62, working_memory)


def _normalised(options, docs):
    """The chunk's documents preprocessed and their white space normalised."""
    text, normalise = options.text, options.normalise
    return [normalise(text(doc)) for doc in docs]


class _DistinctFeatures(_Pass):
    """A pass whose features have distinct strings for distinct keys (n-gram bytes;
    positions and units), so that while every feature reached the vocabulary through
    the pass's table, a new key is a new term: added without the checks of a term that
    may already be there (most positional features are new: those checks were a third
    of the pass)."""

    def __init__(self, vocabulary, learn, options, analyze, start):
        super().__init__(vocabulary, learn, options, analyze, start)
        self.ngrams = None
        self.only_keys = learn and not len(vocabulary)

    def python_chunks(self, start, docs):
        self.only_keys = False          # the Python analyzer adds terms of its own
        return super().python_chunks(start, docs)

    def _terms(self, new, stop_words):
        if not self.only_keys:
            return super()._terms(new, stop_words)
        n = len(self.vocabulary)
        self.vocabulary.update(zip(new, range(n, n + len(new))))
        return np.arange(n, n + len(new))


class _CharState(_DistinctFeatures):
    """A pass counting character n-grams: its table numbers n-grams (UTF-8 bytes)."""

    def chunk_chars(self, working_memory):
        return _chunk_chars(working_memory, self.options.ngram_range)

    def local(self, docs):
        """The chunk's n-grams numbered in a table of its own (runs on a thread)."""
        found = encoded_chars(_normalised(self.options, docs))
        if found is None or not found[0].all():    # U+0000 would split the table's strings
            return None
        buffer, char_bytes, doc_chars = found
        min_n, max_n = self.options.ngram_range
        starts, ends, row_offsets = char_ngram_spans(
            buffer, char_bytes, doc_chars, min_n, max_n, self.options.analyzer == "char_wb")
        table = TokenTable()
        ids = table.add_spans(buffer, starts, ends)
        return None if ids is None else (table, ids, row_offsets)


class CharPass(NamedTuple):
    """What the compiled pass does for ``analyzer="char"`` / ``"char_wb"``: ``text`` (a
    decoded document -> its preprocessed str: lowercasing, accents) then ``normalise``
    (its white space, as the analyzer normalises it), and the n-grams counted."""

    analyzer: str
    ngram_range: tuple
    text: object
    normalise: object
    stop_words: object = None            # read by the pass's shared steps
    lower_tokens: bool = False
    state = _CharState


class _PositionState(_DistinctFeatures):
    """A pass counting (position, n-gram) features: the pass's table numbers the tokens
    (``analyzer="word"``, their word ids as the word n-grams' pass keeps them), a second
    one the features' keys."""

    def __init__(self, vocabulary, learn, options, analyze, start):
        super().__init__(vocabulary, learn, options, analyze, start)
        self.words = _Ngrams(options) if options.analyzer == "word" else None
        self.keys = TokenTable()
        self.term_of_key = np.empty(1024, np.int64)

    def chunk_chars(self, working_memory):
        ngram_range = self.options.ngram_range
        return _chunk_chars(working_memory, ngram_range, 4 * (ngram_range[1] + 1))

    def local(self, docs):
        """Word analyzer: the tokens numbered in the chunk's table (the word pass's step);
        characters: the code points of the normalised documents (runs on a thread)."""
        if self.words is not None:
            return super().local(docs)
        texts = _normalised(self.options, docs)
        data = "".join(texts).encode("utf-32-le", "surrogatepass")
        doc_offsets = np.zeros(len(texts) + 1, np.int64)
        np.cumsum(np.fromiter(map(len, texts), np.int64, len(texts)), out=doc_offsets[1:])
        return None, np.frombuffer(data, np.uint32).astype(np.int64), doc_offsets

    def counting(self, local_table, ids, doc_offsets):
        """``(ids, term_of_id, doc_offsets)`` of the chunk's features (runs in chunk
        order): keys numbered in the pass's key table, new ones made str and looked up."""
        options = self.options
        if self.words is not None:
            units, grams = self.words._word_of_tokens(self, local_table)[ids], self._words
        else:
            units, grams = ids, _code_points
        buffer, starts, ends, key_offsets = position_keys(
            units, doc_offsets, options.ngram_range, options.mode, options.n_bins,
            options.max_position)
        n_before = self.keys.n
        key_ids = self.keys.add_spans(buffer, starts, ends)
        if self.keys.n > n_before:
            at = first_positions(key_ids, n_before, self.keys.n)
            new = key_strings(buffer.view(np.int32), starts[at] // 4,
                              (ends[at] - starts[at]) // 4, grams)
            self.term_of_key = grown(self.term_of_key, self.keys.n, keep=n_before)
            self.term_of_key[n_before:self.keys.n] = self._terms(new, None)
        return key_ids, self.term_of_key, key_offsets

    def _words(self, keys, firsts, n):
        """The word n-grams of ``n`` word ids from the words ``firsts`` of ``keys``."""
        return ngram_strings(self.words.words, keys, firsts, np.full(len(firsts), n))


def _code_points(keys, firsts, n):
    """The str of ``n`` code points from each of the words ``firsts`` of ``keys``."""
    if not len(firsts):
        return []
    codes = keys[firsts[:, None] + np.arange(n)].astype("<u4")
    joined = codes.tobytes().decode("utf-32-le", "surrogatepass")
    return [joined[i:i + n] for i in range(0, len(joined), n)]


class PositionalPass(NamedTuple):
    """What the compiled pass does for ``PositionalBagOfWords``: the word options of
    :class:`~._text_pass.TextPass` (``analyzer="word"``) or ``text`` / ``normalise`` of
    :class:`CharPass` (``"char"``), the n-grams, and the positions: ``mode`` (a code of
    :data:`~._position_ids.POSITION_MODES`), ``n_bins``, ``max_position`` (an int)."""

    analyzer: str
    ngram_range: tuple
    mode: int
    n_bins: int
    max_position: int
    lowercase: bool = True
    preprocess: object = None
    stop_words: object = None
    ideographs: bool = True
    lower_tokens: bool = False
    text: object = None
    normalise: object = None
    state = _PositionState
