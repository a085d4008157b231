"""Every public name's docstring has an Examples section with a doctest: what the API pages
of the documentation site show, checked without building them (the site's build and its
checks are in ``tests/test_docs.py``, in the slow pass)."""
import importlib
import os
import pkgutil
import re


def _public_modules():
    """nlpfeat's public modules with an ``__all__`` (no private part in the name), but the
    top level (which re-exports the subpackages') and the command line."""
    import nlpfeat

    names = []
    for info in pkgutil.walk_packages(nlpfeat.__path__, "nlpfeat."):
        if any(part.startswith("_") for part in info.name.split(".")) or info.name == "nlpfeat.cli":
            continue
        if hasattr(importlib.import_module(info.name), "__all__"):
            names.append(info.name)
    return names


def _documented(module):
    return [name for name in module.__all__
            if callable(getattr(module, name)) and not isinstance(getattr(module, name), type(os))]


def test_every_public_name_has_a_docstring_example():
    """What the API pages show, checked without building them: each public name's
    docstring has an Examples section with a doctest."""
    for module_name in _public_modules():
        module = importlib.import_module(module_name)
        for name in _documented(module):
            doc = getattr(module, name).__doc__ or ""
            assert re.search(r"^\s*Examples\n\s*-{8}", doc, re.M) and ">>> " in doc, \
                f"{module_name}.{name}: no Examples section with a doctest"
