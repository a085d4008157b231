"""Bag of dependency relations: features from parsed sentences (CoNLL-U or spaCy ``Doc``).

A window sees which words stand near each other; a dependency parse says which word
modifies which, however far apart they stand. In "a square, smooth, heat-resistant, cheap
stainless-steel box" every adjective is an ``amod`` of "box", so ``box|amod|square`` is a
feature although five words separate them. Arcs may also join the sentences of a document
(root to root, or links the user wrote, such as "the former" to the person it names), so
that relations across sentences are features too.

Each document becomes one graph: the nodes of its sentences one after the other, the arcs
of each sentence (basic tree or enhanced graph) and the arcs between sentences; the
features are read off that graph's arcs and paths of two arcs.
"""
from collections import defaultdict
from collections.abc import Iterable
from itertools import pairwise

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

from nlpfeat._docstrings import fill_doc
from nlpfeat._progress import track
from nlpfeat._validation import (Integral, Interval, RealNotInt, StrOptions, check_is_fitted,
                                 fit_context)
from nlpfeat.text._base._documents import (
    DECODE_ERRORS,
    OnePassFitMixin,
    check_corpus_nonempty,
    check_not_bag,
)
from nlpfeat.text._counting._vocabulary import (
    check_df_bounds,
    count_matrix,
    prune_vocabulary,
    terms_in_column_order,
)
from nlpfeat.text._vectorizers._conllu import ParsedSentence, cycle_word, parse_conllu

__all__ = ["DependencyBagOfWords", "parse_conllu"]

FEATURE_KINDS = ("triple", "head_relation", "relation_dependent", "path2")
SENTENCE_LINKS = ("roots", "misc")
ROOT = "ROOT"      # the head word of the root relation
BLANK = "_"        # the omitted side of head_relation / relation_dependent
NEXT = "next"      # the relation of the arc from a sentence's root to the next one's
ELIDED = "ELIDED"  # an empty node written with neither FORM nor LEMMA


def _is_parsed_doc(doc):
    """Whether ``doc`` looks like a spaCy ``Doc`` (has ``sents``; not evaluated here)."""
    return not isinstance(doc, (str, bytes)) and (
        hasattr(type(doc), "sents") or "sents" in getattr(doc, "__dict__", {}))


def _from_doc(doc, index):
    """spaCy-like ``Doc`` (duck-typed: ``sents`` of tokens with ``i``, ``head``, ``dep_``...)."""
    sentences = []
    try:
        sents = list(doc.sents)
    except ValueError as exc:          # spaCy: "[E030] Sentence boundaries unset"
        raise ValueError(f"Document {index} is a Doc without a dependency parse ({exc}); "
                         f"parse it with a spaCy pipeline that has a parser (nlpfeat never "
                         f"downloads a model).") from None
    for sent in sents:
        tokens = list(sent)
        if not tokens:
            continue
        offset = tokens[0].i
        idx = np.array([t.i for t in tokens]) - offset
        head = np.array([t.head.i for t in tokens]) - offset
        head = np.where(head == idx, -1, head)             # spaCy: the root is its own head
        if ((head < -1) | (head >= len(tokens))).any():
            raise ValueError(f"Document {index}: a token's head lies outside its sentence; "
                             f"expected a parsed Doc whose sentences are subtrees.")
        if cycle_word(head) is not None:
            raise ValueError(f"Document {index}, sentence {len(sentences)}: the heads form a "
                             f"cycle; expected a dependency tree.")
        deprel = ["root" if h < 0 else t.dep_ for t, h in zip(tokens, head)]
        sentences.append(ParsedSentence([t.text for t in tokens], [t.lemma_ for t in tokens],
                                        [t.pos_ for t in tokens], deprel, head))
    return sentences


@fill_doc
class DependencyBagOfWords(OnePassFitMixin, TransformerMixin, BaseEstimator,
                           auto_wrap_output_keys=None):
    """Count dependency relations ``head|relation|dependent`` per document (sparse).

    Each document is one or more parsed sentences: CoNLL-U text (from UDPipe, Stanza,
    spaCy's CoNLL-U exporters or the Universal Dependencies treebanks), a CoNLL-U file, or
    a parsed spaCy ``Doc`` (needs spaCy and a model the user has installed; nothing is
    downloaded). Features are strings with ``|`` between the fields:

    * ``"triple"``: ``head|relation|dependent``, e.g. ``box|amod|square``; the root
      relation is ``ROOT|root|word``;
    * ``"head_relation"``: ``head|relation|_`` (what the head governs);
    * ``"relation_dependent"``: ``_|relation|dependent`` (what role the word plays);
    * ``"path2"``: paths of length 2 down the tree, ``grandparent|relation|head|relation|
      dependent``, e.g. ``sat|obl|mat|case|on``.

    The output is a sparse matrix, so ``set_output`` is not offered (as scikit-learn's
    vectorizers).

    Parameters
    ----------
    features : tuple of str, default=("triple",)
        Which kinds of features, among ``"triple", "head_relation", "relation_dependent",
        "path2"``.
    word : {"form", "lemma"}, default="form"
        How a word is written; ``"lemma"`` falls back to the form where the lemma is
        missing (``_`` or empty).
    generalize : {None, "head", "dependent", "both"}, default=None
        Replace the head, the dependent or both by their universal POS tag
        (``NOUN|amod|square``, ``box|amod|ADJ``): features that generalise over words.
    universal_relations : bool, default=False
        Drop relation subtypes (``nsubj:pass`` -> ``nsubj``, ``acl:relcl`` -> ``acl``).
    propagate_conj : bool, default=False
        Also give each conjunct the relation of the first conjunct to its head, as
        Enhanced UD does: in "small, light and cheap box", ``light`` and ``cheap`` are
        ``conj`` of ``small``; with this option ``box|amod|light`` and ``box|amod|cheap``
        are counted too. Applies to sentences read as basic trees, not to enhanced
        graphs, which carry this propagation already.
    graph : {"basic", "enhanced"}, default="basic"
        Which arcs of a CoNLL-U sentence to read: the basic tree (HEAD and DEPREL) or the
        enhanced-UD graph of the DEPS column where the sentence gives one (see Notes);
        sentences without DEPS, and spaCy ``Doc`` objects, give their basic tree.
    sentence_links : tuple of {"roots", "misc"}, default=()
        Arcs between the sentences of one document, counted and followed by paths like
        the others: ``"roots"`` joins the root of each sentence to the root of the next
        by the relation ``next``; ``"misc"`` reads the links written in the MISC column
        (``Link=offset/word:relation``, see Notes), such as "the former" to the person it
        names a sentence back.
    exclude_relations : tuple of str or None, default=("punct",)
        Relations (before subtypes are dropped, or their universal part) whose arcs are
        not counted, nor used in paths; links between sentences included.
    lowercase : bool, default=True
        Lowercase forms and lemmas (POS tags and relations are kept as they are).
    input : {"content", "filename", "file"}, default="content"
        What the documents are: CoNLL-U text (``str``/``bytes``) or parsed ``Doc``
        objects, file names, or open files.
    encoding : str, default="utf-8"
    decode_error : {"strict", "ignore", "replace"}, default="strict"
    binary : bool, default=False
        Record presence (1) instead of counts.
    min_df, max_df : float in [0, 1] or int, default=1 and 1.0
        Keep features found in at least ``min_df`` and at most ``max_df`` documents.
    max_features : int or None, default=None
        Keep only the ``max_features`` features most frequent over the corpus.
    dtype : numpy dtype, default=np.int64
    %(verbose)s

    Attributes
    ----------
    vocabulary_ : dict
        Feature -> column index (sorted order).

    See Also
    --------
    BagOfWords : Counts of words or n-grams.
    cooccurrence : Word pairs within a window.

    Notes
    -----
    A document is one item of ``X``: a CoNLL-U text (or file) of one or more sentences, or
    a ``Doc``. Its sentences keep their order, and arcs join two sentences only where
    ``sentence_links`` asks for it.

    *Enhanced graph* (``graph="enhanced"``). DEPS lists a word's heads,
    ``head:deprel|head:deprel``, with head ``0`` for the root, a word ID, or the ID of an
    empty node (``8.1``). A word may have several heads (a shared subject, a propagated
    conjunct), the graph may have cycles, and ``"path2"`` follows every pair of arcs.
    Empty nodes (the elided predicate of a gapping, "Bill [likes] tea") are nodes of the
    enhanced graph, written by their FORM (LEMMA with ``word="lemma"``), by the other
    where it is ``_``, and as ``ELIDED`` where both are; the basic tree skips them. A
    sentence whose DEPS are all ``_`` gives its basic tree; one that gives DEPS on some
    lines but not others is rejected.

    *Links* (``"misc"`` in ``sentence_links``). The MISC attribute
    ``Link=offset/word:relation`` (several joined by ``,``, e.g.
    ``SpaceAfter=No|Link=-1/1:coref,-1/3:coref``) is an arc, labelled ``relation``, from
    this word to the word with ID ``word`` of the sentence ``offset`` sentences away in
    the same document (0: this one, -1: the previous one, 2: two further). With "The
    former chatted." after "Alice and Bob went to the party.", ``Link=-1/1:coref`` on
    "former" gives ``former|coref|alice`` and the path ``chatted|nsubj|former|coref|alice``
    (who chatted), which no window of positions shows. A link to a sentence outside the
    document, or to a word it lacks, raises ``ValueError``. ``"roots"`` joins the roots of
    the basic trees; ``Doc`` objects carry no MISC links.

    Malformed CoNLL-U (a word line without 10 tab-separated columns, a non-integer or
    out-of-order ID, a HEAD out of range, heads forming a cycle; a malformed DEPS or
    ``Link`` value when they are read) raises ``ValueError`` naming the document, sentence
    (number and ``sent_id``) and line. A ``|`` inside a word is kept as is.

    Examples
    --------
    >>> from nlpfeat.text import DependencyBagOfWords
    >>> conllu = '''# text = the black cat sleeps
    ... 1\\tthe\\tthe\\tDET\\t_\\t_\\t3\\tdet\\t_\\t_
    ... 2\\tblack\\tblack\\tADJ\\t_\\t_\\t3\\tamod\\t_\\t_
    ... 3\\tcat\\tcat\\tNOUN\\t_\\t_\\t4\\tnsubj\\t_\\t_
    ... 4\\tsleeps\\tsleep\\tVERB\\t_\\t_\\t0\\troot\\t_\\t_
    ... '''
    >>> dep = DependencyBagOfWords().fit([conllu])
    >>> dep.get_feature_names_out().tolist()
    ['ROOT|root|sleeps', 'cat|amod|black', 'cat|det|the', 'sleeps|nsubj|cat']
    >>> DependencyBagOfWords(word="lemma", generalize="dependent", features=("triple", "path2"),
    ...                      exclude_relations=("det", "root")).fit([conllu]
    ...                      ).get_feature_names_out().tolist()
    ['cat|amod|ADJ', 'sleep|nsubj|NOUN', 'sleep|nsubj|cat|amod|ADJ']

    A second sentence whose subject, "it", is linked back to "cat" (word 3 of the previous
    sentence): the paths cross from one sentence to the other.

    >>> second = '''1\\tit\\tit\\tPRON\\t_\\t_\\t2\\tnsubj\\t_\\tLink=-1/3:coref
    ... 2\\tpurrs\\tpurr\\tVERB\\t_\\t_\\t0\\troot\\t_\\t_
    ... '''
    >>> linked = DependencyBagOfWords(features=("path2",), sentence_links=("roots", "misc"),
    ...                               exclude_relations=("det", "amod"))
    >>> linked.fit([conllu + "\\n" + second]).get_feature_names_out().tolist()
    ['purrs|nsubj|it|coref|cat', 'sleeps|next|purrs|nsubj|it']
    """

    _parameter_constraints = {
        "features": [tuple, list],
        "word": [StrOptions({"form", "lemma"})],
        "generalize": [StrOptions({"head", "dependent", "both"}), None],
        "universal_relations": ["boolean"],
        "propagate_conj": ["boolean"],
        "graph": [StrOptions({"basic", "enhanced"})],
        "sentence_links": [tuple, list],
        "exclude_relations": [tuple, list, set, frozenset, None],
        "lowercase": ["boolean"],
        "input": [StrOptions({"content", "filename", "file"})],
        "encoding": [str],
        "decode_error": [StrOptions(set(DECODE_ERRORS))],
        "binary": ["boolean"],
        "min_df": [Interval(RealNotInt, 0, 1, closed="both"),
                   Interval(Integral, 1, None, closed="left")],
        "max_df": [Interval(RealNotInt, 0, 1, closed="both"),
                   Interval(Integral, 1, None, closed="left")],
        "max_features": [Interval(Integral, 1, None, closed="left"), None],
        "dtype": "no_validation",
        "verbose": ["verbose"],
    }

    def __init__(self, *, features=("triple",), word="form", generalize=None,
                 universal_relations=False, propagate_conj=False, graph="basic",
                 sentence_links=(), exclude_relations=("punct",), lowercase=True, input="content", encoding="utf-8", decode_error="strict",
                 binary=False, min_df=1, max_df=1.0, max_features=None, dtype=np.int64,
                 verbose=0):
        self.features = features
        self.word = word
        self.generalize = generalize
        self.universal_relations = universal_relations
        self.propagate_conj = propagate_conj
        self.graph = graph
        self.sentence_links = sentence_links
        self.exclude_relations = exclude_relations
        self.lowercase = lowercase
        self.input = input
        self.encoding = encoding
        self.decode_error = decode_error
        self.binary = binary
        self.min_df = min_df
        self.max_df = max_df
        self.max_features = max_features
        self.dtype = dtype
        self.verbose = verbose

    # -- documents -> parsed sentences ------------------------------------------------
    def _iter_parsed(self, X):
        """One list of ParsedSentence per document of ``X`` (consumed once)."""
        check_not_bag(X, "DependencyBagOfWords")
        if isinstance(X, (str, bytes)):
            raise ValueError("Iterable over parsed documents expected, string object "
                             "received. Wrap a single CoNLL-U document in a list: [text].")
        if not isinstance(X, Iterable):
            raise TypeError(f"Expected an iterable of documents (CoNLL-U strings, file names "
                            f"or parsed Doc objects); got {type(X).__name__}.")
        for i, doc in enumerate(track(X, self.verbose, "DependencyBagOfWords: documents")):
            yield self._parse(doc, i)

    def _parse(self, doc, i):
        if _is_parsed_doc(doc):
            return _from_doc(doc, i)
        if self.input == "filename":
            if not isinstance(doc, (str, bytes)) and not hasattr(doc, "__fspath__"):
                raise TypeError(f"Document {i} is of type {type(doc).__name__}; expected a "
                                f"file name (input='filename').")
            with open(doc, "rb") as fh:
                doc = fh.read()
        elif self.input == "file":
            if not hasattr(doc, "read"):
                raise TypeError(f"Document {i} is of type {type(doc).__name__}; expected an "
                                f"open file (input='file').")
            doc = doc.read()
        if isinstance(doc, (bytes, bytearray)):
            doc = bytes(doc).decode(self.encoding, self.decode_error)
        if not isinstance(doc, str):
            raise TypeError(f"Document {i} is of type {type(doc).__name__}; expected CoNLL-U "
                            f"text (str or bytes) or a parsed spaCy Doc.")
        return parse_conllu(doc, document=i, enhanced=self.graph == "enhanced",
                            links="misc" in self.sentence_links)

    # -- parsed sentences -> features ---------------------------------------------------
    def _check_params(self):
        kinds = list(self.features)
        unknown = sorted(set(map(str, kinds)) - set(FEATURE_KINDS))
        if not kinds or unknown:
            raise ValueError(f"features={self.features!r}: expected a non-empty tuple of "
                             f"{list(FEATURE_KINDS)}" + (f"; unknown {unknown}." if unknown
                                                         else "."))
        links = list(self.sentence_links)
        unknown = sorted(set(map(str, links)) - set(SENTENCE_LINKS))
        if unknown or not all(isinstance(x, str) for x in links):
            raise ValueError(f"sentence_links={self.sentence_links!r}: expected a tuple of "
                             f"{list(SENTENCE_LINKS)} (or () for none); unknown {unknown}.")
        check_df_bounds(self.min_df, self.max_df)

    def _analyzer(self):
        """Document (list of ParsedSentence) -> its list of feature strings."""
        kinds = set(self.features)
        excluded = set(self.exclude_relations or ())
        words = {"word": self.word, "lowercase": self.lowercase}
        graph = {"enhanced": self.graph == "enhanced", "propagate_conj": self.propagate_conj,
                 "links": tuple(self.sentence_links)}

        def analyze(sentences):
            w, upos, arcs = _document_graph(sentences, words, **graph)
            heads = upos if self.generalize in ("head", "both") else w
            deps = upos if self.generalize in ("dependent", "both") else w
            arcs = [(h, r.split(":")[0] if self.universal_relations else r, d)
                    for h, r, d in arcs
                    if r not in excluded and r.split(":")[0] not in excluded]
            return _features(arcs, heads, deps, kinds)

        return analyze

    def _counts(self, X, vocabulary=None):
        analyze = self._analyzer()
        return count_matrix(map(analyze, self._iter_parsed(X)), vocabulary, dtype=np.int64)

    def _fit(self, X):
        self._check_params()
        counts, vocabulary = self._counts(X)
        check_corpus_nonempty(counts.shape[0])
        if not vocabulary:
            raise ValueError("Empty vocabulary: the documents produced no dependency features "
                             f"(no sentences, or every relation is in exclude_relations="
                             f"{self.exclude_relations!r}).")
        if self.binary:
            counts.data.fill(1)
        counts, vocabulary = prune_vocabulary(counts, vocabulary, min_df=self.min_df,
                                              max_df=self.max_df,
                                              max_features=self.max_features)
        self.vocabulary_ = vocabulary
        return counts

    @fit_context(prefer_skip_nested_validation=True)
    def fit_transform(self, X, y=None):
        """Learn the features and return the document-feature counts (one pass over ``X``).

        %(fit_transform_parameters)s

        Returns
        -------
        X_counts : scipy.sparse.csr_matrix of shape (n_documents, n_features)
        """
        return self._fit(X).astype(self.dtype)

    def transform(self, X):
        """Count the fitted features in ``X`` (unseen ones are ignored).

        %(transform_parameters)s

        Returns
        -------
        X_counts : scipy.sparse.csr_matrix of shape (n_documents, n_features)
        """
        check_is_fitted(self, "vocabulary_")
        counts, _ = self._counts(X, self.vocabulary_)
        if self.binary:
            counts.data.fill(1)
        return counts.astype(self.dtype)

    def get_feature_names_out(self, input_features=None):
        """The features (``head|relation|dependent`` strings) in column order.

        %(feature_names_sections)s
        """
        check_is_fitted(self, "vocabulary_")
        return np.asarray(terms_in_column_order(self.vocabulary_), dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.string = True
        tags.input_tags.two_d_array = False
        return tags


def _words(form, lemma, word, lowercase):
    """Words written by form, or by lemma falling back to the form where it is missing."""
    w = form if word == "form" else [
        lem if lem not in ("", "_") else f for lem, f in zip(lemma, form)]
    return [x.lower() for x in w] if lowercase else list(w)


def _empty_node_words(graph, word, lowercase):
    """Empty nodes written by form (or lemma), else the other, else ``ELIDED``."""
    first, second = (graph.form, graph.lemma) if word == "form" else (graph.lemma, graph.form)
    w = [a if a not in ("", "_") else b if b not in ("", "_") else ELIDED
         for a, b in zip(first, second)]
    return [x if x == ELIDED or not lowercase else x.lower() for x in w]


def _sentence_graph(s, words, enhanced, propagate_conj):
    """(node words, node POS, arcs) of one sentence: basic tree or enhanced graph."""
    w = _words(s.form, s.lemma, **words)
    if enhanced and s.enhanced is not None:
        return (w + _empty_node_words(s.enhanced, **words), s.upos + s.enhanced.upos,
                s.enhanced.arcs)
    head = s.head.tolist()
    arcs = [(h, r, d) for d, (h, r) in enumerate(zip(head, s.deprel))]
    return w, list(s.upos), arcs + (_conj_arcs(head, s.deprel) if propagate_conj else [])


def _document_graph(sentences, words, *, enhanced, propagate_conj, links):
    """Words, POS tags and raw arcs ``(head, relation, dependent)`` of one document.

    Nodes are numbered across the document (each sentence's after the previous one's), so
    arcs between sentences are arcs like the others; head -1 is the root.
    """
    w, upos, arcs, starts = [], [], [], []
    for s in sentences:
        starts.append(len(w))
        sw, su, sa = _sentence_graph(s, words, enhanced, propagate_conj)
        arcs += [(h + starts[-1] if h >= 0 else -1, r, d + starts[-1]) for h, r, d in sa]
        w += sw
        upos += su
    if "roots" in links:
        roots = [start + int(np.flatnonzero(s.head < 0)[0])
                 for start, s in zip(starts, sentences)]
        arcs += [(a, NEXT, b) for a, b in pairwise(roots)]
    if "misc" in links:
        arcs += [(starts[k] + word, r, starts[k + offset] + target)
                 for k, s in enumerate(sentences) for word, offset, target, r in s.links]
    return w, upos, arcs


def _features(arcs, heads, deps, kinds):
    """Feature strings of the kept arcs; paths of two arcs follow every head of a word."""
    hw = [heads[h] if h >= 0 else ROOT for h, _, _ in arcs]
    out = []
    if "triple" in kinds:
        out += [f"{a}|{r}|{deps[d]}" for a, (_, r, d) in zip(hw, arcs)]
    if "head_relation" in kinds:
        out += [f"{a}|{r}|{BLANK}" for a, (_, r, _) in zip(hw, arcs)]
    if "relation_dependent" in kinds:
        out += [f"{BLANK}|{r}|{deps[d]}" for _, r, d in arcs]
    if "path2" in kinds:
        into = defaultdict(list)              # word -> its (head, relation) arcs
        for h, r, d in arcs:
            if h >= 0:
                into[d].append((h, r))
        out += [f"{heads[g]}|{rg}|{heads[h]}|{r}|{deps[d]}"
                for h, r, d in arcs for g, rg in into.get(h, ())]
    return out


def _conj_arcs(head, rel):
    """Enhanced-UD conjunct propagation: each conjunct also gets its first conjunct's arc."""
    extra = []
    for d, (h, r) in enumerate(zip(head, rel)):
        if r.split(":")[0] != "conj" or h < 0:
            continue
        first = h
        while rel[first].split(":")[0] == "conj" and head[first] >= 0:
            first = head[first]
        if head[first] >= 0:
            extra.append((head[first], rel[first], d))
    return extra
