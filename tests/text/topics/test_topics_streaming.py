"""TopicModel on streamed text: Corpus files, chunked transform, Dask bags (a real
LocalCluster of two workers)."""

import numpy as np
import pytest
import sklearn
from _corpus_files import write_gzip_lines

from nlpfeat.datasets import Corpus
from nlpfeat.text import BagOfWords, TopicModel
from nlpfeat.text._topics._gensim_backend import BowStream, to_bow


@pytest.fixture(scope="module")
def lee_lines():
    from nlpfeat.datasets import load_lee

    return [" ".join(doc.split()) for doc in load_lee().background[:120]]


@pytest.fixture(scope="module")
def lee_file(tmp_path_factory, lee_lines):
    return write_gzip_lines(tmp_path_factory.mktemp("topics") / "lee.txt.gz", lee_lines)


def via_bag_of_words(params, lines):
    """The reference: BagOfWords first, then TopicModel on the matrix and its words."""
    bow = BagOfWords(dtype=np.float64)
    X = bow.fit_transform(lines)
    return TopicModel(vocabulary=bow.vocabulary_, **params).fit(X), X


@pytest.mark.parametrize("backend,method", [("gensim", "lda"), ("sklearn", "lda"),
                                            ("gensim", "lsi"), ("sklearn", "nmf")])
def test_a_corpus_file_equals_bag_of_words_then_topic_model(lee_file, lee_lines, backend,
                                                            method):
    params = {"n_components": 4, "backend": backend, "method": method, "max_iter": 2,
              "random_state": 0}
    reference, X = via_bag_of_words(params, lee_lines)
    model = TopicModel(**params).fit(Corpus(lee_file))
    assert model.vocabulary_ == reference.vocabulary_
    assert model.n_features_in_ == X.shape[1]
    np.testing.assert_allclose(model.components_, reference.components_, rtol=1e-10,
                               atol=1e-12)
    np.testing.assert_allclose(model.coherence_, reference.coherence_, rtol=1e-12)
    np.testing.assert_allclose(model.transform(Corpus(lee_file)), reference.transform(X),
                               rtol=1e-9, atol=1e-12)
    assert model.score(Corpus(lee_file)) == pytest.approx(reference.score(X), rel=1e-12)


def test_string_documents_a_generator_and_fit_transform(lee_lines):
    params = {"n_components": 3, "backend": "sklearn", "max_iter": 3, "random_state": 0}
    reference, X = via_bag_of_words(params, lee_lines)
    got = TopicModel(**params).fit_transform(line for line in lee_lines)
    np.testing.assert_allclose(got, reference.transform(X), rtol=1e-9, atol=1e-12)


def test_transform_after_a_matrix_fit_needs_the_words(lee_lines):
    X = BagOfWords().fit_transform(lee_lines)
    model = TopicModel(n_components=2, backend="sklearn", random_state=0).fit(X)
    with pytest.raises(ValueError, match="fitted on a matrix without words"):
        model.transform(lee_lines)


@pytest.mark.parametrize("backend,method", [("gensim", "lda"), ("gensim", "nmf"),
                                            ("sklearn", "lda"), ("gensim", "lsi")])
def test_transform_block_by_block_equals_the_backend_on_all_rows(lee_lines, backend, method):
    model = TopicModel(n_components=3, backend=backend, method=method, max_iter=2,
                       random_state=0).fit(lee_lines)
    X = BagOfWords(vocabulary=model.vocabulary_, dtype=np.float64).transform(lee_lines)
    whole = np.asarray(model._backend.transform(X))
    with sklearn.config_context(working_memory=0.002):          # a few rows per block
        blocks = model.transform(lee_lines)
    np.testing.assert_allclose(blocks, whole, rtol=1e-10, atol=1e-13)


def test_bow_stream_is_the_bag_of_words_of_every_row(lee_lines):
    X = BagOfWords(dtype=np.float64).fit_transform(lee_lines)
    stream = BowStream(X, block=7)
    assert len(stream) == X.shape[0]
    assert list(stream) == to_bow(X) == list(stream)            # re-iterable


# ---- Dask --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def client(dask_client):
    """The session's LocalCluster of two workers (tests/conftest.py)."""
    return dask_client


@pytest.mark.parametrize("backend", ["gensim", "sklearn"])
def test_fit_and_transform_of_a_dask_bag_equal_the_single_machine_results(client, lee_file,
                                                                         lee_lines, backend):
    db = pytest.importorskip("dask.bag")
    bag = db.read_text(lee_file).repartition(3)
    assert bag.npartitions == 3
    params = {"n_components": 3, "backend": backend, "max_iter": 2, "random_state": 0}
    on_bag = TopicModel(**params).fit(bag)
    local = TopicModel(**params).fit(lee_lines)
    assert on_bag.vocabulary_ == local.vocabulary_
    np.testing.assert_array_equal(on_bag.components_, local.components_)
    np.testing.assert_array_equal(on_bag.transform(bag), local.transform(lee_lines))
