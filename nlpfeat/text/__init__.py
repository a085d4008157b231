"""nlpfeat.text: text features as scikit-learn estimators.

Tokenizers (:mod:`nlpfeat.text.tokenize`), bag of words, positional bag of words,
TF-IDF (scikit-learn's, SMART, BM25, log-entropy; also as a weighting of any count
matrix), feature hashing, co-occurrence and the PMI family,
collocations, PMI word embeddings, topic models with coherence scoring, and the text
features built on :mod:`nlpfeat.kernels`: kernel attention pooling and the locally
weighted bag of words.
"""
from nlpfeat.text._association._collocations import Collocations
from nlpfeat.text._association._cooccurrence import cooccurrence
from nlpfeat.text._association._pmi import pmi
from nlpfeat.text._kernel_features._lowbow import LocallyWeightedBagOfWords
from nlpfeat.text._kernel_features._pooling import KernelAttentionPooling
from nlpfeat.text._semantics._esa import ExplicitSemanticAnalysis
from nlpfeat.text._semantics._pmi_embedding import PMIEmbedding
from nlpfeat.text._semantics._semantic_units import SemanticUnitBagOfWords  # noqa: E402
from nlpfeat.text._semantics._similarity_ensemble import SimilarityEnsemble
from nlpfeat.text._topics._coherence import coherence_scorer, topic_coherence
from nlpfeat.text._topics._model import TopicModel
from nlpfeat.text._vectorizers._bow import BagOfWords

# syntax-based features, absence of frequent words, semantic units
from nlpfeat.text._vectorizers._count_deviation import CountDeviation  # noqa: E402
from nlpfeat.text._vectorizers._dependency import DependencyBagOfWords  # noqa: E402
from nlpfeat.text._vectorizers._hashing import HashingVectorizer
from nlpfeat.text._vectorizers._positional import PositionalBagOfWords
from nlpfeat.text._vectorizers._term_weighting import TermWeighting
from nlpfeat.text._vectorizers._tfidf import TfidfVectorizer
from nlpfeat.text.tokenize import get_stemmer, get_stop_words, get_tokenizer

__all__ = [
    "BagOfWords",
    "Collocations",
    "ExplicitSemanticAnalysis",
    "HashingVectorizer",
    "KernelAttentionPooling",
    "LocallyWeightedBagOfWords",
    "PMIEmbedding",
    "PositionalBagOfWords",
    "SimilarityEnsemble",
    "TermWeighting",
    "TfidfVectorizer",
    "TopicModel",
    "coherence_scorer",
    "cooccurrence",
    "get_stemmer",
    "get_stop_words",
    "get_tokenizer",
    "pmi",
    "topic_coherence",
    # syntax-based features, absence of frequent words, semantic units
    "CountDeviation",
    "DependencyBagOfWords",
    "SemanticUnitBagOfWords",
]
