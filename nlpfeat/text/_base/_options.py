"""The shared text options, declared once as dataclass fields of three nested bases.

A text estimator derives from one of them and, decorated with
:func:`nlpfeat._params.estimator_params`, declares only its own parameters as fields.
"""
from typing import Any

from nlpfeat._params import estimator_params
from nlpfeat.text._base._analyzer import TextMixin

__all__ = ["TokenOptions", "NgramOptions", "TextOptions"]


@estimator_params
class TokenOptions(TextMixin):
    """The options of every estimator that reads documents as tokens (``TOKEN_OPTIONS``)."""

    input: Any = "content"
    encoding: Any = "utf-8"
    decode_error: Any = "strict"
    lowercase: Any = True
    tokenizer: Any = "regexp"
    token_pattern: Any = None
    stemmer: Any = None
    stop_words: Any = None


@estimator_params
class NgramOptions(TokenOptions):
    """The token options plus the analyzer and its n-gram range."""

    ngram_range: Any = (1, 1)
    analyzer: Any = "word"


@estimator_params
class TextOptions(NgramOptions):
    """Every shared text option: the n-gram options plus accent stripping and a preprocessor."""

    strip_accents: Any = None
    preprocessor: Any = None

