"""Strings of a chunk as spans of one UTF-8 buffer, for the compiled passes over bytes.

A chunk's strings (tokens, features or whole texts) are joined and encoded once; numpy
finds the byte offset of every code point (the bytes that do not continue a UTF-8
sequence), so no Python object is made per token. The spans follow the layout of the
compiled tokenizer's ``token_spans``: ``(buffer, starts, ends, doc_offsets)``.
"""
from itertools import chain

import numpy as np

__all__ = ["encode_texts", "spans_of_token_lists"]


def encode_texts(texts, start=0):
    """``texts`` (list of str) encoded to one UTF-8 buffer.

    Returns ``(buffer, char_bytes, doc_chars)``: text ``i`` is code points
    ``doc_chars[i] .. doc_chars[i + 1] - 1``, code point ``c`` the bytes
    ``buffer[char_bytes[c]:char_bytes[c + 1]]``. ``start`` is the index of the first text,
    for the error that names a text UTF-8 cannot encode (a lone surrogate).

    Examples
    --------
    >>> from nlpfeat.text._counting._spans import encode_texts
    >>> buffer, char_bytes, doc_chars = encode_texts(["né", "a"])
    >>> buffer.tobytes(), char_bytes.tolist(), doc_chars.tolist()
    (b'n\\xc3\\xa9a', [0, 1, 3, 4], [0, 2, 3])
    """
    try:
        joined = "".join(texts)
    except TypeError:
        bad = next(x for x in chain.from_iterable([t] for t in texts) if not isinstance(x, str))
        raise TypeError(
            f"Features must be str; got {type(bad).__name__} ({bad!r}). Make the analyzer "
            f"or tokenizer return a list of str."
        ) from None
    doc_chars = np.zeros(len(texts) + 1, np.int64)
    np.cumsum(np.fromiter(map(len, texts), np.int64, len(texts)), out=doc_chars[1:])
    try:
        data = joined.encode("utf-8")
    except UnicodeEncodeError as error:
        index = int(np.searchsorted(doc_chars, error.start, side="right")) - 1
        raise _surrogate_error(start + index, joined[error.start]) from None
    buffer = np.frombuffer(bytearray(data), np.uint8)   # writable, as the compiled spans
    if len(data) == len(joined):                   # ASCII: a byte per code point
        char_bytes = np.arange(len(data) + 1, dtype=np.int64)
    else:
        char_bytes = np.empty(len(joined) + 1, np.int64)
        char_bytes[:-1] = np.flatnonzero((buffer & 0xC0) != 0x80)
        char_bytes[-1] = len(data)
    return buffer, char_bytes, doc_chars


def spans_of_token_lists(token_lists, start=0):
    """One list of str per document -> ``(buffer, starts, ends, doc_offsets)``.

    Document ``d`` has the tokens ``doc_offsets[d] .. doc_offsets[d + 1] - 1``, token ``t``
    the UTF-8 bytes ``buffer[starts[t]:ends[t]]``. The tokens are joined by ``"\\x00"``
    (UTF-8 encodes only U+0000 with a zero byte), so numpy finds where they end; when a
    token holds U+0000 itself, the byte offset of each code point is used instead.

    Examples
    --------
    >>> from nlpfeat.text._counting._spans import spans_of_token_lists
    >>> buffer, starts, ends, doc_offsets = spans_of_token_lists([["né", "a"], [], ["bc"]])
    >>> [buffer[s:e].tobytes() for s, e in zip(starts, ends)], doc_offsets.tolist()
    ([b'n\\xc3\\xa9', b'a', b'bc'], [0, 2, 2, 3])
    """
    doc_offsets = np.zeros(len(token_lists) + 1, np.int64)
    np.cumsum(np.fromiter(map(len, token_lists), np.int64, len(token_lists)),
              out=doc_offsets[1:])
    tokens = list(chain.from_iterable(token_lists))
    if tokens:
        try:
            data = "\x00".join(tokens).encode("utf-8")
        except (TypeError, UnicodeEncodeError):
            data = None
        if data is not None:          # the zero bytes end the tokens, unless a token has one
            buffer = np.frombuffer(bytearray(data), np.uint8)
            zeros = np.flatnonzero(buffer == 0)
            if zeros.size == len(tokens) - 1:
                starts = np.empty(len(tokens), np.int64)
                ends = np.empty(len(tokens), np.int64)
                starts[0], starts[1:] = 0, zeros + 1
                ends[:-1], ends[-1] = zeros, buffer.size
                return buffer, starts, ends, doc_offsets
    try:
        buffer, char_bytes, token_chars = encode_texts(tokens)
    except ValueError:                              # name the document, not the token
        for index, doc in enumerate(token_lists, start):
            try:
                "".join(doc).encode("utf-8")
            except UnicodeEncodeError as error:
                raise _surrogate_error(index, error.object[error.start]) from None
        raise
    return buffer, char_bytes[token_chars[:-1]], char_bytes[token_chars[1:]], doc_offsets


def _surrogate_error(index, char):
    return ValueError(
        f"Document {index} holds a lone surrogate ({char!r}) that UTF-8 cannot encode, so "
        f"it has no bytes to hash; decode the text with errors='replace' or remove the "
        f"surrogate."
    )
