"""The docstring text nlpfeat's estimators share, written once and filled in by ``fill_doc``.

A placeholder ``%(name)s`` standing alone on a docstring line is replaced by the fragment
``DOCS[name]``, indented as the placeholder is (the habit of pandas' ``@doc``, MNE's
``fill_doc`` and scipy's ``doccer``), so ``help()``, numpydoc and the Sphinx pages show the
whole text. Only whole-line placeholders are filled: a ``%`` elsewhere stays as written.
"""
import inspect
import re

__all__ = ["DOCS", "fill_doc"]

_TOKEN_OPTIONS = """\
input : {"content", "filename", "file", "tokens"}, default="content"
    What the documents are: text (``str``/``bytes``), file names, open files, or lists of
    tokens that are used as given (no tokenizer).
encoding : str, default="utf-8"
    Encoding used to decode ``bytes``.
decode_error : {"strict", "ignore", "replace"}, default="strict"
    What to do with bytes ``encoding`` cannot decode; ``"strict"`` raises an error naming
    the document.
lowercase : bool, default=True
    Lowercase the text before tokenizing.
tokenizer : {"regexp", "treebank", "wordpunct", "whitespace", "char", "jieba"}, callable \
or None, default="regexp"
    How to split a document into tokens. ``"regexp"`` (or None) makes every CJK
    ideograph a token and otherwise finds runs of two or more word characters, exactly
    like scikit-learn's default ``token_pattern``. ``"jieba"`` needs
    ``pip install "nlpfeat[zh]"``.
token_pattern : str or None, default=None
    Regular expression for ``tokenizer="regexp"`` (``None``: the CJK-aware default).
stemmer : {"porter", "snowball"}, callable or None, default=None
    Stem each token (nltk's Porter or English Snowball stemmer, or a callable).
stop_words : {"english", "chinese"}, list or None, default=None
    Tokens to remove (after lowercasing, before stemming and n-grams)."""

_NGRAM_OPTIONS = """\
ngram_range : tuple (min_n, max_n), default=(1, 1)
    Word or character n-grams with ``min_n <= n <= max_n``.
analyzer : {"word", "char", "char_wb"} or callable, default="word"
    Features are word n-grams, character n-grams, or character n-grams inside word
    boundaries; a callable maps one decoded document to its list of features (returning
    None or a str is an error)."""

_ACCENT_OPTIONS = """\
strip_accents : {"ascii", "unicode"}, callable or None, default=None
    Remove accents after lowercasing: ``"ascii"`` keeps only characters with an ASCII
    decomposition, ``"unicode"`` removes combining marks after NFKD (scikit-learn's
    functions); a callable ``str -> str`` is used as given.
preprocessor : callable or None, default=None
    Replaces lowercasing and accent stripping: ``str -> str``, applied to each decoded
    document (to each token with ``input="tokens"``) before tokenizing."""

_NUMERICAL_CONTRACT = """\
Numerical contract: for finite inputs and bandwidths with magnitudes between
1e-100 and 1e100, outputs are finite, the documented invariants hold, and rescaling
X (and a fixed bandwidth with it) changes predictions by at most 1e-9 relative
(rounding, amplified only by an ill-conditioned local linear fit or by
``bandwidth="loo-ard"`` on the non-smooth loss of a compact kernel). Beyond that
range the result is still correct or a ValueError says what to change; never a
silent NaN, infinity or mean."""

#: Fragment name -> text (numpydoc, unindented).
DOCS = {
    # the one wording of every numeric estimator's contract (kernels and attention)
    "numerical_contract": _NUMERICAL_CONTRACT,
    # the shared text options, in the order of their dataclass fields (text/_base/_options)
    "token_options": _TOKEN_OPTIONS,
    "ngram_options": _NGRAM_OPTIONS,
    "accent_options": _ACCENT_OPTIONS,
    # the progress bar of the estimators that read documents (nlpfeat._progress.track)
    "verbose": """\
verbose : int, default=0
    With 1 or more, a progress bar on stderr over the documents read (the bytes, with
    the rate in MB/s, of a :class:`~nlpfeat.datasets.Corpus`); 0 is silent.""",
    # the dataset loaders that can return (data, target)
    "return_X_y_sections": """\
return_X_y : bool, default=False
    If True, return ``(data, target)`` instead of a Bunch.

Returns
-------
data : :class:`~sklearn.utils.Bunch`
    Dictionary-like object with the following attributes.""",
    # the sections of the methods that read documents
    "fit_sections": """\
Parameters
----------
X : iterable of documents
    Consumed once: a generator works.
y : None
    Ignored.

Returns
-------
self : object
    The fitted estimator.""",
    "partial_fit_sections": """\
Parameters
----------
X : what ``fit`` takes
    One batch of whole documents.
y : None
    Ignored.

Returns
-------
self : object
    The updated estimator.""",
    "fit_transform_parameters": """\
Parameters
----------
X : iterable of documents
    Consumed once: a generator works.
y : None
    Ignored.""",
    "transform_parameters": """\
Parameters
----------
X : iterable of documents""",
    "fixed_vocabulary_attribute": """\
fixed_vocabulary_ : bool
    True when the columns are the given ``vocabulary``, False when the vocabulary was
    learnt from the corpus (scikit-learn's attribute). Before ``fit`` it tells whether
    ``vocabulary`` is set.""",
    "feature_names_sections": """\
Parameters
----------
input_features : None
    Ignored; present for API consistency with scikit-learn's transformers.

Returns
-------
feature_names_out : ndarray of str objects""",
}

_PLACEHOLDER = re.compile(r"^([ \t]*)%\((\w+)\)s[ \t]*$", re.MULTILINE)


def _filled(docstring):
    def indent(match):
        prefix, name = match.groups()
        if name not in DOCS:
            raise KeyError(f"docstring placeholder %({name})s has no fragment in DOCS")
        return "\n".join(prefix + line if line else line for line in DOCS[name].splitlines())

    return _PLACEHOLDER.sub(indent, docstring)


def fill_doc(obj):
    """Fill the placeholders of a function's docstring, or of a class's and its methods'."""
    if obj.__doc__:
        obj.__doc__ = _filled(obj.__doc__)
    members = vars(obj).values() if inspect.isclass(obj) else ()
    for member in members:
        if inspect.isfunction(member) and member.__doc__:
            member.__doc__ = _filled(member.__doc__)
    return obj
