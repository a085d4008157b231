"""One compiled pass per chunk of documents: text -> token spans -> ids -> CSR counts.

:func:`text_pass_chunks` is the compiled counterpart of
:func:`~nlpfeat.text._counting._vocabulary.count_chunks` for the default word analyzer
(default tokenizer and pattern, lowercasing and accent stripping, stop words, word
n-grams):
it yields the same :class:`~nlpfeat.text._counting._vocabulary.CountChunk` s, in the ids of
the same vocabulary, without a Python object per token.

On one thread (no n-grams) a chunk's tokens are found and numbered straight in the
pass's table by one fused compiled scan (:func:`~._scan_number.number_text`), the new
tokens made ``str`` once and looked up as below, and the rows counted without sorting
them when the vocabulary is learned (the columns are renumbered and sorted at the end).
Otherwise a chunk is tokenized (:func:`~._compiled_tokens.token_spans`) and its tokens
numbered in a table of the chunk's own (:class:`~._token_table.TokenTable`); then, in
chunk order, the
chunk's distinct tokens are numbered in the pass's table, and the tokens new there (few:
a corpus has far fewer types than tokens) become ``str`` once, to be looked up in the
vocabulary (new terms are added as :func:`count_chunks` adds them; stop words and terms
outside a fixed vocabulary map to -1); finally each document's term ids are sorted and
counted into CSR rows. With ``ngram_range``, the middle step also maps the chunk's
tokens to word ids (one per distinct lowered token; stop words dropped first, as the
Python analyzer drops them) and numbers their n-grams in the pass's n-gram table
(:mod:`._ngram_ids`), each new n-gram made ``str`` once, and the rows count n-grams.
With ``n_jobs`` threads, the first and last steps of many chunks run at once (the
compiled functions release the GIL; the word pass's first step is the fused scan into
the chunk's own table, chunks of at most :data:`THREAD_CHUNK_CHARS`); the middle one,
which alone touches the shared table and vocabulary, runs in chunk order and numbers
only the chunk's distinct tokens, so the ids (first appearance) and the output are the
same for every ``n_jobs`` and chunk size.

A chunk the compiled pass refuses (a lone surrogate, which UTF-8 cannot encode) is
counted by :func:`count_chunks` with the caller's Python analyzer, in its turn.
"""
from collections import deque
from typing import NamedTuple

import numpy as np
from joblib import effective_n_jobs
from numba import njit

from nlpfeat._chunking import chunk_n_rows
from nlpfeat.text._counting._chunks import document_chunks
from nlpfeat.text._counting._compiled_tokens import (plain_word_classes, scan_input,
                                                     token_spans, word_classes)
from nlpfeat.text._counting._ngram_ids import (first_positions, n_sizes, ngram_spans,
                                                ngram_strings)
from nlpfeat.text._counting._scan_number import number_text
from nlpfeat.text._counting._token_table import SEP, TokenTable
from nlpfeat.text._counting._vocabulary import CountChunk, count_chunks, grown

__all__ = ["TextPass", "text_pass_chunks", "term_chunks", "chunk_chars"]

#: Bytes of temporary memory per character of a chunk: the str and its UTF-8 bytes
#: (twice), the token spans (two int32 per two bytes, allocated for the worst case),
#: the tokens' ids and the CSR rows (about one token per six characters).
BYTES_PER_CHAR = 16


class TextPass(NamedTuple):
    """What the compiled pass does to a decoded document: the options it honours exactly.

    ``lowercase``: lowercase ASCII documents in the compiled scan; ``preprocess``: the
    preprocessor applied to every other document (None: ``str.lower`` when
    ``lowercase``); ``stop_words``: a set of tokens to drop, or None; ``ideographs``:
    every CJK ideograph a token (nlpfeat's pattern), else scikit-learn's pattern;
    ``lower_tokens``: lower each distinct token instead of non-ASCII documents
    (``token_spans``'s option: with ``lowercase`` and no ``preprocess``);
    ``ngram_range``: the word n-grams counted (:mod:`._ngram_ids`), after stop words.
    """

    lowercase: bool = True
    preprocess: object = None
    stop_words: object = None
    ideographs: bool = True
    lower_tokens: bool = False
    ngram_range: tuple = (1, 1)


#: Characters per chunk at most with ``n_jobs > 1``: each thread gets chunks of a corpus
#: of a few MB (the output does not depend on the chunks).
THREAD_CHUNK_CHARS = 1 << 18

#: Bytes more per character for each n-gram length counted (about one token per six
#: characters: its spans, key id and CSR entry, 40 bytes).
NGRAM_BYTES_PER_CHAR = 7


def chunk_chars(working_memory=None, ngram_range=(1, 1)):
    """Characters per chunk of the compiled pass within ``working_memory`` MiB."""
    extra = 0 if tuple(ngram_range) == (1, 1) else NGRAM_BYTES_PER_CHAR * n_sizes(ngram_range)
    return chunk_n_rows(BYTES_PER_CHAR + extra, 1 << 62, working_memory)


@njit(cache=True, nogil=True)
def _rows(ids, term_of_id, doc_offsets, at, sort):
    """CSR rows of the documents (tokens ``doc_offsets[d] .. doc_offsets[d + 1] - 1`` of
    ``ids``, token ids whose terms are ``term_of_id``; -1: not counted): each row's
    distinct terms and their counts. A token's row entry is found through its id in
    ``at`` (-1 for every id on entry and on return; no sort of the tokens); with
    ``sort`` the row's distinct terms are sorted (else in order of appearance: a
    learning pass renumbers and sorts its columns at the end)."""
    n_docs = len(doc_offsets) - 1
    indices = np.empty(len(ids), np.intc)
    counts = np.empty(len(ids), np.intc)
    row_nnz = np.zeros(n_docs, np.int64)
    longest = 0              # a loop: numba's np.diff and np.max compile for seconds
    for d in range(n_docs):
        longest = max(longest, doc_offsets[d + 1] - doc_offsets[d])
    row_terms = np.empty(longest, np.int64)
    row_counts = np.empty(longest, np.intc)
    k = 0
    for d in range(n_docs):
        m = 0
        for t in range(doc_offsets[d], doc_offsets[d + 1]):
            i = ids[t]
            term = term_of_id[i]
            if term < 0:
                continue
            e = at[i]
            if e >= 0:
                row_counts[e] += 1
            else:
                at[i] = m
                row_terms[m] = term
                row_counts[m] = 1
                m += 1
        if sort:
            order = np.argsort(row_terms[:m])
            for j in range(m):
                e = order[j]
                indices[k + j] = row_terms[e]
                counts[k + j] = row_counts[e]
        else:
            for j in range(m):
                indices[k + j] = row_terms[j]
                counts[k + j] = row_counts[j]
        for t in range(doc_offsets[d], doc_offsets[d + 1]):   # reset the entries used
            at[ids[t]] = -1
        row_nnz[d] = m
        k += m
    return indices[:k], counts[:k], row_nnz


class _Pass:
    """The state of one pass over a corpus: its token table and the term of each token."""

    def __init__(self, vocabulary, learn, options, analyze, start):
        self.vocabulary, self.learn, self.options = vocabulary, learn, options
        self.analyze, self.start = analyze, start
        self.table = TokenTable()
        self.exact = learn and not vocabulary       # see _terms
        self.term_of_token = np.empty(1024, np.int64)
        self.at = np.full(0, -1, np.intc)       # _rows's entry of each token id
        self.ngrams = None if tuple(options.ngram_range) == (1, 1) else _Ngrams(options)

    def chunk_chars(self, working_memory):
        """Characters per chunk within ``working_memory`` MiB."""
        return chunk_chars(working_memory, self.options.ngram_range)

    def local(self, docs):
        """Tokens of one chunk numbered in a table of its own (runs on a thread)."""
        spans = token_spans(docs, lowercase=self.options.lowercase,
                            preprocess=self.options.preprocess,
                            ideographs=self.options.ideographs,
                            lower_tokens=self.options.lower_tokens)
        if spans is None:
            return None
        buffer, starts, ends, doc_offsets = spans
        table = TokenTable()
        ids = table.add_spans(buffer, starts, ends)
        return None if ids is None else (table, ids, doc_offsets)

    def _fused_scan(self, docs, table):
        """``(ids, doc_offsets)`` of a chunk's tokens numbered in ``table`` by the fused
        scan (:func:`~._scan_number.number_text`); None for a lone surrogate, False
        for a chunk too large for the fused scan (nothing added to ``table``)."""
        options = self.options
        found = scan_input(docs, lowercase=options.lowercase, preprocess=options.preprocess,
                           lower_tokens=options.lower_tokens)
        if found is None:
            return None
        classes = word_classes() if options.ideographs else plain_word_classes()
        numbered = number_text(table, *found, classes)
        return False if numbered is None else numbered

    def local_fused(self, docs):
        """:meth:`local` by the fused scan (``n_jobs > 1``, no n-grams; runs on a thread)."""
        table = TokenTable()
        numbered = self._fused_scan(docs, table)
        if numbered is False:
            return self.local(docs)
        return None if numbered is None else (table, *numbered)

    def numbered(self, start, docs):
        """The rows of one chunk, its tokens numbered straight in the pass's table by the
        fused scan (``n_jobs=1``, no n-grams)."""
        n_before = self.table.n
        numbered = self._fused_scan(docs, self.table)
        if numbered is None:
            return self.python_chunks(start, docs)
        if numbered is False:                     # a chunk too large for the fused scan
            table, ids, doc_offsets = self.local(docs)
            return _counted(start, *self.counting(table, ids, doc_offsets))
        self._term_of_new(n_before)
        if len(self.at) < self.table.n:
            self.at = np.full(max(self.table.n, len(self.at) * 3 // 2), -1, np.intc)
        return _counted(start, numbered[0], self.term_of_token, numbered[1], self.at,
                        sort=not self.learn)

    def terms_of(self, local_table):
        """The term id of each distinct token of a chunk's table (in chunk order)."""
        n_before = self.table.n
        ids = self.table.add_table(local_table)
        self._term_of_new(n_before)
        return self.term_of_token[ids]

    def _term_of_new(self, n_before):
        """``term_of_token`` of the tokens numbered in the pass's table from ``n_before``."""
        if self.table.n > n_before:
            new = self._new_tokens(n_before)
            terms = self._terms(new, self.options.stop_words)
            self.term_of_token = grown(self.term_of_token, self.table.n, keep=n_before)
            self.term_of_token[n_before:self.table.n] = terms

    def _new_tokens(self, n_before):
        """The tokens numbered in the pass's table from ``n_before`` on, lowered."""
        new = self.table.strings(n_before, self.table.n)
        if self.options.lower_tokens:               # tokens with non-ASCII letters raw
            joined = SEP.join(new)
            if not joined.isascii():                # (ASCII ones were lowered by the scan)
                lowered = joined.lower().split(SEP)
                self.exact = self.exact and lowered == new
                new = lowered
        return new

    def _terms(self, new, stop_words):
        """The term ids of the features ``new`` (str, first seen in this chunk), added to
        a growing vocabulary; -1: a stop word, or a feature outside a fixed vocabulary.
        While the pass is ``exact`` (its terms, tokens first seen in a fresh vocabulary,
        are their tokens' bytes: nothing but ASCII letters lowered), new tokens are new
        distinct terms: added without checking."""
        vocabulary = self.vocabulary
        terms = (_fresh_terms(vocabulary, new, self.exact and self.ngrams is None)
                 if self.learn and not stop_words else None)
        if terms is not None:
            return terms
        if self.learn:
            lookup = vocabulary.__getitem__
            return [-1 if stop_words and token in stop_words else lookup(token)
                    for token in new]
        get = vocabulary.get
        return [-1 if stop_words and token in stop_words else get(token, -1)
                for token in new]

    def counting(self, local_table, ids, doc_offsets):
        """``(ids, term_of_id, doc_offsets)`` of a chunk for :func:`_counted`: its tokens'
        term ids, or with ``ngram_range`` its n-grams' (runs in chunk order)."""
        if self.ngrams is None:
            return ids, self.terms_of(local_table), doc_offsets
        return self.ngrams.counting(self, local_table, ids, doc_offsets)

    def fused(self):
        """Whether the fused scan counts this pass's chunks on one thread: the word pass
        without n-grams (a subclass for another analyzer tokenizes its own way)."""
        return (self.ngrams is None and type(self).local is _Pass.local
                and type(self).counting is _Pass.counting)

    def python_chunks(self, start, docs):
        """The chunk counted by the Python path (a chunk the compiled pass refuses)."""
        self.exact = False              # the Python analyzer adds terms of its own
        return list(count_chunks(docs, self.vocabulary, learn=self.learn, analyze=self.analyze,
                                 chunk_tokens=1 << 62, start=start))


class _Ngrams:
    """The n-gram state of a pass: the word id of each token of the pass's table (one id
    per distinct lowered token, -1 a stop word), the words' strings, and the table of
    n-grams (keys: their word ids' bytes) with the term of each."""

    def __init__(self, options):
        self.ngram_range = tuple(options.ngram_range)
        self.word_of_token = np.empty(1024, np.int64)
        self.word_ids = {}
        self.words = np.empty(1024, object)
        self.table = TokenTable()
        self.term_of_ngram = np.empty(1024, np.int64)

    def _word_of_tokens(self, state, local_table):
        """The word id of each distinct token of a chunk's table."""
        n_before = state.table.n
        ids = state.table.add_table(local_table)
        if state.table.n > n_before:
            stop_words = state.options.stop_words
            word_ids = self.word_ids
            n_words = len(word_ids)
            words, added = [], []
            for token in state._new_tokens(n_before):
                if stop_words and token in stop_words:
                    words.append(-1)
                    continue
                w = word_ids.get(token)
                if w is None:
                    w = word_ids[token] = len(word_ids)
                    added.append(token)
                words.append(w)
            if added:
                self.words = grown(self.words, len(word_ids), keep=n_words)
                self.words[n_words:len(word_ids)] = added
            self.word_of_token = grown(self.word_of_token, state.table.n, keep=n_before)
            self.word_of_token[n_before:state.table.n] = words
        return self.word_of_token[ids]

    def counting(self, state, local_table, ids, doc_offsets):
        """``(ids, term_of_id, doc_offsets)`` of the chunk's n-grams: ids in the n-gram
        table, the new n-grams' terms looked up (made str once each)."""
        words = self._word_of_tokens(state, local_table)[ids]
        buffer, starts, ends, ngram_offsets = ngram_spans(words, doc_offsets, self.ngram_range)
        n_before = self.table.n
        ngram_ids = self.table.add_spans(buffer, starts, ends)
        if self.table.n > n_before:
            at = first_positions(ngram_ids, n_before, self.table.n)
            new = ngram_strings(self.words, buffer.view(np.int32), starts[at] // 4,
                                (ends[at] - starts[at]) // 4)
            self.term_of_ngram = grown(self.term_of_ngram, self.table.n, keep=n_before)
            self.term_of_ngram[n_before:self.table.n] = state._terms(new, None)
        return ngram_ids, self.term_of_ngram, ngram_offsets


def _fresh_terms(vocabulary, new, distinct=False):
    """The ids of the tokens ``new`` added to the growing ``vocabulary`` at once when none
    is in it yet and they are distinct (the usual case: a new token is a new term; known
    when ``distinct``), else None (nothing added: each is looked up in turn)."""
    if not distinct and (len(dict.fromkeys(new)) != len(new)
                         or not vocabulary.keys().isdisjoint(new)):
        return None
    n = len(vocabulary)
    vocabulary.update(zip(new, range(n, n + len(new))))
    return np.arange(n, n + len(new))


def _counted(start, ids, term_of_id, doc_offsets, at=None, sort=True):
    if at is None:
        at = np.full(len(term_of_id), -1, np.intc)
    indices, counts, row_nnz = _rows(ids, term_of_id, doc_offsets, at, sort)
    return [CountChunk(start, indices, counts, row_nnz, sort)]


def text_pass_chunks(docs, vocabulary, *, learn, options, analyze, working_memory=None,
                     n_jobs=None, start=0):
    """Count the decoded documents ``docs`` a chunk at a time, as :func:`count_chunks` does.

    Parameters
    ----------
    docs : iterable of str
        Decoded documents, consumed once.
    vocabulary : mapping of str to int
        A growing vocabulary with ``learn=True`` (new terms are added), else a fixed one.
    learn : bool
    options : TextPass
    analyze : callable
        The Python analyzer with the same options, for a chunk the pass refuses.
    working_memory : float or None, default=None
        MiB of temporary memory per chunk and thread.
    n_jobs : int or None, default=None
        Threads (joblib's meaning: None is 1, -1 every core); the output does not depend
        on it.
    start : int, default=0
        Index of the first document.

    Yields
    ------
    chunk : CountChunk
    """
    # another analyzer's options (character n-grams, positions) bring their own state
    state = getattr(options, "state", _Pass)(vocabulary, learn, options, analyze, start)
    n_jobs = effective_n_jobs(n_jobs)
    limit = state.chunk_chars(working_memory)
    if n_jobs > 1:             # chunks small enough for every thread to get some
        limit = min(limit, THREAD_CHUNK_CHARS)
    chunks = document_chunks(docs, limit, start=start)
    if n_jobs == 1 and state.fused():
        for first, chunk in chunks:
            rows = state.numbered(first, chunk)
            del chunk              # one chunk's temporaries alive at a time
            yield from rows
            del rows
        return
    if n_jobs == 1:
        for first, chunk in chunks:
            found = table = ids = doc_offsets = None
            found = state.local(chunk)
            if found is None:
                rows = state.python_chunks(first, chunk)
            else:
                table, ids, doc_offsets = found
                rows = _counted(first, *state.counting(table, ids, doc_offsets))
            # one chunk's temporaries alive at a time: none are kept while the next is read
            del chunk, found, table, ids, doc_offsets
            yield from rows
            del rows
        return
    yield from _threaded(state, chunks, n_jobs)


def _threaded(state, chunks, n_jobs):
    """:func:`text_pass_chunks` on ``n_jobs`` threads, results in chunk order.

    A thread finds and numbers a chunk's tokens in a table of the chunk's own (the fused
    scan for the word pass); in chunk order, the main thread numbers the chunk's distinct
    tokens in the pass's table (vocabulary-sized work: its new tokens get their terms);
    a thread then counts the chunk's rows through the term of each of its tokens."""
    from concurrent.futures import Future, ThreadPoolExecutor

    fused = state.fused()
    local = state.local_fused if fused else state.local
    sort = not (fused and state.learn)     # a learning pass sorts its columns at the end
    depth = 2 * n_jobs
    with ThreadPoolExecutor(n_jobs) as pool:
        tokenized, counted = deque(), deque()

        def advance():
            first, chunk, future = tokenized.popleft()
            found = future.result()
            if found is None:
                done = Future()
                done.set_result(state.python_chunks(first, chunk))
                counted.append(done)
                return
            table, ids, doc_offsets = found
            counted.append(pool.submit(_counted, first,
                                       *state.counting(table, ids, doc_offsets), sort=sort))

        for first, chunk in chunks:
            tokenized.append((first, chunk, pool.submit(local, chunk)))
            while len(tokenized) > depth:
                advance()
            while counted and (len(counted) > depth or counted[0].done()):
                yield from counted.popleft().result()
        while tokenized:
            advance()
        while counted:
            yield from counted.popleft().result()


def term_chunks(docs, vocabulary, *, learn, analyze, chunk_tokens, working_memory=None,
                options=None, n_jobs=None, start=0):
    """The counting chunks of ``docs``: by the compiled pass when ``options`` (a
    :class:`TextPass`) is given, else by :func:`count_chunks` with ``analyze``."""
    if options is None:
        return count_chunks(docs, vocabulary, learn=learn, analyze=analyze,
                            chunk_tokens=chunk_tokens, start=start)
    return text_pass_chunks(docs, vocabulary, learn=learn, options=options, analyze=analyze,
                            working_memory=working_memory, n_jobs=n_jobs, start=start)
