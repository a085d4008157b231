"""The shared text options, declared once as dataclass fields of three nested bases.

An estimator decorated with :func:`text_options` declares only its own parameters as
fields (overriding a shared default where it differs); the ``__init__`` the standard
library generates stores every parameter verbatim and has a real signature, so
``get_params``, ``clone``, pickling and the docs see explicit parameters. The generated
``__init__`` drops the field annotations: the types are documented in the docstrings and
checked by ``_parameter_constraints``, so the signature reads as a hand-written one.
"""
import dataclasses
from typing import Any

from nlpfeat.text._base._analyzer import TextMixin

__all__ = ["text_options", "TokenOptions", "NgramOptions", "TextOptions"]


def text_options(cls):
    """Make ``cls`` a keyword-only dataclass that keeps scikit-learn's repr, eq and hash.

    ``eq=False`` keeps identity equality and hashing, ``repr=False`` keeps
    ``BaseEstimator.__repr__``; a field passed ``kw_only=False`` comes first, positional.
    """
    cls = dataclasses.dataclass(kw_only=True, eq=False, repr=False, match_args=False)(cls)
    vars(cls)["__init__"].__annotations__.clear()
    return cls


@text_options
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


@text_options
class NgramOptions(TokenOptions):
    """The token options plus the analyzer and its n-gram range."""

    ngram_range: Any = (1, 1)
    analyzer: Any = "word"


@text_options
class TextOptions(NgramOptions):
    """Every shared text option: the n-gram options plus accent stripping and a preprocessor."""

    strip_accents: Any = None
    preprocessor: Any = None

