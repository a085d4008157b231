"""pandas and polars: a Series of documents works as a list does, a whole DataFrame is a
clear error, dense-output transformers ``set_output`` to either, sparse-output ones do not
offer it."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from _estimator_cases import CASES, DOCS, TOKENS
from sklearn.compose import make_column_transformer
from sklearn.preprocessing import StandardScaler

from nlpfeat.text import (
    Collocations,
    PMIEmbedding,
    TfidfVectorizer,
    TopicModel,
    cooccurrence,
    topic_coherence,
)

pd = pytest.importorskip("pandas")
pl = pytest.importorskip("polars")

#: The cases whose estimator reads documents (text or token lists) in fit and transform.
DOCUMENT_CASES = [name for name, (_, data, _) in CASES.items()
                  if data is DOCS or data is TOKENS or name == "dependency"]
TRANSFORMER_CASES = [name for name in CASES if hasattr(CASES[name][0](), "transform")]


def _pandas(values):
    """A pandas Series whose index is neither 0..n-1 nor in order: documents are taken by
    position, never by label."""
    return pd.Series(values, index=np.arange(len(values))[::-1] * 10 + 7)


def _polars(values):
    return pl.Series("text", values)


def _dense(out):
    return out.toarray() if sp.issparse(out) else out


def _fit_transform(make, data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # unknown tokens, convergence on toy data
        est = make().fit(data)
        return est, est.transform(data)


def test_the_document_cases_cover_every_text_reader():
    assert len(DOCUMENT_CASES) >= 14


@pytest.mark.parametrize("to_series", [_pandas, _polars], ids=["pandas", "polars"])
@pytest.mark.parametrize("name", DOCUMENT_CASES)
def test_a_series_of_documents_works_as_the_list(name, to_series):
    make, data, _ = CASES[name]
    _, want = _fit_transform(make, data)
    est, got = _fit_transform(make, to_series(data))
    if isinstance(want, list):                       # Collocations: token lists
        assert got == want
    else:
        np.testing.assert_array_equal(_dense(got), _dense(want))


@pytest.mark.parametrize("to_series", [_pandas, _polars], ids=["pandas", "polars"])
def test_functions_and_scores_take_a_series(to_series):
    counts, names = cooccurrence(to_series(DOCS), 2)
    want_counts, want_names = cooccurrence(DOCS, 2)
    assert (counts != want_counts).nnz == 0 and list(names) == list(want_names)
    topics = [["cat", "dog"], ["mat", "rug"]]
    np.testing.assert_array_equal(topic_coherence(topics, to_series(TOKENS)),
                                  topic_coherence(topics, TOKENS))
    model = TopicModel(2, backend="sklearn", topn=3, random_state=0).fit(to_series(DOCS))
    assert model.score(to_series(DOCS)) == model.score(DOCS)


@pytest.mark.parametrize("frame", [pd.DataFrame, pl.DataFrame], ids=["pandas", "polars"])
@pytest.mark.parametrize("make", [TfidfVectorizer, lambda: Collocations(input="tokens"),
                                  lambda: TopicModel(2), lambda: PMIEmbedding(2)],
                         ids=["tfidf", "collocations", "topics", "pmi"])
def test_a_whole_dataframe_is_a_clear_error(make, frame):
    df = frame({"text": DOCS, "label": [0, 1] * 4})
    with pytest.raises(TypeError, match=r"got a DataFrame with columns \['text', 'label'\].*"
                                        r"pass the text column, e\.g\. df\['text'\]"):
        make().fit(df)


def test_a_topic_model_still_takes_a_dataframe_of_counts():
    counts = pd.DataFrame([[1, 0, 2], [0, 3, 1], [2, 1, 0]], columns=["a", "b", "c"])
    model = TopicModel(2, backend="sklearn", random_state=0).fit(counts)
    assert model.vocabulary_ == {"a": 0, "b": 1, "c": 2}


@pytest.mark.parametrize("frame", [pd.DataFrame, pl.DataFrame], ids=["pandas", "polars"])
def test_a_dataframe_column_through_column_transformer(frame):
    df = frame({"text": DOCS, "x": np.arange(8.0)})
    ct = make_column_transformer(
        (TfidfVectorizer(), "text"),
        (PMIEmbedding(2, window=2, min_count=1, random_state=0), "text"),
        (StandardScaler(), ["x"]))
    got = _dense(ct.fit_transform(df))
    tfidf = TfidfVectorizer().fit_transform(DOCS).toarray()
    emb = PMIEmbedding(2, window=2, min_count=1, random_state=0).fit_transform(DOCS)
    np.testing.assert_array_equal(got[:, :tfidf.shape[1] + 2], np.hstack([tfidf, emb]))
    assert ct.get_feature_names_out()[0] == "tfidfvectorizer__and"


@pytest.mark.parametrize("name", TRANSFORMER_CASES)
def test_set_output_is_offered_exactly_where_the_output_is_dense(name):
    make, data, _ = CASES[name]
    est, default = _fit_transform(make, data)
    dense = isinstance(default, np.ndarray)
    assert hasattr(make(), "set_output") == dense, \
        f"{type(est).__name__}: output {type(default).__name__}"
    if not dense:
        return
    for kind, frame in (("pandas", pd.DataFrame), ("polars", pl.DataFrame)):
        _, out = _fit_transform(lambda: make().set_output(transform=kind), data)
        assert isinstance(out, frame)
        assert list(out.columns) == list(est.get_feature_names_out())
        np.testing.assert_array_equal(out.to_numpy(), default)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fitted = make().set_output(transform=kind)
            np.testing.assert_array_equal(fitted.fit_transform(data).to_numpy(), default)
