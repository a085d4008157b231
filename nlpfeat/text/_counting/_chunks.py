"""The document chunking loop of the counting engine: whole documents, a budget at a time."""

__all__ = ["document_chunks"]


def document_chunks(docs, limit, cost=len, *, to_tokens=None, start=0):
    """Yield ``(start, token_lists)``: consecutive documents whose summed cost reaches
    ``limit`` (the last chunk may cost less; one document costing more is a chunk alone).

    Documents are never split or merged, so no count crosses a document boundary.

    Parameters
    ----------
    docs : iterable
        Documents (read once), or token lists when ``to_tokens`` is None.
    limit : int
        Budget of one chunk, in the unit of ``cost``.
    cost : callable, default=len
        ``cost(tokens)``: what counting one document's token list takes.
    to_tokens : callable or None, default=None
        ``to_tokens(doc, index) -> list of str``; it names the document in its errors.
    start : int, default=0
        Index of the first document.

    Examples
    --------
    >>> from nlpfeat.text._counting._chunks import document_chunks
    >>> list(document_chunks([["a", "b"], ["c"], ["d", "e", "f"], ["g"]], limit=3))
    [(0, [['a', 'b'], ['c']]), (2, [['d', 'e', 'f']]), (3, [['g']])]
    """
    chunk, size, first = [], 0, start
    for index, doc in enumerate(docs, start):
        if to_tokens is not None:
            doc = to_tokens(doc, index)
        chunk.append(doc)
        size += cost(doc)
        if size >= limit:
            yield first, chunk
            chunk, size, first = [], 0, index + 1
    if chunk:
        yield first, chunk
