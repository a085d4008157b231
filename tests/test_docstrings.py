"""The shared docstring fragments (``nlpfeat._docstrings``): filled wherever a placeholder
stands, indented as it."""
import inspect

import pytest

import nlpfeat.attention as attention
import nlpfeat.datasets as datasets
import nlpfeat.kernels as kernels
import nlpfeat.text as text
from nlpfeat._docstrings import DOCS, fill_doc


def _documented():
    for module in (text, kernels, attention, datasets):
        for name in module.__all__:
            yield from _with_methods(name, getattr(module, name))


def _with_methods(name, obj):
    yield name, obj
    if inspect.isclass(obj):
        for attr, member in inspect.getmembers(obj, inspect.isfunction):
            yield f"{name}.{attr}", member


def test_no_placeholder_is_left_in_a_public_docstring():
    left = [name for name, obj in _documented() if "%(" in (obj.__doc__ or "")]
    assert not left, f"unfilled docstring placeholders (decorate with fill_doc): {left}"


def test_every_fragment_is_used_and_shows_in_the_estimators():
    docs = "\n".join(obj.__doc__ or "" for _, obj in _documented())
    for fragment in DOCS.values():
        assert fragment.splitlines()[0] in docs
    assert "    tokenizer : {" in text.KernelAttentionPooling.__doc__   # the full option text
    assert "stop_words : " in text.CountDeviation.__doc__
    contract = DOCS["numerical_contract"].splitlines()[-1]
    for est in (kernels.NadarayaWatsonRegressor, attention.SequenceAttentionRegressor):
        assert contract in est.__doc__


def test_fill_doc_indents_as_the_placeholder_and_rejects_an_unknown_name():
    @fill_doc
    class Example:
        """Summary, 100% literal.

            %(transform_parameters)s
        """

        def method(self):
            """Text.

            %(fit_sections)s
            """

    assert "100% literal" in Example.__doc__
    assert "\n            X : iterable of documents\n" in Example.__doc__
    assert "\n            y : None\n                Ignored.\n" in Example.method.__doc__
    with pytest.raises(KeyError, match="no_such_fragment"):
        fill_doc(type("Bad", (), {"__doc__": "A.\n\n    %(no_such_fragment)s\n"}))
