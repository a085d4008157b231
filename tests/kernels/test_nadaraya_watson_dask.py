"""Nadaraya-Watson queries held in a dask array, on a real LocalCluster of two workers
(no mocks), against the in-memory results."""
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_diabetes, load_iris

da = pytest.importorskip("dask.array")
pytest.importorskip("distributed")

from nlpfeat.kernels import NadarayaWatsonClassifier, NadarayaWatsonRegressor


@pytest.fixture(scope="module")
def diabetes():
    X, y = load_diabetes(return_X_y=True)
    return X[:300, :4], y[:300], X[300:, :4]


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    return X[::2], names[::2], X[1::2]


@pytest.mark.parametrize("kernel, engine", [("gaussian", "auto"), ("gaussian", "numpy"),
                                            ("epanechnikov", "numpy")])
def test_regressor_on_dask_queries_equals_in_memory(dask_client, diabetes, kernel, engine):
    X, y, queries = diabetes
    bandwidth = 0.15 if kernel == "epanechnikov" else 0.05
    reg = NadarayaWatsonRegressor(kernel, bandwidth=bandwidth, engine=engine).fit(X, y)
    Q = da.from_array(queries, chunks=(50, 4))
    pred = reg.predict(Q)
    assert isinstance(pred, da.Array) and pred.chunks[0] == Q.chunks[0]
    np.testing.assert_allclose(pred.compute(), reg.predict(queries), rtol=1e-12, atol=0)
    W = reg.attention_weights(Q)
    assert isinstance(W, da.Array)
    expected = reg.attention_weights(queries)
    got = W.compute()
    assert sp.issparse(got) == sp.issparse(expected) == (kernel == "epanechnikov")
    if sp.issparse(got):
        assert isinstance(W.blocks[0].compute(), sp.csr_matrix)
        got, expected = got.toarray(), expected.toarray()
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("kernel", ["gaussian", "epanechnikov"])
def test_per_head_on_dask_queries_equals_in_memory(dask_client, diabetes, kernel):
    X, y, queries = diabetes
    reg = NadarayaWatsonRegressor(kernel, bandwidth=0.15).fit(X, y)
    heads = reg.attention_weights(da.from_array(queries, chunks=(50, 4)), per_head=True)
    assert isinstance(heads, da.Array) and heads.shape == (1, len(queries), len(X))
    expected = reg.attention_weights(queries, per_head=True)
    np.testing.assert_allclose(heads.compute(), expected, rtol=1e-12, atol=1e-300)


def test_multi_output_regressor(dask_client, diabetes):
    X, y, queries = diabetes
    Y = np.column_stack([y, -y])
    reg = NadarayaWatsonRegressor(bandwidth=0.05).fit(X, Y)
    pred = reg.predict(da.from_array(queries, chunks=(40, 4)))
    assert pred.shape == (len(queries), 2)
    np.testing.assert_allclose(pred.compute(), reg.predict(queries), rtol=1e-12)


def test_classifier_on_dask_queries_equals_in_memory(dask_client, iris):
    X, y, queries = iris
    clf = NadarayaWatsonClassifier(bandwidth=0.5).fit(X, y)
    Q = da.from_array(queries, chunks=(20, 4))
    labels = clf.predict(Q)
    assert isinstance(labels, da.Array) and labels.dtype == clf.classes_.dtype
    np.testing.assert_array_equal(labels.compute(), clf.predict(queries))
    np.testing.assert_allclose(clf.predict_proba(Q).compute(), clf.predict_proba(queries),
                               rtol=1e-12)
    np.testing.assert_allclose(clf.attention_weights(Q).compute(),
                               clf.attention_weights(queries), rtol=1e-12)


def test_the_model_enters_the_graph_once(diabetes):
    from dask.core import get_dependencies      # every dask's graph, tuples or Task objects

    X, y, queries = diabetes
    reg = NadarayaWatsonRegressor(bandwidth=0.05).fit(X, y)
    pred = reg.predict(da.from_array(queries, chunks=(20, 4)))
    graph = dict(pred.__dask_graph__())
    holding = [key for key, value in graph.items()
               if isinstance(getattr(value, "value", value), NadarayaWatsonRegressor)]
    assert len(holding) == 1
    n_blocks = len(pred.chunks[0])
    assert n_blocks == int(np.ceil(len(queries) / 20)) > 1
    using = [key for key in graph if holding[0] in get_dependencies(graph, key)]
    assert len(using) == n_blocks


def test_blocks_split_along_the_features_are_rechunked(dask_client, diabetes):
    X, y, queries = diabetes
    reg = NadarayaWatsonRegressor(bandwidth=0.05).fit(X, y)
    Q = da.from_array(queries, chunks=(30, 1))
    np.testing.assert_allclose(reg.predict(Q).compute(), reg.predict(queries), rtol=1e-12)


def test_bad_dask_queries_get_clear_errors(diabetes):
    X, y, queries = diabetes
    reg = NadarayaWatsonRegressor(bandwidth=0.05).fit(X, y)
    with pytest.raises(ValueError, match="X has 3 features, but NadarayaWatsonRegressor "
                                         "is expecting 4"):
        reg.predict(da.from_array(queries[:, :3], chunks=(50, 3)))
    with pytest.raises(ValueError, match="2-D dask array"):
        reg.predict(da.from_array(queries[:, 0], chunks=50))
    with pytest.raises(Exception, match="not fitted"):
        NadarayaWatsonRegressor().predict(da.from_array(queries, chunks=(50, 4)))


def test_on_empty_raise_raises_at_compute(dask_client, diabetes):
    X, y, queries = diabetes
    reg = NadarayaWatsonRegressor("epanechnikov", bandwidth=1e-3, on_empty="raise",
                                  engine="numpy").fit(X, y)
    lazy = reg.predict(da.from_array(queries, chunks=(50, 4)))
    with pytest.raises(ValueError, match="no training point within the support"):
        lazy.compute()


def test_grid_search_on_the_dask_backend_equals_the_in_process_search(dask_client):
    import importlib.util
    from pathlib import Path

    joblib = pytest.importorskip("joblib")
    path = Path(__file__).resolve().parents[2] / "examples" / "grid_search_dask.py"
    spec = importlib.util.spec_from_file_location("grid_search_dask", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    kernels, bandwidths = ["gaussian", "tricube"], [1.0, 3.0, 9.0]
    from distributed import get_task_stream

    with get_task_stream(dask_client) as stream, joblib.parallel_backend("dask"):
        on_dask = example.grid_search(kernels, bandwidths, n_jobs=-1)
    assert len({task["worker"] for task in stream.data}) == 2   # the fits ran on both workers
    in_process = example.grid_search(kernels, bandwidths)
    assert example.same_results(on_dask, in_process)
    for name in ("mean_test_score", "std_test_score", "split0_test_score"):
        np.testing.assert_allclose(on_dask.cv_results_[name], in_process.cv_results_[name],
                                   rtol=1e-12)
    np.testing.assert_array_equal(on_dask.cv_results_["rank_test_score"],
                                  in_process.cv_results_["rank_test_score"])
    assert on_dask.best_params_ == in_process.best_params_
    # the comparison can fail: another grid's table differs
    other = example.grid_search(kernels, [1.0, 3.0, 8.0])
    assert not example.same_results(other, in_process)
