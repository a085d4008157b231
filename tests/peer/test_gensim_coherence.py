"""topic_coherence against gensim's own coherence tests (gensim/test/test_coherencemodel.py).

Each behaviour gensim's ``TestCoherenceModel`` checks is checked here against gensim's
output, computed live, on gensim's test data: the Deerwester texts of its tests
(``common_texts``) and the Lee background corpus (``datapath("lee_background.cor")``).

Left out, and why:

- ``testProcesses``, the ``testPersistence*`` and ``testAccumulatorCaching*`` tests: they
  check gensim's ``CoherenceModel`` object (worker processes, ``save``/``load``, the cached
  accumulator). ``topic_coherence`` is a stateless function with no processes or cache;
  its scorer's pickling is tested in ``tests/text/test_coherence.py``.
- ``testCw2vLdaModel``: ``c_w2v`` (word2vec similarity) is not an nlpfeat measure.
- ``testErrors`` where nlpfeat differs on purpose: gensim refuses ``c_v`` on a bag-of-words
  corpus; nlpfeat scores it on boolean documents (parity with gensim's window longer
  than every document is in ``tests/text/test_coherence.py``). The other errors (topics as
  words without a vocabulary; no corpus) are checked below.
- One-word topics: gensim returns NaN; nlpfeat raises a ValueError (checked below).
"""
import warnings

import numpy as np
import pytest

from nlpfeat.text import topic_coherence

gensim = pytest.importorskip("gensim")
from gensim.corpora import Dictionary  # noqa: E402
from gensim.matutils import corpus2csc  # noqa: E402
from gensim.models import CoherenceModel, LdaModel  # noqa: E402
from gensim.test.utils import common_corpus, common_dictionary, common_texts, datapath  # noqa: E402
from gensim.utils import simple_preprocess  # noqa: E402

MEASURES = ["u_mass", "c_v", "c_uci", "c_npmi"]
TOL = {"u_mass": 1e-9, "c_uci": 1e-9, "c_npmi": 1e-9, "c_v": 1e-6}

# the topics of gensim's setUp
TOPICS1 = [["human", "computer", "system", "interface"], ["graph", "minors", "trees", "eps"]]
TOPICS2 = [["user", "graph", "minors", "system"], ["time", "graph", "survey", "minors"]]
TOPICS3 = [["token", "computer", "system", "interface"], ["graph", "minors", "trees", "eps"]]
TOPICS4 = [["not a token", "not an id", "tests using", "this list"],
           ["should raise", "an error", "to pass", "correctly"]]
TOPICS5 = [["aaaaa", "bbbbb", "ccccc", "eeeee"], ["ddddd", "fffff", "ggggh", "hhhhh"]]


def _gensim(topics, measure, texts=common_texts, dictionary=common_dictionary, **kwargs):
    """gensim's per-topic values, with the corpus gensim's check_coherence_measure uses."""
    if measure == "u_mass":
        kwargs["corpus"] = [dictionary.doc2bow(t) for t in texts]
    else:
        kwargs["texts"] = texts
    cm = CoherenceModel(topics=topics, dictionary=dictionary, coherence=measure, processes=1,
                        **kwargs)
    return np.asarray(cm.get_coherence_per_topic())


def _ours(topics, measure, texts=common_texts, dictionary=common_dictionary, **kwargs):
    """nlpfeat's, from the same data: a count matrix for u_mass, token lists otherwise."""
    if measure == "u_mass":
        X = corpus2csc([dictionary.doc2bow(t) for t in texts],
                       num_terms=len(dictionary)).T.tocsr()
        return topic_coherence(topics, X, measure=measure, vocabulary=dictionary.token2id,
                               **kwargs)
    return topic_coherence(topics, texts, measure=measure, vocabulary=dictionary.token2id,
                           **kwargs)


@pytest.fixture(scope="module")
def lee():
    """Lee background texts (gensim's simple_preprocess), filtered dictionary, LDA topics."""
    with open(datapath("lee_background.cor"), encoding="latin-1") as fh:
        texts = [simple_preprocess(line) for line in fh]
    dictionary = Dictionary(texts)
    dictionary.filter_extremes(no_below=3, no_above=0.5)
    kept = set(dictionary.token2id)
    texts = [[w for w in t if w in kept] for t in texts]
    lda = LdaModel([dictionary.doc2bow(t) for t in texts], num_topics=6, id2word=dictionary,
                   passes=2, random_state=0)
    return texts, dictionary, lda


# ---- check_coherence_measure ------------------------------------------------------------------
@pytest.mark.parametrize("measure", MEASURES)
def test_values_equal_gensim_on_its_test_topics(measure):
    for topics in (TOPICS1, TOPICS2):
        np.testing.assert_allclose(_ours(topics, measure), _gensim(topics, measure),
                                   rtol=0, atol=TOL[measure])


@pytest.mark.parametrize("measure", MEASURES)
def test_words_and_ids_give_the_same_coherence(measure):
    """gensim: cm1 (words) == cm4 (ids)."""
    ids = [[common_dictionary.token2id[w] for w in topic] for topic in TOPICS1]
    np.testing.assert_allclose(_ours(ids, measure), _ours(TOPICS1, measure), rtol=1e-12)
    np.testing.assert_allclose(_ours(ids, measure), _gensim(ids, measure), atol=TOL[measure])


@pytest.mark.parametrize("measure", MEASURES)
def test_a_topic_scores_the_same_alone_or_with_others(measure):
    """gensim: cm1's first topic == cm5 (that topic alone)."""
    alone = _ours([TOPICS1[0]], measure)
    np.testing.assert_allclose(alone, _ours(TOPICS1, measure)[:1], rtol=1e-12)
    np.testing.assert_allclose(alone, _gensim([TOPICS1[0]], measure), atol=TOL[measure])


@pytest.mark.parametrize("measure", MEASURES)
def test_unknown_words_are_dropped_and_the_rest_scored(measure):
    """gensim: cm3 ('token' is not in the dictionary) gives a float."""
    with pytest.warns(UserWarning, match="'token' \\(topic 0\\)"):
        got = _ours(TOPICS3, measure)
    assert got.dtype == np.float64 and np.isfinite(got).all()
    np.testing.assert_allclose(got, _gensim(TOPICS3, measure), atol=TOL[measure])


@pytest.mark.parametrize("measure", MEASURES)
def test_unknown_words_without_a_vocabulary_are_dropped_too(measure):
    """Without vocabulary=, words absent from the texts are dropped (gensim builds its
    dictionary from the texts), not scored as never-occurring words: c_npmi of TOPICS3's
    first topic is 0.246, as gensim's, not 0.123."""
    with pytest.warns(UserWarning, match="'token' \\(topic 0\\)"):
        got = topic_coherence(TOPICS3, common_texts, measure=measure)
    expected = _gensim(TOPICS3, measure, corpus=None) if measure != "u_mass" else \
        np.asarray(CoherenceModel(topics=TOPICS3, texts=common_texts,
                                  dictionary=common_dictionary, coherence="u_mass",
                                  processes=1).get_coherence_per_topic())
    np.testing.assert_allclose(got, expected, atol=TOL[measure])


@pytest.mark.parametrize("measure", MEASURES)
@pytest.mark.parametrize("topics", [TOPICS4, TOPICS5], ids=["not-tokens", "unseen-words"])
def test_topics_without_any_known_word_raise(measure, topics):
    with pytest.raises(ValueError):
        _gensim(topics, measure)
    with pytest.warns(UserWarning), pytest.raises(ValueError, match="No word of topic 0"):
        _ours(topics, measure)


@pytest.mark.parametrize("measure", MEASURES)
def test_better_topics_score_higher(measure):
    """gensim: cm1 > cm2 (topics1 separates human-computer interaction from graphs)."""
    assert _ours(TOPICS1, measure).mean() > _ours(TOPICS2, measure).mean()
    assert _gensim(TOPICS1, measure).mean() > _gensim(TOPICS2, measure).mean()


def test_one_word_topic_raises_where_gensim_gives_nan():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)      # gensim: mean of no pairs
        assert np.isnan(_gensim([["human"]], "c_npmi")).all()
    with pytest.raises(ValueError, match="at least 2"):
        _ours([["human"]], "c_npmi")


# ---- the LdaModel tests (testUMassLdaModel, testCvLdaModel, ...), on the Lee corpus ------------
@pytest.mark.parametrize("measure", MEASURES)
def test_lda_model_topics_on_lee_equal_gensim(lee, measure):
    texts, dictionary, lda = lee
    kwargs = {"corpus": [dictionary.doc2bow(t) for t in texts]} if measure == "u_mass" else \
        {"texts": texts}
    expected = CoherenceModel(model=lda, dictionary=dictionary, coherence=measure, topn=10,
                              processes=1, **kwargs).get_coherence_per_topic()
    topics = [[i for i, _ in lda.get_topic_terms(k, topn=10)] for k in range(lda.num_topics)]
    got = _ours(topics, measure, texts=texts, dictionary=dictionary)
    np.testing.assert_allclose(got, expected, rtol=0, atol=TOL[measure])


def test_compare_model_topics_means_on_lee(lee):
    """gensim's testCompareCoherenceForTopics: per topic, the mean of the coherences of its
    top 10 and top 5 words (gensim's grid for topn=10); their mean is the model's value; and
    the better topics score higher, here on Lee with LDA vs random topics."""
    texts, dictionary, lda = lee
    good = [[dictionary[i] for i, _ in lda.get_topic_terms(k, topn=10)] for k in range(6)]
    rng = np.random.RandomState(0)
    words = [dictionary[i] for i in range(len(dictionary))]
    bad = [list(rng.choice(words, 10, replace=False)) for _ in range(6)]
    cm = CoherenceModel.for_topics([good, bad], dictionary=dictionary, texts=texts,
                                   coherence="c_npmi", topn=10, processes=1)
    (per_good, mean_good), (per_bad, mean_bad) = cm.compare_model_topics([good, bad])
    got_good, got_bad = (np.mean([topic_coherence([t[:n] for t in topics], texts,
                                                  vocabulary=dictionary.token2id)
                                  for n in (10, 5)], axis=0) for topics in (good, bad))
    np.testing.assert_allclose(got_good, per_good, atol=1e-9)
    np.testing.assert_allclose(got_bad, per_bad, atol=1e-9)
    assert got_good.mean() == pytest.approx(mean_good, abs=1e-9)
    assert got_good.mean() > got_bad.mean() and mean_good > mean_bad


@pytest.mark.parametrize("measure", ["c_v", "c_npmi"])
def test_empty_document_in_the_texts(measure):
    """gensim's testEmptyList: texts with an empty document still score (and equally)."""
    texts = common_texts + [[]]
    got = topic_coherence(TOPICS1, texts, measure=measure,
                          vocabulary=common_dictionary.token2id)
    expected = CoherenceModel(topics=TOPICS1, texts=texts, dictionary=common_dictionary,
                              coherence=measure, processes=1).get_coherence_per_topic()
    np.testing.assert_allclose(got, expected, atol=TOL[measure])


def test_errors_gensim_also_raises():
    """gensim's testErrors: topics as words need a dictionary (here vocabulary=)."""
    X = corpus2csc(common_corpus, num_terms=len(common_dictionary)).T.tocsr()
    with pytest.raises(ValueError):
        CoherenceModel(topics=TOPICS1, corpus=common_corpus, coherence="u_mass")
    with pytest.raises(ValueError, match="need vocabulary"):
        topic_coherence(TOPICS1, X, measure="u_mass")
