"""Estimator parameters declared once, as keyword-only dataclass fields.

A base declares the parameters its estimators share; an estimator decorated with
:func:`estimator_params` declares only its own (overriding a shared default where it
differs). The ``__init__`` the standard library generates stores every parameter verbatim
and has a real signature, so ``get_params``, ``clone``, pickling and the docs see explicit
parameters. The generated ``__init__`` drops the field annotations: the types are
documented in the docstrings and checked by ``_parameter_constraints``, so the signature
reads as a hand-written one.
"""
import dataclasses

__all__ = ["estimator_params"]


def estimator_params(cls):
    """Make ``cls`` a keyword-only dataclass that keeps scikit-learn's repr, eq and hash.

    ``eq=False`` keeps identity equality and hashing, ``repr=False`` keeps
    ``BaseEstimator.__repr__``; a field passed ``kw_only=False`` comes first, positional.
    """
    cls = dataclasses.dataclass(kw_only=True, eq=False, repr=False, match_args=False)(cls)
    vars(cls)["__init__"].__annotations__.clear()
    return cls
