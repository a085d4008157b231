"""nlpfeat.text."""

from nlpfeat.text._coherence import coherence_scorer, topic_coherence
from nlpfeat.text._lowbow import LocallyWeightedBagOfWords
from nlpfeat.text._pooling import KernelAttentionPooling
from nlpfeat.text._topics import TopicModel
from nlpfeat.text._collocations import Collocations
from nlpfeat.text._cooccurrence import cooccurrence
from nlpfeat.text._embedding import PMIEmbedding
from nlpfeat.text._pmi import pmi
from nlpfeat.text._bow import BagOfWords
from nlpfeat.text._positional import PositionalBagOfWords
from nlpfeat.text._tfidf import TfidfVectorizer
from nlpfeat.text.tokenize import get_stemmer, get_stop_words, get_tokenizer

__all__ = ["KernelAttentionPooling", "LocallyWeightedBagOfWords", "TopicModel",
           "coherence_scorer", "topic_coherence",
           "Collocations", "PMIEmbedding", "cooccurrence", "pmi",
           "BagOfWords", "PositionalBagOfWords", "TfidfVectorizer",
           "get_stemmer", "get_stop_words", "get_tokenizer"]
