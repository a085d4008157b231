"""TfidfVectorizer's SMART, BM25 and log-entropy weightings against gensim's own tests.

Each test re-checks a behaviour of gensim's suite (``gensim/test/test_tfidfmodel.py``,
``test_bm25model.py``, ``test_logentropy_model.py``, named in each docstring): against
gensim's live output and against the values gensim's tests pin. gensim's bag-of-words
corpora become token lists (term id ``i`` counted ``n`` times is the token ``"i"`` n times).
Not covered: save/load and backward-compatibility tests (gensim's file formats; nlpfeat
estimators pickle), custom ``wlocal``/``wglobal`` callables and models built from a
``Dictionary`` alone (nlpfeat has neither), Lucene and ATIRE BM25 (not implemented).
A generator corpus is read once by nlpfeat, where gensim's ``LogEntropyModel`` rejects it.
"""
import math

import numpy as np
import pytest

from nlpfeat.text import TfidfVectorizer

gensim = pytest.importorskip("gensim")
from gensim.corpora import Dictionary, MmCorpus  # noqa: E402
from gensim.models import LogEntropyModel, OkapiBM25Model, TfidfModel  # noqa: E402
from gensim.test.utils import datapath  # noqa: E402

TEXTS = [
    ["complier", "system", "computer"],
    ["eulerian", "node", "cycle", "graph", "tree", "path"],
    ["graph", "flow", "network", "graph"],
    ["loading", "computer", "system"],
    ["user", "server", "system"],
    ["tree", "hamiltonian"],
    ["graph", "trees"],
    ["computer", "kernel", "malfunction", "computer"],
    ["server", "system", "computer"],
]
DICTIONARY = Dictionary(TEXTS)
CORPUS = [DICTIONARY.doc2bow(text) for text in TEXTS]


def _tokens(bow):
    """A gensim bag of words as a token list: term id ``i`` with count ``n`` -> n x ``"i"``."""
    return [str(term) for term, count in bow for _ in range(int(count))]


def _vectorizer(**kwargs):
    return TfidfVectorizer(input="tokens", lowercase=False, **kwargs)


def _dense(vectors, vocabulary, n_terms):
    """gensim vectors [(id, weight), ...] as rows in nlpfeat's columns (``str(id)`` terms)."""
    vectors = list(vectors)
    out = np.zeros((len(vectors), n_terms))
    for row, vector in enumerate(vectors):
        for term, weight in vector:
            out[row, vocabulary[str(term)]] = weight
    return out


def _check_equal(ours, model, docs, atol=1e-12):
    X = ours.transform([_tokens(doc) for doc in docs]).toarray()
    expected = _dense(model[docs], ours.vocabulary_, X.shape[1])
    np.testing.assert_allclose(X, expected, rtol=0, atol=atol)
    return X


@pytest.fixture(scope="module")
def testcorpus():
    return list(MmCorpus(datapath("testcorpus.mm")))


def test_transform(testcorpus):
    """test_tfidfmodel.py::test_transform (gensim's default is SMART 'nfc')."""
    ours = _vectorizer(smartirs="nfc").fit([_tokens(doc) for doc in testcorpus])
    X = _check_equal(ours, TfidfModel(testcorpus, normalize=True), testcorpus[:1])
    np.testing.assert_allclose(X[0][X[0] > 0], [0.57735026918962573] * 3, rtol=1e-12)


def test_init_idfs():
    """test_tfidfmodel.py::test_init: the global weights are gensim's idfs."""
    ours = _vectorizer(smartirs="nfc").fit([_tokens(doc) for doc in CORPUS])
    model = TfidfModel(CORPUS)
    for term, idf in model.idfs.items():
        assert ours.idf_[ours.vocabulary_[str(term)]] == pytest.approx(idf, rel=1e-12)


# gensim's pinned weights of CORPUS[1] and CORPUS[2] (test_consistency)
PINNED = {
    "lnn": ([(3, 1.0), (4, 1.0), (5, 1.0), (6, 1.0), (7, 1.0), (8, 1.0)],
            [(5, 2.0), (9, 1.0), (10, 1.0)]),
    "dnn": ([(3, 1.0), (4, 1.0), (5, 1.0), (6, 1.0), (7, 1.0), (8, 1.0)],
            [(5, 2.0), (9, 1.0), (10, 1.0)]),
    "ann": ([(3, 1.0), (4, 1.0), (5, 1.0), (6, 1.0), (7, 1.0), (8, 1.0)],
            [(5, 1.0), (9, 0.75), (10, 0.75)]),
    "bnn": ([(3, 1), (4, 1), (5, 1), (6, 1), (7, 1), (8, 1)], [(5, 1), (9, 1), (10, 1)]),
    "Lnn": ([(3, 1.0), (4, 1.0), (5, 1.0), (6, 1.0), (7, 1.0), (8, 1.0)],
            [(5, 1.4133901052), (9, 0.7066950526), (10, 0.7066950526)]),
    "nfn": ([(3, 3.169925001442312), (4, 3.169925001442312), (5, 1.584962500721156),
             (6, 3.169925001442312), (7, 3.169925001442312), (8, 2.169925001442312)],
            [(5, 3.169925001442312), (9, 3.169925001442312), (10, 3.169925001442312)]),
    "ntn": ([(3, 3.321928094887362), (4, 3.321928094887362), (5, 1.736965594166206),
             (6, 3.321928094887362), (7, 3.321928094887362), (8, 2.321928094887362)],
            [(5, 3.473931188332412), (9, 3.321928094887362), (10, 3.321928094887362)]),
    "npn": ([(3, 3.0), (4, 3.0), (5, 1.0), (6, 3.0), (7, 3.0), (8, 1.8073549220576042)],
            [(5, 2.0), (9, 3.0), (10, 3.0)]),
    "nnc": ([(3, 0.4082482905), (4, 0.4082482905), (5, 0.4082482905), (6, 0.4082482905),
             (7, 0.4082482905), (8, 0.4082482905)],
            [(5, 0.81649658092772603), (9, 0.40824829046386302), (10, 0.40824829046386302)]),
}
for _same_as_counts in ("tnn", "nnn", "nxn", "nnx"):
    PINNED[_same_as_counts] = (CORPUS[1], CORPUS[2])


@pytest.mark.parametrize("smartirs", sorted(PINNED) + ["nfc"])
def test_consistency(smartirs):
    """test_tfidfmodel.py::test_consistency: every local, global and normalisation letter."""
    ours = _vectorizer(smartirs=smartirs).fit([_tokens(doc) for doc in CORPUS])
    X = _check_equal(ours, TfidfModel(CORPUS, smartirs=smartirs), CORPUS[1:3])
    if smartirs == "nfc":  # gensim's default scheme
        _check_equal(ours, TfidfModel(CORPUS), CORPUS[1:3])
    else:
        pinned = _dense(PINNED[smartirs], ours.vocabulary_, X.shape[1])
        np.testing.assert_allclose(X, pinned, rtol=1e-9)


def test_consistency_pivoted_unique():
    """test_tfidfmodel.py::test_consistency, 'nnu' with slope=0.2 (pivot learned)."""
    slope = 0.2
    ours = _vectorizer(smartirs="nnu", slope=slope).fit([_tokens(doc) for doc in CORPUS])
    X = _check_equal(ours, TfidfModel(CORPUS, smartirs="nnu", slope=slope), CORPUS[1:3])
    pivot = sum(len(set(text)) for text in TEXTS) / len(TEXTS)
    assert ours.pivot_ == pytest.approx(pivot, rel=1e-12)
    for row, doc, old_norm in zip(X, CORPUS[1:3], [6.0, 3.0]):
        norm = (1.0 - slope) * pivot + slope * old_norm
        expected = _dense([[(t, c / norm) for t, c in doc]], ours.vocabulary_, X.shape[1])[0]
        np.testing.assert_allclose(row, expected, rtol=1e-12)


def test_consistency_pivoted_characters():
    """test_tfidfmodel.py::test_consistency, 'nnb' with slope=0.2: the pivot is the mean
    number of characters (plus one per token) of the words, here learned from TEXTS."""
    slope = 0.2
    ours = _vectorizer(smartirs="nnb", slope=slope).fit(TEXTS)
    model = TfidfModel(dictionary=DICTIONARY, smartirs="nnb", slope=slope)
    pivot = sum(len(word) + 1.0 for text in TEXTS for word in text) / len(TEXTS)
    assert ours.pivot_ == pytest.approx(pivot, rel=1e-12)
    X = ours.transform(TEXTS[1:3]).toarray()
    expected = np.zeros_like(X)
    for row, (vector, old_norm) in enumerate(zip(model[CORPUS[1:3]], [36.0, 25.0])):
        for term, weight in vector:
            expected[row, ours.vocabulary_[DICTIONARY[term]]] = weight
        bow = CORPUS[1 + row]
        pinned = {DICTIONARY[t]: c / ((1.0 - slope) * pivot + slope * old_norm) for t, c in bow}
        for word, weight in pinned.items():
            assert X[row, ours.vocabulary_[word]] == pytest.approx(weight, rel=1e-12)
    np.testing.assert_allclose(X, expected, rtol=0, atol=1e-12)


def test_pivoted_normalization(testcorpus):
    """test_tfidfmodel.py::test_pivoted_normalization: pivot=0 is accepted; slope=1 is plain
    cosine normalisation; pivot=0, slope=0.5 gives gensim's pinned weights."""
    train = [_tokens(doc) for doc in testcorpus]
    docs = [_tokens(doc) for doc in CORPUS[1:3]]
    plain = _vectorizer(smartirs="nfc").fit(train).transform(docs).toarray()
    pivot_slope_1 = _vectorizer(smartirs="nfc", pivot=0, slope=1).fit(train)
    assert pivot_slope_1.pivot_ == 0.0
    np.testing.assert_allclose(pivot_slope_1.transform(docs).toarray(), plain, rtol=1e-12)
    ours = _vectorizer(smartirs="nfc", pivot=0, slope=0.5).fit(train)
    X = _check_equal(ours, TfidfModel(testcorpus, pivot=0, slope=0.5), CORPUS[1:3])
    pinned = [[(8, 0.8884910505493495), (7, 0.648974041227711), (6, 0.8884910505493495),
               (5, 0.648974041227711), (4, 0.8884910505493495), (3, 0.8884910505493495)],
              [(10, 0.8164965809277263), (9, 0.8164965809277263), (5, 1.6329931618554525)]]
    np.testing.assert_allclose(X, _dense(pinned, ours.vocabulary_, X.shape[1]), rtol=1e-12)


def test_pivot_zero_with_slope_zero_raises():
    with pytest.raises(ValueError, match="pivot=0 with slope=0 divides every row by 0"):
        _vectorizer(smartirs="nfc", pivot=0, slope=0).fit([["a"]])


BM25_DOCS = [["cat", "dog", "mouse"], ["cat", "lion"], ["cat", "lion"]]


def test_bm25_idfs_and_avgdl():
    """test_bm25model.py: test_avgdl_from_corpus, OkapiBM25ModelTest.test_idfs_from_corpus."""
    k1, b, epsilon = 1.5, 0.75, 0.25
    ours = _vectorizer(weighting="bm25", k1=k1, b=b, epsilon=epsilon, norm=None).fit(BM25_DOCS)
    assert ours.avgdl_ == pytest.approx(sum(map(len, BM25_DOCS)) / len(BM25_DOCS), rel=1e-12)

    def idf(word):
        df = sum(word in doc for doc in BM25_DOCS)
        return math.log((len(BM25_DOCS) - df + 0.5) / (df + 0.5))

    words = ["cat", "dog", "lion", "mouse"]
    floor = epsilon * sum(map(idf, words)) / len(words)
    for word in words:
        expected = idf(word) if idf(word) > 0 else floor
        assert ours.idf_[ours.vocabulary_[word]] == pytest.approx(expected, rel=1e-12)


def test_bm25_score():
    """test_bm25model.py::OkapiBM25ModelTest.test_score, and gensim's whole matrix."""
    k1, b, epsilon = 1.5, 0.75, 0.25
    ours = _vectorizer(weighting="bm25", k1=k1, b=b, epsilon=epsilon, norm=None).fit(BM25_DOCS)
    X = ours.transform(BM25_DOCS).toarray()
    for word in BM25_DOCS[0]:
        expected = ours.idf_[ours.vocabulary_[word]] * (k1 + 1) / (
            1 + k1 * (1 - b + b * len(BM25_DOCS[0]) / ours.avgdl_))
        assert X[0, ours.vocabulary_[word]] == pytest.approx(expected, rel=1e-12)
    dictionary = Dictionary(BM25_DOCS)
    corpus = [dictionary.doc2bow(doc) for doc in BM25_DOCS]
    model = OkapiBM25Model(corpus=corpus, k1=k1, b=b, epsilon=epsilon)
    expected = np.zeros_like(X)
    for row, vector in enumerate(model[corpus]):
        for term, weight in vector:
            expected[row, ours.vocabulary_[dictionary[term]]] = weight
    np.testing.assert_allclose(X, expected, rtol=0, atol=1e-12)


def test_logentropy_transform():
    """test_logentropy_model.py::test_transform (normalize=False)."""
    corpus = list(MmCorpus(datapath("test_corpus_ok.mm")))
    ours = _vectorizer(weighting="logentropy", norm=None).fit([_tokens(doc) for doc in corpus])
    X = _check_equal(ours, LogEntropyModel(corpus, normalize=False), corpus[:1])
    pinned = [[(0, 0.3748900964125389), (1, 0.30730215324230725), (3, 1.20941755462856)]]
    np.testing.assert_allclose(X, _dense(pinned, ours.vocabulary_, X.shape[1]), rtol=1e-12)
    normalized = _vectorizer(weighting="logentropy", norm="l2").fit(
        [_tokens(doc) for doc in corpus])
    _check_equal(normalized, LogEntropyModel(corpus, normalize=True), corpus)


def test_logentropy_empty_corpus_raises():
    """test_logentropy_model.py::test_empty_fail."""
    with pytest.raises(ValueError, match="Empty corpus"):
        _vectorizer(weighting="logentropy").fit([])


def test_generator_is_read_once():
    """test_logentropy_model.py::test_generator_fail: gensim rejects a generator (it reads
    the corpus twice); nlpfeat reads it once and gives the list's weights."""
    corpus = list(MmCorpus(datapath("test_corpus_ok.mm")))
    docs = [_tokens(doc) for doc in corpus]
    from_list = _vectorizer(weighting="logentropy").fit_transform(docs)
    from_generator = _vectorizer(weighting="logentropy").fit_transform(doc for doc in docs)
    np.testing.assert_array_equal(from_list.toarray(), from_generator.toarray())
