"""Corpora shared by the weighting tests (TfidfVectorizer, TermWeighting)."""
import pytest

from nlpfeat.datasets import load_lee
from nlpfeat.text import TfidfVectorizer


@pytest.fixture(scope="module")
def lee():
    return load_lee()


@pytest.fixture(scope="module")
def gensim_corpus(lee):
    """Lee documents analysed by nlpfeat, as a gensim Dictionary and bag-of-words corpus."""
    corpora = pytest.importorskip("gensim.corpora")
    analyze = TfidfVectorizer().build_analyzer()
    tokens = [analyze(doc) for doc in lee.background]
    dictionary = corpora.Dictionary(tokens)
    return dictionary, [dictionary.doc2bow(t) for t in tokens]
