"""Token ids of chunks of text for the pair and n-gram counts, by the compiled tokenizer.

The consumers that count ids, not terms (:func:`~._pair_merge.count_upper_pairs` for
``cooccurrence`` and ``PMIEmbedding``, :class:`~._ngram_counts.NgramCounts` for
``Collocations``) number each token by a :class:`~._token_table.TokenTable` kept from
chunk to chunk. When the estimator's options allow the compiled pass exactly (the one
decision, :meth:`~nlpfeat.text._base._analyzer.TextMixin._text_pass_options`), a chunk of
decoded documents goes from text to ids here without a Python ``str`` per token: one
compiled scan finds the token spans (:func:`~._compiled_tokens.token_spans`), and the
table numbers the spans straight from the chunk's UTF-8 buffer. Stop words are removed
as the Python analyzer removes them (the token and its position): the chunk's distinct
new tokens are decoded once each and looked up in the stop list.

A chunk the compiled pass refuses (a lone surrogate, a token longer than a table row)
returns None; the caller then counts it through its Python tokenizer, in its turn, so
the ids, and so the counts, are the same as on the Python path.
"""
from typing import NamedTuple

import numpy as np

from nlpfeat.text._counting._vocabulary import grown

__all__ = ["TextChunk", "TextIds", "text_chunks"]

#: Bytes of temporary memory per character of a chunk numbered here (the str, its UTF-8
#: buffer and the token spans, as the text pass counts them, plus the ids).
BYTES_PER_CHAR = 20


class TextChunk(NamedTuple):
    """Consecutive decoded documents (``docs``, a list of str) from index ``start`` on,
    to be tokenized and numbered by :class:`TextIds`."""

    start: int
    docs: list


def text_chunks(docs, limit, *, per_token=0, to_tokens=None, cost=len, start=0):
    """Yield the documents ``docs`` (read once) in chunks of about ``limit`` bytes of
    temporaries, whole documents in order: consecutive str documents as a
    :class:`TextChunk` (:data:`BYTES_PER_CHAR` per character plus ``per_token`` bytes
    of counting work per token, taken as one token per 4 characters, English's ratio
    with its spaces; fewer tokens only make the chunk cheaper), any other document
    turned into a token list by ``to_tokens(doc, index)`` (which names the document in
    its errors) in a list of token lists of summed ``cost`` up to ``limit``.

    Examples
    --------
    >>> from nlpfeat.text._counting._text_ids import text_chunks
    >>> list(text_chunks(["a b", "c", ["d"], "e"], 100, to_tokens=lambda doc, i: doc))
    [TextChunk(start=0, docs=['a b', 'c']), [['d']], TextChunk(start=3, docs=['e'])]
    """
    chars_limit = max(limit // (BYTES_PER_CHAR + per_token // 4), 1)
    text, chars, tokens, spent, first = [], 0, [], 0, start
    for index, doc in enumerate(docs, start):
        if isinstance(doc, str):
            if tokens:
                yield tokens
                tokens, spent = [], 0
            if not text:
                first = index
            text.append(doc)
            chars += len(doc)
            if chars >= chars_limit:
                yield TextChunk(first, text)
                text, chars = [], 0
            continue
        if text:
            yield TextChunk(first, text)
            text, chars = [], 0
        if to_tokens is None:
            raise TypeError(f"Document {index} is a {type(doc).__name__}; expected a str.")
        doc = to_tokens(doc, index)
        tokens.append(doc)
        spent += cost(doc)
        if spent >= limit:
            yield tokens
            tokens, spent = [], 0
    if text:
        yield TextChunk(first, text)
    if tokens:
        yield tokens


class TextIds:
    """Numbers chunks of text into the ids of a :class:`~._token_table.TokenTable`.

    Parameters
    ----------
    table : TokenTable
        Numbers the tokens, in order of first appearance, across chunks (shared with the
        caller, which may number token lists in it too).
    options : TextPass
        ``lowercase`` and ``preprocess`` as :func:`~._compiled_tokens.token_spans` takes
        them; ``stop_words`` (a set or None) are removed with their positions.

    Examples
    --------
    >>> from nlpfeat.text._counting._text_ids import TextIds
    >>> from nlpfeat.text._counting._text_pass import TextPass
    >>> from nlpfeat.text._counting._token_table import TokenTable
    >>> numbering = TextIds(TokenTable(), TextPass(stop_words={"a"}))
    >>> ids, lengths = numbering.ids(["The cat, a CAT!", "中文 cat"])
    >>> ids.tolist(), lengths.tolist(), numbering.table.strings()
    ([0, 1, 1, 2, 3, 1], [3, 3], ['the', 'cat', '中', '文'])
    """

    def __init__(self, table, options):
        self.table = table
        self.options = options
        self._stop = np.zeros(1024, bool)        # table id -> a stop word

    def ids(self, docs):
        """``(ids, lengths)`` (int64) of the documents ``docs`` (a list of str), or None
        (nothing numbered) where the Python path must decide."""
        from nlpfeat.text._counting._compiled_tokens import token_spans  # numba: on use

        spans = token_spans(docs, lowercase=self.options.lowercase,
                            preprocess=self.options.preprocess,
                            ideographs=self.options.ideographs)
        if spans is None:
            return None
        buffer, starts, ends, doc_offsets = spans
        before = self.table.n
        ids = self.table.add_spans(buffer, starts, ends)
        if ids is None:
            return None
        lengths = np.diff(doc_offsets)
        stop_words = self.options.stop_words
        if stop_words:
            self._mark_stop_words(before, stop_words)
            keep = ~self._stop[ids]
            if not keep.all():
                doc = np.repeat(np.arange(len(lengths)), lengths)
                lengths = np.bincount(doc[keep], minlength=len(lengths)).astype(np.int64)
                ids = ids[keep]
        return ids, lengths

    def _mark_stop_words(self, before, stop_words):
        """Mark the table's tokens ``before ..`` that are stop words (each decoded once)."""
        n = self.table.n
        self._stop = grown(self._stop, n, keep=before)
        if n > before:
            self._stop[before:n] = [token in stop_words
                                    for token in self.table.strings(before, n)]
