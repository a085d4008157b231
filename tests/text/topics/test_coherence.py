"""Topic coherence: parity with gensim's CoherenceModel on the Lee corpus, window counting
against brute force, properties and error paths."""
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

from nlpfeat.datasets import load_lee
from nlpfeat.text import coherence_scorer, topic_coherence
from nlpfeat.text._base._tokenize import get_stop_words, get_tokenizer
from nlpfeat.text._counting._pair_tables import token_ids
from nlpfeat.text._topics._coherence import _window_matrix, top_word_ids

gensim = pytest.importorskip("gensim")
from gensim.corpora import Dictionary  # noqa: E402
from gensim.models import CoherenceModel, LdaModel  # noqa: E402
from gensim.topic_coherence.text_analysis import WordOccurrenceAccumulator  # noqa: E402

MEASURES = ["u_mass", "c_uci", "c_npmi", "c_v"]
TOL = {"u_mass": 1e-6, "c_uci": 1e-6, "c_npmi": 1e-6, "c_v": 1e-4}



@pytest.fixture(scope="module")
def lee():
    """Lee background texts (nlpfeat's tokenizer), gensim dictionary, LDA and random topics."""
    tokenize, stop = get_tokenizer(), get_stop_words("english")
    texts = [[t for t in tokenize(doc.lower()) if t not in stop] for doc in load_lee().background]
    dictionary = Dictionary(texts)
    dictionary.filter_extremes(no_below=3, no_above=0.5)
    corpus = [dictionary.doc2bow(t) for t in texts]
    lda = LdaModel(corpus, num_topics=8, id2word=dictionary, passes=2, random_state=0)
    topics = [[dictionary[i] for i, _ in lda.get_topic_terms(k, topn=10)] for k in range(8)]
    rng = np.random.RandomState(0)
    words = [dictionary[i] for i in range(len(dictionary))]
    topics += [list(rng.choice(words, 10, replace=False)) for _ in range(4)]
    n_terms = len(dictionary)
    X = sp.csr_matrix((np.array([c for doc in corpus for _, c in doc], dtype=float),
                       np.array([i for doc in corpus for i, _ in doc]),
                       np.cumsum([0] + [len(doc) for doc in corpus])), shape=(len(corpus), n_terms))
    return texts, dictionary, topics, X


def _gensim(lee, measure, **kwargs):
    texts, dictionary, topics, _ = lee
    cm = CoherenceModel(topics=topics, texts=texts, dictionary=dictionary, coherence=measure,
                        processes=1, **kwargs)
    return np.array(cm.get_coherence_per_topic())


@pytest.mark.parametrize("measure", MEASURES)
def test_matches_gensim_on_lee_sliding_windows(lee, measure):
    texts, dictionary, topics, _ = lee
    got = topic_coherence(topics, texts, measure=measure, vocabulary=dictionary.token2id)
    np.testing.assert_allclose(got, _gensim(lee, measure), rtol=0, atol=TOL[measure])


@pytest.mark.parametrize("measure", MEASURES)
def test_matches_gensim_on_lee_boolean_documents_from_count_matrix(lee, measure):
    # gensim has no boolean-document c_uci/c_npmi/c_v, but a window longer than every
    # document makes each document one window.
    _, dictionary, topics, X = lee
    got = topic_coherence(topics, X, measure=measure, vocabulary=dictionary.token2id)
    np.testing.assert_allclose(got, _gensim(lee, measure, window_size=10**6), rtol=0,
                               atol=TOL[measure])


def test_window_size_is_passed_through(lee):
    texts, dictionary, topics, _ = lee
    got = topic_coherence(topics, texts, measure="c_npmi", vocabulary=dictionary.token2id,
                          window_size=25)
    np.testing.assert_allclose(got, _gensim(lee, "c_npmi", window_size=25), atol=1e-6)


def _random_texts(seed):
    rng = np.random.RandomState(seed)
    n_docs = rng.randint(1, 5)
    return [list(rng.choice(list("abcdefg"), rng.randint(0, 15))) for _ in range(n_docs)], rng


def _window_stats(texts, window, counting):
    relevant = list("abcd")
    ids, lengths = token_ids(texts, {w: k for k, w in enumerate(relevant)})
    B, weights, n = _window_matrix(ids, lengths, window, len(relevant), counting)
    return weights @ B, (B.T @ sp.csr_array(B.multiply(weights[:, None]))).toarray(), n


@pytest.mark.parametrize("seed", range(40))
def test_gensim_window_counting_equals_gensim_accumulator(seed):
    texts, rng = _random_texts(seed)
    window = rng.randint(1, 7)
    dictionary = Dictionary(texts + [list("abcdefg")])
    rel = [dictionary.token2id[w] for w in "abcd"]
    acc = WordOccurrenceAccumulator(set(rel), dictionary).accumulate(texts, window)
    occ, joint, n = _window_stats(texts, window, "gensim")
    assert n == acc.num_docs
    np.testing.assert_array_equal(occ, [acc[i] for i in rel])
    np.testing.assert_array_equal(joint, [[acc[i, j] for j in rel] for i in rel])


@pytest.mark.parametrize("seed", range(40))
def test_exact_window_counting_equals_brute_force(seed):
    texts, rng = _random_texts(seed)
    window = rng.randint(1, 7)
    sets = []
    for doc in texts:   # reference: every window of the document, or the whole short document
        starts = range(max(len(doc) - window + 1, 1))
        sets += [set(doc[s:s + window]) & set("abcd") for s in starts]
    expected_occ = [sum(w in s for s in sets) for w in "abcd"]
    expected_joint = [[sum(a in s and b in s for s in sets) for b in "abcd"] for a in "abcd"]
    occ, joint, n = _window_stats(texts, window, "exact")
    assert n == len(sets)
    np.testing.assert_array_equal(occ, expected_occ)
    np.testing.assert_array_equal(joint, expected_joint)


def test_gensim_counting_differs_from_exact_on_repeated_words():
    texts = [["a", "b", "a", "c", "d", "e"]]   # windows of 3: a is in 3 of them
    topics = [["a", "c"]]
    exact = topic_coherence(topics, texts, measure="c_uci", window_size=3, window_counting="exact")
    gens = topic_coherence(topics, texts, measure="c_uci", window_size=3)
    # exact: P(a)=3/4, P(c)=3/4, P(a,c)=2/4; gensim marks a in one window only, never with c
    np.testing.assert_allclose(exact, [np.log((0.5 + 1e-12) / 0.5625)])
    np.testing.assert_allclose(gens, [np.log(1e-12 / (0.25 * 0.75))])


@pytest.mark.parametrize("measure", ["c_uci", "c_npmi", "c_v"])
@pytest.mark.parametrize("seed", range(3))
def test_symmetric_measures_ignore_word_order(lee, measure, seed):
    texts, dictionary, topics, X = lee
    shuffled = [list(np.random.RandomState(seed).permutation(t)) for t in topics]
    a = topic_coherence(topics, X, measure=measure, vocabulary=dictionary.token2id)
    b = topic_coherence(shuffled, X, measure=measure, vocabulary=dictionary.token2id)
    np.testing.assert_allclose(a, b, atol=1e-12)


def test_ranges_and_direction(lee):
    texts, dictionary, topics, X = lee
    vocab = dictionary.token2id
    npmi = topic_coherence(topics, texts, measure="c_npmi", vocabulary=vocab)
    assert np.all((npmi >= -1) & (npmi <= 1))
    assert np.all(topic_coherence(topics, X, measure="u_mass", vocabulary=vocab) <= 0)
    # LDA topics (first 8) are more coherent than random word sets (last 4). Not so c_v: the
    # NPMI vectors of unrelated rare words are all alike (all near -1), so their cosines are
    # high, a known weakness of c_v (documented in topic_coherence).
    for measure in ["u_mass", "c_uci", "c_npmi"]:
        values = topic_coherence(topics, texts, measure=measure, vocabulary=vocab)
        assert values[:8].mean() > values[8:].mean(), measure


def test_words_and_column_ids_agree(lee):
    _, dictionary, topics, X = lee
    ids = [[dictionary.token2id[w] for w in t] for t in topics]
    names = [dictionary[i] for i in range(len(dictionary))]
    a = topic_coherence(ids, X, measure="c_v")
    b = topic_coherence(topics, X, measure="c_v", vocabulary=names)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, topic_coherence(ids, X.toarray(), measure="c_v"))


def test_word_absent_from_reference_contributes_zero():
    X = np.array([[1, 1, 0], [1, 0, 0]])
    assert topic_coherence([[0, 2]], X, measure="c_npmi")[0] == 0.0
    # c_v: the absent word's NPMI vector is zero, so its cosine is 0; word 0's is 1
    assert topic_coherence([[0, 2]], X, measure="c_v")[0] == pytest.approx(0.5, abs=1e-12)
    assert topic_coherence([[2, 0]], X, measure="u_mass")[0] == 0.0   # conditioned on word 2


def test_errors():
    X = np.array([[1, 1, 0], [1, 0, 1]])
    with pytest.warns(UserWarning, match="'zebra' \\(topic 0\\)"), \
            pytest.raises(ValueError, match="Topic 0 .* has 1 word"):
        topic_coherence([["a", "zebra"]], X, vocabulary=["a", "b", "c"])
    with pytest.warns(UserWarning), pytest.raises(ValueError, match="No word of topic 1"):
        topic_coherence([["a", "b"], ["yak", "zebra"]], X, vocabulary=["a", "b", "c"])
    with pytest.raises(ValueError, match="need vocabulary"):
        topic_coherence([["a", "b"]], X)
    with pytest.raises(ValueError, match="outside the 3 columns"):
        topic_coherence([[0, 7]], X)
    with pytest.raises(ValueError, match="Sliding windows need word order"):
        topic_coherence([[0, 1]], X, window_size=10)
    with pytest.raises(ValueError, match="non-empty"):
        topic_coherence([[]], X)
    with pytest.raises(ValueError, match="measure"):
        topic_coherence([[0, 1]], X, measure="c_w2v")
    with pytest.raises(ValueError, match="window_size"):
        topic_coherence([["a", "b"]], [["a", "b"]], window_size=0)
    with pytest.raises(ValueError, match="no documents"):
        topic_coherence([["a", "b"]], [], window_size=None)
    with pytest.raises(ValueError, match="Input corpus contains 1 NaN"):
        topic_coherence([[0, 1]], np.array([[np.nan, 1.0], [1.0, 1.0]]))


@pytest.mark.parametrize("measure", MEASURES)
def test_single_word_topic_raises_instead_of_nan(measure):
    for corpus in ([["a", "b"]], np.array([[1, 1]])):
        with pytest.raises(ValueError, match="has 1 word.*at least 2"):
            topic_coherence([[0]] if isinstance(corpus, np.ndarray) else [["a"]], corpus,
                            measure=measure)


def test_unknown_topic_words_are_dropped_with_a_warning_and_the_rest_scored():
    texts = [["cat", "dog", "pet"], ["dog", "pet", "vet"], ["bank", "loan"], ["cat", "pet"]]
    known = topic_coherence([["cat", "dog", "pet"]], texts, measure="c_npmi", window_size=None)
    vocab = {w: j for j, w in enumerate(sorted({w for t in texts for w in t}))}
    for kwargs in ({}, {"vocabulary": vocab}):       # not in the corpus / not in vocabulary
        with pytest.warns(UserWarning, match="1 topic word.*'zebra' \\(topic 0\\)"):
            got = topic_coherence([["cat", "zebra", "dog", "pet"]], texts, measure="c_npmi",
                                  window_size=None, **kwargs)
        np.testing.assert_allclose(got, known, rtol=1e-12)


def test_empty_documents_count_as_windows():
    # an empty document is one (empty) window, as in gensim: P(a) = 1/2
    value = topic_coherence([["a", "b"]], [["a", "b"], []], measure="c_uci", window_size=5)
    np.testing.assert_allclose(value, [np.log((0.5 + 1e-12) / 0.25)])


def test_scorer_ranks_sklearn_models_in_a_pipeline(lee):
    from sklearn.decomposition import NMF, LatentDirichletAllocation
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline

    from nlpfeat.text import BagOfWords

    docs = load_lee().background[:120]
    pipe = make_pipeline(BagOfWords(stop_words="english", min_df=2),
                         LatentDirichletAllocation(max_iter=5, random_state=0))
    search = GridSearchCV(pipe, {"latentdirichletallocation": [
        LatentDirichletAllocation(n_components=k, max_iter=5, random_state=0) for k in (2, 6)]
        + [NMF(n_components=4, random_state=0)]},
        scoring=coherence_scorer("c_npmi"), cv=2)
    search.fit(docs)
    scores = search.cv_results_["mean_test_score"]
    assert np.all(np.isfinite(scores)) and np.all(np.abs(scores) <= 1)
    # the scorer's value is the mean coherence of the fitted topics on the held-out matrix
    best = search.best_estimator_
    Xt = best[:-1].transform(docs)
    # top words: ties (NMF's zeros) broken towards the lower column, as the scorer does
    top = np.argsort(-np.abs(best[-1].components_), axis=1, kind="stable")[:, :10]
    expected = topic_coherence(top, Xt).mean()
    assert coherence_scorer("c_npmi")(best, docs) == pytest.approx(expected, abs=1e-12)


def test_scorer_sliding_windows_through_the_vectorizer_analyzer():
    from sklearn.decomposition import LatentDirichletAllocation
    from sklearn.pipeline import make_pipeline

    from nlpfeat.text import BagOfWords

    docs = load_lee().background[:80]
    pipe = make_pipeline(BagOfWords(stop_words="english", min_df=2),
                         LatentDirichletAllocation(n_components=3, max_iter=3, random_state=0))
    pipe.fit(docs)
    bow, lda = pipe[0], pipe[-1]
    analyze = bow.build_analyzer()
    words = bow.get_feature_names_out()
    topics = [[words[j] for j in np.argsort(-row, kind="stable")[:10]] for row in lda.components_]
    texts = [analyze(d) for d in docs]
    expected = topic_coherence(topics, texts, measure="c_uci", vocabulary=bow.vocabulary_,
                               window_size=10).mean()
    got = coherence_scorer("c_uci", window_size=10)(pipe, docs)
    assert got == pytest.approx(expected, abs=1e-12)
    assert got != pytest.approx(coherence_scorer("c_uci")(pipe, docs))  # boolean documents


def test_scorer_is_picklable_and_rejects_non_topic_models():
    from sklearn.linear_model import LinearRegression

    scorer = pickle.loads(pickle.dumps(coherence_scorer("c_v", topn=5)))
    assert "c_v" in repr(scorer)
    with pytest.raises(TypeError, match="components_"):
        scorer(LinearRegression().fit([[0.0], [1.0]], [0, 1]), np.eye(2))
    with pytest.raises(ValueError, match="topn"):
        coherence_scorer(topn=1)


@pytest.mark.parametrize("seed", range(6))
def test_top_word_ids_equals_a_stable_sort_of_the_rows(seed):
    """The partial sort gives exactly a full stable sort's first columns, ties included."""
    rng = np.random.default_rng(seed)
    shape = (int(rng.integers(1, 25)), int(rng.integers(1, 300)))
    A = (rng.integers(-3, 4, size=shape).astype(float) if seed % 2  # many ties
         else rng.normal(size=shape))
    for n in (0, 1, 5, 10, shape[1] // 3, shape[1], shape[1] + 2):
        expected = np.argsort(-np.abs(A), axis=1, kind="stable")[:, :n]
        np.testing.assert_array_equal(top_word_ids(A, n), expected)


def test_a_corpus_of_strings_or_dicts_is_not_a_tokenized_corpus():
    """Strings were read as sequences of characters, which no topic word matches (a
    silent coherence of 0); a document that is not a token list now raises."""
    with pytest.raises(TypeError, match="Document 0 is of type str .*list of str tokens"):
        topic_coherence([["cat", "dog"]], ["cat dog", "dog pet"], window_size=None)
    with pytest.raises(TypeError, match="Document 1 is a dict"):
        topic_coherence([["cat", "dog"]], [["cat", "dog"], {"dog": 2}], window_size=None)
    tuples = topic_coherence([["cat", "dog"]], [("cat", "dog"), ("dog", "pet")],
                             window_size=None)
    lists = topic_coherence([["cat", "dog"]], [["cat", "dog"], ["dog", "pet"]],
                            window_size=None)
    np.testing.assert_allclose(tuples, lists, rtol=1e-12)
