"""BagOfWords and TfidfVectorizer through the compiled text pass equal their Python path
(the private switch ``_compiled_text = False``) for every option the pass honours, and
their output is the same for every ``n_jobs`` and chunk size."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlpfeat.datasets import load_lee
from nlpfeat.text import BagOfWords, PositionalBagOfWords, TfidfVectorizer

WORDS = ["the", "The", "CAT", "cat", "café", "CAFÉ", "naïve", "İstanbul", "ΟΔΟΣ", "σας",
         "中文", "x", "_a", "٣٤", "don't", "a-b", "\u0301é", "ß", "STRASSE"]

docs = st.lists(st.lists(st.sampled_from(WORDS + [" ", ", ", "\n"]), max_size=12)
                .map("".join), min_size=1, max_size=8)

OPTIONS = [
    {}, {"lowercase": False}, {"stop_words": "english"}, {"stop_words": ["cat", "σας"]},
    {"strip_accents": "unicode"}, {"strip_accents": "ascii", "lowercase": False},
    {"binary": True, "min_df": 2}, {"max_features": 3}, {"max_df": 0.5},
    {"vocabulary": ["cat", "cafe", "café", "中", "the", "zzz"]},
]


def python_path(estimator):
    estimator._compiled_text = False
    return estimator


def assert_same(compiled, python, X):
    A, B = compiled.fit_transform(X), python.fit_transform(X)
    assert compiled.vocabulary_ == python.vocabulary_
    assert A.dtype == B.dtype and A.shape == B.shape
    np.testing.assert_array_equal(A.indptr, B.indptr)
    np.testing.assert_array_equal(A.indices, B.indices)
    np.testing.assert_array_equal(A.data, B.data)        # same counts: same float ops
    R, S = compiled.transform(X[::-1]), python.transform(X[::-1])
    assert (R != S).nnz == 0


@settings(max_examples=25, deadline=None)
@given(docs, st.sampled_from(OPTIONS), st.sampled_from([BagOfWords, TfidfVectorizer]))
def test_compiled_pass_equals_the_python_path(X, options, Vectorizer):
    compiled = Vectorizer(**options, working_memory=0.0005)
    assert compiled._text_pass_options() is not None
    try:
        python_path(Vectorizer(**options)).fit(X)
    except ValueError as exc:                                    # an empty vocabulary
        with pytest.raises(ValueError, match=str(exc)[:30]):
            compiled.fit(X)
        return
    assert_same(compiled, python_path(Vectorizer(**options)), X)


def test_lee_corpus_equal_for_every_n_jobs_and_chunk_size():
    X = load_lee().background
    reference = python_path(BagOfWords()).fit_transform(X)
    for n_jobs, working_memory in ((1, None), (2, 0.01), (-1, 0.003)):
        bow = BagOfWords(n_jobs=n_jobs, working_memory=working_memory)
        assert (bow.fit_transform(X) != reference).nnz == 0
    tfidf = TfidfVectorizer(n_jobs=2, working_memory=0.01)
    assert_same(tfidf, python_path(TfidfVectorizer()), X)


def test_partial_fit_and_streams_equal_the_python_path():
    X = load_lee().background[:60] + ["odd \udcff surrogate Words", "Ünïcode ΣΟΦΙΑ"]
    compiled, python = BagOfWords(n_jobs=2), python_path(BagOfWords())
    for part in (X[:20], X[20:]):
        compiled.partial_fit(iter(part))                    # a one-shot iterator read once
        python.partial_fit(part)
    assert compiled.vocabulary_ == python.vocabulary_
    assert (compiled.transform(X) != python.transform(X)).nnz == 0


def test_a_chunk_the_pass_refuses_then_the_fused_scan_gives_the_python_path():
    """A refused chunk (a lone surrogate) adds its terms by the Python path; the later
    chunks' tokens new to the pass's table may already be terms."""
    X = ["odd \udcff Surrogate words", "words Surrogate new", "new odd words"] * 3
    for working_memory in (None, 1e-5):
        compiled = BagOfWords(working_memory=working_memory)
        python = python_path(BagOfWords())
        assert (compiled.fit_transform(X) != python.fit_transform(X)).nnz == 0
        assert compiled.vocabulary_ == python.vocabulary_


def test_bytes_files_and_decode_errors_take_the_pass_after_decoding(tmp_path):
    data = ["Café crème".encode("latin-1"), b"plain Bytes \xff here"]
    for options in ({"encoding": "latin-1"}, {"decode_error": "replace"},
                    {"decode_error": "ignore"}):
        assert_same(BagOfWords(**options), python_path(BagOfWords(**options)), data)
    path = tmp_path / "doc.txt"
    path.write_text("Files TOO")
    compiled = BagOfWords(input="filename")
    assert compiled._text_pass_options() is not None
    assert compiled.fit(
        [str(path)]).vocabulary_ == python_path(BagOfWords(input="filename")).fit(
        [str(path)]).vocabulary_


@pytest.mark.parametrize("options", [
    {"token_pattern": r"\b\w+\b"}, {"tokenizer": "whitespace"}, {"tokenizer": str.split},
    {"stemmer": "porter"}, {"preprocessor": str.upper}, {"strip_accents": str.lower},
    {"analyzer": "char", "preprocessor": str.upper}, {"analyzer": "char", "input": "tokens"},
    {"analyzer": "char", "strip_accents": str.lower}, {"analyzer": str.split},
    {"input": "tokens"},
])
def test_options_the_pass_cannot_honour_take_the_python_path(options):
    assert BagOfWords(**options)._text_pass_options() is None
    assert PositionalBagOfWords(**options)._text_pass_options() is None


def test_n_jobs_is_validated():
    with pytest.raises((ValueError, TypeError), match="n_jobs"):
        BagOfWords(n_jobs="two").fit(["a text"])


JOBS_WORDS = WORDS + ["and", "of", "\udcff", ""]            # stop words, a lone surrogate
JOBS_OPTIONS = [{}, {"stop_words": "english"}, {"max_features": 2, "binary": True},
                {"min_df": 2}, {"vocabulary": ["cat", "café", "the", "and", "zzz"]},
                {"lowercase": False, "stop_words": ["cat"]}]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.lists(st.sampled_from(JOBS_WORDS + [" ", "\n"]), max_size=10)
                .map("".join), min_size=1, max_size=12),
       st.sampled_from(JOBS_OPTIONS), st.sampled_from([BagOfWords, TfidfVectorizer]))
def test_output_identical_for_every_n_jobs_and_chunk_size(X, options, Vectorizer):
    """Threads and chunks (down to a document each) change nothing: the matrix,
    ``vocabulary_`` (its order too) and ``transform``, or the same error (nlpfeat has no
    ``stop_words_``: scikit-learn removed it); chunks holding a lone surrogate take the
    Python path in their turn."""
    runs = [(1, None), (2, 1e-5), (-1, 3e-5), (2, None), (1, 1e-5)]
    outputs = []
    for n_jobs, working_memory in runs:
        estimator = Vectorizer(**options, n_jobs=n_jobs, working_memory=working_memory)
        try:
            Y = estimator.fit_transform(X)
        except ValueError as exc:                          # an empty vocabulary
            outputs.append(str(exc))
            continue
        outputs.append((list(estimator.vocabulary_.items()),
                        Y.shape, Y.indptr.tolist(), Y.indices.tolist(), Y.data.tolist(),
                        (estimator.transform(X[::-1]) != Vectorizer(**options).fit(X)
                         .transform(X[::-1])).nnz))
    assert all(output == outputs[0] for output in outputs[1:]), outputs
