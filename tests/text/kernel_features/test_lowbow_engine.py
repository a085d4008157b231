"""LocallyWeightedBagOfWords on the compiled engine against the numpy reference, on the
Lee corpus: the same sparse matrix (entries in the same places, values to round-off)."""
import numpy as np
import pytest

from nlpfeat.datasets import load_lee
from nlpfeat.text import LocallyWeightedBagOfWords

pytest.importorskip("numba")

import nlpfeat.kernels._compiled as compiled  # noqa: E402

KERNELS = ["gaussian", "epanechnikov", "biweight", "triweight", "tricube", "triangular",
           "tophat", "cosine", "laplacian", "logistic", "sigmoid"]


@pytest.fixture(scope="module")
def lee_tokens():
    docs = load_lee().test
    return LocallyWeightedBagOfWords().fit(docs)._token_lists(docs)


def _both(tokens, **params):
    ref = LocallyWeightedBagOfWords(engine="numpy", input="tokens", **params).fit(tokens)
    got = LocallyWeightedBagOfWords(engine="numba", input="tokens", **params).fit(tokens)
    assert (ref.engine_, got.engine_) == ("numpy", "numba")
    return ref, got


def _assert_same(A, B):
    A, B = A.tocsr(), B.tocsr()
    np.testing.assert_array_equal(A.indptr, B.indptr)
    np.testing.assert_array_equal(A.indices, B.indices)
    np.testing.assert_allclose(A.data, B.data, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("pooling", ["concat", "mean"])
def test_compiled_lowbow_equals_numpy_engine_on_lee(lee_tokens, monkeypatch, kernel, pooling):
    calls = []
    loop = compiled.position_weights
    monkeypatch.setattr(compiled, "position_weights",
                        lambda *a, **k: calls.append(1) or loop(*a, **k))
    # normal, tiny (empty compact supports: the nearest token(s), ties at mu = 0.5 of an
    # even-length document) and huge (the l1-normalised bag of words) bandwidths
    for bandwidth in [0.2, 1e-4, 1e6]:
        ref, got = _both(lee_tokens, kernel=kernel, bandwidth=bandwidth, n_positions=7,
                         combine=pooling)
        _assert_same(got.transform(lee_tokens), ref.transform(lee_tokens))
    assert calls


def test_tiny_bandwidth_midpoint_ties_share_the_weight_on_both_engines():
    docs = [["a", "b", "c", "d"]]     # mu = 0.5 is equidistant from "b" and "c"
    ref, got = _both(docs, kernel="tophat", bandwidth=1e-3, n_positions=3)
    X = got.transform(docs)
    _assert_same(X, ref.transform(docs))
    np.testing.assert_allclose(X.toarray()[0, 4:8], [0.0, 0.5, 0.5, 0.0], rtol=1e-12)


def test_user_kernel_runs_on_numpy_and_engine_is_validated(lee_tokens):
    ref, got = _both(lee_tokens[:5], kernel=lambda u: np.exp(-u))
    _assert_same(got.transform(lee_tokens[:5]), ref.transform(lee_tokens[:5]))
    with pytest.raises(ValueError, match="engine"):
        LocallyWeightedBagOfWords(engine="cuda").fit(["a b"])
