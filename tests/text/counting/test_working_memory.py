"""The one ``working_memory`` rule (nlpfeat._chunking) in the counting estimators."""
import pytest
import sklearn

from nlpfeat._chunking import (
    DEFAULT_WORKING_MEMORY,
    PAIR_COUNTING_WORKING_MEMORY,
    resolve_working_memory,
)
from nlpfeat.text import (
    BagOfWords,
    Collocations,
    PMIEmbedding,
    TfidfVectorizer,
    cooccurrence,
)
from nlpfeat.text._counting._pair_counts import counting_limit, doc_chunks
from nlpfeat.text._counting._term_counts import chunk_tokens

DOCS = [["new", "york", "city", "is", "big"] * 20 for _ in range(50)]
STRINGS = [" ".join(doc) for doc in DOCS]
MESSAGE = "working_memory must be a positive number of MiB or None; got -1"


def test_defaults_of_the_rule():
    assert resolve_working_memory(None) == DEFAULT_WORKING_MEMORY
    assert counting_limit(None) == int(PAIR_COUNTING_WORKING_MEMORY * 2**20)
    assert chunk_tokens(None) == chunk_tokens(DEFAULT_WORKING_MEMORY)


def test_config_context_changes_the_cooccurrence_chunking():
    default = list(doc_chunks(DOCS, 5))
    with sklearn.config_context(working_memory=0.01):
        assert counting_limit(None) == int(0.01 * 2**20)
        configured = list(doc_chunks(DOCS, 5))
        counts = cooccurrence(DOCS, 5)[0]
    assert len(default) == 1 < len(configured)
    assert (counts != cooccurrence(DOCS, 5)[0]).nnz == 0      # chunking never changes counts
    # the estimator's value wins over the configuration
    with sklearn.config_context(working_memory=0.01):
        assert counting_limit(8) == 8 * 2**20


def test_config_context_changes_the_term_chunking():
    with sklearn.config_context(working_memory=1):
        assert chunk_tokens(None) == chunk_tokens(1)


FITS = {
    "BagOfWords": lambda: BagOfWords().fit(STRINGS),
    "TfidfVectorizer": lambda: TfidfVectorizer().fit(STRINGS),
    "Collocations": lambda: Collocations(min_count=1, input="tokens").fit(DOCS),
    "cooccurrence": lambda: cooccurrence(DOCS, 2),
    "cooccurrence_directed": lambda: cooccurrence(DOCS, 2, symmetric=False),
    "PMIEmbedding": lambda: PMIEmbedding(n_components=2, input="tokens").fit(DOCS),
}


@pytest.mark.parametrize("name", sorted(FITS))
def test_a_bad_configured_value_gets_one_error_everywhere(name):
    with sklearn.config_context(working_memory=-1), pytest.raises(ValueError, match=MESSAGE):
        FITS[name]()


@pytest.mark.parametrize("make", [
    lambda wm: BagOfWords(working_memory=wm).fit(STRINGS),
    lambda wm: Collocations(min_count=1, input="tokens", working_memory=wm).fit(DOCS),
    lambda wm: cooccurrence(DOCS, 2, working_memory=wm),
    lambda wm: PMIEmbedding(n_components=2, input="tokens", working_memory=wm).fit(DOCS),
], ids=["BagOfWords", "Collocations", "cooccurrence", "PMIEmbedding"])
@pytest.mark.parametrize("value", [0, -1.0, float("inf"), "4"])
def test_a_bad_parameter_value_is_refused_naming_working_memory(make, value):
    with pytest.raises(ValueError, match="working_memory"):
        make(value)
