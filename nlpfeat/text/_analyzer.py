"""The text options every vectorizer shares, and the analyzers (doc -> features) built from them.

``TextMixin`` holds the parameter constraints, the validation and the construction of the
per-document callables, once, for ``BagOfWords``, ``PositionalBagOfWords`` and
``TfidfVectorizer`` (and any later text estimator). The callables are built at ``fit`` /
``transform`` time from the parameters, never stored, so estimators clone and pickle.
"""
import re
import warnings

from nlpfeat._validation import Integral, StrOptions
from nlpfeat.text._documents import DECODE_ERRORS, INPUT_TYPES, iter_documents
from nlpfeat.text._tokenize import TOKENIZERS, get_stemmer, get_stop_words, get_tokenizer

__all__ = [
    "TEXT_PARAMETER_CONSTRAINTS",
    "TextMixin",
    "word_ngrams",
    "char_ngrams",
    "char_wb_ngrams",
    "check_ngram_range",
]

TEXT_PARAMETER_CONSTRAINTS = {
    "input": [StrOptions(set(INPUT_TYPES))],
    "encoding": [str],
    "decode_error": [StrOptions(set(DECODE_ERRORS))],
    "lowercase": ["boolean"],
    "tokenizer": [StrOptions(set(TOKENIZERS)), callable],
    "token_pattern": [str, None],
    "stemmer": [StrOptions({"porter", "snowball"}), callable, None],
    "stop_words": [StrOptions({"english", "chinese"}), list, tuple, set, frozenset, None],
    "ngram_range": [tuple],
    "analyzer": [StrOptions({"word", "char", "char_wb"}), callable],
}

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
    >>> from nlpfeat.text._analyzer import word_ngrams
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


def char_ngrams(text, ngram_range=(1, 1)):
    """Character n-grams of ``text`` after collapsing runs of white space (scikit-learn's ``char``).

    Examples
    --------
    >>> from nlpfeat.text._analyzer import char_ngrams
    >>> char_ngrams("a  cat", (2, 2))
    ['a ', ' c', 'ca', 'at']
    """
    text = _WHITE_SPACES.sub(" ", text)
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
    >>> from nlpfeat.text._analyzer import char_wb_ngrams
    >>> char_wb_ngrams("a cat", (3, 3))
    [' a ', ' ca', 'cat', 'at ']
    """
    min_n, max_n = ngram_range
    features = []
    for word in _WHITE_SPACES.sub(" ", text).split():
        word = f" {word} "
        for n in range(min_n, max_n + 1):
            if len(word) <= n:
                features.append(word)
                break
            features.extend([word[i : i + n] for i in range(len(word) - n + 1)])
    return features


class TextMixin:
    """Shared text options of the nlpfeat vectorizers.

    Subclasses store ``input, encoding, decode_error, lowercase, tokenizer, token_pattern,
    stemmer, stop_words, ngram_range, analyzer`` in ``__init__`` and merge
    ``TEXT_PARAMETER_CONSTRAINTS`` into their ``_parameter_constraints``.
    """

    def _iter_docs(self, X):
        """Documents of ``X`` decoded to ``str`` (lists of ``str`` for ``input="tokens"``)."""
        return iter_documents(X, self.input, self.encoding, self.decode_error)

    def _token_lists(self, X, *, check_tokens=True, copy=True):
        """One list of tokens (see ``_token_fn``) per document of ``X``, new by default.

        When the tokens are used as they are (``input="tokens"`` with no lowercasing,
        stop words or stemming, which need ``str``), a caller that only reads them may
        pass ``copy=False`` to get the documents' own lists, and ``check_tokens=False``
        to skip the per-token ``str`` check and check its vocabulary with
        :func:`~nlpfeat.text._documents.check_token_types` instead.
        """
        tokens = self._token_fn()
        as_is = tokens is list
        docs = iter_documents(X, self.input, self.encoding, self.decode_error,
                              check_tokens=check_tokens or not as_is)
        if as_is and not copy:
            return list(docs)
        return [tokens(doc) for doc in docs]

    def _check_text_params(self):
        """Checks that ``_parameter_constraints`` cannot express; call at the top of ``fit``."""
        check_ngram_range(self.ngram_range)
        if self.token_pattern is not None and self.tokenizer != "regexp":
            warnings.warn(
                f"token_pattern={self.token_pattern!r} is not used with "
                f"tokenizer={self.tokenizer!r}; it applies to tokenizer='regexp' only.",
                UserWarning,
                stacklevel=3,
            )
        elif self.token_pattern is not None:
            get_tokenizer("regexp", self.token_pattern)  # raises on a bad pattern

    def _token_fn(self):
        """Callable doc -> list of tokens: lowercased, tokenized, stop words removed, stemmed."""
        lower = self.lowercase
        if self.input == "tokens":
            tokens = _lower_each if lower else list
        else:
            tokenize = get_tokenizer(self.tokenizer, self.token_pattern)
            tokens = _compose(str.lower, tokenize) if lower else tokenize
        stop_words = get_stop_words(self.stop_words)
        if stop_words:
            tokens = _compose(tokens, _stop_filter(stop_words))
        stem = get_stemmer(self.stemmer)
        if stem is not None:
            tokens = _compose(tokens, _stem_each(stem))
        return tokens

    def _text_fn(self):
        """Callable doc -> one string (lowercased if asked) for the character analyzers."""
        if self.input == "tokens":
            text = " ".join
            return _compose(text, str.lower) if self.lowercase else text
        return str.lower if self.lowercase else _identity

    def build_analyzer(self):
        """Return a callable that turns one document into its list of features.

        ``analyzer="word"``: the tokens of ``_token_fn`` then word n-grams; ``"char"`` and
        ``"char_wb"``: character n-grams of the (lowercased) text; a callable analyzer is
        returned as given (it receives the decoded document).

        Returns
        -------
        analyzer : callable
            ``doc -> list of str``.
        """
        if callable(self.analyzer):
            return self.analyzer
        ngram_range = check_ngram_range(self.ngram_range)
        if self.analyzer == "word":
            tokens = self._token_fn()
            if ngram_range == (1, 1):
                return tokens
            return _compose(tokens, lambda toks: word_ngrams(toks, ngram_range))
        ngrams = char_ngrams if self.analyzer == "char" else char_wb_ngrams
        return _compose(self._text_fn(), lambda text: ngrams(text, ngram_range))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.string = True
        tags.input_tags.two_d_array = False
        return tags


def _identity(x):
    return x


def _compose(first, second):
    def composed(doc):
        return second(first(doc))

    return composed


def _lower_each(tokens):
    return [token.lower() for token in tokens]


def _stop_filter(stop_words):
    def remove_stop_words(tokens):
        return [token for token in tokens if token not in stop_words]

    return remove_stop_words


def _stem_each(stem):
    def stem_tokens(tokens):
        return list(map(stem, tokens))

    return stem_tokens
