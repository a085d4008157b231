"""Every public function and estimator of nlpfeat.text that takes a dask bag counts it on
the workers, and every other one rejects a bag with a TypeError: none pulls the documents
to the client. On a real LocalCluster (two workers in this process; two worker processes in
the slow pass), a tokenizer logs whether a worker calls it; iterating or computing a bag in
the client fails the test."""

import numpy as np
import pytest

dask = pytest.importorskip("dask")
db = pytest.importorskip("dask.bag")
pytest.importorskip("distributed")

from nlpfeat import text
from nlpfeat.text._base._documents import BAG_READERS

WORDS = [f"w{i}" for i in range(40)] + ["new", "york", "city", "Caf\u00e9"]
N_DOCS = 60


@pytest.fixture(scope="module")
def docs():
    rng = np.random.default_rng(3)
    return [" ".join(rng.choice(WORDS, rng.integers(0, 30))) for _ in range(N_DOCS)]


@pytest.fixture(scope="module", params=[
    "dask_client", pytest.param("dask_process_client", marks=pytest.mark.slow)])
def client(request):
    return request.getfixturevalue(request.param)


def _logging_tokenizer(log):
    """A tokenizer that appends to the file ``log`` whether a Dask worker calls it (a
    closure: pickled by value, so that the workers run this very code)."""
    def tokenize(doc):
        from distributed import get_worker
        try:
            get_worker()
            where = "worker"
        except ValueError:
            where = "client"
        with open(log, "a", encoding="ascii") as fh:
            fh.write(f"{where}\n")
        return doc.split()
    return tokenize


@pytest.fixture
def tokenizer(tmp_path):
    log = tmp_path / "calls.log"
    log.touch()
    tokenize = _logging_tokenizer(str(log))

    def calls():
        calls = log.read_text(encoding="ascii").split()
        here = calls.count("client")
        return here, len(calls) - here
    tokenize.calls = calls
    return tokenize


@pytest.fixture
def no_pull(monkeypatch):
    """Iterating or computing a bag in the client raises (a pull of every document)."""
    def pull(self, *args, **kwargs):
        raise AssertionError("a dask bag was computed in the client")
    monkeypatch.setattr(db.Bag, "__iter__", pull)
    monkeypatch.setattr(db.Bag, "compute", pull)


def _embeddings():
    rng = np.random.default_rng(0)
    return {w.lower(): rng.normal(size=4) for w in WORDS}


def _computed(result):
    """A lazy result computed by the scheduler (never by ``Bag.compute`` in the client)."""
    return dask.compute(result)[0] if dask.is_dask_collection(result) else result


#: (case, name of the public function or estimator, call(bag, docs, tokenizer)): each
#: counts the bag on the workers.
ON_WORKERS = [
    ("cooccurrence", "cooccurrence", lambda b, d, t: text.cooccurrence(b, tokenizer=t)),
    ("cooccurrence-directed", "cooccurrence",
     lambda b, d, t: text.cooccurrence(b, symmetric=False, tokenizer=t)),
    ("BagOfWords.fit", "BagOfWords", lambda b, d, t: text.BagOfWords(tokenizer=t).fit(b)),
    ("BagOfWords.fit_transform", "BagOfWords",
     lambda b, d, t: _computed(text.BagOfWords(tokenizer=t).fit_transform(b))),
    ("BagOfWords.partial_fit", "BagOfWords",
     lambda b, d, t: text.BagOfWords(tokenizer=t).partial_fit(b)),
    ("TfidfVectorizer.fit", "TfidfVectorizer",
     lambda b, d, t: text.TfidfVectorizer(tokenizer=t).fit(b)),
    ("PositionalBagOfWords.fit", "PositionalBagOfWords",
     lambda b, d, t: text.PositionalBagOfWords(tokenizer=t).fit(b)),
    ("Collocations.fit", "Collocations",
     lambda b, d, t: text.Collocations(tokenizer=t).fit(b)),
    ("Collocations.partial_fit", "Collocations",
     lambda b, d, t: text.Collocations(tokenizer=t).partial_fit(b)),
    ("Collocations.fit_transform", "Collocations",
     lambda b, d, t: _computed(text.Collocations(tokenizer=t, min_count=2).fit_transform(b))),
    ("PMIEmbedding.fit", "PMIEmbedding",
     lambda b, d, t: text.PMIEmbedding(n_components=3, tokenizer=t).fit(b)),
    ("PMIEmbedding.fit_transform", "PMIEmbedding",
     lambda b, d, t: _computed(text.PMIEmbedding(n_components=3, tokenizer=t).fit_transform(b))),
    ("PMIEmbedding.partial_fit", "PMIEmbedding",
     lambda b, d, t: text.PMIEmbedding(n_components=3, tokenizer=t).partial_fit(b)),
]

#: The same for transform, by an estimator fitted on the list (in the client).
TRANSFORMS_ON_WORKERS = [
    ("BagOfWords.transform", lambda t: text.BagOfWords(tokenizer=t)),
    ("TfidfVectorizer.transform", lambda t: text.TfidfVectorizer(tokenizer=t)),
    ("PositionalBagOfWords.transform", lambda t: text.PositionalBagOfWords(tokenizer=t)),
    ("Collocations.transform", lambda t: text.Collocations(tokenizer=t, min_count=2)),
    ("PMIEmbedding.transform", lambda t: text.PMIEmbedding(n_components=3, tokenizer=t)),
]


def _topic_model():
    return text.TopicModel(2, method="nmf", backend="sklearn", random_state=0)


#: TopicModel counts with its own BagOfWords (no tokenizer to log): checked for pulls only.
TOPIC_MODEL_ON_WORKERS = [
    ("TopicModel.fit", lambda b, d: _topic_model().fit(b)),
    ("TopicModel.fit_transform", lambda b, d: _topic_model().fit_transform(b)),
    ("TopicModel.transform", lambda b, d: _topic_model().fit(d).transform(b)),
    ("TopicModel.score", lambda b, d: _topic_model().fit(d).score(b)),
    ("TopicModel.perplexity",
     lambda b, d: text.TopicModel(2, backend="sklearn", random_state=0).fit(d).perplexity(b)),
]


def _fitted(estimator, docs):
    return estimator.fit(docs)


#: (case, name, call(bag, docs, tokenizer)): each rejects the bag with a TypeError.
REJECTED = [
    ("HashingVectorizer.fit", "HashingVectorizer",
     lambda b, d, t: text.HashingVectorizer(tokenizer=t).fit(b)),
    ("HashingVectorizer.transform", "HashingVectorizer",
     lambda b, d, t: text.HashingVectorizer(tokenizer=t).transform(b)),
    ("HashingVectorizer.fit_transform", "HashingVectorizer",
     lambda b, d, t: text.HashingVectorizer(tokenizer=t).fit_transform(b)),
    ("LocallyWeightedBagOfWords.fit", "LocallyWeightedBagOfWords",
     lambda b, d, t: text.LocallyWeightedBagOfWords(tokenizer=t).fit(b)),
    ("LocallyWeightedBagOfWords.fit_transform", "LocallyWeightedBagOfWords",
     lambda b, d, t: text.LocallyWeightedBagOfWords(tokenizer=t).fit_transform(b)),
    ("LocallyWeightedBagOfWords.transform", "LocallyWeightedBagOfWords",
     lambda b, d, t: _fitted(text.LocallyWeightedBagOfWords(), d).transform(b)),
    ("KernelAttentionPooling.fit", "KernelAttentionPooling",
     lambda b, d, t: text.KernelAttentionPooling(_embeddings(), tokenizer=t).fit(b)),
    ("KernelAttentionPooling.fit_transform", "KernelAttentionPooling",
     lambda b, d, t: text.KernelAttentionPooling(_embeddings(), tokenizer=t).fit_transform(b)),
    ("KernelAttentionPooling.transform", "KernelAttentionPooling",
     lambda b, d, t: _fitted(text.KernelAttentionPooling(_embeddings()), d).transform(b)),
    ("CountDeviation.fit", "CountDeviation",
     lambda b, d, t: text.CountDeviation(tokenizer=t).fit(b)),
    ("CountDeviation.transform", "CountDeviation",
     lambda b, d, t: _fitted(text.CountDeviation(), d).transform(b)),
    ("SemanticUnitBagOfWords.fit", "SemanticUnitBagOfWords",
     lambda b, d, t: text.SemanticUnitBagOfWords(_embeddings(), n_units=3, tokenizer=t,
                                                 random_state=0).fit(b)),
    ("SemanticUnitBagOfWords.transform", "SemanticUnitBagOfWords",
     lambda b, d, t: _fitted(text.SemanticUnitBagOfWords(_embeddings(), n_units=3,
                                                         random_state=0), d).transform(b)),
    ("ExplicitSemanticAnalysis.fit", "ExplicitSemanticAnalysis",
     lambda b, d, t: text.ExplicitSemanticAnalysis(text.TfidfVectorizer(tokenizer=t)).fit(b)),
    ("ExplicitSemanticAnalysis.transform", "ExplicitSemanticAnalysis",
     lambda b, d, t: _fitted(text.ExplicitSemanticAnalysis(), d).transform(b)),
    ("DependencyBagOfWords.fit", "DependencyBagOfWords",
     lambda b, d, t: text.DependencyBagOfWords().fit(b)),
    ("DependencyBagOfWords.fit_transform", "DependencyBagOfWords",
     lambda b, d, t: text.DependencyBagOfWords().fit_transform(b)),
    ("SimilarityEnsemble.fit", "SimilarityEnsemble",
     lambda b, d, t: text.SimilarityEnsemble(
         [("bow", text.BagOfWords(tokenizer=t))]).fit(b.map(lambda doc: (doc, doc)))),
    ("topic_coherence", "topic_coherence",
     lambda b, d, t: text.topic_coherence([["new", "york"]], b.map(str.split))),
    ("coherence_scorer", "coherence_scorer",
     lambda b, d, t: text.coherence_scorer()(_topic_model().fit(d), b)),
    ("PMIEmbedding-attention.fit", "PMIEmbedding",
     lambda b, d, t: text.PMIEmbedding(n_components=3, pooling="attention",
                                       tokenizer=t).fit(b)),
]

#: The public names that take no documents (counts, matrices, names of tools).
NO_DOCUMENTS = {"TermWeighting", "pmi", "get_stemmer", "get_stop_words", "get_tokenizer"}


@pytest.mark.parametrize("case, name, call", ON_WORKERS, ids=[c[0] for c in ON_WORKERS])
def test_a_bag_is_tokenized_on_the_workers(client, docs, tokenizer, no_pull, case, name,
                                           call):
    call(db.from_sequence(docs, npartitions=3), docs, tokenizer)
    in_client, on_workers = tokenizer.calls()
    assert in_client == 0
    assert on_workers >= N_DOCS


@pytest.mark.parametrize("case, make", TRANSFORMS_ON_WORKERS,
                         ids=[c[0] for c in TRANSFORMS_ON_WORKERS])
def test_transform_of_a_bag_tokenizes_on_the_workers(client, docs, tokenizer, no_pull, case,
                                                     make):
    fitted = make(tokenizer).fit(docs)
    before, _ = tokenizer.calls()
    _computed(fitted.transform(db.from_sequence(docs, npartitions=3)))
    in_client, on_workers = tokenizer.calls()
    assert in_client == before
    assert on_workers >= N_DOCS


@pytest.mark.parametrize("case, call", TOPIC_MODEL_ON_WORKERS,
                         ids=[c[0] for c in TOPIC_MODEL_ON_WORKERS])
def test_topic_models_count_a_bag_without_pulling_it(client, docs, no_pull, case, call):
    call(db.from_sequence(docs, npartitions=3), docs)


@pytest.mark.parametrize("case, name, call", REJECTED, ids=[c[0] for c in REJECTED])
def test_the_others_reject_a_bag_before_reading_it(client, docs, tokenizer, no_pull, case,
                                                   name, call):
    with pytest.raises(TypeError, match=r"takes no dask\.bag\.Bag|does not take a dask bag"):
        call(db.from_sequence(docs, npartitions=3), docs, tokenizer)
    assert tokenizer.calls()[0] == 0


def test_every_public_name_is_checked_and_the_message_names_the_bag_readers():
    """A new public function or estimator of nlpfeat.text must be classified here; the
    names the rejection message lists are those that count a bag on the workers."""
    on_workers = {name for _, name, _ in ON_WORKERS} | {"TopicModel"}
    rejected = {name for _, name, _ in REJECTED} - on_workers
    assert set(text.__all__) == on_workers | rejected | NO_DOCUMENTS
    assert set(BAG_READERS) == on_workers


@pytest.mark.parametrize("kwargs", [
    {},
    {"symmetric": False},
    {"context_weighting": "harmonic", "window": 3},
    {"min_count": 3},
    {"vocabulary": ["w1", "w2", "new", "york", "absent"]},
    {"symmetric": False, "vocabulary": ["york", "new", "w3"], "window": 2},
], ids=repr)
@pytest.mark.parametrize("npartitions", [1, 4])
def test_cooccurrence_of_a_bag_equals_the_local_counts(client, docs, kwargs, npartitions):
    local, local_vocabulary = text.cooccurrence(docs, **kwargs)
    counts, vocabulary = text.cooccurrence(db.from_sequence(docs, npartitions=npartitions),
                                           **kwargs)
    assert vocabulary == local_vocabulary
    assert counts.dtype == local.dtype and counts.shape == local.shape
    np.testing.assert_allclose(counts.toarray(), local.toarray(), rtol=1e-12, atol=0)


def test_cooccurrence_of_a_bag_of_token_lists_and_of_read_text_lines(client, docs, tmp_path):
    local, vocabulary = text.cooccurrence([d.split() for d in docs], window=2)
    tokens = db.from_sequence([d.split() for d in docs], npartitions=3)
    counts, bag_vocabulary = text.cooccurrence(tokens, window=2)
    assert bag_vocabulary == vocabulary and (counts != local).nnz == 0
    path = tmp_path / "lines.txt"
    path.write_text("\r\n".join(docs) + "\r\n", encoding="utf-8")   # line ends removed
    counts, bag_vocabulary = text.cooccurrence(db.read_text(str(path), blocksize=500),
                                               window=2, tokenizer="whitespace")
    assert bag_vocabulary == vocabulary and (counts != local).nnz == 0


def test_cooccurrence_of_a_bag_with_prune_at_prunes_each_partition(client, docs):
    """One partition is one chunk stream, as the local pass: the same pruned counts."""
    local, vocabulary = text.cooccurrence(docs, prune_at=30, working_memory=0.001)
    counts, bag_vocabulary = text.cooccurrence(db.from_sequence(docs, npartitions=1),
                                               prune_at=30, working_memory=0.001)
    assert bag_vocabulary == vocabulary and (counts != local).nnz == 0
    assert len(vocabulary) < len(text.cooccurrence(docs)[1])      # pruned


def test_a_failing_document_of_a_bag_is_named(client):
    bag = db.from_sequence([["a", "b"], ["c"], ["d", 3]], npartitions=2)
    with pytest.raises(TypeError, match=r"Partition 1 of the bag: Document 0 holds a token "
                                        r"of type int"):
        text.cooccurrence(bag)


def test_the_rejection_names_the_caller_and_the_way_out(client, docs):
    bag = db.from_sequence(docs, npartitions=2)
    with pytest.raises(TypeError) as info:
        text.LocallyWeightedBagOfWords().fit(bag)
    message = str(info.value)
    assert message.startswith("LocallyWeightedBagOfWords reads its documents in this process")
    assert "Pass a list or a nlpfeat.datasets.Corpus" in message
    assert "bag.compute()" in message and ", ".join(BAG_READERS) in message
