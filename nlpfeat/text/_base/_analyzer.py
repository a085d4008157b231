"""The text options every vectorizer shares, and the analyzers (doc -> features) built from them.

``TextMixin`` holds the parameter constraints, the validation and the construction of the
per-document callables, once, for ``BagOfWords``, ``PositionalBagOfWords`` and
``TfidfVectorizer`` (and any later text estimator). The callables are built at ``fit`` /
``transform`` time from the parameters, never stored, so estimators clone and pickle.
"""
import codecs
import copy
import re
import sys
import warnings
from functools import partial
from pathlib import Path

import sklearn
from sklearn.feature_extraction.text import strip_accents_ascii, strip_accents_unicode

from nlpfeat._validation import Integral, StrOptions
from nlpfeat.text._base._documents import DECODE_ERRORS, INPUT_TYPES, iter_documents
from nlpfeat.text._base._tokenize import (
    TOKENIZERS,
    get_stemmer,
    get_stop_words,
    get_tokenizer,
)

__all__ = [
    "TEXT_PARAMETER_CONSTRAINTS",
    "TextMixin",
    "text_pass_options",
    "char_pass_options",
    "collapse_white_space",
    "padded_words",
    "word_ngrams",
    "char_ngrams",
    "char_wb_ngrams",
    "check_ngram_range",
    "check_not_dataframe",
    "check_encoding",
    "accent_function",
    "decode_document",
    "warn_unused",
    "warn_user",
    "Chain",
    "chain",
]

TEXT_PARAMETER_CONSTRAINTS = {
    "input": [StrOptions(set(INPUT_TYPES))],
    "encoding": [str],
    "decode_error": [StrOptions(set(DECODE_ERRORS))],
    "lowercase": ["boolean"],
    "tokenizer": [StrOptions(set(TOKENIZERS)), callable, None],  # None: "regexp"
    "token_pattern": [str, None],
    "stemmer": [StrOptions({"porter", "snowball"}), callable, None],
    "stop_words": [StrOptions({"english", "chinese"}), list, tuple, set, frozenset, None],
    "ngram_range": [tuple],
    "analyzer": [StrOptions({"word", "char", "char_wb"}), callable],
    "strip_accents": [StrOptions({"ascii", "unicode"}), callable, None],
    "preprocessor": [callable, None],
}

#: The shared text options of the estimators that work on tokens (no n-grams, analyzer,
#: accents or preprocessor): the one list of them, with their constraints.
TOKEN_OPTIONS = ("input", "encoding", "decode_error", "lowercase", "tokenizer",
                 "token_pattern", "stemmer", "stop_words")
TOKEN_PARAMETER_CONSTRAINTS = {name: TEXT_PARAMETER_CONSTRAINTS[name] for name in TOKEN_OPTIONS}

_ACCENT_STRIPPERS = {"ascii": strip_accents_ascii, "unicode": strip_accents_unicode}

_WHITE_SPACES = re.compile(r"\s\s+")


def check_ngram_range(ngram_range, name="ngram_range"):
    """Validate ``(min_n, max_n)`` with ``1 <= min_n <= max_n``; return it as a tuple of ints."""
    ok = (
        isinstance(ngram_range, tuple) and len(ngram_range) == 2
        and all(isinstance(n, Integral) and not isinstance(n, bool) for n in ngram_range)
    )
    if not ok or not 1 <= ngram_range[0] <= ngram_range[1]:
        raise ValueError(
            f"{name}={ngram_range!r} is invalid; expected a tuple (min_n, max_n) of integers with "
            f"1 <= min_n <= max_n, e.g. (1, 2) for unigrams and bigrams."
        )
    return int(ngram_range[0]), int(ngram_range[1])


def word_ngrams(tokens, ngram_range=(1, 1)):
    """All word n-grams of ``tokens`` for n in ``ngram_range``, joined by a space.

    Unigrams come first, then bigrams, and so on (scikit-learn's order).

    Examples
    --------
    >>> from nlpfeat.text._base._analyzer import word_ngrams
    >>> word_ngrams(["the", "fat", "cat"], (1, 2))
    ['the', 'fat', 'cat', 'the fat', 'fat cat']
    """
    min_n, max_n = ngram_range
    if max_n == 1:
        return tokens
    features = list(tokens) if min_n == 1 else []
    for n in range(max(min_n, 2), min(max_n, len(tokens)) + 1):
        features.extend(map(" ".join, zip(*[tokens[k:] for k in range(n)])))
    return features


def collapse_white_space(text):
    """``text`` with every run of two or more white space characters made one space: the
    text whose character n-grams ``analyzer="char"`` takes (scikit-learn's rule).

    Examples
    --------
    >>> from nlpfeat.text._base._analyzer import collapse_white_space
    >>> collapse_white_space("a \t cat\tsat")
    'a cat\tsat'
    """
    return _WHITE_SPACES.sub(" ", text)


def padded_words(text):
    """The words of ``text`` (split at white space) joined and padded by single spaces:
    the text whose padded words ``analyzer="char_wb"`` takes n-grams inside.

    Examples
    --------
    >>> from nlpfeat.text._base._analyzer import padded_words
    >>> padded_words("a \t cat\u3000sat"), padded_words("")
    (' a cat sat ', '  ')
    """
    return " " + " ".join(collapse_white_space(text).split()) + " "


def char_ngrams(text, ngram_range=(1, 1)):
    """Character n-grams of ``text`` after collapsing runs of white space (scikit-learn's ``char``).

    Examples
    --------
    >>> from nlpfeat.text._base._analyzer import char_ngrams
    >>> char_ngrams("a  cat", (2, 2))
    ['a ', ' c', 'ca', 'at']
    """
    text = collapse_white_space(text)
    min_n, max_n = ngram_range
    features = list(text) if min_n == 1 else []
    for n in range(max(min_n, 2), min(max_n, len(text)) + 1):
        features.extend([text[i : i + n] for i in range(len(text) - n + 1)])
    return features


def char_wb_ngrams(text, ngram_range=(1, 1)):
    """Character n-grams inside words padded with a space (scikit-learn's ``char_wb``).

    A padded word no longer than n gives one n-gram (itself) and no longer ones.

    Examples
    --------
    >>> from nlpfeat.text._base._analyzer import char_wb_ngrams
    >>> char_wb_ngrams("a cat", (3, 3))
    [' a ', ' ca', 'cat', 'at ']
    """
    min_n, max_n = ngram_range
    features = []
    for word in collapse_white_space(text).split():
        word = f" {word} "
        for n in range(min_n, max_n + 1):
            if len(word) <= n:
                features.append(word)
                break
            features.extend([word[i : i + n] for i in range(len(word) - n + 1)])
    return features


def text_pass_options(estimator, *, stop_words=True, lower_tokens=False, positions=False):
    """The :class:`~nlpfeat.text._counting._text_pass.TextPass` options with which the
    compiled pass gives exactly ``estimator``'s word features, else None (the Python path).

    The pass honours the default word analyzer: ``tokenizer="regexp"`` (or None) with the
    default pattern or scikit-learn's (``(?u)\\b\\w\\w+\\b``), lowercasing, ``strip_accents``
    by name, stop words (unless ``stop_words=False``: a caller that cannot drop them), any
    ``ngram_range``. Anything
    else (a custom ``token_pattern``, a callable preprocessor, tokenizer, analyzer or
    accent stripper, another tokenizer, a stemmer, ``input="tokens"``, an estimator
    with its own features) takes the Python path; the character analyzers have
    :func:`char_pass_options`.
    ``lower_tokens``: the caller lowers each distinct token (see ``token_spans``); only
    with ``lowercase`` and no accent stripping. ``positions``: the caller forms its own
    features from the tokens (``PositionalBagOfWords``), so its ``_feature_fn`` does not
    send it to the Python path.
    """
    strip_accents = getattr(estimator, "strip_accents", None)
    default = (
        estimator.input != "tokens" and estimator.analyzer == "word"
        and estimator.tokenizer in (None, "regexp")
        and getattr(estimator, "stemmer", None) is None
        and getattr(estimator, "preprocessor", None) is None
        and strip_accents in (None, "ascii", "unicode")
        and (positions or type(estimator)._feature_fn is TextMixin._feature_fn)
    )
    if not default:
        return None
    words_to_drop = estimator.get_stop_words()
    if words_to_drop and not stop_words:
        return None
    from nlpfeat.text._counting._compiled_tokens import PLAIN_WORD_PATTERNS  # numba: on use
    from nlpfeat.text._counting._text_pass import TextPass

    pattern = estimator.token_pattern
    if pattern is not None and pattern not in PLAIN_WORD_PATTERNS:
        return None
    preprocess = None if strip_accents is None else estimator.build_preprocessor()
    lower_tokens = lower_tokens and preprocess is None and bool(estimator.lowercase)
    return TextPass(bool(estimator.lowercase), preprocess, words_to_drop,
                    ideographs=pattern is None, lower_tokens=lower_tokens)



def char_pass_options(estimator, *, positions=False):
    """The :class:`~nlpfeat.text._counting._char_ids.CharPass` options with which the
    compiled pass gives exactly ``estimator``'s character n-grams (``analyzer="char"`` or
    ``"char_wb"``), else None (the Python path): decoded str documents, lowercasing and
    ``strip_accents`` by name (applied to each document in Python, as the analyzer does),
    any ``ngram_range``; a ``preprocessor`` (its errors name the document on the Python
    path), ``input="tokens"`` or an estimator with its own features take the Python path
    (``positions``: as :func:`text_pass_options`).
    """
    supported = (
        estimator.input != "tokens" and estimator.analyzer in ("char", "char_wb")
        and getattr(estimator, "preprocessor", None) is None
        and getattr(estimator, "strip_accents", None) in (None, "ascii", "unicode")
        and (positions or type(estimator)._feature_fn is TextMixin._feature_fn)
    )
    if not supported:
        return None
    from nlpfeat.text._counting._analyzer_passes import CharPass  # numba: on use

    normalise = padded_words if estimator.analyzer == "char_wb" else collapse_white_space
    return CharPass(estimator.analyzer, check_ngram_range(estimator.ngram_range),
                    estimator._text_fn(), normalise)


class TextMixin:
    """Shared text options of the nlpfeat vectorizers, and scikit-learn's text-processing API.

    Subclasses store ``input, encoding, decode_error, lowercase, tokenizer, token_pattern,
    stemmer, stop_words, ngram_range, analyzer`` in ``__init__`` and merge
    ``TEXT_PARAMETER_CONSTRAINTS`` into their ``_parameter_constraints``; ``strip_accents`` and
    ``preprocessor`` are optional (an estimator without them behaves as if they were None).

    A document goes through ``decode`` (read a file, decode bytes), the preprocessor
    (``build_preprocessor``: lowercase and strip accents, or the user's ``preprocessor``), the
    tokenizer (``build_tokenizer``), stop-word removal (``get_stop_words``), stemming and
    n-grams; ``build_analyzer`` returns the whole chain. Every callable these methods return
    pickles when the user's own callables do.
    """

    #: An estimator with the token options only (``TOKEN_OPTIONS``: words, not n-grams or
    #: characters) analyses words; the vectorizers override both in ``__init__``.
    ngram_range, analyzer = (1, 1), "word"

    def __nlpfeat_worker_copy__(self):
        """The copy of this fitted estimator that a Dask worker needs for ``transform``.

        The one hook through which the Dask glue (``nlpfeat.text._dask``) reaches an
        estimator, besides its public methods: a shallow copy here; an estimator that
        keeps statistics only ``partial_fit`` reads (count tables) leaves them out, so
        that less is sent to every worker.
        """
        return copy.copy(self)

    def _iter_docs(self, X):
        """Documents of ``X`` decoded to ``str`` (lists of ``str`` for ``input="tokens"``),
        with a progress bar over them when the estimator's ``verbose`` is set."""
        check_not_dataframe(X)
        return iter_documents(X, self.input, self.encoding, self.decode_error,
                              caller=type(self).__name__, verbose=self._verbosity())

    def _verbosity(self):
        """The estimator's ``verbose`` (0 for one without the parameter)."""
        return getattr(self, "verbose", 0)

    def _token_lists(self, X, *, check_tokens=True, copy=True):
        """One list of tokens (see ``_token_fn``) per document of ``X``, new by default.

        When the tokens are used as they are (``input="tokens"`` with no lowercasing,
        stop words or stemming, which need ``str``), a caller that only reads them may
        pass ``copy=False`` to get the documents' own lists, and ``check_tokens=False``
        to skip the per-token ``str`` check and check its vocabulary with
        :func:`~nlpfeat.text._base._documents.check_token_types` instead.
        """
        check_not_dataframe(X)
        tokens = self._token_fn()
        as_is = tokens is list
        docs = iter_documents(X, self.input, self.encoding, self.decode_error,
                              check_tokens=check_tokens or not as_is,
                              caller=type(self).__name__, verbose=self._verbosity())
        if as_is and not copy:
            return list(docs)
        return [tokens(doc) for doc in docs]

    def _check_text_params(self):
        """Checks that ``_parameter_constraints`` cannot express; call at the top of ``fit``."""
        check_ngram_range(self.ngram_range)
        check_encoding(self.encoding)
        self.build_preprocessor()  # raises on a bad strip_accents
        if self.token_pattern is not None and self.tokenizer in (None, "regexp"):
            get_tokenizer("regexp", self.token_pattern)  # raises on a bad pattern
        for name, reason in self._unused_text_params():
            warn_unused(name, reason)
        if self.analyzer == "word" and self.input != "tokens":
            self._check_stop_words_consistency()

    def _unused_text_params(self):
        """(parameter, reason) for each text option set to a value the settings ignore.

        The reasons begin with scikit-learn's words (``'tokenizer' is not None``,
        ``'analyzer' != 'word'``, ``'analyzer' is callable``), so that a filter or a test
        written for scikit-learn's warnings matches nlpfeat's.
        """
        preprocessor = getattr(self, "preprocessor", None)
        strip_accents = getattr(self, "strip_accents", None)
        custom_tokenizer = self.tokenizer not in (None, "regexp")
        unused = []
        if custom_tokenizer and self.token_pattern is not None:
            unused.append(("token_pattern", (f"'tokenizer' is not None or 'regexp' (tokenizer="
                                             f"{self.tokenizer!r}; token_pattern is the "
                                             f"pattern of tokenizer='regexp')")))
        if self.analyzer != "word":
            unused += self._unused_by_analyzer(custom_tokenizer, preprocessor, strip_accents)
        elif self.input == "tokens":
            set_here = [("tokenizer", custom_tokenizer),
                        ("token_pattern", self.token_pattern is not None and not custom_tokenizer)]
            unused += [(name, "input='tokens' (documents are already tokenized)")
                       for name, is_set in set_here if is_set]
        if preprocessor is not None and strip_accents is not None and not callable(self.analyzer):
            unused.append(("strip_accents", "'preprocessor' is not None (it replaces lowercasing "
                                            "and accent stripping)"))
        return unused

    def _unused_by_analyzer(self, custom_tokenizer, preprocessor, strip_accents):
        """The options that ``analyzer != "word"`` leaves unused: the word analyzer's, and
        with a callable analyzer also the preprocessing and n-gram options."""
        what = "callable" if callable(self.analyzer) else repr(self.analyzer)
        set_here = [("stop_words", self.stop_words is not None),
                    ("tokenizer", custom_tokenizer),
                    ("token_pattern", self.token_pattern is not None),
                    ("stemmer", self.stemmer is not None)]
        unused = [(name, f"'analyzer' != 'word' (analyzer is {what})")
                  for name, is_set in set_here if is_set]
        if callable(self.analyzer):
            set_here = [("preprocessor", preprocessor is not None),
                        ("strip_accents", strip_accents is not None),
                        ("ngram_range", tuple(self.ngram_range) != (1, 1))]
            unused += [(name, "'analyzer' is callable") for name, is_set in set_here if is_set]
        return unused

    def _check_stop_words_consistency(self):
        """Warn if tokenizing a user's stop words gives tokens that are not stop words.

        Such stop words can never match (``"you've"`` is tokenized to ``"you"`` and ``"ve"``).
        Named lists are consistent with the default tokenizer and are not checked; a
        preprocessor that fails on a plain word (one that expects other objects) skips the check.
        """
        if self.stop_words is None or isinstance(self.stop_words, str):
            return
        stop_words = self.get_stop_words()
        preprocess, tokenize = self.build_preprocessor(), self.build_tokenizer()
        inconsistent = set()
        for word in stop_words:
            try:
                tokens = tokenize(preprocess(word))
            except (TypeError, AttributeError, KeyError, IndexError, ValueError):
                return  # a user preprocessor or tokenizer made for other objects than words
            inconsistent.update(token for token in tokens if token not in stop_words)
        if inconsistent:
            warn_user(
                f"Your stop_words may be inconsistent with your preprocessing. Tokenizing the "
                f"stop words generated tokens {sorted(inconsistent)!r} not in stop_words; such "
                f"stop words never match a token. Add these tokens to stop_words or remove the "
                f"words they come from."
            )

    def decode(self, doc):
        """Decode one document as ``fit`` does: read a file or a file name, decode bytes.

        Parameters
        ----------
        doc : str, bytes, path or open file (list of str with ``input="tokens"``)

        Returns
        -------
        doc : str (list of str with ``input="tokens"``)
        """
        return decode_document(doc, input=self.input, encoding=self.encoding,
                               decode_error=self.decode_error)

    def build_preprocessor(self):
        """Return the callable ``str -> str`` applied before tokenizing.

        The user's ``preprocessor`` if set; otherwise lowercasing (``lowercase=True``) then
        accent stripping (``strip_accents``). With ``input="tokens"`` it is applied to each token.

        Returns
        -------
        preprocess : callable
        """
        preprocessor = getattr(self, "preprocessor", None)
        if preprocessor is not None:
            return partial(_checked_preprocess, preprocessor)
        accent = accent_function(getattr(self, "strip_accents", None))
        if accent is None:
            return str.lower if self.lowercase else _identity
        return partial(_preprocess, lower=self.lowercase, accent=accent)

    def build_tokenizer(self):
        """Return the callable that splits one preprocessed string into a list of tokens.

        Returns
        -------
        tokenize : callable
            ``str -> list of str``; a user's tokenizer is checked to return a list.
        """
        tokenize = get_tokenizer(self.tokenizer, self.token_pattern)
        if callable(self.tokenizer):
            return partial(_checked_call, tokenize, "tokenizer")
        return tokenize

    def get_stop_words(self):
        """Return the stop words as a frozenset, or None.

        Returns
        -------
        stop_words : frozenset of str or None
        """
        return get_stop_words(self.stop_words)

    def _token_fn(self):
        """Callable doc -> list of tokens: preprocessed, tokenized, stop words removed, stemmed."""
        preprocess = self.build_preprocessor()
        steps = []
        if self.input == "tokens":
            if preprocess is not _identity:
                steps.append(partial(_map_list, preprocess))
        else:
            if preprocess is not _identity:
                steps.append(preprocess)
            steps.append(self.build_tokenizer())
        stop_words = self.get_stop_words()
        if stop_words:
            steps.append(partial(_remove_stop_words, stop_words=stop_words))
        stem = get_stemmer(self.stemmer)
        if stem is not None:
            steps.append(partial(_map_list, stem))
        return chain(steps, empty=list)

    def _text_fn(self):
        """Callable doc -> one preprocessed string, for the character analyzers."""
        preprocess = self.build_preprocessor()
        steps = [" ".join] if self.input == "tokens" else []
        if preprocess is not _identity:
            steps.append(preprocess)
        return chain(steps, empty=_identity)

    #: Private switch: False sends every document through the Python analyzer (tests).
    _compiled_text = True

    def _text_pass_options(self, *, lower_tokens=False, ngrams=False, chars=False):
        """The :class:`TextPass` options when the compiled pass gives exactly the Python
        analyzer's features, else None (the Python path): see :func:`text_pass_options`;
        word n-grams only for a caller that counts them (``ngrams``: the pass's
        ``ngram_range``), else they take the Python path; the character analyzers only
        for a caller that counts them (``chars``: :func:`char_pass_options`)."""
        if not self._compiled_text:
            return None
        if chars and self.analyzer in ("char", "char_wb"):
            return char_pass_options(self)
        ngram_range = check_ngram_range(self.ngram_range)
        if ngram_range != (1, 1) and not ngrams:
            return None
        options = text_pass_options(self, lower_tokens=lower_tokens)
        return None if options is None else options._replace(ngram_range=ngram_range)

    def _feature_fn(self):
        """Callable decoded doc -> list of features; a subclass may override (positions, ...)."""
        return self._analyzer_fn()

    def _analyzer_fn(self):
        """Callable decoded doc -> list of features from the text options."""
        if callable(self.analyzer):
            return partial(_checked_call, self.analyzer, "analyzer")
        ngram_range = check_ngram_range(self.ngram_range)
        if self.analyzer == "word":
            tokens = self._token_fn()
            if ngram_range == (1, 1):
                return tokens
            return chain([tokens, partial(word_ngrams, ngram_range=ngram_range)])
        if self.analyzer not in ("char", "char_wb"):
            raise ValueError(
                f"analyzer={self.analyzer!r} is not supported; expected 'word', 'char', "
                f"'char_wb' or a callable."
            )
        ngrams = char_ngrams if self.analyzer == "char" else char_wb_ngrams
        return chain([self._text_fn(), partial(ngrams, ngram_range=ngram_range)])

    def build_analyzer(self):
        """Return a callable that turns one raw document into its list of features.

        The document is decoded (``decode``: bytes, files and file names, as in ``fit``),
        then ``analyzer="word"`` preprocesses, tokenizes, removes stop words, stems and forms
        word n-grams; ``"char"`` and ``"char_wb"`` form character n-grams of the preprocessed
        text; a callable analyzer receives the decoded document.

        Returns
        -------
        analyzer : callable
            ``doc -> list of str``; it pickles when the user's callables do.
        """
        return chain([partial(decode_document, input=self.input, encoding=self.encoding,
                               decode_error=self.decode_error),
                       self._feature_fn()])

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.string = True
        tags.input_tags.two_d_array = False
        return tags


def check_not_dataframe(X):
    """Raise TypeError for a DataFrame: iterating over one yields its column names."""
    shape = getattr(X, "shape", None)
    if hasattr(X, "columns") and shape is not None and len(shape) == 2:
        raise TypeError(
            f"Expected an iterable of documents; got a {type(X).__name__} with columns "
            f"{list(X.columns)[:5]!r}. Iterating over a DataFrame yields its column names, not "
            f"its rows: pass the text column, e.g. df['text']."
        )


def check_encoding(encoding):
    """Raise ValueError if ``encoding`` is not a codec Python knows."""
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise ValueError(
            f"encoding={encoding!r} is not a known text encoding; pass a codec name such as "
            f"'utf-8' or 'latin-1'."
        ) from None


def accent_function(strip_accents):
    """The callable for ``strip_accents`` (``"ascii"``, ``"unicode"``, callable or None)."""
    if strip_accents is None or callable(strip_accents):
        return strip_accents
    if strip_accents in _ACCENT_STRIPPERS:
        return _ACCENT_STRIPPERS[strip_accents]
    raise ValueError(
        f"strip_accents={strip_accents!r} is not supported; expected 'ascii', 'unicode', a "
        f"callable or None."
    )


def warn_unused(name, reason):
    """Warn that parameter ``name`` has no effect because of ``reason``."""
    warn_user(
        f"The parameter {name!r} will not be used since {reason}; leave it at its default "
        f"or change the setting that overrides it."
    )


_LIBRARY_DIRS = (str(Path(__file__).resolve().parents[2]), str(Path(sklearn.__file__).parent))


def warn_user(message, category=UserWarning):
    """``warnings.warn`` attributed to the first caller outside nlpfeat and scikit-learn."""
    frame, level = sys._getframe(0), 1
    while frame is not None and frame.f_code.co_filename.startswith(_LIBRARY_DIRS):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


def decode_document(doc, input="content", encoding="utf-8", decode_error="strict"):
    """One document decoded as ``fit`` decodes it (``str`` passes through at once)."""
    if type(doc) is str and input == "content":
        return doc
    return next(iter_documents([doc], input, encoding, decode_error))


class Chain:
    """Picklable composition: ``Chain([f, g])(doc) == g(f(doc))``."""

    __slots__ = ("steps",)

    def __init__(self, steps):
        self.steps = tuple(steps)

    def __call__(self, doc):
        for step in self.steps:
            doc = step(doc)
        return doc

    def __reduce__(self):
        return Chain, (self.steps,)


def chain(steps, empty=None):
    """``Chain(steps)``; the one step itself, or ``empty`` when there are none."""
    if not steps:
        return empty
    return steps[0] if len(steps) == 1 else Chain(steps)


def _identity(x):
    return x


def _preprocess(doc, lower, accent):
    if lower:
        doc = doc.lower()
    return accent(doc)


def _map_list(func, items):
    return list(map(func, items))


def _remove_stop_words(tokens, stop_words):
    return [token for token in tokens if token not in stop_words]


def _checked_preprocess(func, doc):
    """``func(doc)``; a clear TypeError if a user's preprocessor does not return a str."""
    out = func(doc)
    if not isinstance(out, str):
        raise TypeError(
            f"The preprocessor {getattr(func, '__name__', func)!r} returned "
            f"{type(out).__name__} for a document; it must return a str. Check that it ends "
            f"with a `return`."
        )
    return out


def _checked_call(func, what, doc):
    """``func(doc)`` as a list; a clear TypeError if a user's callable returns None or a str."""
    out = func(doc)
    if type(out) is list:
        return out
    if out is None or isinstance(out, (str, bytes)):
        raise TypeError(
            f"The {what} {getattr(func, '__name__', func)!r} returned {type(out).__name__} for "
            f"a document; it must return a list of str. Check that it ends with a `return`."
        )
    return list(out)
