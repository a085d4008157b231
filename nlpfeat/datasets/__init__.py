"""Small bundled corpora and a synthetic regression task; nothing is downloaded.

:class:`Corpus` reads a user's own corpus from disk, lazily and re-iterably (one document
per line of a file, or per file of a folder; gzip, bzip2 and xz read transparently), or
as a ``dask.bag`` read on the workers by the same rule (:meth:`Corpus.to_bag`).

The loaders read two sources that are already on disk once nlpfeat is installed:

* gensim's test data (``gensim.test.utils.datapath``): the Lee news corpus with human
  similarity ratings, a Wikipedia sample, the Pang & Lee polarity sentences, SimLex-999
  and WordSim-353;
* nlpfeat's own package data (``nlpfeat._data``, the repository's ``data/`` folder): an
  English and a Chinese toy corpus written for the project's demos.

Each loader returns a :class:`sklearn.utils.Bunch` whose ``DESCR`` is the dataset's section
of ``data/README.md`` (origin, size, format, encoding, license, citation).
"""
from nlpfeat.datasets._corpus import Corpus
from nlpfeat.datasets._loaders import (
    load_dependency_sample,
    load_lee,
    load_polarity,
    load_toy_corpus,
    load_wiki_sample,
    load_word_similarity,
    make_nw_regression,
)

__all__ = [
    "Corpus",
    "load_dependency_sample",
    "load_lee",
    "load_polarity",
    "load_toy_corpus",
    "load_wiki_sample",
    "load_word_similarity",
    "make_nw_regression",
]
