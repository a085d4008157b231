"""Renamed parameters: the old name keeps working for one release, as scikit-learn deprecates.

The old parameter stays in the signature with the default ``"deprecated"``; ``__init__``
stores both verbatim (so ``get_params``, ``set_params`` and ``clone`` see both), and ``fit``
(or the function) asks :func:`renamed_param` / :func:`renamed_value` for the value to use:
the old one, with a ``FutureWarning`` naming the new parameter, when it was set. Setting both
is an error. The constraints of the old name are the new one's plus the hidden
``"deprecated"`` marker (:func:`deprecated_constraint`).
"""
import inspect
import warnings

from nlpfeat._validation import Hidden, StrOptions

__all__ = ["DEPRECATED", "deprecated_constraint", "renamed_param", "renamed_value"]

#: Default of a renamed parameter's old name: "not given".
DEPRECATED = "deprecated"

#: The release that renamed the parameters, and the one that removes their old names.
RENAMED_IN, REMOVED_IN = "0.2", "0.3"


def deprecated_constraint(constraints):
    """The constraints of a renamed parameter's old name: the new name's, or ``"deprecated"``."""
    return [*constraints, Hidden(StrOptions({DEPRECATED}))]


def _given(value):
    return not (isinstance(value, str) and value == DEPRECATED)


def _is_default(value, default):
    if value is default:
        return True
    try:
        return bool(value == default)
    except (TypeError, ValueError):           # an array compared elementwise
        return False


def renamed_value(old_value, new_value, *, old, new, default, owner):
    """The value to use for parameter ``new``, whose deprecated name is ``old``.

    Parameters
    ----------
    old_value, new_value : object
        What the caller passed under each name (``"deprecated"``: the old name not given).
    old, new : str
        The two names.
    default : object
        The new parameter's default: a new value other than it, with the old name set too,
        means both were given.
    owner : str
        The estimator or function, for the messages.

    Returns
    -------
    value : ``new_value``, or ``old_value`` (with a ``FutureWarning``) when the old name was set.
    """
    if not _given(old_value):
        return new_value
    if not _is_default(new_value, default):
        raise ValueError(f"{owner}: got both {old}={old_value!r} and {new}={new_value!r}; "
                         f"{old!r} is the deprecated name of {new!r}, pass {new} only.")
    warnings.warn(f"{owner}: the parameter {old!r} was renamed {new!r} in {RENAMED_IN} and "
                  f"will be removed in {REMOVED_IN}; pass {new}={old_value!r} instead.",
                  FutureWarning, stacklevel=3)
    return old_value


def renamed_param(estimator, old, new):
    """:func:`renamed_value` for an estimator's parameters (``fit`` calls it; nothing is set)."""
    default = inspect.signature(type(estimator).__init__).parameters[new].default
    return renamed_value(getattr(estimator, old), getattr(estimator, new), old=old, new=new,
                         default=default, owner=type(estimator).__name__)
