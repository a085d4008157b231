"""What every nlpfeat text vectorizer promises: scikit-learn protocol, shared text options,
bad-input errors, Pipeline and GridSearchCV."""
import copy
import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.utils import get_tags

from nlpfeat.datasets import load_polarity
from nlpfeat.text import BagOfWords, PositionalBagOfWords, TfidfVectorizer

ESTIMATORS = [BagOfWords, PositionalBagOfWords, TfidfVectorizer]
DOCS = ["the fat cat sat on the mat", "the dog ate my homework", "a cat and a dog", "我爱NLP"]


@pytest.fixture(scope="module")
def polarity():
    return load_polarity()


def _dense(X):
    return X.toarray()


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_string_input_tag(Est):
    tags = get_tags(Est())
    assert tags.input_tags.string and not tags.input_tags.two_d_array


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_clone_pickle_and_params_round_trip(Est):
    est = Est(ngram_range=(1, 2), stop_words=["the"], min_df=1)
    params = est.get_params()
    assert Est().set_params(**params).get_params() == params
    assert clone(est).get_params() == params
    fitted = est.fit(DOCS)
    restored = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(_dense(restored.transform(DOCS)), _dense(fitted.transform(DOCS)))
    assert restored.vocabulary_ == fitted.vocabulary_
    assert not hasattr(clone(fitted), "vocabulary_")


@pytest.mark.parametrize("Est", ESTIMATORS)
@pytest.mark.parametrize("kwargs", [{}, dict(ngram_range=(1, 3), max_features=20), dict(min_df=2)])
def test_fit_transform_equals_fit_then_transform(Est, kwargs, polarity):
    X1 = Est(**kwargs).fit_transform(polarity.data)
    X2 = Est(**kwargs).fit(polarity.data).transform(polarity.data)
    assert X1.format == X2.format == "csr"
    np.testing.assert_allclose(_dense(X1), _dense(X2), rtol=0, atol=1e-14)


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_input_not_modified_and_generator_accepted(Est):
    docs = list(DOCS)
    snapshot = copy.deepcopy(docs)
    X = Est().fit_transform(docs)
    assert docs == snapshot
    gen = (d for d in DOCS)
    est = Est().fit(gen)
    assert list(gen) == []  # consumed exactly once
    np.testing.assert_allclose(_dense(est.transform(iter(DOCS))), _dense(X))


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_unseen_tokens_ignored(Est):
    est = Est(norm=None).fit(["aa bb", "bb cc"])
    X = est.transform(["zz yy", "aa qq"])
    assert X.shape == (2, len(est.vocabulary_))
    assert X[0].nnz == 0 and X[1].nnz == 1


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_not_fitted(Est):
    with pytest.raises(NotFittedError):
        Est().transform(DOCS)
    with pytest.raises(NotFittedError):
        Est().get_feature_names_out()


@pytest.mark.parametrize("Est", ESTIMATORS)
@pytest.mark.parametrize("bad, name", [(None, "NoneType"), (3.5, "float"), (b"ok", None)])
def test_non_string_document(Est, bad, name):
    if name is None:  # bytes are documents: decoded
        Est().fit(["aa", bad])
        return
    with pytest.raises(TypeError, match=f"Document 1 is of type {name}"):
        Est().fit(["aa bb", bad])
    est = Est().fit(["aa"])
    with pytest.raises(TypeError, match=f"Document 0 is of type {name}"):
        est.transform([bad])


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_bad_corpora(Est):
    with pytest.raises(ValueError, match="Empty corpus"):
        Est().fit([])
    with pytest.raises(ValueError, match="string object received"):
        Est().fit("one document")
    with pytest.raises(ValueError, match="Empty vocabulary"):
        Est(stop_words="english").fit(["the and of", "a"])
    with pytest.raises(UnicodeDecodeError, match="document 1"):
        Est().fit(["aa", b"\xa3 bb"])
    assert "bb" in "".join(Est(decode_error="ignore").fit(["aa", b"\xa3 bb"]).vocabulary_)


@pytest.mark.parametrize("Est", ESTIMATORS)
@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(min_df=3, max_df=3), "min_df=3 removed all"),
        (dict(max_df=1, stop_words=["cc", "dd"]), "max_df=1 removed all"),
        (dict(min_df=2, max_df=1), "min_df=2 is larger than max_df=1"),
        (dict(min_df=0.9, max_df=0.2), "min_df=0.9 is larger than max_df=0.2"),
        (dict(ngram_range=(2, 1)), "ngram_range=\\(2, 1\\) is invalid"),
        (dict(token_pattern="(a)(b)"), "capturing groups"),
        (dict(min_df=-1), "'min_df' parameter"),
        (dict(tokenizer="spacy"), "'tokenizer' parameter"),
        (dict(stemmer="lancaster"), "'stemmer' parameter"),
        (dict(stop_words="french"), "'stop_words' parameter"),
    ],
)
def test_contradictory_or_invalid_settings(Est, kwargs, match):
    docs = ["aa bb", "aa bb", "cc dd"]
    with pytest.raises(ValueError, match=match):
        Est(**kwargs).fit(docs)


@pytest.mark.parametrize("Est", ESTIMATORS)
@pytest.mark.parametrize(
    "kwargs, doc, present, absent",
    [
        (dict(stop_words="english"), "the cat", "cat", "the"),
        (dict(stop_words="chinese"), "我的猫", "猫", "的"),
        (dict(stemmer="snowball"), "running cats", "cat", "cats"),
        (dict(lowercase=False), "Cat", "Cat", "cat"),
        (dict(tokenizer="whitespace"), "a-b c", "a-b", "c-d"),
        (dict(tokenizer="wordpunct"), "don't", "don", "don't"),
        (dict(tokenizer="treebank"), "don't", "n't", "don"),
        (dict(tokenizer="char"), "ab", "a", "ab"),
        (dict(token_pattern=r"\S+"), "a-b c", "a-b", "ab"),
        (dict(input="tokens"), ["Hello", "World"], "hello", "Hello"),
        (dict(analyzer="char", ngram_range=(2, 2)), "abc", "bc", "abc"),
        (dict(ngram_range=(1, 2)), "new york city", "new york", "new city"),
    ],
)
def test_text_options_apply_to_every_estimator(Est, kwargs, doc, present, absent):
    names = [n.split("|", 1)[-1] for n in Est(**kwargs).fit([doc]).get_feature_names_out()]
    assert present in names and absent not in names


def test_char_wb_for_counting_estimators():
    for Est in (BagOfWords, TfidfVectorizer):
        names = Est(analyzer="char_wb", ngram_range=(3, 3)).fit(["ab"]).get_feature_names_out()
        assert names.tolist() == [" ab", "ab "]


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_pipeline_and_grid_search_on_polarity(Est, polarity):
    pipe = make_pipeline(Est(), LogisticRegression(max_iter=200))
    grid = GridSearchCV(pipe, {f"{Est.__name__.lower()}__ngram_range": [(1, 1), (1, 2)],
                               f"{Est.__name__.lower()}__min_df": [1, 2]}, cv=3)
    grid.fit(polarity.data, polarity.target)
    assert len(grid.cv_results_["params"]) == 4
    assert grid.best_score_ > 0.5  # better than chance on balanced labels
    assert grid.predict(polarity.data[:5]).shape == (5,)


def _token_estimators():
    from nlpfeat.text import (
        BagOfWords,
        Collocations,
        KernelAttentionPooling,
        LocallyWeightedBagOfWords,
        PMIEmbedding,
        TopicModel,
    )

    emb = {"cat": [1.0, 0.0], "dog": [0.0, 1.0], "sat": [1.0, 1.0]}
    return [
        BagOfWords(input="tokens", lowercase=False),
        Collocations("pmi", min_count=1, max_len=3, lowercase=False, input="tokens"),
        PMIEmbedding(2, window=2, min_count=1, input="tokens", lowercase=False,
                     random_state=0),
        KernelAttentionPooling(emb, input="tokens", lowercase=False),
        LocallyWeightedBagOfWords(input="tokens", lowercase=False, n_positions=2),
        TopicModel(2, max_iter=2, random_state=0),
    ]


@pytest.mark.parametrize("est", _token_estimators(), ids=lambda e: type(e).__name__)
def test_token_lists_are_not_modified(est):
    """Token lists are read as they are, never changed, by fit or transform."""
    docs = [["the", "cat", "sat", "on", "the", "mat"], ["the", "dog", "sat"],
            ["a", "cat", "and", "a", "dog", "sat"], ["the", "cat", "sat"]]
    snapshot = copy.deepcopy(docs)
    est.fit(docs)
    est.transform(docs)
    assert docs == snapshot


# ---- one-shot iterators: read exactly once, or rejected before any of it is read ------------
_TOKENS = [["the", "cat", "sat", "on", "the", "mat"], ["the", "dog", "sat"],
           ["a", "cat", "and", "a", "dog", "sat"], ["the", "cat", "sat"]]
_TEXTS = [" ".join(doc) for doc in _TOKENS]
_EMB = {"cat": [1.0, 0.0], "dog": [0.0, 1.0], "sat": [1.0, 1.0], "mat": [0.5, 0.2]}


def _every_text_estimator():
    """(estimator, documents) for every text estimator of nlpfeat.text."""
    from nlpfeat.text import (
        Collocations,
        KernelAttentionPooling,
        LocallyWeightedBagOfWords,
        PMIEmbedding,
        TopicModel,
    )

    return [
        (BagOfWords(), _TEXTS),
        (PositionalBagOfWords(), _TEXTS),
        (TfidfVectorizer(), _TEXTS),
        (Collocations("pmi", min_count=1, input="tokens"), _TOKENS),
        (PMIEmbedding(2, window=2, min_count=1, random_state=0), _TEXTS),
        (PMIEmbedding(2, window=2, min_count=1, random_state=0, pooling="attention"), _TEXTS),
        (TopicModel(2, max_iter=2, random_state=0), _TOKENS),
        (TopicModel(2, backend="sklearn", max_iter=2, random_state=0), _TOKENS),
        (LocallyWeightedBagOfWords(n_positions=2), _TEXTS),
        (KernelAttentionPooling(_EMB, input="tokens"), _TOKENS),
        (KernelAttentionPooling(PMIEmbedding(2, window=2, min_count=1, input="tokens",
                                             random_state=0), input="tokens"), _TOKENS),
    ]


_REJECTED = object()


def _one_shot(docs):
    return (doc for doc in docs)


def _same_document(a, b):
    if hasattr(a, "toarray") or isinstance(a, np.ndarray):     # a row of a count matrix
        return np.array_equal(*(x.toarray() if hasattr(x, "toarray") else x for x in (a, b)))
    return a == b


def _read_once_or_rejected(call, docs):
    """The call's result on a generator of ``docs``, or _REJECTED after a TypeError that
    names the fix and left the generator unread."""
    gen = _one_shot(docs)
    try:
        return call(gen)
    except TypeError as exc:
        assert "one-shot iterator" in str(exc) and "list" in str(exc), str(exc)
        assert _same_document(next(gen), docs[0])  # rejected before anything was read
        return _REJECTED


def _assert_same_output(got, expected):
    if got is _REJECTED:
        return
    if isinstance(expected, list):                 # Collocations: token lists
        assert got == expected
        return
    got, expected = (x.toarray() if hasattr(x, "toarray") else np.asarray(x)
                     for x in (got, expected))
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)


def _n_rows(out):
    return out.shape[0] if hasattr(out, "shape") else len(out)


def test_one_shot_iterator_cooccurrence_pmi_and_coherence():
    from nlpfeat.text import cooccurrence, pmi, topic_coherence

    counts, vocab = cooccurrence(_TOKENS, 2)
    got, got_vocab = cooccurrence(_one_shot(_TOKENS), 2)       # one pass, streamed
    assert got_vocab == vocab and (got != counts).nnz == 0
    with pytest.raises(TypeError, match="array-like"):          # a matrix, not a corpus
        pmi(row for row in counts.toarray())
    topics = [["cat", "sat"], ["dog", "the"]]
    np.testing.assert_allclose(topic_coherence(topics, _one_shot(_TOKENS), window_size=None),
                               topic_coherence(topics, _TOKENS, window_size=None), rtol=1e-12)


@pytest.mark.parametrize("est, docs", [c for c in _every_text_estimator()
                                       if type(c[0]).__name__ in
                                       ("PMIEmbedding", "TopicModel", "KernelAttentionPooling",
                                        "LocallyWeightedBagOfWords")],
                         ids=lambda x: type(x).__name__ if hasattr(x, "fit") else "")
def test_empty_corpus_fit_error(est, docs):
    """fit([]) and fit_transform([]) raise a clear error."""
    for method in ("fit", "fit_transform"):
        with pytest.raises(ValueError, match="Empty corpus"):
            getattr(clone(est), method)([])


# ---- one protocol for every text estimator ---------------------------------------------------
def _protocol_cases():
    """(estimator, documents) for every estimator that nlpfeat.text exports."""
    from nlpfeat.datasets import load_dependency_sample
    from nlpfeat.text import (
        CountDeviation,
        DependencyBagOfWords,
        ExplicitSemanticAnalysis,
        HashingVectorizer,
        SemanticUnitBagOfWords,
        TermWeighting,
    )

    conllu = list(load_dependency_sample("en").data)
    counts = BagOfWords().fit_transform(_TEXTS)            # TermWeighting weighs a count matrix
    return _every_text_estimator() + [
        (ExplicitSemanticAnalysis(topn=2).fit(_TEXTS), _TEXTS),
        (CountDeviation(max_features=3), _TEXTS),
        (SemanticUnitBagOfWords(_EMB, n_units=2, random_state=0), _TEXTS),
        (DependencyBagOfWords(), conllu[:4]),
        (TermWeighting(), counts),
        (TermWeighting("bm25", norm=None), counts.toarray()),
        (HashingVectorizer(n_features=64), _TEXTS),
    ]


def test_the_protocol_covers_every_text_estimator():
    import inspect

    import nlpfeat.text as text

    exported = {name for name in text.__all__ if inspect.isclass(getattr(text, name))
                and hasattr(getattr(text, name), "fit")} - {"SimilarityEnsemble"}
    covered = {type(est).__name__ for est, _ in _protocol_cases()}
    assert exported <= covered, exported - covered


@pytest.mark.parametrize("case", range(len(_protocol_cases())))
def test_protocol_of_every_text_estimator(case):
    """Unfitted error, clone/pickle/get_params round trips, output rows per document,
    feature names matching the output's width, and use inside a Pipeline."""
    import pickle

    from sklearn.base import clone
    from sklearn.exceptions import NotFittedError
    from sklearn.pipeline import make_pipeline

    est, docs = _protocol_cases()[case]
    if not isinstance(docs, list) and not hasattr(docs, "shape"):   # a matrix stays one
        docs = list(docs)
    n_docs = docs.shape[0] if hasattr(docs, "shape") else len(docs)
    fresh = clone(est)
    if get_tags(fresh).requires_fit:                # HashingVectorizer: stateless
        with pytest.raises(NotFittedError):
            fresh.transform(docs)
    assert clone(fresh).get_params().keys() == fresh.get_params().keys()
    for name, value in fresh.get_params(deep=False).items():   # estimator params: cloned
        if not hasattr(value, "get_params"):
            assert clone(fresh).get_params(deep=False)[name] is value or \
                clone(fresh).get_params(deep=False)[name] == value
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = clone(est).fit(docs)
        out = fitted.transform(docs)
        again = pickle.loads(pickle.dumps(fitted)).transform(docs)
        piped = make_pipeline(clone(est)).fit(docs).transform(docs)
    assert len(out) == n_docs if isinstance(out, list) else out.shape[0] == n_docs
    _assert_same_output(again, out)
    _assert_same_output(piped, out)
    if hasattr(fitted, "get_feature_names_out") and not isinstance(out, list):
        assert len(fitted.get_feature_names_out()) == out.shape[1]


# ---- one-shot iterators and empty batches, on every text estimator ---------------------------
def _one_shot_cases():
    """(case, method) for every text estimator and each method of it that reads documents
    (partial_fit where it is offered: not PMIEmbedding's attention pooling)."""
    return [(case, method) for case, (est, _) in enumerate(_protocol_cases())
            for method in ("fit", "transform", "fit_transform", "partial_fit")
            if method != "partial_fit" or (hasattr(est, "partial_fit")
                                           and getattr(est, "pooling", None) != "attention")]


def _case_name(est):
    extra = {"TopicModel": "backend", "PMIEmbedding": "pooling", "TermWeighting": "weighting",
             "ExplicitSemanticAnalysis": "vectorizer"}.get(type(est).__name__)
    return type(est).__name__ + (f"-{est.get_params()[extra]}" if extra else "")


@pytest.mark.parametrize("case, method", _one_shot_cases(),
                         ids=[f"{_case_name(_protocol_cases()[case][0])}-{method}"
                              for case, method in _one_shot_cases()])
def test_one_shot_iterator_is_read_once_or_rejected(case, method):
    """A generator is never consumed by a first pass and found empty by a second: fit,
    transform, fit_transform and partial_fit of every text estimator read it once (same
    result as the list) or reject it; no document is dropped."""
    est, docs = _protocol_cases()[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)        # pooling: unknown tokens
        fitted = clone(est).fit(docs)
        if method in ("fit", "partial_fit"):
            expected = fitted.transform(docs)
            model = _read_once_or_rejected(getattr(clone(est), method), docs)
            got = _REJECTED if model is _REJECTED else model.transform(docs)
        elif method == "transform":
            expected = fitted.transform(docs)
            got = _read_once_or_rejected(fitted.transform, docs)
        else:
            expected = clone(est).fit_transform(docs)
            got = _read_once_or_rejected(clone(est).fit_transform, docs)
    assert _n_rows(expected) == _n_rows(docs)
    _assert_same_output(got, expected)


def _no_documents(docs):
    """An empty batch of the documents' kind: [] of texts, a 0-row matrix of a matrix."""
    return docs[:0] if hasattr(docs, "shape") else []


def _empty_batch_cases():
    from nlpfeat.text import ExplicitSemanticAnalysis

    counts = BagOfWords().fit_transform(_TEXTS)
    return _protocol_cases() + [(ExplicitSemanticAnalysis("passthrough", topn=2), counts)]


@pytest.mark.parametrize("case", range(len(_empty_batch_cases())),
                         ids=[_case_name(est) for est, _ in _empty_batch_cases()])
def test_transform_of_no_documents_is_empty_with_the_fitted_width(case):
    """transform of an empty batch gives zero rows with the fitted width (no tokens, no
    output: an empty list for Collocations) on every text estimator."""
    est, docs = _empty_batch_cases()[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        fitted = clone(est).fit(docs)
        one = fitted.transform(docs[:1])
        none = fitted.transform(_no_documents(docs))
    if isinstance(one, list):
        assert none == []
    else:
        assert none.shape == (0, one.shape[1])


# ---- tokenized documents: sequences of tokens in text order, on every reader of them --------
def _token_readers():
    """name -> callable reading a tokenized corpus: every estimator with input="tokens",
    TopicModel (token lists are one of its inputs) and the functions on token lists."""
    from nlpfeat.text import (
        Collocations,
        CountDeviation,
        KernelAttentionPooling,
        LocallyWeightedBagOfWords,
        PMIEmbedding,
        SemanticUnitBagOfWords,
        TopicModel,
        cooccurrence,
        topic_coherence,
    )

    tokens = {"input": "tokens"}
    estimators = [BagOfWords(**tokens), PositionalBagOfWords(**tokens),
                  TfidfVectorizer(**tokens), CountDeviation(**tokens),
                  Collocations("pmi", min_count=1, **tokens),
                  Collocations("pmi", min_count=1, lowercase=False, **tokens),
                  PMIEmbedding(1, min_count=1, random_state=0, **tokens),
                  KernelAttentionPooling(_EMB, **tokens),
                  LocallyWeightedBagOfWords(n_positions=2, **tokens),
                  SemanticUnitBagOfWords(_EMB, n_units=1, **tokens),
                  TopicModel(1, max_iter=1, random_state=0)]
    readers = {f"{type(e).__name__}-{i}": clone(e).fit for i, e in enumerate(estimators)}
    readers["cooccurrence"] = lambda docs: cooccurrence(docs, 2)
    readers["topic_coherence"] = lambda docs: topic_coherence([["cat", "sat"]], docs)
    return readers


_TOKEN_READERS = _token_readers()


@pytest.mark.parametrize("name", _TOKEN_READERS)
@pytest.mark.parametrize("bad, kind, why", [
    ({"cat": 2, "sat": 1}, "dict", "drop its values"),
    ({"cat", "sat"}, "set", "order is arbitrary"),
    (frozenset({"cat", "sat"}), "frozenset", "order is arbitrary"),
])
def test_a_dict_or_set_is_not_a_tokenized_document(name, bad, kind, why):
    """A mapping (its counts would be dropped) or a set (no text order) is rejected by
    every reader of token lists with one TypeError naming the document; a tuple passes."""
    read = _TOKEN_READERS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        read([["the", "cat", "sat"], ("a", "dog", "sat", "cat")])
        with pytest.raises(TypeError, match=f"Document 1 is a {kind} .*{why}"):
            read([["the", "cat", "sat"], bad])
        with pytest.raises(TypeError, match=f"Document 0 is a {kind} .*{why}"):
            read([bad, ["the", "cat", "sat"]])


# ---- the shared text options, on every estimator that takes them ------------------------------
# Every token a case below may produce has a vector, so the estimators that look tokens up
# (pooling, semantic units) show which tokens the options produced.
_OPTION_TOKENS = ["cat", "cats", "Cat", "the", "猫", "的", "我", "a-b", "a", "b", "c", "ab", "don",
                  "don't", "n't", "t", "'t", "Hello", "World", "hello", "world", "aa", "bb",
                  "qq", "rr", "ss", "tt", "running", "run", "-", "'", "\u00a3"]
_OPTION_VECTORS = {w: [1.0 + i, 1.0] for i, w in enumerate(_OPTION_TOKENS)}


def _with_filler(est, docs):
    """Add a document of four other words (the PMI embedding needs more words than
    dimensions), in the documents' own form (files: as they are)."""
    if est.input == "filename":
        return docs
    filler = ["qq", "rr", "ss", "tt"]
    return [*docs, filler if isinstance(docs[0], list) else " ".join(filler)]


def _repeated(est, docs):
    """Each document twice over: word pairs for the collocations even after stop words."""
    if est.input == "filename":
        return docs
    return [doc + doc if isinstance(doc, list) else f"{doc} {doc}" for doc in docs]


def _names(est, docs):
    return {name.split("|", 1)[-1] for name in est.fit(docs).get_feature_names_out()}


def _pooled_tokens(est, docs):
    with warnings.catch_warnings():    # a document without a known token
        warnings.filterwarnings("ignore", "[0-9]+ of [0-9]+ document.s. have no token",
                                UserWarning)
        _, tokens = est.fit(docs).attention_weights(docs, return_tokens=True)
    return {token for doc in tokens for token in doc}


def _shared_option_cases():
    """name -> (factory of the estimator given text options, tokens its fit produced)."""
    from nlpfeat.text import (
        Collocations,
        CountDeviation,
        KernelAttentionPooling,
        LocallyWeightedBagOfWords,
        PMIEmbedding,
        SemanticUnitBagOfWords,
    )

    return {
        "BagOfWords": (BagOfWords, _names),
        "PositionalBagOfWords": (PositionalBagOfWords, _names),
        "TfidfVectorizer": (TfidfVectorizer, _names),
        "LocallyWeightedBagOfWords": (
            lambda **kw: LocallyWeightedBagOfWords(n_positions=2, **kw), _names),
        "CountDeviation": (lambda **kw: CountDeviation(max_features=50, **kw), _names),
        "Collocations": (
            lambda **kw: Collocations("pmi", min_count=1, **kw),
            lambda est, docs: {w for pair, _ in est.fit(_repeated(est, docs)).scores_ for w in pair}),
        "PMIEmbedding": (
            lambda **kw: PMIEmbedding(1, window=2, min_count=1, random_state=0, **kw),
            lambda est, docs: set(est.fit(_with_filler(est, docs)).vocabulary_)),
        "KernelAttentionPooling": (
            lambda **kw: KernelAttentionPooling(_OPTION_VECTORS, bandwidth=1.0, **kw),
            _pooled_tokens),
        "SemanticUnitBagOfWords": (
            lambda **kw: SemanticUnitBagOfWords(_OPTION_VECTORS, n_units=1, unknown="keep",
                                                random_state=0, **kw),
            lambda est, docs: set(est.fit(docs).unit_of_word_)),
    }


_SHARED = _shared_option_cases()


@pytest.mark.parametrize("name", _SHARED)
@pytest.mark.parametrize(
    "kwargs, doc, present, absent",
    [
        ({"stop_words": "english"}, "the cat", "cat", "the"),
        ({"stop_words": "chinese"}, "我的猫", "猫", "的"),
        ({"stop_words": ["cat"]}, "the cat", "the", "cat"),
        ({"stemmer": "snowball"}, "running cats", "cat", "cats"),
        ({"lowercase": False}, "Cat", "Cat", "cat"),
        ({"tokenizer": "whitespace"}, "a-b c", "a-b", "b"),
        ({"tokenizer": "wordpunct"}, "don't", "don", "don't"),
        ({"tokenizer": "treebank"}, "don't", "n't", "don"),
        ({"tokenizer": str.split, "token_pattern": None}, "a-b c", "a-b", "b"),
        ({"token_pattern": r"\S+"}, "a-b c", "a-b", "ab"),
        ({"input": "tokens"}, ["Hello", "World"], "hello", "Hello"),
        ({"input": "tokens", "lowercase": False}, ["Hello", "World"], "Hello", "hello"),
    ],
)
def test_shared_text_options_apply(name, kwargs, doc, present, absent):
    make, seen = _SHARED[name]
    tokens = seen(make(**kwargs), [doc])
    assert present in tokens and absent not in tokens, tokens


@pytest.mark.parametrize("name", _SHARED)
@pytest.mark.parametrize("kwargs, match", [
    ({"tokenizer": "spacy"}, "'tokenizer' parameter"),
    ({"stemmer": "lancaster"}, "'stemmer' parameter"),
    ({"stop_words": "french"}, "'stop_words' parameter"),
    ({"input": "url"}, "'input' parameter"),
    ({"decode_error": "replace_all"}, "'decode_error' parameter"),
    ({"lowercase": "yes"}, "'lowercase' parameter"),
])
def test_shared_text_options_are_validated(name, kwargs, match):
    make, _ = _SHARED[name]
    with pytest.raises(ValueError, match=match):
        make(**kwargs).fit(["aa bb", "bb aa"])


@pytest.mark.parametrize("name", _SHARED)
def test_shared_bad_documents(name):
    make, _ = _SHARED[name]
    with pytest.raises(ValueError, match="Empty corpus"):
        make().fit([])
    with pytest.raises((ValueError, TypeError), match="string"):
        make().fit("one document")
    with pytest.raises(TypeError, match="Document 1 is of type NoneType"):
        make().fit(["aa bb", None])


@pytest.mark.parametrize("name", _SHARED)
def test_shared_encoding_and_decode_error(name, tmp_path):
    make, seen = _SHARED[name]
    with pytest.raises(UnicodeDecodeError, match="document 1"):
        make().fit(["aa bb", b"\xa3 bb aa"])
    assert "bb" in seen(make(decode_error="ignore"), ["aa bb", b"\xa3 bb aa"])
    path = tmp_path / "latin.txt"
    path.write_bytes("\u00a3 bb aa \u00a3 bb aa qq rr ss tt".encode("latin-1"))
    assert "\u00a3" in seen(make(input="filename", encoding="latin-1", token_pattern=r"\S+"),
                            [str(path)])


def _analyzed_upper(doc):
    return doc.upper().split()


# scikit-learn's test_unused_parameters_warn cases (with an analyzer that returns a list):
# (settings, the parameter they leave unused, scikit-learn's reason)
_UNUSED_CASES = [
    ({"tokenizer": "whitespace", "token_pattern": "x"}, "token_pattern", "'tokenizer' is not None"),
    ({"tokenizer": str.split, "token_pattern": "x"}, "token_pattern", "'tokenizer' is not None"),
    ({"stop_words": ["you"], "analyzer": "char"}, "stop_words", "'analyzer' != 'word'"),
    ({"tokenizer": str.split, "analyzer": "char"}, "tokenizer", "'analyzer' != 'word'"),
    ({"token_pattern": "x", "analyzer": "char"}, "token_pattern", "'analyzer' != 'word'"),
    ({"token_pattern": "x", "analyzer": _analyzed_upper}, "token_pattern", "'analyzer' != 'word'"),
    ({"preprocessor": str.upper, "analyzer": _analyzed_upper}, "preprocessor",
     "'analyzer' is callable"),
    ({"ngram_range": (1, 2), "analyzer": _analyzed_upper}, "ngram_range", "'analyzer' is callable"),
]


def _unused_cases():
    """(estimator, case, fitting method) for each case whose settings the estimator has."""
    cases = []
    for name, (make, _) in _SHARED.items():
        est = make()
        for i, (kwargs, unused, _) in enumerate(_UNUSED_CASES):
            # a callable analyzer gives PositionalBagOfWords its units, whose n-grams it forms
            used_here = name == "PositionalBagOfWords" and unused == "ngram_range"
            if used_here or not set(kwargs) <= set(est.get_params()):
                continue
            cases += [(name, i, method) for method in ("fit", "fit_transform", "partial_fit")
                      if hasattr(est, method)]
    return cases


@pytest.mark.parametrize("name, case, method", _unused_cases())
def test_shared_unused_parameters_warn(name, case, method):
    """Every estimator with the text options warns as scikit-learn's vectorizers do, at
    every method that fits."""
    kwargs, unused, because = _UNUSED_CASES[case]
    make, _ = _SHARED[name]
    est = make(**kwargs)
    docs = _with_filler(est, _repeated(est, ["aa bb cc", "bb cc aa"]))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        getattr(est, method)(docs)
    expected = f"The parameter '{unused}' will not be used since {because}"
    messages = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    assert any(expected in m for m in messages), messages


def test_unused_cases_cover_every_shared_estimator():
    assert {name for name, _, _ in _unused_cases()} == set(_SHARED)


def test_dependency_bag_of_words_shared_options():
    """The options of a CoNLL-U reader: input, encoding, decode_error, lowercase."""
    from nlpfeat.datasets import load_dependency_sample
    from nlpfeat.text import DependencyBagOfWords

    docs = list(load_dependency_sample("en").data)[:3]
    lower = DependencyBagOfWords().fit(docs).get_feature_names_out()
    kept = DependencyBagOfWords(lowercase=False).fit(docs).get_feature_names_out()
    assert set(kept) != set(lower)
    assert any(n != n.lower() for n in set(kept) - set(lower))
    with pytest.raises(ValueError, match="'input' parameter"):
        DependencyBagOfWords(input="url").fit(docs)
    encoded = [doc.encode("utf-8") for doc in docs]
    np.testing.assert_array_equal(DependencyBagOfWords().fit_transform(encoded).toarray(),
                                  DependencyBagOfWords().fit_transform(docs).toarray())
