"""Term-weighting schemes on sparse count matrices: scikit-learn idf, SMART, BM25, log-entropy.

Free functions on CSR matrices of float counts; every per-entry operation is one numpy
expression over ``X.data`` (the row of entry k is ``row_of_entries(X)[k]``, the term is
``X.indices[k]``). Global weights are computed from per-term statistics; local weights and
normalisations are applied to a fresh matrix in place.
"""
import numpy as np
from sklearn.preprocessing import normalize

__all__ = [
    "normalize_rows",
    "SMART_LOCAL",
    "SMART_GLOBAL",
    "SMART_NORM",
    "resolve_smartirs",
    "sklearn_idf",
    "smart_local",
    "smart_global",
    "pivoted_normalize",
    "bm25_idf",
    "bm25_weights",
    "log_entropy_from_sums",
    "row_of_entries",
]

SMART_LOCAL = "btnaldL"
SMART_GLOBAL = "xnftp"
SMART_NORM = "xncub"


def resolve_smartirs(smartirs):
    """Validate a SMART triple such as ``"ntc"``; return it with gensim's aliases resolved.

    Examples
    --------
    >>> from nlpfeat.text._vectorizers._schemes import resolve_smartirs
    >>> resolve_smartirs("tfx")
    'nfn'
    """
    if not isinstance(smartirs, str) or len(smartirs) != 3:
        raise ValueError(
            f"smartirs={smartirs!r} is invalid; expected three letters (local, global, "
            f"normalisation) such as 'ntc', 'ltc' or 'Lpc'."
        )
    for letter, allowed, what in zip(smartirs, (SMART_LOCAL, SMART_GLOBAL, SMART_NORM),
                                     ("term frequency", "document frequency", "normalisation")):
        if letter not in allowed:
            raise ValueError(
                f"smartirs={smartirs!r}: {what} letter {letter!r} is not one of {allowed!r}."
            )
    local, glob, norm = smartirs
    return local.replace("t", "n") + glob.replace("x", "n") + norm.replace("x", "n")


def normalize_rows(X, norm, *, copy=False):
    """Scale each row of float CSR ``X`` to unit ``norm`` (``"l1"`` or ``"l2"``), in place
    unless ``copy``.

    All-zero rows stay zero; a matrix without rows or columns is returned as it is (a copy
    with ``copy``), where scikit-learn's ``normalize`` rejects it.
    """
    if X.shape[0] == 0 or X.shape[1] == 0:
        return X.copy() if copy else X
    return normalize(X, norm=norm, copy=copy)


def row_of_entries(X):
    """Row index of every stored entry of CSR ``X``."""
    return np.repeat(np.arange(X.shape[0], dtype=np.intp), np.diff(X.indptr))


def _row_reduce(X, ufunc):
    """``ufunc.reduce`` over each row's stored entries (0 for empty rows)."""
    out = np.zeros(X.shape[0], dtype=X.data.dtype)
    nonempty = np.diff(X.indptr) > 0
    if nonempty.any():
        out[nonempty] = ufunc.reduceat(X.data, X.indptr[:-1][nonempty])
    return out


def sklearn_idf(df, n_documents, smooth_idf=True):
    """scikit-learn's idf: ``ln((n + s) / (df + s)) + 1`` with ``s = 1`` if smoothing.

    Without smoothing a term with ``df = 0`` (possible with a fixed vocabulary) gets
    ``inf``, scikit-learn's value; the caller says so (``TermWeighting`` warns at fit and
    refuses to weigh such a term).
    """
    s = int(smooth_idf)
    df = np.asarray(df, dtype=np.float64)
    with np.errstate(divide="ignore"):    # n / 0 = inf for df = 0: reported by the caller
        return np.log((n_documents + s) / (df + s)) + 1.0


def smart_local(X, letter):
    """Apply SMART local weight ``letter`` (one of ``"bnaldL"``) to ``X.data`` in place.

    ``n``: tf; ``b``: 1; ``l``: 1 + log2 tf; ``d``: 1 + log2(1 + log2 tf);
    ``a``: 0.5 + 0.5 tf / max tf of the row; ``L``: (1 + log2 tf) / (1 + log2 mean tf of the row).
    ``d`` and ``L`` are defined on counts: a stored value below 1 raises ValueError
    (there ``d`` is NaN or -inf, and ``L`` divides by zero or a negative number). ``l`` is
    finite for every positive value, negative below 0.5 (as scikit-learn's
    ``sublinear_tf``), so it takes fractional weights.
    """
    tf = X.data
    if letter in "dL" and tf.size and tf.min() < 1.0:
        raise ValueError(
            f"SMART local weight {letter!r} is defined for counts >= 1 (it takes log2 of "
            f"log2 or of the row's mean count), but X holds {int((tf < 1.0).sum())} stored "
            f"value(s) below 1 (smallest {tf.min():.3g}), e.g. weights from another "
            f"weighting step. Pass raw counts, or use the local weight 'n', 'b', 'a' or 'l'.")
    if letter == "b":
        tf.fill(1.0)
    elif letter == "l":
        tf[:] = 1.0 + np.log2(tf)
    elif letter == "d":
        tf[:] = 1.0 + np.log2(1.0 + np.log2(tf))
    elif letter == "a":
        row_max = _row_reduce(X, np.maximum)
        tf[:] = 0.5 + 0.5 * tf / row_max[row_of_entries(X)]
    elif letter == "L":
        row_mean = _row_reduce(X, np.add) / np.maximum(np.diff(X.indptr), 1)
        tf[:] = (1.0 + np.log2(tf)) / (1.0 + np.log2(row_mean[row_of_entries(X)]))
    return X


def smart_global(df, n_documents, letter):
    """SMART global weight ``letter`` (``"nftp"``) of each term (0 for ``df = 0``).

    ``n``: 1; ``f``: log2(N / df); ``t``: log2((N + 1) / df); ``p``: max(0, log2((N - df) / df)).
    """
    df = np.asarray(df, dtype=np.float64)
    weights = np.zeros_like(df)
    seen = df > 0
    if letter == "n":
        weights[seen] = 1.0
    elif letter == "f":
        weights[seen] = np.log2(n_documents / df[seen])
    elif letter == "t":
        weights[seen] = np.log2((n_documents + 1.0) / df[seen])
    elif letter == "p":
        ratio = (n_documents - df[seen]) / df[seen]
        weights[seen] = np.log2(np.where(ratio > 1.0, ratio, 1.0))
    return weights


def pivoted_normalize(X, old_norm, pivot, slope):
    """Divide each row by ``(1 - slope) * pivot + slope * old_norm`` (Singhal et al., 1996)."""
    X.data /= ((1.0 - slope) * pivot + slope * old_norm)[row_of_entries(X)]
    return X


def bm25_idf(df, n_documents, epsilon=0.25):
    """Okapi BM25 idf ``ln(N - df + 0.5) - ln(df + 0.5)``, as gensim's ``OkapiBM25Model``.

    Negative values are replaced by ``epsilon`` times the mean idf of the terms seen in
    training; terms with ``df = 0`` get 0.
    """
    df = np.asarray(df, dtype=np.float64)
    seen = df > 0
    idf = np.zeros_like(df)
    idf[seen] = np.log(n_documents - df[seen] + 0.5) - np.log(df[seen] + 0.5)
    if seen.any():
        negative = seen & (idf < 0)
        idf[negative] = epsilon * idf[seen].mean()
    return idf


def bm25_weights(X, idf, doc_length, avgdl, k1, b):
    """BM25 weight ``idf * tf (k1 + 1) / (tf + k1 (1 - b + b |d| / avgdl))`` in place.

    ``avgdl = 0`` (training counts all zero, so every idf is 0) gives weights 0.
    """
    tf = X.data
    if avgdl <= 0:
        tf.fill(0.0)
        X.eliminate_zeros()
        return X
    length_norm = (1.0 - b + b * doc_length / avgdl)[row_of_entries(X)]
    tf[:] = idf[X.indices] * (tf * (k1 + 1.0) / (tf + k1 * length_norm))
    return X


def log_entropy_from_sums(totals, xlogx, n_documents):
    """Log-entropy global weight ``1 + sum_j p_tj ln p_tj / ln(N + 1)``, ``p_tj = tf_tj / gf_t``,
    from per-term sums (as gensim's ``LogEntropyModel``), so that streamed corpora need one pass.

    With ``gf_t = sum_j tf_tj`` (``totals``) and ``sum_j tf_tj ln tf_tj`` (``xlogx``),
    ``sum_j p_tj ln p_tj = xlogx_t / gf_t - ln gf_t``. Terms with ``gf_t = 0`` get 0.

    Examples
    --------
    >>> import numpy as np
    >>> from nlpfeat.text._vectorizers._schemes import log_entropy_from_sums
    >>> tf = np.array([[1., 2.], [3., 0.]])           # 2 documents, 2 terms
    >>> xlogx = (tf * np.log(np.where(tf > 0, tf, 1))).sum(axis=0)
    >>> log_entropy_from_sums(tf.sum(axis=0), xlogx, 2).round(4)
    array([0.4881, 1.    ])
    """
    gf = np.asarray(totals, dtype=np.float64)
    seen = gf > 0
    weights = np.zeros_like(gf)
    entropy = xlogx[seen] / gf[seen] - np.log(gf[seen])
    weights[seen] = 1.0 + entropy / np.log(n_documents + 1.0)
    return weights
