"""KernelAttentionPooling on the compiled engine against the numpy reference, on the Lee
corpus with PMI/SVD token vectors: same document vectors and weights to round-off."""
import numpy as np
import pytest

from nlpfeat.datasets import load_lee
from nlpfeat.text import KernelAttentionPooling, PMIEmbedding

pytest.importorskip("numba")

import nlpfeat.kernels._compiled as compiled  # noqa: E402

KERNELS = ["gaussian", "epanechnikov", "biweight", "triweight", "tricube", "triangular",
           "tophat", "cosine", "laplacian", "logistic", "sigmoid"]


@pytest.fixture(scope="module")
def lee():
    data = load_lee()
    emb = PMIEmbedding(n_components=40).fit(data.background)
    tokens = KernelAttentionPooling(emb).fit(data.test)._token_lists(data.test)
    return emb, tokens


def _both(emb, tokens, **params):
    ref = KernelAttentionPooling(emb, engine="numpy", input="tokens", **params).fit(tokens)
    got = KernelAttentionPooling(emb, engine="numba", input="tokens", **params).fit(tokens)
    assert (ref.engine_, got.engine_) == ("numpy", "numba")
    return ref, got


def _assert_same(ref, got, tokens):
    """Pooled vectors to 1e-12 of the embeddings' scale (a coordinate may cancel to ~0)."""
    scale = np.abs(ref.embeddings_).max()
    np.testing.assert_allclose(got.transform(tokens), ref.transform(tokens), rtol=1e-12,
                               atol=1e-12 * scale)
    np.testing.assert_allclose(np.concatenate(got.attention_weights(tokens)),
                               np.concatenate(ref.attention_weights(tokens)), rtol=1e-12,
                               atol=1e-12)


def _spy(monkeypatch):
    calls = []
    loop = compiled.segment_attention
    monkeypatch.setattr(compiled, "segment_attention",
                        lambda *a, **k: calls.append(1) or loop(*a, **k))
    return calls


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("query", ["mean", "idf", "fixed"])
def test_compiled_pooling_equals_numpy_engine_on_lee(lee, monkeypatch, kernel, query):
    emb, tokens = lee
    if query == "fixed":
        query = np.asarray(emb.embeddings_[:20], dtype=np.float64).mean(axis=0)
    d = emb.embeddings_.shape[1]
    # the median heuristic, per-dimension bandwidths, a tiny one (nearest token, empty
    # compact supports) and a huge one (the plain or idf-weighted mean)
    for bandwidth in ["median", np.linspace(0.05, 0.5, d), 1e-9, 1e6]:
        ref, got = _both(emb, tokens, kernel=kernel, bandwidth=bandwidth, query=query)
        calls = _spy(monkeypatch)
        _assert_same(ref, got, tokens)
        assert calls     # the compiled loop ran


@pytest.mark.parametrize("kernel", ["gaussian", "epanechnikov", "tophat"])
def test_tiny_bandwidth_ties_share_the_weight_on_both_engines(kernel):
    emb = {"a": [1.0, 0.0], "b": [-1.0, 0.0], "c": [0.0, 3.0]}
    docs = [["a", "b"], ["a", "b", "c"], ["c"]]   # "a" and "b": equidistant from the mean
    ref, got = _both(emb, docs, kernel=kernel, bandwidth=1e-6)
    _assert_same(ref, got, docs)
    np.testing.assert_allclose(got.attention_weights(docs)[0], [0.5, 0.5], rtol=1e-12)


def test_a_user_kernel_runs_on_numpy_under_the_numba_engine(lee, monkeypatch):
    emb, tokens = lee
    ref, got = _both(emb, tokens[:10], kernel=lambda u: np.exp(-u))
    calls = _spy(monkeypatch)
    np.testing.assert_array_equal(got.transform(tokens[:10]), ref.transform(tokens[:10]))
    assert not calls


def test_engine_is_validated(lee):
    emb, tokens = lee
    with pytest.raises(ValueError, match="engine"):
        KernelAttentionPooling(emb, engine="cuda", input="tokens").fit(tokens)
