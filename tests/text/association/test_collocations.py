"""Collocations: parity with gensim on the Wikipedia sample, merging, bad input (the
parity with nltk is in tests/peer/test_nltk_collocations.py)."""
import pickle
from itertools import chain

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.utils import estimator_checks

from nlpfeat.text import Collocations

MIN_COUNT = 3


@pytest.fixture(scope="module")
def wiki_tokens():
    from nlpfeat.datasets import load_wiki_sample

    return [doc.split() for doc in load_wiki_sample().data]


def test_npmi_equals_gensim_phrases(wiki_tokens):
    phrases = pytest.importorskip("gensim.models.phrases")
    model = phrases.Phrases(wiki_tokens, min_count=MIN_COUNT, threshold=-1.0, scoring="npmi")
    expected = model.export_phrases()
    got = Collocations("npmi", min_count=MIN_COUNT, lowercase=False, input="tokens").fit(wiki_tokens).scores_
    assert len(got) == len(expected)
    got = {"_".join(pair): score for pair, score in got}
    keys = sorted(expected)
    np.testing.assert_allclose([got[k] for k in keys], [expected[k] for k in keys],
                               rtol=1e-9, atol=1e-12)


def test_transform_equals_gensim_phrases(wiki_tokens):
    phrases = pytest.importorskip("gensim.models.phrases")
    docs = wiki_tokens[:120]
    model = phrases.Phrases(docs, min_count=MIN_COUNT, threshold=0.5, scoring="npmi")
    coll = Collocations("npmi", min_count=MIN_COUNT, threshold=0.5, lowercase=False, input="tokens").fit(docs)
    assert coll.transform(docs) == [model[doc] for doc in docs]


def test_never_pairs_across_documents():
    coll = Collocations("count", min_count=1, input="tokens").fit([["a", "b"], ["c", "d"], ["e"]])
    assert dict(coll.scores_) == {("a", "b"): 1.0, ("c", "d"): 1.0}
    assert coll.transform([["b", "c"]]) == [["b", "c"]]


def test_llr_is_finite_on_tables_with_zero_cells():
    nltk_metrics = pytest.importorskip("nltk.metrics")
    docs = [["new", "york"]] * 3                    # only the (new, york) cell is non-zero
    (pair, score), = Collocations("llr", min_count=1, input="tokens").fit(docs).scores_
    assert np.isfinite(score) and score >= 0
    expected = nltk_metrics.BigramAssocMeasures.likelihood_ratio(3, (3, 3), 6)
    np.testing.assert_allclose(score, expected, rtol=1e-12)


def test_repeated_merging_builds_longer_phrases():
    docs = [["i", "love", "new", "york", "city"], ["new", "york", "city", "hall"],
            ["the", "new", "york", "city", "subway"], ["old", "town"]] * 3
    coll = Collocations("count", min_count=3, threshold=3.5, max_len=3, input="tokens").fit(docs)
    scores = dict(coll.scores_)
    assert scores[("new", "york")] == 9.0 and scores[("new", "york", "city")] == 9.0
    assert coll.transform([["new", "york", "city", "now"]]) == [["new_york_city", "now"]]
    bigrams = Collocations("count", min_count=3, threshold=3.5, input="tokens").fit(docs)
    assert bigrams.transform([["new", "york", "city"]]) == [["new_york", "city"]]


def test_greedy_left_to_right_joining():
    coll = Collocations("count", min_count=1, input="tokens").fit([["a", "a", "a", "a", "a"]])
    assert coll.transform([["a"] * 5]) == [["a_a", "a_a", "a"]]


def test_threshold_selects_phrases():
    docs = [["new", "york"], ["new", "york"], ["new", "car"], ["red", "car"]] * 2
    coll = Collocations("npmi", min_count=2, threshold=0.5, input="tokens").fit(docs)
    assert len(coll.scores_) == 3                  # threshold never filters scores_
    assert coll.transform([["new", "york", "new", "car"]]) == [["new_york", "new", "car"]]


def test_string_input_uses_text_options():
    coll = Collocations("count", min_count=2, input="content", stop_words="english")
    coll.fit(["The New York subway", "in New York today"])
    assert coll.transform(["New York is big"]) == [["new_york", "big"]]


def test_pipeline_before_a_bag_of_words():
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.pipeline import make_pipeline

    docs = [["new", "york", "is", "big"], ["i", "love", "new", "york"]] * 3
    pipe = make_pipeline(Collocations("npmi", min_count=2, threshold=0.9, input="tokens"),
                         CountVectorizer(analyzer=list)).fit(docs)
    assert "new_york" in pipe[-1].vocabulary_ and "new" not in pipe[-1].vocabulary_


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.sampled_from("abcd"), max_size=10), min_size=1, max_size=6))
def test_property_transform_only_joins_and_counts_are_right(docs):
    if not any(docs):
        return
    coll = Collocations("count", min_count=1, input="tokens").fit(docs)
    expected = {}
    for doc in docs:
        for pair in zip(doc, doc[1:]):
            expected[pair] = expected.get(pair, 0.0) + 1.0
    assert dict(coll.scores_) == expected
    out = coll.transform(docs)
    assert [[t for token in doc for t in token.split("_")] for doc in out] == docs


def test_clone_and_pickle_round_trip(wiki_tokens):
    coll = Collocations("pmi", min_count=5, threshold=8, input="tokens").fit(wiki_tokens[:30])
    again = pickle.loads(pickle.dumps(coll))
    assert again.scores_ == coll.scores_
    assert again.transform(wiki_tokens[:2]) == coll.transform(wiki_tokens[:2])
    assert clone(coll).get_params() == coll.get_params()


@pytest.mark.parametrize("check", [
    estimator_checks.check_no_attributes_set_in_init,
    estimator_checks.check_parameters_default_constructible,
    estimator_checks.check_get_params_invariance,
    estimator_checks.check_set_params,
    estimator_checks.check_estimator_repr,
    estimator_checks.check_estimator_cloneable,
    estimator_checks.check_mixin_order,
    estimator_checks.check_valid_tag_types,
])
def test_sklearn_api_checks(check):
    # parametrize_with_checks yields no check for an estimator whose input tag is string
    # only (scikit-learn skips it: its checks feed numeric arrays); the API checks that
    # need no data run here.
    estimator = Collocations(input="tokens")
    check(type(estimator).__name__, estimator)


def test_not_fitted_raises():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        Collocations(input="tokens").transform([["a"]])


@pytest.mark.parametrize("params,message", [
    ({"min_count": 0}, "'min_count' parameter of Collocations"),
    ({"max_len": 1}, "'max_len' parameter of Collocations"),
    ({"measure": "fishr"}, "'measure' parameter of Collocations"),
    ({"order": 5}, "'order' parameter of Collocations"),
    ({"window_size": 1}, "'window_size' parameter of Collocations"),
    ({"ngram_filter": "the"}, "'ngram_filter' parameter of Collocations"),
    ({"measure": "dice", "order": 3}, "defined for bigrams only"),
    ({"measure": "pmi", "order": 3, "window_size": 3}, "window_size=3 applies to bigrams"),
    ({"measure": "pmi", "order": 4, "max_len": 3}, "max_len=3 grows phrases by bigram passes"),
])
def test_bad_parameters_raise(params, message):
    with pytest.raises(ValueError, match=message):
        Collocations(input="tokens", **params).fit([["a", "b"]])


def test_bad_document_raises_type_error():
    with pytest.raises(TypeError, match="Document 1"):
        Collocations(input="tokens").fit([["a", "b"], "a b"])


@pytest.mark.parametrize("lowercase", [False, True])
@pytest.mark.parametrize("bad", [3, None, ["x"], b"x"])
def test_non_str_token_raises_type_error_naming_it(bad, lowercase):
    """Without lowercasing the tokens are checked through the vocabulary (one check per
    distinct token); the error is the same as the per-token check's."""
    docs = [["a", "b", "a", "b"], ["b", "a", bad, "a"]]
    with pytest.raises(TypeError, match=f"Document 1 holds a token of type {type(bad).__name__}"):
        Collocations(min_count=1, lowercase=lowercase, input="tokens").fit(docs)


def test_str_subclass_tokens_are_accepted():
    docs = [[np.str_("a"), "b", "a", "b"]]
    scores = Collocations("count", min_count=1, lowercase=False, input="tokens").fit(docs).scores_
    assert scores[0] == (("a", "b"), 2.0)


def test_empty_corpus_raises():
    with pytest.raises(ValueError, match="no documents|empty"):
        Collocations(input="tokens").fit([])


@pytest.mark.parametrize("one_key", [True, False])
def test_ranking_with_ties_is_nltks_sort(monkeypatch, one_key):
    """(-score, first word, second word), with the one-key sort or its fallback."""
    from nlpfeat.text._association import _collocation_scoring

    if not one_key:
        monkeypatch.setattr(_collocation_scoring, "_MAX_SORT_KEY", 0)
    rng = np.random.default_rng(0)
    words = np.array(["b", "a", "ab", "B", "é", "aa", "z", "_x"], dtype=object)
    pairs = sorted({(int(i), int(j)) for i, j in rng.integers(0, len(words), (200, 2))})
    first, second = (np.array(side) for side in zip(*pairs))
    scores = rng.integers(0, 4, len(pairs)).astype(float) / 3       # many ties
    got = _collocation_scoring.nltk_order(scores, first, second, words)
    expected = sorted(range(len(pairs)), key=lambda k: (-scores[k], words[first[k]],
                                                        words[second[k]]))
    assert [side.tolist() for side in got] == [
        scores[expected].tolist(), first[expected].tolist(), second[expected].tolist()]


@pytest.mark.parametrize("special", ["nan", "negative zero", "trailing nul"])
def test_ranking_edge_cases_follow_pythons_sort(special):
    """NaN and -0.0 scores take the fallback sort; words that numpy's fixed-width strings
    would confuse (trailing NUL) are ordered by Python's own sort."""
    from nlpfeat.text._association import _collocation_scoring

    words = np.array(["b", "a", "a\x00", "c"], dtype=object)
    first = np.array([0, 0, 1, 2, 2, 3])
    second = np.array([1, 3, 2, 0, 3, 1])
    scores = np.array([1.0, 0.0, 1.0, 0.5, 1.0, 0.0])
    if special == "nan":
        scores[3] = np.nan
    elif special == "negative zero":
        scores[1] = -0.0
    got = _collocation_scoring.nltk_order(scores, first, second, words)
    # nltk's key (-score, words); NaN compares false both ways, so numpy's NaN-last order
    # is the reference for it
    nan_last = sorted(range(len(first)), key=lambda k: (np.isnan(scores[k]), -scores[k],
                                                        words[first[k]], words[second[k]]))
    assert got[1].tolist() == first[nan_last].tolist()
    assert got[2].tolist() == second[nan_last].tolist()
    assert np.array_equal(got[0], scores[nan_last], equal_nan=True)
    assert np.signbit(got[0]).tolist() == np.signbit(scores[nan_last]).tolist()


def test_transform_returns_new_lists_even_without_phrases():
    """fit reads the caller's lists in place; transform's output never aliases them."""
    docs = [["a", "b", "c"], ["b", "c", "d"]]
    out = Collocations(min_count=5, lowercase=False, input="tokens").fit(docs).transform(docs)
    assert out == docs
    assert all(new is not old for new, old in zip(out, docs))


@pytest.mark.parametrize("method", ["fit", "transform", "fit_transform"])
def test_one_shot_iterators_are_read_once(method):
    """A generator gives what the same list gives, and is consumed exactly once."""
    docs = [["new", "york", "is", "big"], ["new", "york", "city"]] * 2
    fitted = Collocations("count", min_count=2, input="tokens").fit(docs)
    consumed = []

    def generator():
        for doc in docs:
            consumed.append(doc)
            yield doc

    coll = Collocations("count", min_count=2, input="tokens")
    if method == "fit":
        assert coll.fit(generator()).scores_ == fitted.scores_
    elif method == "transform":
        assert fitted.transform(generator()) == fitted.transform(docs)
    else:
        assert coll.fit_transform(generator()) == fitted.transform(docs)
        assert coll.scores_ == fitted.scores_
    assert consumed == docs                                    # read once, in order


def test_fit_transform_of_an_iterator_joins_its_phrases():
    """The reported case: fit_transform used to fit on the iterator, then transform the
    exhausted iterator into [[]]."""
    out = Collocations(min_count=1, input="tokens").fit_transform(iter([["new", "york"]] * 2))
    assert out == [["new_york"], ["new_york"]]


def test_fit_transform_returns_new_lists():
    docs = [["a", "b", "c"], ["b", "c", "d"]]
    out = Collocations(min_count=5, lowercase=False, input="tokens").fit_transform(docs)
    assert out == docs and all(new is not old for new, old in zip(out, docs))


@pytest.mark.parametrize("order", [2, 3])
def test_empty_corpus_gives_zero_rows(order):
    coll = Collocations("count", min_count=1, order=order, input="tokens").fit([["a", "b", "c"]] * 2)
    assert coll.transform([]) == []
    assert coll.transform(iter([])) == []
    assert coll.transform([[]]) == [[]]
    with pytest.raises(ValueError, match="no documents|empty"):
        Collocations(input="tokens").fit_transform([])
    with pytest.raises(ValueError, match="no documents|empty"):
        Collocations(input="tokens").fit(iter([]))


def test_dominant_word_gives_finite_scores_or_a_clear_error():
    """'ha ha ha ha': llr and chi_sq used to give NaN or inf (the table has a negative
    cell); they raise, naming the pair, and the measures of counts stay finite."""
    for measure in ("llr", "chi_sq", "phi_sq", "fisher"):
        with pytest.raises(ValueError, match=r"undefined for \('ha', 'ha'\)"):
            Collocations(measure, min_count=1, input="tokens").fit([["ha"] * 4])
    with pytest.raises(ValueError, match=r"undefined for \('ha', 'ha', 'ha'\)"):
        Collocations("llr", order=3, min_count=1, input="tokens").fit([["ha"] * 4])
    for measure in ("pmi", "npmi", "t", "dice", "raw_freq", "mi_like", "poisson_stirling",
                    "jaccard", "count"):
        (pair, score), = Collocations(measure, min_count=1, input="tokens").fit([["ha"] * 4]).scores_
        assert pair == ("ha", "ha") and np.isfinite(score)


def test_trigrams_are_joined_greedily_left_to_right():
    docs = [["new", "york", "city", "hall"], ["i", "love", "new", "york", "city"]] * 2
    coll = Collocations("count", order=3, min_count=2, threshold=3.5, input="tokens").fit(docs)
    assert dict(coll.scores_)[("new", "york", "city")] == pytest.approx(4.0)
    assert coll.transform([["new", "york", "city", "new", "york", "city", "hall"]]) == [
        ["new_york_city", "new_york_city", "hall"]]
    every = Collocations("count", order=3, min_count=1, input="tokens").fit([["a"] * 7])
    assert every.transform([["a"] * 7, ["a", "a"], ["a"] * 3]) == [
        ["a_a_a", "a_a_a", "a"], ["a", "a"], ["a_a_a"]]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.sampled_from("abc"), max_size=12), min_size=1, max_size=5),
       st.sampled_from([3, 4]))
def test_property_ngram_counts_and_greedy_join(docs, order):
    if not any(len(doc) >= order for doc in docs):
        return
    coll = Collocations("count", order=order, min_count=1, input="tokens").fit(docs)
    expected = {}
    for doc in docs:
        for gram in zip(*(doc[k:] for k in range(order))):
            expected[gram] = expected.get(gram, 0.0) + 1.0
    assert dict(coll.scores_) == pytest.approx(expected)
    accepted = {g for g, _ in coll.scores_}
    reference = []
    for doc in docs:                        # the scan the vectorised join must equal
        out, i = [], 0
        while i < len(doc):
            if tuple(doc[i:i + order]) in accepted:
                out.append("_".join(doc[i:i + order]))
                i += order
            else:
                out.append(doc[i])
                i += 1
        reference.append(out)
    assert coll.transform(docs) == reference


def test_window_counts_pairs_within_the_window_inside_documents():
    docs = [["a", "b", "c"], ["d", "e"]]
    coll = Collocations("count", min_count=1, window_size=3, input="tokens").fit(docs)
    assert dict(coll.scores_) == pytest.approx(
        {("a", "b"): 1, ("a", "c"): 1, ("b", "c"): 1, ("d", "e"): 1})
    assert coll.transform([["a", "c", "b"]]) == [["a_c", "b"]]


def test_word_filter_drops_candidates_not_tokens():
    docs = [["the", "new", "york", "times"], ["new", "york", "of", "the", "times"]] * 2
    kept = Collocations("pmi", min_count=2, word_filter=["the", "of"], input="tokens").fit(docs)
    full = dict(Collocations("pmi", min_count=2, input="tokens").fit(docs).scores_)
    assert {pair for pair, _ in kept.scores_} == {("new", "york"), ("york", "times")}
    assert dict(kept.scores_)[("new", "york")] == pytest.approx(full[("new", "york")],
                                                               rel=1e-15)
    english = Collocations("pmi", min_count=2, word_filter="english", input="tokens").fit(docs)
    assert {pair for pair, _ in english.scores_} == {("new", "york"), ("york", "times")}
    # later merging passes filter on the original tokens of a phrase
    merged = Collocations("count", min_count=2, max_len=3, word_filter=lambda w: w == "of",
                          ngram_filter=lambda *words: words == ("the", "new"), input="tokens").fit(docs)
    phrases = {phrase for phrase, _ in merged.scores_}
    assert ("new", "york", "times") in phrases
    assert ("the", "new") not in phrases and ("the", "new", "york") in phrases
    assert not any("of" in phrase for phrase in phrases)


@pytest.mark.parametrize("alias,name", [("llr", "likelihood_ratio"), ("t", "student_t")])
def test_aliases_score_as_their_measure(alias, name):
    docs = [["new", "york", "is", "big"], ["i", "love", "new", "york"]] * 3
    assert (Collocations(alias, min_count=2, input="tokens").fit(docs).scores_
            == Collocations(name, min_count=2, input="tokens").fit(docs).scores_)


def test_cli_offers_every_measure():
    from nlpfeat import cli
    from nlpfeat.text._association._collocations import MEASURES

    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    measure = next(a for a in sub.choices["collocations"]._actions if a.dest == "measure")
    assert list(measure.choices) == list(MEASURES)


@pytest.mark.parametrize("order", [3, 4])
def test_ngram_counts_without_direct_keys_are_the_same(monkeypatch, order):
    """Vocabularies whose id tuples overflow int64 keys count through prefix codes."""
    from nlpfeat.text._association import _collocations

    rng = np.random.default_rng(0)
    docs = [list(rng.choice(list("abcdefg"), size=rng.integers(0, 30))) for _ in range(40)]

    def table():
        terms, grams, counts, marginals = _collocations._ngram_table(docs, order, 2)
        words = zip(*(terms[g].tolist() for g in grams))
        rows = zip(counts.tolist(), *(m.tolist() for m in chain(*marginals[1:-1])))
        return dict(zip(words, rows))

    direct = table()
    monkeypatch.setattr(_collocations, "_MAX_TUPLE_KEY", 0)
    assert table() == direct and len(direct) > 30
