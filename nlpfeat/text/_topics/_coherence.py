"""Topic coherence: ``u_mass``, ``c_uci``, ``c_npmi`` and ``c_v`` from sparse co-occurrence counts.

A coherence measure scores a topic (its top words) by how often those words occur together
in a reference corpus. Röder et al. (2015) split every measure into four steps, and gensim's
``topic_coherence`` package follows them; here each step is one array operation:

1. *probability estimation* -- a boolean "virtual document" x word matrix ``B`` restricted to
   the topics' words (columns): real documents (boolean document) or every window of
   ``window_size`` consecutive tokens (boolean sliding window). Occurrence counts are the
   column sums, co-occurrence counts the product ``B.T @ B``, never a loop over tokens;
2. *segmentation* -- which word pairs are compared (``one_pre``, ``one_one``, ``one_set``);
3. *confirmation* -- a log-ratio per pair, or the cosine of NPMI context vectors (``c_v``);
4. *aggregation* -- the arithmetic mean over the pairs of a topic.
"""
import warnings
from collections.abc import Iterable

import numpy as np
import scipy.sparse as sp

from nlpfeat._validation import Integral, Interval, StrOptions, check_finite, validate_params
from nlpfeat.text._base._documents import check_not_bag, iter_documents
from nlpfeat.text._counting._pair_tables import token_ids

__all__ = ["coherence_scorer", "coherence_values", "top_word_ids", "topic_coherence"]

#: Added to joint probabilities before the log, as in Röder et al. (2015) and gensim.
EPSILON = 1e-12

#: Sliding-window size used with token lists when ``window_size="auto"`` (gensim's defaults;
#: ``None`` = boolean document).
DEFAULT_WINDOW_SIZE = {"u_mass": None, "c_uci": 10, "c_npmi": 10, "c_v": 110}
#: The coherence measures, the default first.
COHERENCE_MEASURES = ("c_npmi", "u_mass", "c_uci", "c_v")


def _is_matrix(corpus):
    return sp.issparse(corpus) or isinstance(corpus, np.ndarray)


def _topic_ids(topics, vocabulary, n_terms):
    """Topics (words or column ids) -> list of int arrays of column ids.

    Words outside ``vocabulary`` are dropped, with one warning, as gensim's
    ``CoherenceModel`` drops them; a topic left without any word raises.
    """
    if isinstance(topics, np.ndarray) and topics.ndim == 2:
        topics = list(topics)
    if not topics or any(len(t) == 0 for t in topics):
        raise ValueError("topics must be a non-empty list of non-empty lists of top words.")
    out, dropped = [], []
    for k, topic in enumerate(topics):
        if all(isinstance(w, (Integral, np.integer)) for w in topic):
            ids = np.asarray(topic, dtype=np.int64)
            bad = ids[(ids < 0) | (ids >= n_terms)]
            if bad.size:
                raise ValueError(f"Topic word id {int(bad[0])} is outside the {n_terms} "
                                 f"columns of the corpus; pass ids in [0, {n_terms}).")
        else:
            if vocabulary is None:
                raise ValueError("topics given as words need vocabulary= (a dict word -> "
                                 "column or the feature names) to find their columns.")
            known = [w for w in topic if w in vocabulary]
            dropped += [(k, w) for w in topic if w not in vocabulary]
            ids = np.fromiter(map(vocabulary.__getitem__, known), np.int64, len(known))
        out.append(ids)
    _warn_dropped(dropped, "are not in the vocabulary")
    return out


def _warn_dropped(dropped, why):
    """One warning for the (topic index, word) pairs dropped from the topics."""
    if dropped:
        listed = ", ".join(f"{w!r} (topic {k})" for k, w in dropped[:10])
        more = f" and {len(dropped) - 10} more" if len(dropped) > 10 else ""
        warnings.warn(f"{len(dropped)} topic word(s) {why} and were dropped, as gensim's "
                      f"CoherenceModel drops them; the other words are scored: {listed}{more}.",
                      UserWarning, stacklevel=4)


def _check_pairs(local_topics, topics):
    """ValueError if a topic has fewer than two words: coherence scores pairs of words."""
    for k, ids in enumerate(local_topics):
        if len(ids) < 2:
            raise ValueError(
                f"Topic {k} ({list(topics[k])!r}) has {len(ids)} word(s) to score (after "
                f"dropping words outside the vocabulary or the corpus); coherence compares "
                f"pairs of words, so every topic needs at least 2. Give more top words, or "
                f"drop the topic.")


def _words_of(topic, vocabulary):
    """The words of a topic that ``vocabulary`` knows, in order (as ``_topic_ids`` keeps)."""
    return [w for w in topic if w in vocabulary]


def _as_vocabulary(vocabulary):
    if vocabulary is None or isinstance(vocabulary, dict):
        return vocabulary
    return {word: j for j, word in enumerate(vocabulary)}


def _document_matrix(X, relevant):
    """Boolean document x relevant-word matrix (CSR float64) of a count/weight matrix."""
    X = sp.csc_array(X) if sp.issparse(X) else sp.csc_array(np.asarray(X))
    B = X[:, relevant]
    check_finite(B, "corpus")              # NaN != 0 would count as an occurrence
    B = sp.csr_array((B != 0).astype(np.float64))
    return B, X.shape[0]


def _intervals(ids, lengths, window_size, counting):
    """Per relevant token: window of its doc, range [lo, hi] of windows it marks present."""
    n_win = np.maximum(lengths - window_size + 1, 1)          # short/empty doc: one window
    doc_start = np.cumsum(lengths) - lengths
    keep = np.flatnonzero(ids >= 0)
    doc = np.repeat(np.arange(len(lengths)), lengths)[keep]
    pos, word = keep - doc_start[doc], ids[keep]
    order = np.lexsort((pos, word, doc))                      # by doc, word, position
    doc, pos, word = doc[order], pos[order], word[order]
    same = np.zeros(len(pos) + 1, dtype=bool)                 # same[k]: k-1 and k same (doc, word)
    same[1:-1] = (doc[1:] == doc[:-1]) & (word[1:] == word[:-1])
    # Window i covers tokens [i, i + L - 1]; credit it to the word's last occurrence there.
    lo = np.maximum(pos - window_size + 1, 0)
    hi = np.minimum(pos, n_win[doc] - 1)
    nxt = np.append(pos[1:], 0)
    hi = np.where(same[1:], np.minimum(hi, nxt - window_size), hi)
    if counting == "gensim":
        # gensim's accumulator unmarks a word when one of its copies leaves the window, even
        # if another copy is still inside. Window i is then marked only while no copy has
        # left since the last one (P) was added: i <= the first copy in (P - L, P].
        group = np.cumsum(~same[:-1])
        key = group * (int(lengths.max(initial=0)) + 1)
        first = np.searchsorted(key + pos, key + lo)
        hi = np.minimum(hi, pos[first])
    ok = hi >= lo
    offset = np.cumsum(n_win) - n_win
    return offset[doc[ok]] + lo[ok], hi[ok] - lo[ok] + 1, word[ok], int(n_win.sum())


def _window_matrix(ids, lengths, window_size, n_relevant, counting="gensim"):
    """Boolean sliding-window x relevant-word matrix, consecutive equal windows merged.

    Returns ``B`` (CSR, rows = runs of identical windows) and the run lengths, so that the
    window counts are ``w @ B`` and ``B.T @ (w[:, None] * B)``, plus the number of windows.
    """
    start, length, word, n_windows = _intervals(ids, lengths, window_size, counting)
    # The set of present words changes only where an interval starts or ends: runs between
    # consecutive change points share one row.
    bounds = np.unique(np.concatenate([[0, n_windows], start, start + length]))
    first = np.searchsorted(bounds, start)
    n_runs = np.searchsorted(bounds, start + length) - first
    total = int(n_runs.sum())
    rows = np.arange(total) - np.repeat(np.cumsum(n_runs) - n_runs - first, n_runs)
    B = sp.csr_array((np.ones(total), (rows, np.repeat(word, n_runs))),
                     shape=(len(bounds) - 1, n_relevant))
    return B, np.diff(bounds).astype(np.float64), n_windows


def _counts(corpus, topic_ids, vocabulary, window_size, counting):
    """Occurrence vector, co-occurrence matrix, number of (virtual) documents, local topics."""
    relevant, local = np.unique(np.concatenate(topic_ids), return_inverse=True)
    local_topics = np.split(local, np.cumsum([len(t) for t in topic_ids])[:-1])
    if _is_matrix(corpus):
        B, n_docs = _document_matrix(corpus, relevant)
        weights = np.ones(B.shape[0])
    else:
        wanted = set(relevant.tolist())
        column = {j: w for w, j in vocabulary.items() if j in wanted}
        lookup = {column[j]: k for k, j in enumerate(relevant.tolist())}
        ids, lengths = token_ids(corpus, lookup)
        if window_size is None:                           # boolean document
            doc = np.repeat(np.arange(len(lengths)), lengths)
            keep = ids >= 0
            B = sp.csr_array((np.ones(int(keep.sum())), (doc[keep], ids[keep])),
                             shape=(len(lengths), len(relevant)))
            B.sum_duplicates()
            B.data[:] = 1.0
            weights, n_docs = np.ones(B.shape[0]), len(lengths)
        else:
            B, weights, n_docs = _window_matrix(ids, lengths, window_size, len(relevant),
                                                counting)
    occurrences = weights @ B                                 # (n_relevant,)
    joint = (B.T @ sp.csr_array(B.multiply(weights[:, None]))).toarray()
    return occurrences, joint, float(n_docs), local_topics


def _log_ratio(p_joint, p_a, p_b):
    """log((p_ab + eps) / (p_a p_b)), 0 where a marginal is 0 (the word never occurs)."""
    denom = p_a * p_b
    out = np.zeros(np.broadcast(p_joint, denom).shape)
    np.log((p_joint + EPSILON) / np.where(denom > 0, denom, 1.0), out=out, where=denom > 0)
    return out


def _npmi(p_joint, p_a, p_b):
    return _log_ratio(p_joint, p_a, p_b) / -np.log(p_joint + EPSILON)


def _confirm(measure, p, p_joint):
    """Coherence of one topic from its marginals ``p`` (n,) and joints ``p_joint`` (n, n)."""
    n = len(p)                               # n >= 2 (checked by _check_pairs)
    if measure == "u_mass":                  # one_pre: (w_i, w_j), j < i; log P(w_i | w_j)
        i, j = np.tril_indices(n, k=-1)
        return _log_ratio(p_joint[i, j], 1.0, p[j]).mean()
    if measure in ("c_uci", "c_npmi"):       # one_one: every ordered pair i != j
        i, j = np.nonzero(~np.eye(n, dtype=bool))
        f = _npmi if measure == "c_npmi" else _log_ratio
        return f(p_joint[i, j], p[i], p[j]).mean()
    # c_v: one_set; context vectors of NPMI with every topic word, cosine with their sum
    m = _npmi(p_joint, p[:, None], p[None, :])
    whole = m.sum(axis=0)
    norms = np.linalg.norm(m, axis=1) * np.linalg.norm(whole)
    cos = np.divide(m @ whole, norms, out=np.zeros(n), where=norms > 0)
    return cos.mean()


@validate_params(
    {
        "topics": ["array-like"],
        "corpus": ["array-like", "sparse matrix", Iterable],
        "measure": [StrOptions(set(DEFAULT_WINDOW_SIZE))],
        "vocabulary": [dict, "array-like", None],
        "window_size": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"}), None],
        "window_counting": [StrOptions({"gensim", "exact"})],
    },
    prefer_skip_nested_validation=True,
)
def topic_coherence(topics, corpus, *, measure="c_npmi", vocabulary=None, window_size="auto",
                    window_counting="gensim"):
    """Coherence of each topic on a reference corpus (gensim-compatible, vectorised).

    Parameters
    ----------
    topics : list of list of str or int
        The top words of each topic, best first, as words (then ``vocabulary`` maps them to
        columns) or as column ids of ``corpus``; at least two per topic.
    corpus : {array-like, sparse matrix} of shape (n_documents, n_terms) or list of list of str
        The reference corpus: a count (or any non-negative weight) matrix, used as boolean
        documents, or token lists, which also allow sliding windows.
    measure : {"c_npmi", "c_uci", "u_mass", "c_v"}, default="c_npmi"
        Every measure is *higher is better*:

        - ``"u_mass"``: mean log P(w_i | w_j) + eps over ordered pairs j < i (Mimno et al.,
          2011); <= 0 in practice, closer to 0 is better;
        - ``"c_uci"``: mean PMI log (P(w_i, w_j) + eps) / (P(w_i) P(w_j)) over pairs
          (Newman et al., 2010); unbounded, higher is better;
        - ``"c_npmi"``: mean normalised PMI, PMI / -log(P(w_i, w_j) + eps) (Bouma, 2009;
          Aletras and Stevenson, 2013); in [-1, 1], higher is better;
        - ``"c_v"``: mean cosine between each word's vector of NPMIs with the topic's words
          and the sum of those vectors (Röder et al., 2015); about [0, 1], higher is better.
          Beware: words that never co-occur all have NPMI vectors near -1, hence alike,
          so a set of unrelated rare words can score high (on the Lee corpus random word
          sets beat LDA topics); prefer ``c_npmi`` for model selection.
    vocabulary : dict or array-like of str, default=None
        Word -> column of ``corpus`` (a fitted vectorizer's ``vocabulary_``) or the column
        names (``get_feature_names_out()``). Needed for topics given as words.
    window_size : int, "auto" or None, default="auto"
        Size of the boolean sliding window over token lists; ``None``: each document is one
        window (boolean document). ``"auto"``: gensim's default per measure with token lists
        (110 for ``c_v``, 10 for ``c_uci`` / ``c_npmi``, boolean document for ``u_mass``)
        and boolean documents with a matrix, which has no word order.
    window_counting : {"gensim", "exact"}, default="gensim"
        ``"gensim"`` reproduces gensim 4's ``WordOccurrenceAccumulator``, which, sliding the
        window one token, unmarks the token that left even when another copy of it is still
        inside; ``"exact"`` marks a word present in every window that contains it.

    Returns
    -------
    coherence : ndarray of shape (n_topics,)
        One value per topic; ``coherence.mean()`` is gensim's ``get_coherence()``.

    Notes
    -----
    With ``N`` (virtual) documents, ``P(w) = D(w) / N`` and ``P(w_i, w_j) = D(w_i, w_j) / N``
    from document (or window) frequencies, ``eps = 1e-12``. Topic words outside
    ``vocabulary`` (or, for token lists without ``vocabulary``, absent from the corpus) are
    dropped with a warning and the others scored, as gensim's ``CoherenceModel`` does. A
    pair involving a vocabulary word that never occurs in the corpus contributes 0 (gensim
    does so for ``u_mass`` and returns inf/NaN for the others). A topic left with fewer
    than two words has no pair to score and raises a ValueError (gensim returns NaN).

    References
    ----------
    .. [1] Röder, M., Both, A. and Hinneburg, A. (2015). Exploring the space of topic
       coherence measures. WSDM.
    .. [2] Mimno, D. et al. (2011). Optimizing semantic coherence in topic models. EMNLP.

    Examples
    --------
    >>> from nlpfeat.text import topic_coherence
    >>> texts = [["cat", "dog", "pet"], ["dog", "pet", "vet"], ["stock", "market", "bank"],
    ...          ["bank", "market", "loan"]]
    >>> topics = [["dog", "pet"], ["bank", "market"], ["dog", "market"]]
    >>> topic_coherence(topics, texts, measure="c_npmi", window_size=None).round(3)
    array([ 1.  ,  1.  , -0.95])
    """
    return coherence_values(topics, corpus, measure=measure, vocabulary=vocabulary,
                            window_size=window_size, window_counting=window_counting)


def coherence_values(topics, corpus, *, measure="c_npmi", vocabulary=None, window_size="auto",
                     window_counting="gensim"):
    """:func:`topic_coherence` without its parameter validation (for trusted callers)."""
    topic_list = list(topics) if not isinstance(topics, np.ndarray) else topics
    vocabulary = _as_vocabulary(vocabulary)
    if _is_matrix(corpus):
        if isinstance(window_size, Integral):
            raise ValueError("Sliding windows need word order: pass the corpus as token "
                             "lists, or window_size=None for boolean documents.")
        n_terms, window = corpus.shape[1], None
    else:
        # the token-list rule (and no dask bag: it would be computed here)
        corpus = list(iter_documents(corpus, input="tokens", caller="topic_coherence"))
        from_topics = vocabulary is None           # then topic words missing from the corpus
        if from_topics:                            # are dropped once counted
            vocabulary = {w: j for j, w in enumerate(
                dict.fromkeys(w for topic in topic_list for w in topic))}
        n_terms = len(vocabulary)
        window = DEFAULT_WINDOW_SIZE[measure] if window_size == "auto" else window_size
        if measure == "u_mass":
            window = None                     # u_mass is defined on boolean documents
    topic_ids = _topic_ids(topic_list, vocabulary, n_terms)
    if any(len(ids) == 0 for ids in topic_ids):
        k = next(k for k, ids in enumerate(topic_ids) if len(ids) == 0)
        raise ValueError(f"No word of topic {k} ({list(topic_list[k])!r}) is in the "
                         f"vocabulary; pass topics of words of the corpus (or column ids).")
    if (corpus.shape[0] if _is_matrix(corpus) else len(corpus)) == 0:
        raise ValueError("The reference corpus has no documents; pass at least one.")
    occ, joint, n_docs, local_topics = _counts(corpus, topic_ids, vocabulary, window,
                                               window_counting)
    if not _is_matrix(corpus) and from_topics and not occ.all():
        # gensim builds the dictionary from the texts: a word they lack is unknown
        absent = occ == 0
        _warn_dropped([(k, w) for k, (topic, t) in enumerate(zip(topic_list, local_topics))
                       for w, j in zip(_words_of(topic, vocabulary), t) if absent[j]],
                      "do not occur in the corpus")
        local_topics = [t[~absent[t]] for t in local_topics]
    _check_pairs(local_topics, topic_list)
    p, p_joint = occ / n_docs, joint / n_docs
    with np.errstate(divide="ignore", invalid="ignore"):
        values = [_confirm(measure, p[t], p_joint[np.ix_(t, t)]) for t in local_topics]
    return np.asarray(values, dtype=np.float64)


def top_word_ids(components, topn):
    """Column ids of the ``topn`` largest ``|components|`` of each row, best first.

    Absolute values, so that an LSI topic's strongly negative words count too (as gensim's
    ``LsiModel.show_topic`` does); LDA and NMF weights are non-negative anyway. Ties go
    to the lower column, exactly as a stable sort of the whole row would order them; only
    the entries at or above each row's ``topn``-th largest value are sorted.
    """
    keys = -np.abs(np.asarray(components, dtype=np.float64))
    n_rows, n_cols = keys.shape
    topn = min(topn, n_cols)
    if topn == 0:
        return np.zeros((n_rows, 0), dtype=np.intp)
    if 4 * topn >= n_cols or np.isnan(keys).any():
        return np.argsort(keys, axis=1, kind="stable")[:, :topn]
    kth = np.partition(keys, topn - 1, axis=1)[:, topn - 1:topn]
    rows, cols = np.nonzero(keys <= kth)          # every row: >= topn, ties included
    order = np.lexsort((cols, keys[rows, cols], rows))
    starts = np.searchsorted(rows[order], np.arange(n_rows))
    return cols[order][starts[:, None] + np.arange(topn)]


class _CoherenceScorer:
    """Picklable ``scorer(estimator, X, y=None)`` -> mean topic coherence (see coherence_scorer)."""

    def __init__(self, measure, topn, window_size):
        self.measure, self.topn, self.window_size = measure, topn, window_size

    def __repr__(self):
        return (f"coherence_scorer(measure={self.measure!r}, topn={self.topn}, "
                f"window_size={self.window_size!r})")

    def __call__(self, estimator, X, y=None):
        check_not_bag(X, "coherence_scorer")
        model, Xt = estimator, X
        if hasattr(estimator, "steps"):                       # Pipeline: transform X up to the model
            model = estimator.steps[-1][1]
            first = estimator.steps[0][1]
            if (isinstance(self.window_size, Integral) and len(estimator.steps) == 2
                    and hasattr(first, "build_analyzer") and hasattr(model, "components_")):
                analyze = first.build_analyzer()              # the vectorizer's features, in order
                return float(topic_coherence(
                    top_word_ids(model.components_, self.topn), [analyze(doc) for doc in X],
                    measure=self.measure, vocabulary=first.vocabulary_,
                    window_size=self.window_size).mean())
            Xt = estimator[:-1].transform(X)
        if not hasattr(model, "components_"):
            raise TypeError(f"coherence_scorer needs a topic model with components_ "
                            f"(LatentDirichletAllocation, NMF, TruncatedSVD, TopicModel); got "
                            f"{type(model).__name__}.")
        ids = top_word_ids(model.components_, self.topn)
        if hasattr(Xt, "toarray") or isinstance(Xt, np.ndarray):
            return float(topic_coherence(ids, Xt, measure=self.measure, window_size=None).mean())
        vocabulary = getattr(model, "vocabulary_", None)
        return float(topic_coherence(ids, Xt, measure=self.measure, vocabulary=vocabulary,
                                     window_size=self.window_size).mean())


@validate_params(
    {
        "measure": [StrOptions(set(DEFAULT_WINDOW_SIZE))],
        "topn": [Interval(Integral, 2, None, closed="left")],
        "window_size": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"}), None],
    },
    prefer_skip_nested_validation=True,
)
def coherence_scorer(measure="c_npmi", *, topn=10, window_size="auto"):
    """A scorer for ``GridSearchCV(scoring=...)`` that ranks topic models by coherence.

    Works with any estimator that has ``components_`` (scikit-learn's
    ``LatentDirichletAllocation``, ``NMF``, ``TruncatedSVD``, nlpfeat's ``TopicModel``),
    alone or as the last step of a ``Pipeline`` (e.g. after ``BagOfWords``): the held-out
    documents are transformed by the steps before the model, and the coherence of the
    model's topics is measured on the resulting document-term matrix, whose columns are the
    topic words' columns, so no word list is needed.

    Parameters
    ----------
    measure : {"c_npmi", "c_uci", "u_mass", "c_v"}, default="c_npmi"
        See :func:`topic_coherence`. Every measure is higher-is-better, so the scorer is too.
    topn : int, default=10
        Number of top words per topic.
    window_size : int, "auto" or None, default="auto"
        ``"auto"`` or ``None``: document-term matrices are scored on boolean documents
        (token lists given to a ``TopicModel`` on gensim's default windows). An int: sliding
        windows of that many tokens, also for a ``Pipeline(vectorizer, model)`` whose
        vectorizer has ``build_analyzer`` (``BagOfWords``, scikit-learn's vectorizers): the
        held-out documents are re-analysed into their features, in order.

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y=None)`` -> mean coherence over the topics.

    Examples
    --------
    >>> from sklearn.decomposition import LatentDirichletAllocation
    >>> from sklearn.model_selection import GridSearchCV
    >>> from nlpfeat.text import coherence_scorer
    >>> X = np.array([[3, 2, 0, 0], [2, 3, 0, 1], [0, 0, 4, 2], [0, 1, 3, 3]] * 3)
    >>> search = GridSearchCV(LatentDirichletAllocation(random_state=0),
    ...                       {"n_components": [1, 2]}, cv=2,
    ...                       scoring=coherence_scorer("u_mass", topn=2)).fit(X)
    >>> search.best_params_
    {'n_components': 2}
    """
    return _CoherenceScorer(measure, topn, window_size)
