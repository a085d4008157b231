"""Bag of dependency relations: features from parsed sentences (CoNLL-U or spaCy ``Doc``).

A window sees which words stand near each other; a dependency parse says which word
modifies which, however far apart they stand. In "a square, smooth, heat-resistant, cheap
stainless-steel box" every adjective is an ``amod`` of "box", so ``box|amod|square`` is a
feature although five words separate them.

Parsing CoNLL-U is the one Python loop over lines; the checks of a sentence (ids, head
range, cycles) are array operations on its head vector.
"""
from collections.abc import Iterable
from typing import NamedTuple

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

from nlpfeat._validation import (
    Integral,
    Interval,
    RealNotInt,
    StrOptions,
    check_is_fitted,
    fit_context,
)
from nlpfeat.text._base._documents import (
    DECODE_ERRORS,
    check_corpus_nonempty,
    check_not_bag,
)
from nlpfeat.text._counting._vocabulary import (
    check_df_bounds,
    count_matrix,
    prune_vocabulary,
    terms_in_column_order,
)

__all__ = ["DependencyBagOfWords", "parse_conllu"]

FEATURE_KINDS = ("triple", "head_relation", "relation_dependent", "path2")
ROOT = "ROOT"      # the head word of the root relation
BLANK = "_"        # the omitted side of head_relation / relation_dependent


class ParsedSentence(NamedTuple):
    """One parsed sentence: token attributes and ``head`` (0-based; -1 for the root)."""

    form: list
    lemma: list
    upos: list
    deprel: list
    head: np.ndarray


class ConlluError(ValueError):
    """Malformed CoNLL-U; the message names the document, sentence and line."""


def parse_conllu(text, *, document=0):
    """Parse CoNLL-U text into sentences, checking columns, ids, head range and cycles.

    Comment lines (``#``) and the lines of multiword tokens (id ``1-2``) and empty nodes
    (id ``3.1``) are skipped; sentences are separated by blank lines.

    Parameters
    ----------
    text : str
        One or more sentences in CoNLL-U (10 tab-separated columns per word line).
    document : int, default=0
        Index of the document, for error messages.

    Returns
    -------
    sentences : list of ParsedSentence
        Fields ``form, lemma, upos, deprel`` (lists of str) and ``head`` (int ndarray,
        0-based; -1 for a word attached to the root).

    Raises
    ------
    ValueError
        If a word line does not have 10 columns, ID or HEAD is not an integer, the ids are
        not 1, 2, ... in order, a HEAD is out of range or the heads form a cycle. The
        message names the document, the sentence (number and ``sent_id``) and the line.

    Examples
    --------
    >>> from nlpfeat.text._vectorizers._dependency import parse_conllu
    >>> s, = parse_conllu("1\\tcats\\tcat\\tNOUN\\t_\\t_\\t2\\tnsubj\\t_\\t_\\n"
    ...                   "2\\tpurr\\tpurr\\tVERB\\t_\\t_\\t0\\troot\\t_\\t_\\n")
    >>> s.lemma, s.deprel, s.head.tolist()
    (['cat', 'purr'], ['nsubj', 'root'], [1, -1])
    """
    sentences, rows, lines, sent_id, start = [], [], [], None, None
    for lineno, line in enumerate(text.split("\n"), 1):
        line = line.rstrip("\r")
        if not line.strip():
            if rows:
                sentences.append(_sentence(rows, lines, (document, len(sentences), sent_id)))
            rows, lines, sent_id, start = [], [], None, None
            continue
        if start is None:
            start = lineno
        if line.startswith("#"):
            if line[1:].strip().startswith("sent_id"):
                sent_id = line.split("=", 1)[-1].strip()
            continue
        cols = line.split("\t")
        if len(cols) != 10:
            raise ConlluError(
                f"{_where((document, len(sentences), sent_id), lineno)}: a word line needs 10 "
                f"tab-separated columns (ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS "
                f"MISC); got {len(cols)}: {line[:60]!r}. Check that columns are separated "
                f"by tabs, not spaces."
            )
        if "-" in cols[0] or "." in cols[0]:
            continue                    # multiword token range or empty node
        rows.append(cols)
        lines.append(lineno)
    if rows:
        sentences.append(_sentence(rows, lines, (document, len(sentences), sent_id)))
    return sentences


def _where(place, lineno):
    document, index, sent_id = place
    name = f", sent_id {sent_id!r}" if sent_id else ""
    return f"CoNLL-U document {document}, sentence {index}{name}, line {lineno}"


def _as_int(value, what, place, lineno):
    try:
        return int(value)
    except ValueError:
        raise ConlluError(f"{_where(place, lineno)}: {what} {value!r} is not an integer."
                          ) from None


def _sentence(rows, lines, place):
    n = len(rows)
    ids = np.array([_as_int(r[0], "ID", place, ln) for r, ln in zip(rows, lines)])
    bad = np.flatnonzero(ids != np.arange(1, n + 1))
    if bad.size:
        i = bad[0]
        raise ConlluError(f"{_where(place, lines[i])}: word ID {ids[i]} out of order; "
                          f"expected {i + 1} (ids run 1, 2, ... within a sentence).")
    head = np.array([_as_int(r[6], "HEAD", place, ln) for r, ln in zip(rows, lines)])
    bad = np.flatnonzero((head < 0) | (head > n))
    if bad.size:
        i = bad[0]
        raise ConlluError(f"{_where(place, lines[i])}: HEAD {head[i]} is out of range; this "
                          f"sentence has {n} words, so HEAD must be 0 (root) to {n}.")
    head = head - 1
    on_cycle = _cycle_word(head)
    if on_cycle is not None:
        raise ConlluError(f"{_where(place, lines[on_cycle])}: the heads form a cycle (word "
                          f"{on_cycle + 1} is on it: following HEAD from it never reaches "
                          f"the root); a dependency tree has no cycles.")
    _, form, lemma, upos, _, _, _, deprel, _, _ = map(list, zip(*rows))
    return ParsedSentence(form, lemma, upos, deprel, head)


def _ancestors(head):
    """The ``2^k``-th ancestor of every word, ``2^k > n``: the root (``n``) or a cycle word."""
    n = head.size
    up = np.append(np.where(head < 0, n, head), n)    # node n: the root, its own parent
    for _ in range(max(1, int(np.ceil(np.log2(n + 1))))):
        up = up[up]                                   # pointer doubling
    return up[:n]


def _cycle_word(head):
    """Index of a word on a cycle of ``head`` (0-based, -1 = root), or None for a tree."""
    far = _ancestors(head)
    bad = np.flatnonzero(far != head.size)
    return None if bad.size == 0 else int(far[bad[0]])


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
        if _cycle_word(head) is not None:
            raise ValueError(f"Document {index}, sentence {len(sentences)}: the heads form a "
                             f"cycle; expected a dependency tree.")
        deprel = ["root" if h < 0 else t.dep_ for t, h in zip(tokens, head)]
        sentences.append(ParsedSentence([t.text for t in tokens], [t.lemma_ for t in tokens],
                                        [t.pos_ for t in tokens], deprel, head))
    return sentences


class DependencyBagOfWords(TransformerMixin, BaseEstimator):
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
        are counted too.
    exclude_relations : tuple of str or None, default=("punct",)
        Relations (before subtypes are dropped, or their universal part) whose arcs are
        not counted, nor used in paths.
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
    Malformed CoNLL-U (a word line without 10 tab-separated columns, a non-integer or
    out-of-order ID, a HEAD out of range, heads forming a cycle) raises ``ValueError``
    naming the document, sentence (number and ``sent_id``) and line. A ``|`` inside a word
    is kept as is.

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
    """

    _parameter_constraints = {
        "features": [tuple, list],
        "word": [StrOptions({"form", "lemma"})],
        "generalize": [StrOptions({"head", "dependent", "both"}), None],
        "universal_relations": ["boolean"],
        "propagate_conj": ["boolean"],
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
    }

    def __init__(self, *, features=("triple",), word="form", generalize=None,
                 universal_relations=False, propagate_conj=False, exclude_relations=("punct",),
                 lowercase=True, input="content", encoding="utf-8", decode_error="strict",
                 binary=False, min_df=1, max_df=1.0, max_features=None, dtype=np.int64):
        self.features = features
        self.word = word
        self.generalize = generalize
        self.universal_relations = universal_relations
        self.propagate_conj = propagate_conj
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
        for i, doc in enumerate(X):
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
        return parse_conllu(doc, document=i)

    # -- parsed sentences -> features ---------------------------------------------------
    def _check_params(self):
        kinds = list(self.features)
        unknown = sorted(set(map(str, kinds)) - set(FEATURE_KINDS))
        if not kinds or unknown:
            raise ValueError(f"features={self.features!r}: expected a non-empty tuple of "
                             f"{list(FEATURE_KINDS)}" + (f"; unknown {unknown}." if unknown
                                                         else "."))
        check_df_bounds(self.min_df, self.max_df)

    def _analyzer(self):
        kinds = set(self.features)
        excluded = set(self.exclude_relations or ())
        gen_head = self.generalize in ("head", "both")
        gen_dep = self.generalize in ("dependent", "both")

        def words(s):
            w = s.form if self.word == "form" else [
                lem if lem not in ("", "_") else f for lem, f in zip(s.lemma, s.form)]
            return [x.lower() for x in w] if self.lowercase else list(w)

        def analyze(sentences):
            out = []
            for s in sentences:
                w = words(s)
                heads = s.upos if gen_head else w
                deps = s.upos if gen_dep else w
                rel = [r.split(":")[0] for r in s.deprel] if self.universal_relations \
                    else s.deprel
                keep = [r not in excluded and r.split(":")[0] not in excluded
                        for r in s.deprel]
                arcs = [(h, r, d) for d, (h, r, k) in enumerate(zip(s.head.tolist(), rel, keep))
                        if k]
                if self.propagate_conj:
                    arcs += _conj_arcs(s.head.tolist(), rel, keep)
                hw = [heads[h] if h >= 0 else ROOT for h, _, _ in arcs]
                if "triple" in kinds:
                    out += [f"{a}|{r}|{deps[d]}" for a, (_, r, d) in zip(hw, arcs)]
                if "head_relation" in kinds:
                    out += [f"{a}|{r}|{BLANK}" for a, (_, r, _) in zip(hw, arcs)]
                if "relation_dependent" in kinds:
                    out += [f"{BLANK}|{r}|{deps[d]}" for _, r, d in arcs]
                if "path2" in kinds:
                    up = {d: (h, r) for h, r, d in arcs if h >= 0}
                    out += [f"{heads[g]}|{rg}|{heads[h]}|{r}|{deps[d]}"
                            for h, r, d in arcs if h in up
                            for g, rg in [up[h]]]
            return out

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
    def fit(self, X, y=None):
        """Learn the dependency features of the documents ``X`` (consumed once).

        Parameters
        ----------
        X : iterable of documents
            CoNLL-U strings (or bytes), file names (``input="filename"``), open files
            (``input="file"``), or parsed spaCy ``Doc`` objects.
        y : ignored

        Returns
        -------
        self : DependencyBagOfWords
        """
        self._fit(X)
        return self

    @fit_context(prefer_skip_nested_validation=True)
    def fit_transform(self, X, y=None):
        """Learn the features and return the document-feature counts (one pass over ``X``).

        Parameters
        ----------
        X : iterable of documents
        y : ignored

        Returns
        -------
        X_counts : scipy.sparse.csr_matrix of shape (n_documents, n_features)
        """
        return self._fit(X).astype(self.dtype)

    def transform(self, X):
        """Count the fitted features in ``X`` (unseen ones are ignored).

        Parameters
        ----------
        X : iterable of documents

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

        Parameters
        ----------
        input_features : ignored

        Returns
        -------
        feature_names_out : ndarray of str objects
        """
        check_is_fitted(self, "vocabulary_")
        return np.asarray(terms_in_column_order(self.vocabulary_), dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.string = True
        tags.input_tags.two_d_array = False
        return tags


def _conj_arcs(head, rel, keep):
    """Enhanced-UD conjunct propagation: each conjunct also gets its first conjunct's arc."""
    extra = []
    for d, (h, r) in enumerate(zip(head, rel)):
        if r.split(":")[0] != "conj" or h < 0:
            continue
        first = h
        while rel[first].split(":")[0] == "conj" and head[first] >= 0:
            first = head[first]
        if keep[first] and head[first] >= 0:
            extra.append((head[first], rel[first], d))
    return extra
