"""nlpfeat: classical NLP features and kernel regression as scikit-learn estimators.

Attention is kernel regression: Nadaraya-Watson with a Gaussian kernel is softmax
attention. nlpfeat puts text features (``nlpfeat.text``), kernel regression
(``nlpfeat.kernels``) and torch-free neural attention (``nlpfeat.attention``) side by
side in one scikit-learn ``Pipeline``. Every public estimator is importable from the
top level as well as from its subpackage.

Subpackages are imported lazily, on first use (as scikit-learn does): ``import
nlpfeat.kernels`` loads the kernels and what they need, never the text features, so the
rule that the numeric core knows no text holds at run time too.
"""
import importlib

from nlpfeat._persist import trusted_types  # noqa: F401 (public: nlpfeat.trusted_types)

__version__ = "0.2.0.dev0"

#: Subpackages whose ``__all__`` the top level re-exports, searched in this order.
_SUBPACKAGES = ("kernels", "attention", "text")
#: Names of the subpackages' ``__all__`` that stay under their subpackage.
_NOT_REEXPORTED = ("functional", "layers", "optim")
_OTHER_MODULES = ("compare", "datasets", "viz", "cli")


def _subpackage(name):
    return importlib.import_module(f"nlpfeat.{name}")


def _public_names():
    return ["__version__", "trusted_types"] + [name for sub in _SUBPACKAGES for name in _subpackage(sub).__all__
                              if name not in _NOT_REEXPORTED]


def __getattr__(name):
    if name in _SUBPACKAGES or name in _OTHER_MODULES:
        return _subpackage(name)
    if name == "__all__":
        return _public_names()
    if not name.startswith("_"):
        for sub in _SUBPACKAGES:
            module = _subpackage(sub)
            if name in module.__all__ and name not in _NOT_REEXPORTED:
                value = getattr(module, name)
                globals()[name] = value   # later look-ups skip this function
                return value
    raise AttributeError(f"module 'nlpfeat' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_public_names()) | set(_SUBPACKAGES) | set(_OTHER_MODULES))
