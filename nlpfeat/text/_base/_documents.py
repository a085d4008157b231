"""Document iteration and decoding shared by every text estimator.

``iter_documents`` is the single place where raw input (strings, bytes, file names, open
files or pre-tokenized lists) becomes one ``str`` (or one list of ``str``) per document, with
the errors of scikit-learn's vectorizers: a bad document is named by its index and type.

``reiterable`` is the single place where the one-shot rule lives: an estimator that reads
its input more than once (``fit_transform``, a corpus read by two steps) calls it first, so
that a generator is read exactly once (kept as a list) or rejected with a TypeError; it is
never consumed by a first pass and then found empty by the second. ``ReadOnceMixin`` applies
it to ``fit_transform`` for the estimators whose ``fit`` and ``transform`` each read ``X``.

``token_list`` is the single place where the rule for a tokenized document lives: a sequence
of ``str`` tokens in text order; never a mapping (its values would be dropped) or a set (its
order is arbitrary).
"""
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet

from nlpfeat._docstrings import fill_doc
from nlpfeat._progress import track
from nlpfeat._validation import fit_context

__all__ = [
    "OnePassFitMixin",
    "BAG_READERS",
    "INPUT_TYPES",
    "DECODE_ERRORS",
    "iter_documents",
    "check_corpus_nonempty",
    "check_corpus_type",
    "check_document_tokens",
    "check_not_bag",
    "check_token_types",
    "column_documents",
    "is_dask_bag",
    "is_one_shot",
    "reiterable",
    "token_list",
    "ReadOnceMixin",
]

INPUT_TYPES = ("content", "filename", "file", "tokens")
DECODE_ERRORS = ("strict", "ignore", "replace")
#: The public functions and estimators that count a ``dask.bag.Bag`` on its workers (every
#: other one rejects a bag: see :func:`check_corpus_type`).
BAG_READERS = ("BagOfWords", "Collocations", "PMIEmbedding", "PositionalBagOfWords",
               "TfidfVectorizer", "TopicModel", "cooccurrence")


def is_dask_bag(X):
    """Whether ``X`` is a ``dask.bag.Bag`` (checked without importing dask)."""
    return type(X).__module__.startswith("dask.bag") and hasattr(X, "to_delayed")


def iter_documents(X, input="content", encoding="utf-8", decode_error="strict", *,
                   check_tokens=True, caller=None, verbose=0):
    """Yield each document of ``X`` as a ``str`` (a list of ``str`` when ``input="tokens"``).

    The corpus is consumed once, so a generator works.

    Parameters
    ----------
    X : iterable
        Documents: ``str`` or ``bytes`` (``input="content"``), paths (``"filename"``), objects
        with a ``read`` method (``"file"``), or lists of tokens (``"tokens"``).
    input : {"content", "filename", "file", "tokens"}, default="content"
    encoding : str, default="utf-8"
        Used to decode ``bytes``.
    decode_error : {"strict", "ignore", "replace"}, default="strict"
        What to do with bytes that ``encoding`` cannot decode (Python's codec error handlers).
    check_tokens : bool, default=True
        With ``input="tokens"``, check that every token is a ``str``. A caller that maps
        every token through a vocabulary may pass False and check the vocabulary's keys
        with :func:`check_token_types` instead: one check per distinct token, not per token.
    caller : str, optional
        Who reads the documents, for the error of a dask bag (see :func:`check_corpus_type`).
    verbose : int, default=0
        With 1 or more, a progress bar on stderr over the documents read (bytes, for a
        :class:`~nlpfeat.datasets.Corpus`), named after ``caller``; see
        :func:`nlpfeat._progress.track`.

    Yields
    ------
    doc : str or list of str

    Raises
    ------
    ValueError
        If ``X`` is a single string rather than an iterable of documents.
    TypeError
        If a document has the wrong type (the message names its index and type), or ``X``
        is a dask bag.
    UnicodeDecodeError
        If ``decode_error="strict"`` and a document cannot be decoded (names the document).

    Examples
    --------
    >>> from nlpfeat.text._base._documents import iter_documents
    >>> list(iter_documents(["a b", b"caf\\xc3\\xa9"]))
    ['a b', 'café']
    >>> list(iter_documents([b"\\xa3 5"], encoding="latin-1"))
    ['£ 5']
    """
    check_corpus_type(X, caller)
    X = track(X, verbose, f"{caller or 'reading'}: documents")
    if input == "tokens":
        return _iter_token_lists(X, check_tokens)
    if input not in INPUT_TYPES:
        raise ValueError(f"input={input!r} is not supported; expected one of {list(INPUT_TYPES)}.")
    return _iter_texts(X, input, encoding, decode_error)


def check_not_bag(X, caller=None):
    """TypeError for a ``dask.bag.Bag`` given to ``caller``, which reads its documents in
    this process (only the functions of :data:`BAG_READERS` count a bag on its workers)."""
    if is_dask_bag(X):
        raise TypeError(
            f"{caller or 'This function'} reads its documents in this process and takes no "
            f"dask.bag.Bag (iterating a bag would pull every document here from the "
            f"workers). Pass a list or a nlpfeat.datasets.Corpus (read lazily from disk), "
            f"or bag.compute() a bag that fits in memory; {', '.join(BAG_READERS)} count a "
            f"bag on its workers.")


def check_corpus_type(X, caller=None):
    """ValueError for a single string or bytes, TypeError for a non-iterable corpus or a
    dask bag.

    A ``dask.bag.Bag`` is iterable, but iterating it computes it in this process: every
    document would be pulled from the workers (where the functions of
    :data:`BAG_READERS` count it) to be read here. ``caller`` names who reads the
    documents in that error.
    """
    check_not_bag(X, caller)
    if isinstance(X, (str, bytes)):
        raise ValueError(
            "Iterable over raw text documents expected, string object received. "
            "Wrap a single document in a list: [text]."
        )
    if not isinstance(X, Iterable):
        raise TypeError(
            f"Expected an iterable of documents (a list of str, for example); got "
            f"{type(X).__name__}."
        )


def _iter_texts(X, input, encoding, decode_error):
    if input != "content":
        for i, doc in enumerate(X):
            yield _to_text(doc, i, input, encoding, decode_error)
        return
    for i, doc in enumerate(X):
        if type(doc) is not str:  # the common case costs one type check
            doc = _to_text(doc, i, input, encoding, decode_error)
        yield doc


def _to_text(doc, i, input, encoding, decode_error):
    if input == "filename":
        if not isinstance(doc, (str, bytes)) and not hasattr(doc, "__fspath__"):
            _bad_document(i, doc, "a file name (str or path)")
        doc = _read_file(doc, i)
    elif input == "file":
        if not hasattr(doc, "read"):
            _bad_document(i, doc, "an open file (an object with a read method)")
        doc = doc.read()
    if isinstance(doc, str):
        return str(doc)
    if isinstance(doc, (bytes, bytearray)):
        return _decode(doc, i, encoding, decode_error)
    _bad_document(i, doc, "str or bytes")


def _read_file(path, i):
    """Bytes of the file ``path`` (document ``i`` with ``input="filename"``)."""
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        raise FileNotFoundError(
            f"Document {i}: no file named {_short_repr(path)}. With input='filename' each "
            f"document is the path of a file to read; pass input='content' if the documents "
            f"are the texts themselves."
        ) from None


def _decode(doc, i, encoding, decode_error):
    try:
        return doc.decode(encoding, decode_error)
    except UnicodeDecodeError as exc:
        raise UnicodeDecodeError(
            exc.encoding, exc.object, exc.start, exc.end,
            f"{exc.reason} in document {i}; pass the right encoding=... (e.g. 'latin-1') or "
            f"decode_error='replace' or 'ignore'",
        ) from None


def _iter_token_lists(X, check_tokens=True):
    for i, doc in enumerate(X):
        yield token_list(i, doc, check_tokens)


def token_list(i, doc, check_tokens=True):
    """Document ``i`` of a tokenized corpus as a list of ``str`` tokens, or a TypeError.

    A tokenized document is a sequence of tokens in text order (a list, a tuple, an
    array of strings, a generator of tokens). A ``str`` or ``bytes`` (text, not tokens), a
    mapping (``{token: count}``: iterating it would drop the counts) and a set (its order
    is arbitrary, and positions, windows and n-grams depend on it) are rejected, as is
    anything that is not iterable.

    Parameters
    ----------
    i : int
        The document's index, for the message.
    doc : object
    check_tokens : bool, default=True
        Check that every token is a ``str`` (see :func:`check_document_tokens`).

    Returns
    -------
    tokens : list
        ``doc`` itself when it is a list (consumers only read it), else ``list(doc)``.

    Examples
    --------
    >>> from nlpfeat.text._base._documents import token_list
    >>> token_list(0, ("new", "york"))
    ['new', 'york']
    >>> token_list(3, {"new": 2, "york": 1})
    Traceback (most recent call last):
    ...
    TypeError: Document 3 is a dict ({'new': 2, 'york': 1}), not a sequence of tokens ...
    """
    if type(doc) is not list:       # lists pass as they are: no consumer modifies them
        if isinstance(doc, (str, bytes)) or not isinstance(doc, Iterable):
            _bad_document(i, doc, "a list of str tokens (input='tokens')")
        if isinstance(doc, (Mapping, AbstractSet)):
            _unordered_document(i, doc)
        doc = list(doc)
    if check_tokens:
        check_document_tokens(i, doc)
    return doc


def _unordered_document(i, doc):
    if isinstance(doc, Mapping):
        why = ("iterating it would keep its keys and drop its values. Pass each document as "
               "a list of str tokens (for {token: count} dicts, "
               "sklearn.feature_extraction.DictVectorizer makes a document-term matrix).")
    else:
        why = ("its order is arbitrary, and positions, windows and n-grams depend on it. "
               "Pass each document as a list of str tokens in text order.")
    raise TypeError(f"Document {i} is a {type(doc).__name__} ({_short_repr(doc)}), not a "
                    f"sequence of tokens in text order: {why}")


def check_document_tokens(i, doc):
    """TypeError naming document ``i`` if one of its tokens is not a ``str``."""
    # the set of token types is built in C: one check per type, not per token
    if not all(issubclass(kind, str) for kind in set(map(type, doc))):
        bad = next(token for token in doc if not isinstance(token, str))
        raise TypeError(
            f"Document {i} holds a token of type {type(bad).__name__} ({bad!r}); with "
            f"input='tokens' every token must be a str."
        )


def check_token_types(token_lists, distinct_tokens):
    """Raise the error of ``iter_documents`` if a token of ``token_lists`` is not a str.

    For token lists read with ``check_tokens=False`` and then mapped through a
    vocabulary: the cheap check runs on the vocabulary's distinct tokens, and only when
    one of them is not a ``str`` are the documents scanned to name the culprit.

    Parameters
    ----------
    token_lists : list of list
    distinct_tokens : iterable
        The distinct tokens of ``token_lists`` (a vocabulary's keys); None when mapping
        the tokens failed (an unhashable token), which scans the documents at once.

    Examples
    --------
    >>> from nlpfeat.text._base._documents import check_token_types
    >>> docs = [["a", "b"], ["b", 3]]
    >>> check_token_types(docs[:1], {"a": 0, "b": 1})
    >>> check_token_types(docs, {"a": 0, "b": 1, 3: 2})
    Traceback (most recent call last):
    ...
    TypeError: Document 1 holds a token of type int (3); with input='tokens' every token must be a str.
    """
    if distinct_tokens is not None and all(
            issubclass(kind, str) for kind in set(map(type, distinct_tokens))):
        return
    for i, doc in enumerate(token_lists):
        check_document_tokens(i, doc)


def _bad_document(i, doc, expected):
    if isinstance(doc, (list, tuple)) and "str" in expected:
        raise TypeError(
            f"Document {i} is a {type(doc).__name__} of tokens ({_short_repr(doc)}), but "
            f"input='content' expects strings; pass input='tokens' for token lists.")
    raise TypeError(
        f"Document {i} is of type {type(doc).__name__} ({_short_repr(doc)}); expected {expected}. "
        f"Convert or drop it (missing values such as None or NaN are not documents)."
    )


def _short_repr(obj, width=40):
    text = repr(obj)
    return text if len(text) <= width else text[: width - 3] + "..."


def check_corpus_nonempty(n_documents, name="X"):
    """Raise ValueError if a corpus has no documents.

    Parameters
    ----------
    n_documents : int
    name : str, default="X"
        How the message refers to the corpus.

    Examples
    --------
    >>> from nlpfeat.text._base._documents import check_corpus_nonempty
    >>> check_corpus_nonempty(3)
    >>> check_corpus_nonempty(0)
    Traceback (most recent call last):
    ...
    ValueError: Empty corpus: X holds no documents; expected at least one document to fit on.
    """
    if n_documents == 0:
        raise ValueError(
            f"Empty corpus: {name} holds no documents; expected at least one document to fit on."
        )


def is_one_shot(X):
    """True when ``X`` is an iterator (``iter(X) is X``): a second pass would find it empty.

    Generators, ``iter(list)``, ``map`` objects and open files are one-shot; lists, tuples,
    arrays, matrices and objects whose ``__iter__`` starts afresh (a corpus class streaming
    from disk) are not. Non-iterables are not either.

    Examples
    --------
    >>> from nlpfeat.text._base._documents import is_one_shot
    >>> is_one_shot(["a b"]), is_one_shot(iter(["a b"])), is_one_shot(d for d in ["a b"])
    (False, True, True)
    """
    if is_dask_bag(X):      # re-iterable, and iter() would compute it here
        return False
    try:
        return iter(X) is X
    except TypeError:
        return False


def column_documents(X):
    """A pandas or polars ``Series`` (any 1-D array) of documents as the list of its values,
    in order (positions, not index labels); ``X`` itself when it is anything else, or an
    array of numbers (a matrix-like input whose own checks apply).

    For the callers that take a matrix too and would read the ``__array__`` of a column of
    text as one (iterating a Series already yields its documents everywhere else).

    Examples
    --------
    >>> import numpy as np
    >>> column_documents(np.array(["a b", "c"]))
    ['a b', 'c']
    >>> column_documents([["a"], ["b"]])
    [['a'], ['b']]
    """
    from numbers import Number

    if not hasattr(X, "__array__") or len(getattr(X, "shape", ())) != 1:
        return X
    first = next(iter(X), 0)
    if isinstance(first, Number):
        return X
    return X.to_list() if hasattr(X, "to_list") else X.tolist()


def reiterable(X, *, materialize=True, caller="This estimator"):
    """``X`` in a form that can be read more than once, read at most once here.

    A one-shot iterator (see :func:`is_one_shot`) is read once into a list when
    ``materialize`` (the caller keeps the documents in memory anyway), or rejected with a
    TypeError before any of it is read; anything else is returned as it is.

    Parameters
    ----------
    X : object
    materialize : bool, default=True
    caller : str, default="This estimator"
        Who reads ``X`` more than once, for the error message.

    Returns
    -------
    X : object
        ``X`` itself, or ``list(X)`` for a one-shot iterator.

    Raises
    ------
    TypeError
        If ``X`` is a one-shot iterator and ``materialize`` is False.

    Examples
    --------
    >>> from nlpfeat.text._base._documents import reiterable
    >>> reiterable(d for d in ["a", "b"])
    ['a', 'b']
    >>> reiterable(iter(["a"]), materialize=False, caller="f")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: f reads its input more than once, but got a one-shot iterator (list_iterator)...
    """
    if not is_one_shot(X):
        return X
    if materialize:
        return list(X)
    raise TypeError(
        f"{caller} reads its input more than once, but got a one-shot iterator "
        f"({type(X).__name__}), which the second pass would find empty. Pass a list, or a "
        f"re-iterable corpus (an object whose __iter__ starts afresh each time)."
    )


@fill_doc
class OnePassFitMixin:
    """``fit`` of an estimator whose ``_fit(X)`` learns every fitted attribute in one pass.

    ``_fit`` returns what the estimator's own ``fit_transform`` finishes into its output,
    so that ``fit_transform`` reads the documents once too.
    """

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Learn the fitted attributes from the documents ``X``, read once.

        %(fit_sections)s
        """
        self._fit(X)
        return self


class ReadOnceMixin:
    """``fit_transform`` as ``fit(X).transform(X)`` with the one-shot rule applied first.

    For an estimator whose ``fit`` and ``transform`` each read ``X`` (scikit-learn's
    ``TransformerMixin.fit_transform`` would let ``fit`` consume a generator and hand
    ``transform`` nothing): ``X`` goes through :func:`reiterable`, so a generator is read
    once, into a list. Put it before ``TransformerMixin`` in the bases.
    """

    def fit_transform(self, X, y=None, **fit_params):
        """Fit to ``X``, then transform it; a one-shot iterator is read once.

        Parameters
        ----------
        X : iterable of documents, or what ``fit`` takes
        y : None
            Passed to ``fit``.
        **fit_params : dict
            Passed to ``fit``.

        Returns
        -------
        X_new : what ``transform`` returns
        """
        X = reiterable(X, caller=type(self).__name__)
        return self.fit(X, y, **fit_params).transform(X)
