"""The shared text options, declared once as dataclass fields: every estimator built on them
keeps scikit-learn's conventions (explicit signature, verbatim ``__init__``, sklearn's repr,
identity equality and hashing)."""
import dataclasses
import inspect
import pickle

import pytest
from sklearn.base import BaseEstimator, clone

import nlpfeat.text as text
from nlpfeat.text._base._analyzer import TEXT_PARAMETER_CONSTRAINTS, TOKEN_OPTIONS
from nlpfeat.text._base._options import TextOptions, TokenOptions

# The first parameter of each estimator, positional as before the options were shared.
_FIRST_POSITIONAL = {"Collocations": "measure", "CountDeviation": "max_features",
                     "KernelAttentionPooling": "embeddings", "PMIEmbedding": "n_components",
                     "SemanticUnitBagOfWords": "embeddings"}
_REQUIRED = {"KernelAttentionPooling": {"embeddings": {"cat": [1.0, 0.0]}}}


def _estimators():
    classes = [getattr(text, name) for name in text.__all__]
    return [c for c in classes if inspect.isclass(c) and issubclass(c, TokenOptions)]


def test_the_fields_are_the_one_list_of_options_and_constraints():
    assert tuple(f.name for f in dataclasses.fields(TokenOptions)) == TOKEN_OPTIONS
    assert {f.name for f in dataclasses.fields(TextOptions)} == set(TEXT_PARAMETER_CONSTRAINTS)
    assert len(_estimators()) >= 9


@pytest.mark.parametrize("Est", _estimators(), ids=lambda c: c.__name__)
def test_init_stores_every_parameter_verbatim(Est):
    sig = inspect.signature(Est)
    assert all(p.annotation is p.empty for p in sig.parameters.values())
    assert {f.name for f in dataclasses.fields(TokenOptions)} <= set(sig.parameters)
    first = next(iter(sig.parameters.values()))
    if Est.__name__ in _FIRST_POSITIONAL:
        assert first.name == _FIRST_POSITIONAL[Est.__name__]
        assert first.kind is first.POSITIONAL_OR_KEYWORD
    else:
        assert first.kind is first.KEYWORD_ONLY
    markers = {name: object() for name in sig.parameters}
    est = Est(**markers)
    assert vars(est).keys() == markers.keys()               # nothing else set in __init__
    assert all(getattr(est, name) is value for name, value in markers.items())


@pytest.mark.parametrize("Est", _estimators(), ids=lambda c: c.__name__)
def test_repr_equality_hash_and_pickle_stay_scikit_learns(Est):
    est = Est(**_REQUIRED.get(Est.__name__, {}), stop_words=["the"], lowercase=False)
    assert repr(est).startswith(f"{Est.__name__}(") and "stop_words=['the']" in repr(est)
    assert "input='content'" not in repr(est)                # sklearn's: changed values only
    twin = clone(est)
    assert twin != est and hash(twin) != hash(est) and est == est   # identity, as any estimator
    assert len({est, twin}) == 2
    restored = pickle.loads(pickle.dumps(est))
    assert restored.get_params() == est.get_params()
    assert Est.__repr__ is BaseEstimator.__repr__
