"""Saving models with ``skops.io``: the types nlpfeat vouches for, and the plain form of the
fitted state skops does not trust by itself.

``skops.io.load`` builds only the types a user trusts. Every type of :func:`trusted_types` is
one of nlpfeat's own: loading one creates the object without calling its ``__init__`` and
hands it its saved attributes (arrays, numbers, strings, lists, dicts of them), which its
``__setstate__`` (where it has one) turns back into tables or looks up by name (kernels),
never running code taken from the file. A user's own callable (a tokenizer, a kernel
function) is saved by skops as a reference to that function and listed by
``skops.io.get_untrusted_types`` under its own name: it is for the user to trust.

Fitted state skops would list as a foreign type (a scipy sparse matrix, a ``numpy.dtype``,
the gensim models of :class:`~nlpfeat.text.TopicModel`) is saved as a :class:`PlainState`
by :func:`encode` and rebuilt by :func:`decode`; foreign objects are rebuilt only for the
classes their owner names (the gensim backend names its six), by creating the instance and
setting its saved attributes, as skops itself does for a trusted type.
"""
import importlib

__all__ = ["PlainState", "PlainStateMixin", "decode", "encode", "trusted_types"]

#: Every nlpfeat type a saved nlpfeat estimator may hold (module, class names), reviewed as
#: safe to build from a file: their state is data, and ``__setstate__`` runs nothing from it.
_TRUSTED = {
    "nlpfeat._persist": ["PlainState"],
    "nlpfeat.attention._attention_regressor": ["AttentionRegressor"],
    "nlpfeat.attention._encoder": ["TransformerEncoderLayer"],
    "nlpfeat.attention._layers": ["Dropout", "GELU", "LayerNorm", "Linear", "ReLU",
                                  "Sequential"],
    "nlpfeat.attention._mha": ["MultiHeadAttention", "_ForwardCache"],
    "nlpfeat.attention._positional": ["LearnedPositionalEncoding", "RotaryEmbedding",
                                      "SinusoidalPositionalEncoding"],
    "nlpfeat.attention._sequence_network": ["SequenceNetwork"],
    "nlpfeat.attention._sequence_regressor": ["SequenceAttentionRegressor"],
    "nlpfeat.kernels._compiled._predict": ["CompiledNW"],
    "nlpfeat.kernels._estimators": ["NadarayaWatsonClassifier", "NadarayaWatsonRegressor"],
    "nlpfeat.kernels._kernels": ["Kernel"],
    "nlpfeat.kernels._mixed": ["MixedIndex", "MixedScaled"],
    "nlpfeat.kernels._nadaraya_watson": ["NWIndex"],
    "nlpfeat.kernels._pairwise": ["PairwiseScaled"],
    "nlpfeat.text._association._collocations": ["Collocations"],
    "nlpfeat.text._counting._ngram_counts": ["NgramCounts"],
    "nlpfeat.text._counting._pair_counts": ["PairCounts"],
    "nlpfeat.text._counting._term_counts": ["TermCounts"],
    "nlpfeat.text._kernel_features._lowbow": ["LocallyWeightedBagOfWords"],
    "nlpfeat.text._kernel_features._pooling": ["KernelAttentionPooling"],
    "nlpfeat.text._semantics._esa": ["ExplicitSemanticAnalysis"],
    "nlpfeat.text._semantics._pmi_embedding": ["PMIEmbedding"],
    "nlpfeat.text._semantics._semantic_units": ["SemanticUnitBagOfWords"],
    "nlpfeat.text._semantics._similarity_ensemble": ["SimilarityEnsemble"],
    "nlpfeat.text._topics._gensim_backend": ["GensimTopicBackend"],
    "nlpfeat.text._topics._model": ["TopicModel"],
    "nlpfeat.text._topics._sklearn_backend": ["SklearnTopicBackend"],
    "nlpfeat.text._vectorizers._bow": ["BagOfWords"],
    "nlpfeat.text._vectorizers._count_deviation": ["CountDeviation"],
    "nlpfeat.text._vectorizers._dependency": ["DependencyBagOfWords"],
    "nlpfeat.text._vectorizers._hashing": ["HashingVectorizer"],
    "nlpfeat.text._vectorizers._positional": ["PositionalBagOfWords"],
    "nlpfeat.text._vectorizers._term_weighting": ["TermWeighting"],
    "nlpfeat.text._vectorizers._tfidf": ["TfidfVectorizer"],
}


def trusted_types():
    """The types of a saved nlpfeat model that are safe to load with ``skops.io``.

    Pass the list as ``trusted=`` to ``skops.io.load``: it names only nlpfeat's own
    classes, whose saved state is data (arrays, numbers, strings), so a file cannot make
    them run code. A model that holds something else (a user's tokenizer function, an
    estimator of another library) lists it in ``skops.io.get_untrusted_types``; check those
    names before adding them.

    Returns
    -------
    list of str
        Fully qualified class names, as ``skops.io.get_untrusted_types`` spells them.

    Examples
    --------
    >>> import nlpfeat
    >>> "nlpfeat.text._vectorizers._bow.BagOfWords" in nlpfeat.trusted_types()
    True
    >>> all(name.startswith("nlpfeat.") for name in nlpfeat.trusted_types())
    True
    """
    return [f"{module}.{name}" for module, names in _TRUSTED.items() for name in names]


class PlainState:
    """A value skops does not trust by itself, as plain data: ``kind`` and ``parts``.

    ``kind`` is ``"sparse"`` (``parts``: format, shape and the arrays of a scipy sparse
    matrix), ``"dtype"`` (the dtype's string) or ``"object"`` (class name and attributes of
    an object whose owner lists its class).
    """

    def __init__(self, kind, parts):
        self.kind, self.parts = kind, parts


def _class_key(cls):
    return f"{cls.__module__}.{cls.__qualname__}"


def encode(value, classes=()):
    """``value`` in a form skops saves from trusted types only: scipy sparse matrices,
    ``numpy.dtype`` instances and the instances of ``classes`` become :class:`PlainState`
    (the attributes of an object encoded in turn); anything else is returned as it is."""
    import numpy as np
    import scipy.sparse as sp

    if sp.issparse(value):
        fmt = value.format if value.format in ("csr", "csc") else "csr"
        m = value.asformat(fmt)
        return PlainState("sparse", {"format": fmt, "array": not sp.isspmatrix(value),
                                     "shape": [int(n) for n in m.shape], "data": m.data,
                                     "indices": m.indices, "indptr": m.indptr})
    if isinstance(value, np.dtype):
        return PlainState("dtype", value.str)
    if any(type(value) is cls for cls in classes):
        return PlainState("object", {"class": _class_key(type(value)), "attributes": {
            k: encode(v, classes) for k, v in vars(value).items()}})
    return value


def decode(value, classes=()):
    """The value that :func:`encode` gave ``value`` for (itself if it is no
    :class:`PlainState`); an object is rebuilt only if its class is one of ``classes``."""
    if not isinstance(value, PlainState):
        return value
    import numpy as np
    import scipy.sparse as sp

    parts = value.parts
    if value.kind == "sparse":
        build = {("csr", False): sp.csr_matrix, ("csc", False): sp.csc_matrix,
                 ("csr", True): sp.csr_array, ("csc", True): sp.csc_array}
        matrix = build[parts["format"], bool(parts["array"])](
            (parts["data"], parts["indices"], parts["indptr"]), shape=tuple(parts["shape"]))
        matrix.check_format(full_check=True)        # indices in bounds: a file could lie
        return matrix
    if value.kind == "dtype":
        return np.dtype(parts)
    if value.kind == "object":
        by_key = {_class_key(cls): cls for cls in classes}
        if parts["class"] not in by_key:
            raise TypeError(f"refusing to rebuild an object of class {parts['class']!r}: "
                            f"only {sorted(by_key)} are rebuilt here.")
        obj = by_key[parts["class"]].__new__(by_key[parts["class"]])
        vars(obj).update({k: decode(v, classes) for k, v in parts["attributes"].items()})
        return obj
    raise TypeError(f"unknown saved state of kind {value.kind!r}.")


class PlainStateMixin:
    """Save the attributes through :func:`encode` and restore them through :func:`decode`
    (pickle and skops alike); put it before ``BaseEstimator`` among the bases."""

    def __getstate__(self):
        getstate = getattr(super(), "__getstate__", None)
        state = getstate() if getstate is not None else None
        return {k: encode(v) for k, v in (state if state is not None else vars(self)).items()}

    def __setstate__(self, state):
        state = {k: decode(v) for k, v in state.items()}
        setstate = getattr(super(), "__setstate__", None)
        if setstate is not None:
            setstate(state)
        else:
            vars(self).update(state)


def import_classes(spec):
    """``{module: [class names]}`` -> list of the classes (for :func:`encode`'s ``classes``)."""
    return [getattr(importlib.import_module(module), name)
            for module, names in spec.items() for name in names]
