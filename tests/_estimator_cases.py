"""Small fitted cases of every public nlpfeat estimator (persistence and ecosystem tests)."""
import inspect

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

import nlpfeat
from nlpfeat.attention import AttentionRegressor, SequenceAttentionRegressor
from nlpfeat.kernels import NadarayaWatsonClassifier, NadarayaWatsonRegressor
from nlpfeat.text import (
    BagOfWords,
    Collocations,
    CountDeviation,
    DependencyBagOfWords,
    HashingVectorizer,
    ExplicitSemanticAnalysis,
    KernelAttentionPooling,
    LocallyWeightedBagOfWords,
    PMIEmbedding,
    PositionalBagOfWords,
    SemanticUnitBagOfWords,
    SimilarityEnsemble,
    TermWeighting,
    TfidfVectorizer,
    TopicModel,
)

RNG = np.random.default_rng(0)
X, Y = RNG.normal(size=(12, 2)), RNG.normal(size=12)
X_SEQ, Y_SEQ = RNG.normal(size=(6, 6)), RNG.normal(size=6)
DOCS = ["the cat sat on the mat", "the dog sat on the rug", "a cat and a dog",
        "the mat and the rug"] * 2
TOKENS = [d.split() for d in DOCS]
EMB = {"cat": [1.0, 0.0], "dog": [0.0, 1.0], "sat": [1.0, 1.0], "mat": [0.5, 0.2],
       "rug": [0.3, 0.3], "the": [0.1, 0.9]}
CONLLU = ("1\tthe\tthe\tDET\t_\t_\t3\tdet\t_\t_\n2\tblack\tblack\tADJ\t_\t_\t3\tamod\t_\t_\n"
          "3\tcat\tcat\tNOUN\t_\t_\t4\tnsubj\t_\t_\n4\tsleeps\tsleep\tVERB\t_\t_\t0\troot\t_\t_\n")
PAIRS = [("my cat", "my dog"), ("the cat", "the rug"), ("a dog", "the mat and rug")]
COUNTS = np.array([[1, 0, 2], [0, 1, 1], [3, 1, 0]])

# name -> (estimator factory, training input, target or None)
CASES = {
    "bow": (lambda: BagOfWords(ngram_range=(1, 2)), DOCS, None),
    "positional": (PositionalBagOfWords, DOCS, None),
    "tfidf": (TfidfVectorizer, DOCS, None),
    "hashing": (lambda: HashingVectorizer(n_features=16, ngram_range=(1, 2)), DOCS, None),
    "collocations": (lambda: Collocations(min_count=1, input="tokens"), TOKENS, None),
    "esa": (lambda: ExplicitSemanticAnalysis(topn=2), DOCS, None),
    "pooling": (lambda: KernelAttentionPooling(EMB), DOCS, None),
    "lowbow": (lambda: LocallyWeightedBagOfWords(n_positions=2), DOCS, None),
    "pmi": (lambda: PMIEmbedding(n_components=2, window=2, min_count=1, random_state=0),
            DOCS, None),
    "ensemble": (lambda: SimilarityEnsemble([("tfidf", TfidfVectorizer()),
                                             ("esa", ExplicitSemanticAnalysis(topn=2))],
                                            corpus=DOCS), PAIRS, None),
    "weighting": (lambda: TermWeighting("bm25"), COUNTS, None),
    "topics-sklearn": (lambda: TopicModel(2, backend="sklearn", topn=3, random_state=0),
                       TOKENS, None),
    "topics-lda": (lambda: TopicModel(2, topn=3, random_state=0), TOKENS, None),
    "topics-nmf": (lambda: TopicModel(2, method="nmf", topn=3, random_state=0), TOKENS, None),
    "topics-lsi": (lambda: TopicModel(2, method="lsi", topn=3, random_state=0), TOKENS, None),
    "deviation": (lambda: CountDeviation(max_features=3), DOCS, None),
    "dependency": (DependencyBagOfWords, [CONLLU], None),
    "units": (lambda: SemanticUnitBagOfWords(EMB, n_units=2, random_state=0), DOCS, None),
    "nw": (lambda: NadarayaWatsonRegressor(bandwidth=0.8), X, Y),
    "nw-tree-ll": (lambda: NadarayaWatsonRegressor("epanechnikov", bandwidth=1.5,
                                                   reg_type="ll"), X, Y),
    "nw-loo": (lambda: NadarayaWatsonRegressor(bandwidth="loo"), X, Y),
    "nw-sparse-cosine": (lambda: NadarayaWatsonRegressor(bandwidth=0.5, metric="cosine"),
                         sp.csr_matrix(np.abs(X)), Y),
    "nw-mixed": (lambda: NadarayaWatsonRegressor(bandwidth=[0.8, 0.5], var_type="cu"),
                 np.column_stack([X[:, 0], np.arange(12) % 3]), Y),
    "nw-classifier": (lambda: NadarayaWatsonClassifier(bandwidth=0.8), X,
                      np.where(Y > 0, "hi", "lo")),
    "attention": (lambda: AttentionRegressor(n_heads=2, d_k=2, max_iter=2, random_state=0),
                  X, Y),
    "sequence": (lambda: SequenceAttentionRegressor(3, n_layers=1, d_model=4, n_heads=2,
                                                    dim_feedforward=4, max_iter=1,
                                                    random_state=0), X_SEQ, Y_SEQ),
    "sequence-learned-gelu": (lambda: SequenceAttentionRegressor(
        3, n_layers=1, d_model=4, n_heads=2, dim_feedforward=4, max_iter=1, dropout=0.1,
        activation="gelu", positional="learned", causal=True, dtype=np.float32,
        random_state=0), X_SEQ, Y_SEQ),
    "sequence-rotary": (lambda: SequenceAttentionRegressor(
        3, n_layers=1, d_model=4, n_heads=2, n_kv_heads=1, dim_feedforward=4, max_iter=1,
        positional="rope", output="last", random_state=0), X_SEQ, Y_SEQ),
    "attention-additive": (lambda: AttentionRegressor("additive", n_heads=2, d_k=2, max_iter=2,
                                                 early_stopping=True, random_state=0), X, Y),
}


def public_estimators():
    """The public estimator classes, found as tests/test_conventions.py finds them."""
    for module in (nlpfeat.text, nlpfeat.kernels, nlpfeat.attention):
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj) and issubclass(obj, BaseEstimator):
                yield obj
