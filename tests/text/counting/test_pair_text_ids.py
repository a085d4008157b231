"""The one-pass pair counts number string documents by the compiled pass
(:meth:`PairCounts.update` with ``text``): the same counts and vocabulary as the Python
tokenizer's token lists, for directed counts, a fixed vocabulary, Dask partitions and
``PMIEmbedding.partial_fit``, on arbitrary text and chunkings."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from nlpfeat.text import PMIEmbedding, cooccurrence, get_tokenizer
from nlpfeat.text._association._cooccurrence import _count_partition, _PairCounting
from nlpfeat.text._counting._pair_counts import PairCounts
from nlpfeat.text._counting._text_pass import TextPass

# words of a small alphabet (pairs repeat), non-ASCII and CJK ones, punctuation between
words = st.sampled_from(["ab", "Ab", "cd", "été", "ÉTÉ", "x", "中文", "a_b", "12", "ß"])
texts = st.lists(st.lists(words, max_size=9).map(" ".join)
                 | st.text(max_size=12), max_size=8)
python_tokens = get_tokenizer("regexp")


def same(a, b):
    (x, vx), (y, vy) = a, b
    return vx == vy and x.dtype == y.dtype and (x != y).nnz == 0


def counted(docs, window, **kwargs):
    """cooccurrence's (counts, vocabulary), or the message of the error it raises."""
    try:
        return cooccurrence(docs, window, **kwargs)
    except ValueError as error:                   # a corpus without any token
        return str(error)


@settings(max_examples=40, deadline=None)
@given(texts, st.integers(1, 4), st.sampled_from([0.0002, 64]))
def test_directed_and_fixed_vocabulary_counts_equal_the_python_path(docs, window, memory):
    vocabulary = ["ab", "cd", "été", "中", "zz"]
    for kwargs in ({"symmetric": False}, {"vocabulary": vocabulary},
                   {"vocabulary": vocabulary, "symmetric": False},
                   {"symmetric": False, "context_weighting": "harmonic"}):
        got = counted(docs, window, working_memory=memory, **kwargs)
        expected = counted(docs, window, working_memory=memory, tokenizer=python_tokens,
                           **kwargs)
        if isinstance(expected, str):
            assert got == expected
        elif kwargs.get("context_weighting") == "harmonic":
            assert got[1] == expected[1]
            assert np.allclose(got[0].toarray(), expected[0].toarray(), rtol=1e-12)
        else:
            assert same(got, expected)


@settings(max_examples=25, deadline=None)
@given(texts)
def test_a_partition_counted_from_text_equals_its_token_lists(docs):
    text = _PairCounting(3, "uniform", None, python_tokens, 0.0002, None, TextPass(
        lowercase=False))
    python = text._replace(text=None)
    got, expected = _count_partition(text, docs), _count_partition(python, docs)
    assert got.vocabulary == expected.vocabulary
    assert np.array_equal(got.freq, expected.freq)
    assert all(np.array_equal(a, b) for a, b in zip(got.table(), expected.table()))


def test_the_compiled_numbering_is_used_and_a_refused_chunk_falls_back(monkeypatch):
    docs = ["ab cd ab", "cd \udcff ab", "été ab"]     # a lone surrogate: Python decides
    calls = []
    text_ids = PairCounts._text_ids

    def spy(self, chunk_docs, options):
        calls.append(text_ids(self, chunk_docs, options))
        return calls[-1]

    monkeypatch.setattr(PairCounts, "_text_ids", spy)
    got = cooccurrence(docs, 2, symmetric=False, working_memory=0.00005)
    assert any(c is None for c in calls) and any(c is not None for c in calls)
    assert same(got, cooccurrence(docs, 2, symmetric=False, tokenizer=python_tokens))
    calls.clear()                      # the two-pass counts of a fixed vocabulary too
    got = cooccurrence(docs, 2, vocabulary=["ab", "été"], working_memory=0.00005)
    assert any(c is None for c in calls) and any(c is not None for c in calls)
    assert same(got, cooccurrence(docs, 2, vocabulary=["ab", "été"],
                                  tokenizer=python_tokens))


def test_pmi_partial_fit_counts_from_text_equal_the_python_path(monkeypatch):
    from nlpfeat.datasets import load_wiki_sample

    docs = load_wiki_sample().data[:40]
    fitted = []
    for compiled in (True, False):
        model = PMIEmbedding(5, min_count=2, random_state=0, working_memory=0.05)
        model._compiled_text = compiled
        model.partial_fit(docs[:25]).partial_fit(docs[25:])
        fitted.append(model)
    a, b = (m._pair_counts for m in fitted)
    assert a.vocabulary == b.vocabulary and np.array_equal(a.df, b.df)
    assert all(np.array_equal(x, y) for x, y in zip(a.table(), b.table()))
    assert fitted[0].vocabulary_ == fitted[1].vocabulary_
