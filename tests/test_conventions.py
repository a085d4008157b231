"""Conventions every public estimator follows (docs/guide/conventions.md): parameters after the
first are keyword-only; ``attention_weights(X)`` gives (n_queries, n_keys) averaged over
heads and ``attention_weights(X, per_head=True)`` a heads axis before those two, whose mean
is the default."""
import inspect

import numpy as np
import pytest
import scipy.sparse as sp
from _estimator_cases import public_estimators

from nlpfeat.attention import AttentionRegressor, SequenceAttentionRegressor
from nlpfeat.kernels import NadarayaWatsonClassifier, NadarayaWatsonRegressor
from nlpfeat.text import KernelAttentionPooling

RNG = np.random.default_rng(0)
X, Y = RNG.normal(size=(12, 2)), RNG.normal(size=12)
TOKENS = [["cat", "sat", "on", "mat"], ["dog", "sat"], ["unknown"]]
EMB = {"cat": [1.0, 0.0], "dog": [0.0, 1.0], "sat": [1.0, 1.0], "mat": [0.5, 0.2]}


def _labels():
    return np.where(Y > 0, "hi", "lo")


# name -> (fitted estimator, queries, number of heads), built only when its test runs
CASES = {
    "nw-gaussian": lambda: (NadarayaWatsonRegressor(bandwidth=0.8).fit(X, Y), X[:5], 1),
    "nw-epanechnikov": lambda: (NadarayaWatsonRegressor("epanechnikov", bandwidth=1.5)
                                .fit(X, Y), X[:5], 1),
    "nw-classifier": lambda: (NadarayaWatsonClassifier(bandwidth=0.8).fit(X, _labels()),
                              X[:5], 1),
    "attention": lambda: (AttentionRegressor(n_heads=2, d_k=2, max_iter=2, random_state=0)
                          .fit(X, Y), X[:5], 2),
    "sequence": lambda: (SequenceAttentionRegressor(3, n_layers=1, d_model=4, n_heads=2,
                                                    dim_feedforward=4, max_iter=1,
                                                    random_state=0)
                         .fit(RNG.normal(size=(6, 6)), RNG.normal(size=6)),
                         RNG.normal(size=(2, 6)), 2),
    "torch-baseline": lambda: (_torch_baseline().fit(X, Y), X[:5], 2),
}


def _torch_baseline():
    pytest.importorskip("torch")
    from nlpfeat.compare._torch_baseline import TorchAttentionRegressor

    return TorchAttentionRegressor(d_model=4, n_heads=2, max_iter=1, random_state=0)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("name", CASES)
def test_per_head_adds_a_heads_axis_whose_mean_is_the_default(name):
    est, Xq, n_heads = CASES[name]()
    W = est.attention_weights(Xq)
    heads = est.attention_weights(Xq, per_head=True)
    W = W.toarray() if sp.issparse(W) else W
    assert isinstance(heads, np.ndarray)
    assert heads.shape[-3:] == (n_heads,) + W.shape[-2:]
    np.testing.assert_allclose(heads.mean(axis=-3), W, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(W.sum(axis=-1), 1.0, rtol=1e-12)
    with pytest.raises(TypeError):
        est.attention_weights(Xq, True)            # keyword-only, as everywhere


def test_kernel_attention_pooling_per_head():
    pool = KernelAttentionPooling(EMB, input="tokens").fit(TOKENS)
    with pytest.warns(UserWarning):                 # a document without a known token
        pool.transform(TOKENS)
    weights = pool.attention_weights(TOKENS)
    heads = pool.attention_weights(TOKENS, per_head=True)
    assert [h.shape for h in heads] == [(1, len(doc)) for doc in TOKENS]
    for w, h in zip(weights, heads):
        np.testing.assert_array_equal(h[0], w)
    got, tokens = pool.attention_weights(TOKENS, per_head=True, return_tokens=True)
    assert tokens == TOKENS and len(got) == len(TOKENS)


def test_parameters_after_the_first_are_keyword_only():
    estimators = list(public_estimators())
    assert len(estimators) >= 18
    for est in estimators:
        params = list(inspect.signature(est).parameters.values())[1:]
        positional = [p.name for p in params if p.kind is not p.KEYWORD_ONLY]
        assert not positional, f"{est.__name__}: {positional} should be keyword-only"


# Other spellings of a top-k count: a public signature may hold them only as the deprecated
# old name of ``topn`` (default "deprecated"), for one release.
_TOP_K_SPELLINGS = {"top_k", "topk", "top_n", "n_top", "n_top_words", "n_top_terms",
                    "n_words", "num_words", "k_top"}
_PUBLIC_MODULES = ("nlpfeat", "nlpfeat.text", "nlpfeat.text.tokenize", "nlpfeat.kernels",
                   "nlpfeat.attention", "nlpfeat.attention.functional",
                   "nlpfeat.attention.layers", "nlpfeat.attention.optim", "nlpfeat.datasets",
                   "nlpfeat.compare", "nlpfeat.viz")


def _public_signatures():
    """(label, signature) of every public function, class constructor and public method."""
    import importlib

    for module_name in _PUBLIC_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:                               # an optional dependency
            continue
        names = getattr(module, "__all__", [n for n in dir(module) if not n.startswith("_")])
        for name in names:
            obj = getattr(module, name, None)
            members = [(name, obj)] if callable(obj) else []
            if inspect.isclass(obj):
                members += [(f"{name}.{attr}", value) for attr, value in vars(obj).items()
                            if not attr.startswith("_") and callable(value)]
            for label, member in members:
                try:
                    yield f"{module_name}.{label}", inspect.signature(member)
                except (TypeError, ValueError):
                    continue


def test_the_top_k_count_is_spelled_topn():
    signatures = list(_public_signatures())
    assert len(signatures) > 100
    offenders = [f"{label}({param.name}={param.default!r})"
                 for label, sig in signatures for param in sig.parameters.values()
                 if param.name in _TOP_K_SPELLINGS and param.default != "deprecated"]
    assert not offenders, f"spell the top-k count 'topn' (old names: default 'deprecated'): " \
                          f"{offenders}"
