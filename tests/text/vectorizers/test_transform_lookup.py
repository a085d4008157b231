"""The term lookup of ``transform`` (``vocabulary_`` in order of first appearance, built
once per fit) follows every refit and survives pickling: same matrices as a fresh fit."""
import pickle

import numpy as np
import pytest
from gensim.test.utils import datapath

from nlpfeat.datasets import Corpus
from nlpfeat.text import BagOfWords, PositionalBagOfWords, TfidfVectorizer


@pytest.fixture(scope="module")
def lee():
    return list(Corpus(datapath("lee_background.cor")))


@pytest.mark.parametrize("make", [BagOfWords, TfidfVectorizer, PositionalBagOfWords])
def test_transform_after_refits_and_pickling_equals_a_fresh_fit(lee, make):
    head, tail = lee[:100], lee[100:200]
    est = make().fit(head)
    first = est.transform(tail)
    est.partial_fit(tail)                  # new terms: the lookup must be rebuilt
    np.testing.assert_allclose(est.transform(tail).toarray(),
                               make().fit(head + tail).transform(tail).toarray(), rtol=1e-12)
    est.fit(tail)                          # a refit on other documents
    again = pickle.loads(pickle.dumps(est))
    expected = make().fit(tail).transform(head)
    for got in (est.transform(head), again.transform(head)):
        np.testing.assert_allclose(got.toarray(), expected.toarray(), rtol=1e-12)
    assert first.shape[1] != expected.shape[1]


def test_the_lookup_maps_every_term_to_its_column_in_order_of_appearance(lee):
    bow = BagOfWords(min_df=2).fit(lee)
    lookup = bow._transform_lookup()
    assert lookup == bow.vocabulary_
    assert list(lookup) != sorted(lookup)
    analyze = bow.build_analyzer()
    seen = dict.fromkeys(t for doc in lee for t in analyze(doc) if t in bow.vocabulary_)
    assert list(lookup) == list(seen)
