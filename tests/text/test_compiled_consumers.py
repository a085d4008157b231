"""The pair and n-gram consumers (``cooccurrence``, ``PMIEmbedding``, ``Collocations``)
through the compiled tokenizer equal their Python path (a callable tokenizer, or the
private switch ``_compiled_text = False``) on arbitrary Unicode text, for every chunk
size, with chunks the compiled pass refuses (a lone surrogate) counted in their turn."""
import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from nlpfeat.text import Collocations, PMIEmbedding, cooccurrence
from nlpfeat.text._base._tokenize import get_tokenizer
from nlpfeat.text._counting._term_loops import add_document_frequency
from nlpfeat.text._counting._text_ids import TextChunk, text_chunks

WORDS = ["the", "The", "CAT", "cat", "café", "CAFÉ", "naïve", "İstanbul", "ΟΔΟΣ", "σας",
         "中文", "x", "_a", "٣٤", "don't", "a-b", "\u0301é", "ß", "STRASSE", "a", "on"]
pieces = st.one_of(st.sampled_from(WORDS + [" ", ", ", "\n"]),
                   st.text(st.characters(blacklist_categories=("Cs",)), max_size=6))
docs = st.lists(st.lists(pieces, max_size=14).map("".join), min_size=1, max_size=10)
budget = st.sampled_from([None, 0.0002, 0.002])


def python_path(estimator):
    estimator._compiled_text = False
    return estimator


def outcome(fn, *args, **kwargs):
    """``fn``'s result, or its error as ``(type, message)`` (both paths raise alike)."""
    try:
        return fn(*args, **kwargs)
    except ValueError as exc:
        return type(exc), str(exc)


def assert_same_matrix(A, B):
    assert A.dtype == B.dtype and A.shape == B.shape
    assert (A != B).nnz == 0


@settings(max_examples=30, deadline=None)
@given(docs, st.integers(1, 4), st.sampled_from(["uniform", "harmonic"]), budget)
def test_cooccurrence_compiled_equals_python(X, window, weighting, working_memory):
    got, vocabulary = outcome(cooccurrence, X, window, context_weighting=weighting,
                              working_memory=working_memory)
    expected, expected_vocabulary = outcome(
        cooccurrence, X, window, context_weighting=weighting, working_memory=working_memory,
        tokenizer=get_tokenizer("regexp"))               # the same tokens, from Python
    assert vocabulary == expected_vocabulary
    if got is ValueError:
        assert expected is ValueError
        return
    assert_same_matrix(got, expected)


def test_cooccurrence_mixed_documents_and_a_refused_chunk():
    X = ["new york city", ["new", "york"], "a\udcff new york", "NEW york", ["city"]] * 3
    got, vocabulary = cooccurrence(iter(X), 2, working_memory=0.00002)
    expected, expected_vocabulary = cooccurrence(X, 2, tokenizer=get_tokenizer("regexp"))
    assert vocabulary == expected_vocabulary
    assert_same_matrix(got, expected)


PMI_OPTIONS = [{}, {"lowercase": False}, {"stop_words": "english"},
               {"stop_words": ["cat", "σας"], "min_count": 2}]


@settings(max_examples=30, deadline=None)
@given(docs, st.sampled_from(PMI_OPTIONS), budget)
# only stop words: the same error as the Python path's (the token table numbers them too)
@example(["the"], {"stop_words": "english"}, None)
def test_pmi_embedding_counting_compiled_equals_python(X, options, working_memory):
    options = {"min_count": 1, "window": 3, **options}
    compiled = PMIEmbedding(2, working_memory=working_memory, **options)
    assert compiled._text_pass_options() is not None
    python = python_path(PMIEmbedding(2, working_memory=working_memory, **options))
    expected = outcome(python._count_pairs, X)
    if expected[0] is ValueError:                 # no token at all: the same error
        assert outcome(compiled._count_pairs, X) == expected
        return
    upper, vocabulary, terms = compiled._count_pairs(X)
    assert vocabulary == expected[1]
    assert_same_matrix(upper.upper(), expected[0].upper())
    ids, expected_ids = terms.selected_ids(vocabulary), expected[2].selected_ids(vocabulary)
    np.testing.assert_array_equal(terms.freq[ids], expected[2].freq[expected_ids])
    np.testing.assert_array_equal(terms.df[ids], expected[2].df[expected_ids])
    assert terms.n_documents == expected[2].n_documents


COLLOCATION_OPTIONS = [{}, {"lowercase": False}, {"stop_words": ["the", "σας"]},
                       {"window_size": 3, "measure": "pmi"},
                       {"order": 3, "measure": "pmi"}]


@settings(max_examples=30, deadline=None)
@given(docs, st.sampled_from(COLLOCATION_OPTIONS), budget)
def test_collocations_compiled_equals_python(X, options, working_memory):
    compiled = Collocations(min_count=1, working_memory=working_memory, **options)
    assert compiled._text_pass_options() is not None
    python = python_path(Collocations(min_count=1, working_memory=working_memory, **options))
    expected = outcome(python.fit, X)
    if isinstance(expected, tuple):
        assert outcome(compiled.fit, X) == expected
        return
    compiled.fit(X)
    assert compiled.scores_ == python.scores_
    assert len(compiled.levels_) == len(python.levels_)
    for (terms, keys), (expected_terms, expected_keys) in zip(compiled.levels_,
                                                              python.levels_):
        np.testing.assert_array_equal(terms, expected_terms)
        np.testing.assert_array_equal(keys, expected_keys)
    assert compiled.transform(X) == python.transform(X)


def test_collocations_partial_fit_across_a_refused_chunk():
    X = ["New York city", "new york", "a\udcff new york", "NEW York hall"] * 4
    compiled = Collocations(min_count=1, working_memory=0.00002)
    compiled.partial_fit(X[:6]).partial_fit(X[6:])
    python = python_path(Collocations(min_count=1)).fit(X)
    assert compiled.scores_ == python.scores_


def test_text_chunks_keep_every_document_in_order():
    X = ["ab cd", "", "x" * 50, ["t"], "ef", ["u", "v"], ["w"], "gh"]
    chunks = list(text_chunks(iter(X), 48, to_tokens=lambda doc, i: list(doc), cost=len))
    flat = []
    for chunk in chunks:
        flat.extend(chunk.docs if isinstance(chunk, TextChunk) else chunk)
    assert flat == [doc if isinstance(doc, str) else list(doc) for doc in X]
    starts = [chunk.start for chunk in chunks if isinstance(chunk, TextChunk)]
    assert starts == [0, 1, 4, 7]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.integers(-1, 6), max_size=8), min_size=1, max_size=8))
def test_document_frequency_counts_each_document_once(token_ids):
    lengths = np.array([len(doc) for doc in token_ids], np.int64)
    ids = np.array([t for doc in token_ids for t in doc], np.int64)
    df = np.zeros(7, np.int64)
    add_document_frequency(ids, lengths, df)
    expected = [sum(t in doc for doc in token_ids) for t in range(7)]
    np.testing.assert_array_equal(df, expected)
