"""The CoNLL-U reader of :class:`~nlpfeat.text.DependencyBagOfWords`.

Parsing is the one Python loop over lines; the checks of a sentence's basic tree (ids, head
range, cycles) are array operations on its head vector. On request the reader also takes the
enhanced-UD graph of the DEPS column (empty nodes included) and the links between the
sentences of a document written in the MISC column (``Link=``); a malformed value of either
raises :class:`ConlluError` naming the document, the sentence and the line.
"""
import re
from typing import NamedTuple

import numpy as np

__all__ = ["ConlluError", "EnhancedGraph", "ParsedSentence", "cycle_word", "parse_conllu"]

_EMPTY_ID = re.compile(r"(\d+)\.([1-9]\d*)")          # an empty node: 8.1, 8.2, ...
_LINK = re.compile(r"([+-]?\d+)/([1-9]\d*):(\S+)")     # offset/word:relation


class EnhancedGraph(NamedTuple):
    """The enhanced-UD graph of one sentence (its DEPS column).

    Its nodes are the sentence's words (0 to n - 1) followed by its empty nodes (n, n + 1,
    ... in file order), whose ``form, lemma, upos`` are given here; ``arcs`` lists
    ``(head, relation, dependent)`` node triples, head -1 for the root.
    """

    form: list
    lemma: list
    upos: list
    arcs: list


class ParsedSentence(NamedTuple):
    """One parsed sentence: token attributes and ``head`` (0-based; -1 for the root).

    ``enhanced`` is its :class:`EnhancedGraph` (None unless DEPS was read and given);
    ``links`` are ``(word, sentence_offset, target_word, relation)`` from the MISC column's
    ``Link=`` (words 0-based; the target sentence is this one's index plus the offset).
    """

    form: list
    lemma: list
    upos: list
    deprel: list
    head: np.ndarray
    enhanced: EnhancedGraph | None = None
    links: tuple = ()


class ConlluError(ValueError):
    """Malformed CoNLL-U; the message names the document, sentence and line."""


def parse_conllu(text, *, document=0, enhanced=False, links=False):
    """Parse CoNLL-U text into sentences, checking columns, ids, head range and cycles.

    Comment lines (``#``) and the lines of multiword tokens (id ``1-2``) are skipped, and
    so are empty nodes (id ``3.1``) unless ``enhanced``; sentences are separated by blank
    lines.

    Parameters
    ----------
    text : str
        One or more sentences in CoNLL-U (10 tab-separated columns per word line).
    document : int, default=0
        Index of the document, for error messages.
    enhanced : bool, default=False
        Also read the DEPS column (``head:deprel|head:deprel``, heads ``0`` for the root,
        word IDs or empty-node IDs such as ``8.1``) into each sentence's ``enhanced``
        graph; a sentence whose DEPS are all ``_`` keeps ``enhanced=None``.
    links : bool, default=False
        Also read the MISC attribute ``Link=offset/word:relation`` (several joined by
        ``,``): an arc from this word to word ``word`` (its ID) of the sentence ``offset``
        sentences away in the same text (0: this one, -1: the previous one).

    Returns
    -------
    sentences : list of ParsedSentence
        Fields ``form, lemma, upos, deprel`` (lists of str), ``head`` (int ndarray,
        0-based; -1 for a word attached to the root), ``enhanced`` and ``links``.

    Raises
    ------
    ValueError
        If a word line does not have 10 columns, ID or HEAD is not an integer, the ids are
        not 1, 2, ... in order, a HEAD is out of range or the heads form a cycle; with
        ``enhanced``, if a DEPS value is malformed, names a head that is neither a word nor
        an empty node of its sentence, or is missing on some lines of a sentence but not
        all; with ``links``, if a ``Link`` is malformed or points outside the text. The
        message names the document, the sentence (number and ``sent_id``) and the line.

    Examples
    --------
    >>> from nlpfeat.text._vectorizers._conllu import parse_conllu
    >>> s, = parse_conllu("1\\tcats\\tcat\\tNOUN\\t_\\t_\\t2\\tnsubj\\t_\\t_\\n"
    ...                   "2\\tpurr\\tpurr\\tVERB\\t_\\t_\\t0\\troot\\t_\\t_\\n")
    >>> s.lemma, s.deprel, s.head.tolist()
    (['cat', 'purr'], ['nsubj', 'root'], [1, -1])
    """
    sentences, pending, block = [], [], _Block()
    for lineno, line in enumerate(text.split("\n"), 1):
        line = line.rstrip("\r")
        if not line.strip():
            block = block.close(sentences, pending, document, enhanced, links)
        elif line.startswith("#"):
            if line[1:].strip().startswith("sent_id"):
                block.sent_id = line.split("=", 1)[-1].strip()
        else:
            block.add(line, lineno, (document, len(sentences), block.sent_id), enhanced)
    block.close(sentences, pending, document, enhanced, links)
    if links:
        sentences = _check_links(sentences, pending)
    return sentences


class _Block:
    """The lines of the sentence being read: word rows, empty-node rows, their lines."""

    def __init__(self):
        self.rows, self.lines, self.empty, self.sent_id = [], [], [], None

    def add(self, line, lineno, place, enhanced):
        cols = line.split("\t")
        if len(cols) != 10:
            raise ConlluError(
                f"{_where(place, lineno)}: a word line needs 10 tab-separated columns (ID "
                f"FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC); got {len(cols)}: "
                f"{line[:60]!r}. Check that columns are separated by tabs, not spaces."
            )
        if "." in cols[0]:
            if enhanced:                # empty nodes belong to the enhanced graph only
                self.empty.append((cols, lineno))
        elif "-" not in cols[0]:        # not a multiword token's range
            self.rows.append(cols)
            self.lines.append(lineno)

    def close(self, sentences, pending, document, enhanced, links):
        """Append the sentence read (if any) and return a fresh block."""
        if self.rows:
            place = (document, len(sentences), self.sent_id)
            sentence = _sentence(self.rows, self.lines, place)
            if enhanced:
                sentence = sentence._replace(enhanced=_enhanced_graph(self, place))
            if links:
                pending.append([(link, place, ln) for link, ln in _misc_links(self, place)])
            sentences.append(sentence)
        return _Block()


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
    on_cycle = cycle_word(head)
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


def cycle_word(head):
    """Index of a word on a cycle of ``head`` (0-based, -1 = root), or None for a tree."""
    far = _ancestors(head)
    bad = np.flatnonzero(far != head.size)
    return None if bad.size == 0 else int(far[bad[0]])


# -- the enhanced graph (DEPS) ----------------------------------------------------------
def _empty_nodes(block, place):
    """Empty-node ID -> node index (after the n words), checked: ``k.m`` with k <= n."""
    n, index = len(block.rows), {}
    for j, (cols, lineno) in enumerate(block.empty):
        found = _EMPTY_ID.fullmatch(cols[0])
        if found is None or int(found.group(1)) > n or cols[0] in index:
            raise ConlluError(
                f"{_where(place, lineno)}: empty node ID {cols[0]!r} is not valid; expected "
                f"k.m (m = 1, 2, ...) after word k, with 0 <= k <= {n}, each ID once.")
        index[cols[0]] = n + j
    return index


def _enhanced_graph(block, place):
    """The sentence's :class:`EnhancedGraph`, or None where every DEPS is ``_``."""
    rows = [(cols, ln) for cols, ln in zip(block.rows, block.lines)] + block.empty
    given = [cols[8] not in ("", "_") for cols, _ in rows]
    if not any(given):
        return None
    if not all(given):
        cols, lineno = rows[given.index(False)]
        raise ConlluError(
            f"{_where(place, lineno)}: DEPS of {cols[0]} is '_' while other lines of this "
            f"sentence give it; the enhanced graph needs every word's and empty node's "
            f"DEPS (head:deprel|...), or none.")
    index = _empty_nodes(block, place)
    n, arcs = len(block.rows), []
    for node, (cols, lineno) in enumerate(rows):
        for item in cols[8].split("|"):
            head, _, rel = item.partition(":")
            arcs.append((_deps_head(head, rel, n, index, (place, lineno, item)), rel, node))
    form, lemma, upos = ([cols[c] for cols, _ in block.empty] for c in (1, 2, 3))
    return EnhancedGraph(form, lemma, upos, arcs)


def _deps_head(head, rel, n, index, where):
    """Node index of a DEPS head (-1 for ``0``), or ConlluError naming the item."""
    place, lineno, item = where
    if rel:
        if head.isdigit() and int(head) <= n:
            return int(head) - 1
        if head in index:
            return index[head]
    raise ConlluError(
        f"{_where(place, lineno)}: DEPS item {item!r} is not head:deprel with head 0 "
        f"(root), a word ID 1 to {n} or an empty node of this sentence "
        f"({sorted(index) or 'none'}); items are joined by '|'.")


# -- links between sentences (MISC Link=) ------------------------------------------------
def _misc_links(block, place):
    """``((word, offset, target word, relation), line)`` for each ``Link=`` of the block."""
    found = []
    for word, (cols, lineno) in enumerate(zip(block.rows, block.lines)):
        for attribute in cols[9].split("|"):
            if not attribute.startswith("Link="):
                continue
            for value in attribute[len("Link="):].split(","):
                link = _LINK.fullmatch(value)
                if link is None:
                    raise ConlluError(
                        f"{_where(place, lineno)}: MISC Link {value!r} is not offset/word:"
                        f"relation (e.g. Link=-1/2:coref: an arc from this word to word 2 "
                        f"of the previous sentence); several are joined by ','.")
                offset, target, rel = link.groups()
                found.append(((word, int(offset), int(target) - 1, rel), lineno))
    return found


def _check_links(sentences, pending):
    """Sentences with their links, each checked to land on a word of this text."""
    out = []
    for k, (sentence, links) in enumerate(zip(sentences, pending)):
        for (_, offset, target, _), place, lineno in links:
            to = k + offset
            if not 0 <= to < len(sentences):
                raise ConlluError(
                    f"{_where(place, lineno)}: Link to sentence {offset:+d} from sentence "
                    f"{k} lies outside this document, which has {len(sentences)} sentences "
                    f"(0 to {len(sentences) - 1}); pass linked sentences in one document.")
            if target >= len(sentences[to].form):
                raise ConlluError(
                    f"{_where(place, lineno)}: Link to word {target + 1} of sentence {to}, "
                    f"which has {len(sentences[to].form)} words.")
        out.append(sentence._replace(links=tuple(link for link, _, _ in links)))
    return out
