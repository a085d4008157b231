"""Every public estimator, fitted and unfitted, round-trips through ``skops.io`` with
identical outputs, and a saved model names only the types of ``nlpfeat.trusted_types()``."""
import importlib
import inspect
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from _estimator_cases import CASES, DOCS, TOKENS, X, public_estimators

import nlpfeat
from nlpfeat.text import BagOfWords, Collocations, PMIEmbedding, TfidfVectorizer

sio = pytest.importorskip("skops.io")


def _fit(name):
    make, data, target = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")             # convergence on toy data, unknown tokens
        est = make()
        return est.fit(data, target) if target is not None else est.fit(data)


def _dense(out):
    return out.toarray() if sp.issparse(out) else out


def _outputs(est, name):
    """What the fitted estimator gives on its training input."""
    data = CASES[name][1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = est.predict(data) if hasattr(est, "predict") else est.transform(data)
    out = _dense(out)
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
    missing = {est.__name__ for est in public_estimators()} - {c.__name__ for c in covered}
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


def test_the_saving_models_page_runs_as_written(tmp_path, monkeypatch):
    import pathlib
    import re

    page = pathlib.Path(__file__).parents[1] / "docs" / "saving_models.md"
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), re.S)
    assert blocks
    monkeypatch.chdir(tmp_path)
    for block in blocks:
        exec(compile(block, str(page), "exec"), {})
    assert (tmp_path / "model.skops").exists()


def _laplace(u):
    return np.exp(-np.abs(u))


def test_a_registered_kernel_is_saved_by_name_a_callable_one_not_at_all():
    from nlpfeat.kernels import NadarayaWatsonRegressor, register_kernel, unregister_kernel

    with pytest.raises(TypeError, match="register_kernel"):
        sio.dumps(NadarayaWatsonRegressor(_laplace, bandwidth=0.7).fit(X, X[:, 0]))
    register_kernel("laplace-persist-test", _laplace)
    try:
        est = NadarayaWatsonRegressor("laplace-persist-test", bandwidth=0.7).fit(X, X[:, 0])
        data = sio.dumps(est)
        restored = _round_trip(est)
        np.testing.assert_array_equal(restored.predict(X), est.predict(X))
    finally:
        unregister_kernel("laplace-persist-test")
    with pytest.raises(ValueError, match="Unknown kernel 'laplace-persist-test'"):
        sio.loads(data, trusted=nlpfeat.trusted_types())


@pytest.mark.parametrize("make, data", [
    (lambda: PMIEmbedding(2, window=2, min_count=1, random_state=0), DOCS),
    (lambda: BagOfWords(ngram_range=(1, 2)), DOCS),
    (lambda: TfidfVectorizer(), DOCS),
    (lambda: Collocations(min_count=1, input="tokens"), TOKENS),
], ids=["pmi", "bow", "tfidf", "collocations"])
def test_a_restored_partial_fit_keeps_counting(make, data):
    est = make().partial_fit(data[:4])
    restored = _round_trip(est)
    est.partial_fit(data[4:])
    restored.partial_fit(data[4:])
    got, want = restored.transform(data), est.transform(data)
    if isinstance(want, list):
        assert got == want
    else:
        np.testing.assert_array_equal(_dense(got), _dense(want))


def test_a_tampered_state_is_refused_not_run_out_of_bounds():
    from nlpfeat._persist import decode, encode

    state = encode(sp.csr_matrix(np.eye(3)))
    state.parts["indices"] = np.array([0, 1, 7], dtype=state.parts["indices"].dtype)
    with pytest.raises(ValueError):
        decode(state)
    est = _fit("nw")
    compiled = est._index.compiled                   # numba's side of a dense Gaussian fit
    state = dict(vars(compiled), Y1t=np.ascontiguousarray(compiled.Y1t[:, :3]))
    with pytest.raises(ValueError, match="inconsistent saved state"):
        type(compiled).__new__(type(compiled)).__setstate__(state)
