"""Tokenizers, stop-word lists and stemmers: the public face of nlpfeat's text options.

Every vectorizer in :mod:`nlpfeat.text` takes ``tokenizer``, ``stop_words`` and
``stemmer`` as names or callables; these functions turn such an option into the callable
that the estimators use, so a user can apply exactly the same processing elsewhere.

Examples
--------
>>> from nlpfeat.text.tokenize import get_tokenizer
>>> get_tokenizer()("我爱NLP和machine learning".lower())
['我', '爱', 'nlp', '和', 'machine', 'learning']
>>> get_tokenizer("whitespace")("the fat  cat")
['the', 'fat', 'cat']
"""
from nlpfeat.text._base._tokenize import (
    CJK_IDEOGRAPHS,
    DEFAULT_TOKEN_PATTERN,
    TOKENIZERS,
    get_stemmer,
    get_stop_words,
    get_tokenizer,
)

__all__ = ["CJK_IDEOGRAPHS", "DEFAULT_TOKEN_PATTERN", "TOKENIZERS", "get_stemmer",
           "get_stop_words", "get_tokenizer"]
