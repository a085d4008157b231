"""Tokenizers, stop-word lists and stemmers shared by every text estimator.

Each helper turns a user-facing option (a name or a callable) into a plain callable, once,
so that the per-document hot path is a chain of C-level calls (``re.findall``, ``map``).
"""
import logging
import re
from pathlib import Path

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from nlpfeat._validation import import_optional
from nlpfeat.text._counting._cjk import CJK_IDEOGRAPHS

__all__ = [
    "TOKENIZERS", "DEFAULT_TOKEN_PATTERN", "CJK_IDEOGRAPHS",
    "get_tokenizer", "get_stop_words", "get_stemmer",
]

# A maximal run of two or more word characters that are not CJK ideographs, or one CJK
# ideograph alone. On text without ideographs the first branch finds exactly what
# scikit-learn's default ``(?u)\b\w\w+\b`` finds (maximal runs of >= 2 word characters).
# The branches start on disjoint characters; the common one goes first (it is faster).
DEFAULT_TOKEN_PATTERN = rf"[^\W{CJK_IDEOGRAPHS}]{{2,}}|[{CJK_IDEOGRAPHS}]"

TOKENIZERS = ("regexp", "treebank", "wordpunct", "whitespace", "char", "jieba")

_STOP_WORDS_ZH = Path(__file__).parent / "stop_words_zh.txt"


def get_tokenizer(tokenizer="regexp", token_pattern=None, *, keep_punctuation=False):
    """Return a callable that splits one string into a list of tokens.

    Parameters
    ----------
    tokenizer : {"regexp", "treebank", "wordpunct", "whitespace", "char", "jieba"}, callable \
            or None, default="regexp"
        ``"regexp"`` (or None, scikit-learn's spelling of the default): every CJK ideograph
        is a token of its own, and other tokens are runs of two or more word characters, as
        scikit-learn's default ``token_pattern`` finds them.
        ``"treebank"`` and ``"wordpunct"``: nltk's Treebank and WordPunct tokenizers.
        ``"whitespace"``: ``str.split``. ``"char"``: every character that is a letter or a
        digit (每个字). ``"jieba"``: Chinese word segmentation (needs the ``zh`` extra).
        ``"char"`` and ``"jieba"`` drop punctuation and symbols (。，、！ ...), as the
        default ``"regexp"`` does. A callable is returned unchanged.
    token_pattern : str or None, default=None
        Regular expression for ``"regexp"`` (scikit-learn's meaning: with one capturing group,
        the group is the token). ``None`` uses the CJK-aware default.
    keep_punctuation : bool, default=False
        Keep punctuation and symbol tokens with ``"char"`` (every non-space character) and
        ``"jieba"``; pass the returned callable as an estimator's ``tokenizer``.

    Returns
    -------
    tokenize : callable
        ``str -> list of str``.

    Examples
    --------
    >>> from nlpfeat.text._base._tokenize import get_tokenizer
    >>> get_tokenizer()("我爱NLP和machine learning")
    ['我', '爱', 'NLP', '和', 'machine', 'learning']
    >>> get_tokenizer("wordpunct")("Don't stop!")
    ['Don', "'", 't', 'stop', '!']
    >>> get_tokenizer("char")("天气好，真好。"), get_tokenizer("char", keep_punctuation=True)("好，")
    (['天', '气', '好', '真', '好'], ['好', '，'])
    """
    if callable(tokenizer):
        return tokenizer
    if tokenizer is None or tokenizer == "regexp":
        return _default_tokenizer if token_pattern is None else _regexp_tokenizer(token_pattern)
    if tokenizer == "treebank":
        from nltk.tokenize import TreebankWordTokenizer

        return TreebankWordTokenizer().tokenize
    if tokenizer == "wordpunct":
        from nltk.tokenize import WordPunctTokenizer

        return WordPunctTokenizer().tokenize
    if tokenizer == "whitespace":
        return str.split
    if tokenizer == "char":
        return _CHAR_ALL if keep_punctuation else _CHAR_WORD
    if tokenizer == "jieba":
        return _jieba_tokenizer(keep_punctuation)
    raise ValueError(
        f"tokenizer={tokenizer!r} is not supported; expected one of {list(TOKENIZERS)} "
        f"or a callable str -> list of str."
    )


def _regexp_tokenizer(token_pattern):
    try:
        pattern = re.compile(token_pattern)
    except re.error as exc:
        raise ValueError(
            f"token_pattern={token_pattern!r} is not a valid regular expression: {exc}."
        ) from None
    if pattern.groups > 1:
        raise ValueError(
            f"token_pattern={token_pattern!r} has {pattern.groups} capturing groups; expected at "
            f"most one (the token). Use non-capturing groups (?:...) for the others."
        )
    return pattern.findall


_DEFAULT_FINDALL = re.compile(DEFAULT_TOKEN_PATTERN).findall
_ASCII_FINDALL = re.compile(r"(?a)\w\w+").findall  # the same tokens on ASCII text, faster


def _default_tokenizer(text):
    """The default pattern; ASCII text (an O(1) check) takes an equivalent, faster pattern."""
    return _ASCII_FINDALL(text) if text.isascii() else _DEFAULT_FINDALL(text)


_CHAR_ALL = re.compile(r"\S").findall          # every non-space character
_CHAR_WORD = re.compile(r"[^\W_]").findall      # letters and digits: no punctuation
_HAS_WORD_CHAR = re.compile(r"[^\W_]").search


def _jieba_tokenizer(keep_punctuation=False):
    jieba = import_optional("jieba", "zh", "tokenizer='jieba'")
    jieba.setLogLevel(logging.WARNING)
    return _jieba_tokenize_all if keep_punctuation else _jieba_tokenize


def _jieba_tokenize_all(text):
    """jieba's words of ``text`` without the white-space ones (a module function: pickles)."""
    import jieba

    return [word for word in jieba.lcut(text) if not word.isspace()]


def _jieba_tokenize(text):
    """jieba's words holding a letter or a digit: no punctuation or symbols."""
    import jieba

    return [word for word in jieba.lcut(text) if _HAS_WORD_CHAR(word)]


def get_stop_words(stop_words):
    """Return the stop-word set for ``stop_words``, or None.

    Parameters
    ----------
    stop_words : {"english", "chinese"}, iterable of str or None
        ``"english"`` is scikit-learn's list, ``"chinese"`` the list shipped with nlpfeat
        (``nlpfeat/text/_base/stop_words_zh.txt``); an iterable is used as given.

    Returns
    -------
    stop_words : frozenset of str or None

    Examples
    --------
    >>> from nlpfeat.text._base._tokenize import get_stop_words
    >>> "the" in get_stop_words("english"), "的" in get_stop_words("chinese")
    (True, True)
    """
    if stop_words is None:
        return None
    if stop_words == "english":
        return frozenset(ENGLISH_STOP_WORDS)
    if stop_words == "chinese":
        return _chinese_stop_words()
    if isinstance(stop_words, str):
        raise ValueError(
            f"stop_words={stop_words!r} is not a known list; expected 'english', 'chinese', "
            f"an iterable of words or None."
        )
    return frozenset(stop_words)


def _chinese_stop_words():
    text = _STOP_WORDS_ZH.read_text(encoding="utf-8")
    return frozenset(line.strip() for line in text.splitlines() if line.strip() and line[0] != "#")


class _MemoStem(dict):
    """Memoised stemmer: ``list(map(memo.__getitem__, tokens))`` stems each type once."""

    def __init__(self, stem):
        super().__init__()
        self.stem = stem

    def __missing__(self, token):
        self[token] = stemmed = self.stem(token)
        return stemmed


def get_stemmer(stemmer):
    """Return a callable mapping one token to its stem, or None.

    Parameters
    ----------
    stemmer : {"porter", "snowball"}, callable or None
        ``"porter"``: nltk's Porter stemmer; ``"snowball"``: nltk's English Snowball stemmer.
        Neither needs downloaded data. A callable ``str -> str`` is used as given.

    Returns
    -------
    stem : callable or None
        Memoised: each distinct token is stemmed once per returned callable.

    Examples
    --------
    >>> from nlpfeat.text._base._tokenize import get_stemmer
    >>> stem = get_stemmer("porter")
    >>> [stem(w) for w in ["running", "cats", "generously"]]
    ['run', 'cat', 'gener']
    """
    if stemmer is None:
        return None
    if stemmer == "porter":
        from nltk.stem import PorterStemmer

        return _MemoStem(PorterStemmer().stem).__getitem__
    if stemmer == "snowball":
        from nltk.stem import SnowballStemmer

        return _MemoStem(SnowballStemmer("english").stem).__getitem__
    if callable(stemmer):
        return _MemoStem(stemmer).__getitem__
    raise ValueError(
        f"stemmer={stemmer!r} is not supported; expected 'porter', 'snowball', a callable "
        f"str -> str or None."
    )
