"""Pointwise mutual information of a word-context count matrix, sparse in, sparse out."""
import numpy as np
import scipy.sparse as sp
from scipy.special import logsumexp

from nlpfeat._validation import (Interval, Real, StrOptions, check_array, check_finite,
                                 validate_params)

__all__ = ["pmi"]

#: Stored entries per block of the PMI computation: its temporaries (a few float64 and
#: int64 arrays of this length) stay near 50 MiB, not a multiple of the matrix.
_BLOCK = 1 << 20


def _check_counts(counts):
    """Counts -> CSR float64 with explicit zeros dropped; ValueError on negatives/NaN."""
    counts = check_array(counts, accept_sparse="csr", dtype=np.float64, copy=True,
                         ensure_all_finite=False, input_name="counts")
    counts = sp.csr_matrix(counts)
    check_finite(counts, name="counts")
    if counts.data.size and counts.data.min() < 0:
        raise ValueError(
            f"counts must be non-negative co-occurrence counts; found a minimum of "
            f"{counts.data.min():g}. Pass the output of cooccurrence(), not a PMI matrix."
        )
    counts.eliminate_zeros()
    counts.sum_duplicates()
    if counts.nnz == 0:
        raise ValueError("counts is all zero: there is no co-occurrence to measure. "
                         "Count a larger corpus or a wider window.")
    return counts


def _log_sum(data, indptr):
    """log of the sum of each segment of non-negative ``data`` (-inf for an empty one).

    Each segment is scaled by its largest entry first, so sums of counts near the float64
    maximum do not overflow: log sum x = log max x + log sum (x / max x).
    """
    nonempty = np.diff(indptr) > 0
    out = np.full(len(indptr) - 1, -np.inf)
    if not nonempty.any():
        return out
    starts = indptr[:-1][nonempty]
    top = np.maximum.reduceat(data, starts)
    scaled = data / np.repeat(top, np.diff(np.append(starts, len(data))))
    out[nonempty] = np.log(top) + np.log(np.add.reduceat(scaled, starts))
    return out


def _log_sums(counts):
    """log row sums, log column sums and log total of a CSR matrix without explicit zeros.

    Plain sums when the total is finite (the common case); sums scaled by each segment's
    largest count when it overflows (counts near the float64 maximum).
    """
    with np.errstate(over="ignore"):
        total = counts.data.sum()
    if np.isfinite(total):
        with np.errstate(divide="ignore"):                  # log 0 = -inf: an empty column
            return (np.log(np.asarray(counts.sum(axis=1)).ravel()),
                    np.log(np.asarray(counts.sum(axis=0)).ravel()), np.log(total))
    by_col = counts.tocsc()
    by_col.sort_indices()
    return (_log_sum(counts.data, counts.indptr), _log_sum(by_col.data, by_col.indptr),
            _log_sum(counts.data, np.array([0, len(counts.data)]))[0])


@validate_params(
    {
        "counts": ["array-like", "sparse matrix"],
        "kind": [StrOptions({"pmi", "ppmi", "npmi", "sppmi"})],
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "shift": [Interval(Real, 1, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def pmi(counts, kind="pmi", *, alpha=0.75, shift=1):
    """Pointwise mutual information of word-context counts, with smoothed contexts.

    Parameters
    ----------
    counts : {array-like, sparse matrix} of shape (n_words, n_contexts)
        Non-negative co-occurrence counts, e.g. from :func:`cooccurrence`.
    kind : {"pmi", "ppmi", "npmi", "sppmi"}, default="pmi"
        ``pmi``: the log ratio on the observed pairs; ``ppmi``: ``max(pmi, 0)``;
        ``npmi``: ``pmi / -log P(w, c)``, in [-1, 1] when ``alpha=1``;
        ``sppmi``: shifted PPMI ``max(pmi - log(shift), 0)``.
    alpha : float, default=0.75
        Context-distribution smoothing exponent (``alpha=1`` is plain PMI). Must be > 0.
    shift : float, default=1
        The ``k`` of shifted PPMI (word2vec's number of negative samples); only
        ``kind="sppmi"`` uses it, other kinds require the default 1.

    Returns
    -------
    scores : scipy.sparse.csr_matrix of float64, shape (n_words, n_contexts)
        Entries only where ``counts > 0`` (PMI is ``-inf`` on unobserved pairs, which stay
        implicit); ``ppmi``/``sppmi`` also drop the non-positive entries, so they stay sparse.
        For ``pmi``/``npmi`` a stored entry may be exactly 0 (independent pair).

    Notes
    -----
    With ``N = sum(counts)``, ``n_w`` the row sums and ``n_c`` the column sums,

    .. math:: \\mathrm{PMI}_\\alpha(w, c) = \\log \\frac{n_{wc} \\sum_{c'} n_{c'}^\\alpha}
              {n_w \\, n_c^\\alpha}
              = \\log \\frac{P(w, c)}{P(w) P_\\alpha(c)},
              \\quad P_\\alpha(c) = \\frac{n_c^\\alpha}{\\sum_{c'} n_{c'}^\\alpha}.

    Raising context counts to ``alpha < 1`` gives rare contexts more probability and so
    lowers PMI's bias towards rare words; ``alpha = 0.75`` follows word2vec's negative
    sampling distribution. Shifting by ``log k`` mirrors skip-gram with ``k`` negative
    samples, which factorises the shifted PMI matrix (Levy and Goldberg, 2014).
    Natural logarithms throughout.

    References
    ----------
    .. [1] O. Levy, Y. Goldberg and I. Dagan, "Improving Distributional Similarity with
       Lessons Learned from Word Embeddings", TACL 3, 2015.
    .. [2] G. Bouma, "Normalized (Pointwise) Mutual Information in Collocation
       Extraction", GSCL, 2009.

    Examples
    --------
    >>> import numpy as np
    >>> from nlpfeat.text import pmi
    >>> counts = np.array([[4, 1], [1, 4]])
    >>> pmi(counts, alpha=1.0).toarray().round(3)
    array([[ 0.47 , -0.916],
           [-0.916,  0.47 ]])
    >>> pmi(counts, "ppmi", alpha=1.0).nnz
    2
    """
    if kind != "sppmi" and shift != 1:
        raise ValueError(f"shift={shift} is only used by kind='sppmi' (got kind={kind!r}); "
                         f"pass kind='sppmi' to shift PPMI by log(shift), or leave shift=1.")
    counts = _check_counts(counts)                      # a copy: its data is overwritten
    log_rows, log_cols, log_total = _log_sums(counts)
    # log sum_c n_c^alpha - alpha log n_c, as alpha (M - log n_c) + log sum_c' exp(alpha
    # (log n_c' - M)) with M the largest log n_c: no power overflows however large alpha
    seen = np.isfinite(log_cols)                        # contexts with a count
    top = log_cols[seen].max()
    with np.errstate(over="ignore", invalid="ignore"):     # a non-finite result: see below
        log_norm = logsumexp(alpha * (log_cols[seen] - top))
    data, indptr = counts.data, counts.indptr
    for start in range(0, len(data), _BLOCK):           # temporaries of one block at a time
        stop = min(start + _BLOCK, len(data))
        rows = np.searchsorted(indptr, np.arange(start, stop), side="right") - 1
        with np.errstate(over="ignore", invalid="ignore"):     # checked just below
            log_z = alpha * (top - log_cols[counts.indices[start:stop]]) + log_norm
            block = np.log(data[start:stop]) - log_rows[rows] + log_z
        if not np.isfinite(block).all():
            raise ValueError(
                f"PMI overflows float64 with alpha={alpha}: the smoothed context "
                f"probabilities n_c^alpha / sum n_c'^alpha underflow to 0. Use a moderate "
                f"alpha (0.75, the word2vec value, or 1 for plain PMI).")
        if kind == "npmi":
            neg_log_joint = log_total - np.log(data[start:stop])   # -log P(w, c)
            with np.errstate(divide="ignore", invalid="ignore"):
                block = np.where(neg_log_joint > 0, block / neg_log_joint, 1.0)
        elif kind in ("ppmi", "sppmi"):
            block = np.maximum(block - np.log(shift), 0.0)
        data[start:stop] = block
    if kind in ("ppmi", "sppmi"):
        counts.eliminate_zeros()
    return counts
