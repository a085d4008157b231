"""Every public estimator, fitted and unfitted, round-trips through ``skops.io`` with
identical outputs, and a saved model names only the types of ``nlpfeat.trusted_types()``."""
import importlib
import inspect
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import BaseEstimator

import nlpfeat
from nlpfeat.attention import AttentionRegressor, SequenceAttentionRegressor
from nlpfeat.kernels import NadarayaWatsonClassifier, NadarayaWatsonRegressor
from nlpfeat.text import (
    BagOfWords,
    Collocations,
    CountDeviation,
    DependencyBagOfWords,
    ExplicitSemanticAnalysis,
    KernelAttentionPooling,
    LocallyWeightedBagOfWords,
    PMIEmbedding,
    PositionalBagOfWords,
    SemanticUnitBagOfWords,
    SimilarityEnsemble,
    TermWeighting,
    TfidfVectorizer,
    TopicModel,
)

sio = pytest.importorskip("skops.io")

RNG = np.random.default_rng(0)
X, Y = RNG.normal(size=(12, 2)), RNG.normal(size=12)
X_SEQ, Y_SEQ = RNG.normal(size=(6, 6)), RNG.normal(size=6)
DOCS = ["the cat sat on the mat", "the dog sat on the rug", "a cat and a dog",
        "the mat and the rug"] * 2
TOKENS = [d.split() for d in DOCS]
EMB = {"cat": [1.0, 0.0], "dog": [0.0, 1.0], "sat": [1.0, 1.0], "mat": [0.5, 0.2],
       "rug": [0.3, 0.3], "the": [0.1, 0.9]}
CONLLU = ("1\tthe\tthe\tDET\t_\t_\t3\tdet\t_\t_\n2\tblack\tblack\tADJ\t_\t_\t3\tamod\t_\t_\n"
          "3\tcat\tcat\tNOUN\t_\t_\t4\tnsubj\t_\t_\n4\tsleeps\tsleep\tVERB\t_\t_\t0\troot\t_\t_\n")
PAIRS = [("my cat", "my dog"), ("the cat", "the rug"), ("a dog", "the mat and rug")]
COUNTS = np.array([[1, 0, 2], [0, 1, 1], [3, 1, 0]])

# name -> (estimator factory, training input, target or None)
CASES = {
    "bow": (lambda: BagOfWords(ngram_range=(1, 2)), DOCS, None),
    "positional": (PositionalBagOfWords, DOCS, None),
    "tfidf": (TfidfVectorizer, DOCS, None),
    "collocations": (lambda: Collocations(min_count=1, input="tokens"), TOKENS, None),
    "esa": (lambda: ExplicitSemanticAnalysis(topn=2), DOCS, None),
    "pooling": (lambda: KernelAttentionPooling(EMB), DOCS, None),
    "lowbow": (lambda: LocallyWeightedBagOfWords(n_positions=2), DOCS, None),
    "pmi": (lambda: PMIEmbedding(n_components=2, window=2, min_count=1, random_state=0),
            DOCS, None),
    "ensemble": (lambda: SimilarityEnsemble([("tfidf", TfidfVectorizer()),
                                             ("esa", ExplicitSemanticAnalysis(topn=2))],
                                            corpus=DOCS), PAIRS, None),
    "weighting": (lambda: TermWeighting("bm25"), COUNTS, None),
    "topics-sklearn": (lambda: TopicModel(2, backend="sklearn", topn=3, random_state=0),
                       TOKENS, None),
    "topics-lda": (lambda: TopicModel(2, topn=3, random_state=0), TOKENS, None),
    "topics-nmf": (lambda: TopicModel(2, method="nmf", topn=3, random_state=0), TOKENS, None),
    "topics-lsi": (lambda: TopicModel(2, method="lsi", topn=3, random_state=0), TOKENS, None),
    "deviation": (lambda: CountDeviation(max_features=3), DOCS, None),
    "dependency": (DependencyBagOfWords, [CONLLU], None),
    "units": (lambda: SemanticUnitBagOfWords(EMB, n_units=2, random_state=0), DOCS, None),
    "nw": (lambda: NadarayaWatsonRegressor(bandwidth=0.8), X, Y),
    "nw-tree-ll": (lambda: NadarayaWatsonRegressor("epanechnikov", bandwidth=1.5,
                                                   reg_type="ll"), X, Y),
    "nw-loo": (lambda: NadarayaWatsonRegressor(bandwidth="loo"), X, Y),
    "nw-sparse-cosine": (lambda: NadarayaWatsonRegressor(bandwidth=0.5, metric="cosine"),
                         sp.csr_matrix(np.abs(X)), Y),
    "nw-classifier": (lambda: NadarayaWatsonClassifier(bandwidth=0.8), X,
                      np.where(Y > 0, "hi", "lo")),
    "attention": (lambda: AttentionRegressor(n_heads=2, d_k=2, max_iter=2, random_state=0),
                  X, Y),
    "sequence": (lambda: SequenceAttentionRegressor(3, n_layers=1, d_model=4, n_heads=2,
                                                    dim_feedforward=4, max_iter=1,
                                                    random_state=0), X_SEQ, Y_SEQ),
}


def _public_estimators():
    for module in (nlpfeat.text, nlpfeat.kernels, nlpfeat.attention):
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj) and issubclass(obj, BaseEstimator):
                yield obj


def _fit(name):
    make, data, target = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")             # convergence on toy data, unknown tokens
        est = make()
        return est.fit(data, target) if target is not None else est.fit(data)


def _outputs(est, name):
    """What the fitted estimator gives on its training input."""
    data = CASES[name][1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = est.predict(data) if hasattr(est, "predict") else est.transform(data)
    out = out.toarray() if sp.issparse(out) else out
    names = est.get_feature_names_out() if hasattr(est, "get_feature_names_out") else None
    return out, names


def _round_trip(est):
    data = sio.dumps(est)
    untrusted = sio.get_untrusted_types(data=data)
    assert set(untrusted) <= set(nlpfeat.trusted_types()), \
        sorted(set(untrusted) - set(nlpfeat.trusted_types()))
    return sio.loads(data, trusted=nlpfeat.trusted_types())


def test_every_public_estimator_has_a_case():
    covered = {type(CASES[name][0]()) for name in CASES}
    missing = {est.__name__ for est in _public_estimators()} - {c.__name__ for c in covered}
    assert not missing


@pytest.mark.parametrize("name", CASES)
def test_fitted_round_trip_gives_identical_outputs(name):
    est = _fit(name)
    restored = _round_trip(est)
    assert type(restored) is type(est) and restored.get_params().keys() == \
        est.get_params().keys()
    (got, got_names), (want, want_names) = _outputs(restored, name), _outputs(est, name)
    if isinstance(want, list):                        # Collocations: token lists
        assert got == want
    else:
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got_names, want_names)


@pytest.mark.parametrize("name", CASES)
def test_unfitted_round_trip_keeps_parameters(name):
    est = CASES[name][0]()
    restored = _round_trip(est)
    assert repr(restored.get_params(deep=False)) == repr(est.get_params(deep=False))
    assert not hasattr(restored, "n_features_in_")


@pytest.mark.parametrize("name", ["tfidf", "topics-lda", "nw-tree-ll"])
def test_unfitted_round_trip_fits_the_same_model(name):
    make, data, target = CASES[name]
    CASES[f"{name}-restored"] = (lambda: _round_trip(make()), data, target)
    try:
        np.testing.assert_array_equal(_outputs(_fit(f"{name}-restored"), name)[0],
                                      _outputs(_fit(name), name)[0])
    finally:
        del CASES[f"{name}-restored"]


def test_a_restored_model_is_saved_again_as_it_was():
    est = _fit("nw-tree-ll")
    again = _round_trip(_round_trip(est))
    np.testing.assert_array_equal(again.predict(X), est.predict(X))


def test_the_trusted_types_are_nlpfeat_classes():
    names = nlpfeat.trusted_types()
    assert len(names) == len(set(names)) > 20
    for name in names:
        module, _, cls = name.rpartition(".")
        assert module.startswith("nlpfeat.")
        assert inspect.isclass(getattr(importlib.import_module(module), cls)), name


def _my_tokenizer(doc):
    return doc.split()


def test_a_users_callable_is_left_for_the_user_to_trust():
    est = BagOfWords(tokenizer=_my_tokenizer).fit(DOCS)
    data = sio.dumps(est)
    untrusted = set(sio.get_untrusted_types(data=data)) - set(nlpfeat.trusted_types())
    assert untrusted == {f"{__name__}._my_tokenizer"}
    with pytest.raises(Exception, match="(?i)untrusted"):
        sio.loads(data, trusted=nlpfeat.trusted_types())
    restored = sio.loads(data, trusted=nlpfeat.trusted_types() + sorted(untrusted))
    assert (restored.transform(DOCS) != est.transform(DOCS)).nnz == 0


def test_pickle_still_round_trips_the_plain_state():
    import pickle

    for name in ("esa", "topics-lda", "nw"):
        est = _fit(name)
        np.testing.assert_array_equal(_outputs(pickle.loads(pickle.dumps(est)), name)[0],
                                      _outputs(est, name)[0])
