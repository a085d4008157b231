"""Association measures of bigrams, trigrams and quadgrams, vectorised over n-grams.

Every measure takes nltk's marginals (``NgramAssocMeasures``) as arrays, one entry per
n-gram, and computes nltk's formula in nltk's order of operations, so that the scores
are bit-equal to nltk's wherever that is possible:

* ``+ - * /`` run in numpy, operand by operand in nltk's order (IEEE-754 rounds them
  the same in numpy and in Python);
* ``log``, ``log2`` and ``x ** y`` on floats go through Python's :mod:`math`, one call
  per n-gram (a C-level ``map``), because numpy's SIMD loops round differently from the
  C library on some CPUs (on AVX-512, ``np.log`` differs from ``math.log`` in the last
  bit for about 1 value in 20,000, and ``np.power(x, 0.5)``, ``np.sqrt`` and
  ``np.square`` differ from the C library's ``pow`` more often);
* nltk adds, multiplies and divides Python ``int`` counts exactly and rounds once (an
  ``int / int`` division is correctly rounded); here they run in float64 while every
  product stays below 2**52 (exact there), and the rare larger products of trigrams and
  quadgrams (several word counts, ``N ** 3``) go through Python's integers.

The bigram contingency table follows nltk's ``BigramAssocMeasures`` (its own
``_expected_values``, ``phi_sq`` and ``chi_sq``); n = 3, 4 use the generic
``NgramAssocMeasures`` formulas with nltk's ``_contingency`` cells.
"""
import math
from itertools import repeat

import numpy as np

__all__ = [
    "MEASURES",
    "ALIASES",
    "MEASURE_NAMES",
    "BIGRAM_ONLY",
    "TABLE_MEASURES",
    "canonical_measure",
    "contingency",
    "assoc_scores",
]

_SMALL = 1e-20          # nltk's guard against log(0) and 0 / 0, kept for exact parity

#: Canonical measure names: nltk's ``BigramAssocMeasures`` (the first eleven, in nltk's
#: names), gensim's ``npmi`` and the raw ``count``. The command line offers these too.
MEASURES = ("pmi", "npmi", "likelihood_ratio", "chi_sq", "student_t", "dice", "count",
            "raw_freq", "mi_like", "poisson_stirling", "jaccard", "phi_sq", "fisher")
#: Short names kept from earlier versions.
ALIASES = {"llr": "likelihood_ratio", "t": "student_t"}
#: Every name a ``measure`` parameter accepts.
MEASURE_NAMES = MEASURES + tuple(ALIASES)
#: Measures nltk defines for bigrams only (``npmi`` is gensim's bigram scorer).
BIGRAM_ONLY = frozenset({"npmi", "dice", "phi_sq", "fisher"})
#: Measures computed from the cells of the contingency table; they need every cell >= 0.
TABLE_MEASURES = frozenset({"likelihood_ratio", "chi_sq", "phi_sq", "fisher"})


def canonical_measure(name):
    """The canonical name of a measure (``"llr"`` -> ``"likelihood_ratio"``)."""
    return ALIASES.get(name, name)


def _map(fn, x, *args):
    """``fn`` of the C library, element by element (see the module notes)."""
    return np.fromiter(map(fn, x.tolist(), *(repeat(a) for a in args)), np.float64, len(x))


def _log(x):
    return _map(math.log, x)


def _log2(x):
    return _map(math.log2, x)


def _pow(x, y):
    return _map(math.pow, x, float(y))


def _float_product(factors, shape):
    out = np.ones(shape)
    for f in factors:
        out = out * np.asarray(f, dtype=np.float64)
    return out


def _prod(values):
    return math.prod(values)


def _int_ratio(num, den=()):
    """``prod(num) / prod(den)`` of int arrays and Python ints, rounded as Python rounds
    it: exactly computed integers, one correctly rounded division.

    In float64 while every product is below 2**52 (then exact); the entries beyond go
    through Python's integers, one per entry.
    """
    shape = np.broadcast_shapes(*(np.shape(f) for f in (*num, *den)))
    a, b = _float_product(num, shape), _float_product(den, shape)
    out = a / b
    inexact = (np.abs(a) >= 2.0**52) | (np.abs(b) >= 2.0**52)
    if inexact.any():
        def values(factors):
            return zip(*(np.broadcast_to(f, shape)[inexact].tolist() for f in factors)) \
                if factors else [()] * int(inexact.sum())

        out[inexact] = list(map(_div, map(_prod, values(num)), map(_prod, values(den))))
    return out


def _div(a, b):
    return a / b


def _int_sum(cells):
    """``sum(cells)`` of int arrays (Python's ``sum`` starts from 0; exact in int64)."""
    total = np.zeros_like(cells[0])
    for cell in cells:
        total = total + cell
    return total


def contingency(*marginals):
    """The cells of nltk's contingency table, from its marginals (nltk's ``_contingency``).

    Bigrams: ``(n_ii, (n_ix, n_xi), n_xx)`` -> ``(n_ii, n_oi, n_io, n_oo)``, in floats
    when ``n_ii`` is (nltk divides the window count by ``window_size - 1``). Trigrams and
    quadgrams: 8 and 16 int64 cells, in nltk's order.
    """
    n = len(marginals) - 1
    if n == 2:
        n_ii, (n_ix, n_xi), n_xx = marginals
        n_oi = n_xi - n_ii
        n_io = n_ix - n_ii
        return (n_ii, n_oi, n_io, n_xx - n_ii - n_oi - n_io)
    if n == 3:
        n_iii, (n_iix, n_ixi, n_xii), (n_ixx, n_xix, n_xxi), n_xxx = marginals
        n_oii = n_xii - n_iii
        n_ioi = n_ixi - n_iii
        n_iio = n_iix - n_iii
        n_ooi = n_xxi - n_iii - n_oii - n_ioi
        n_oio = n_xix - n_iii - n_oii - n_iio
        n_ioo = n_ixx - n_iii - n_ioi - n_iio
        n_ooo = n_xxx - n_iii - n_oii - n_ioi - n_iio - n_ooi - n_oio - n_ioo
        return (n_iii, n_oii, n_ioi, n_ooi, n_iio, n_oio, n_ioo, n_ooo)
    if n == 4:
        (n_iiii, (n_iiix, n_iixi, n_ixii, n_xiii),
         (n_iixx, n_ixix, n_ixxi, n_xixi, n_xxii, n_xiix),
         (n_ixxx, n_xixx, n_xxix, n_xxxi), n_xxxx) = marginals
        n_oiii = n_xiii - n_iiii
        n_ioii = n_ixii - n_iiii
        n_iioi = n_iixi - n_iiii
        n_ooii = n_xxii - n_iiii - n_oiii - n_ioii
        n_oioi = n_xixi - n_iiii - n_oiii - n_iioi
        n_iooi = n_ixxi - n_iiii - n_ioii - n_iioi
        n_oooi = n_xxxi - n_iiii - n_oiii - n_ioii - n_iioi - n_ooii - n_iooi - n_oioi
        n_iiio = n_iiix - n_iiii
        n_oiio = n_xiix - n_iiii - n_oiii - n_iiio
        n_ioio = n_ixix - n_iiii - n_ioii - n_iiio
        n_ooio = n_xxix - n_iiii - n_oiii - n_ioii - n_iiio - n_ooii - n_ioio - n_oiio
        n_iioo = n_iixx - n_iiii - n_iioi - n_iiio
        n_oioo = n_xixx - n_iiii - n_oiii - n_iioi - n_iiio - n_oioi - n_oiio - n_iioo
        n_iooo = n_ixxx - n_iiii - n_ioii - n_iioi - n_iiio - n_iooi - n_iioo - n_ioio
        n_oooo = (n_xxxx - n_iiii - n_oiii - n_ioii - n_iioi - n_ooii - n_oioi - n_iooi
                  - n_oooi - n_iiio - n_oiio - n_ioio - n_ooio - n_iioo - n_oioo - n_iooo)
        return (n_iiii, n_oiii, n_ioii, n_ooii, n_iioi, n_oioi, n_iooi, n_oooi,
                n_iiio, n_oiio, n_ioio, n_ooio, n_iioo, n_oioo, n_iooo, n_oooo)
    raise ValueError(f"n-grams of order 2, 3 or 4 have marginals; got order {n}.")


def _expected(cont, n, n_all):
    """nltk's expected cell counts under independence, one array per cell."""
    if n == 2:       # BigramAssocMeasures._expected_values: float cells, their float sum
        n_xx = cont[0] + cont[1] + cont[2] + cont[3]
        return [(cont[i] + cont[i ^ 1]) * (cont[i] + cont[i ^ 2]) / n_xx for i in range(4)]
    # NgramAssocMeasures._expected_values: exact int marginal sums, one rounding
    divisor = n_all ** (n - 1)
    out = []
    for i in range(len(cont)):
        sums = [_int_sum([cont[x] for x in range(2**n) if (x & j) == (i & j)])
                for j in (1 << k for k in range(n))]
        out.append(_int_ratio(sums, (divisor,)))
    return out


def assoc_scores(measure, *marginals):
    """Scores of n-grams from nltk's marginals, vectorised over n-grams.

    Parameters
    ----------
    measure : str
        One of :data:`MEASURE_NAMES`.
    *marginals
        nltk's arguments to a score function, each count an array over n-grams:
        ``n_ii, (n_ix, n_xi), n_xx`` for bigrams (``n_ii`` float64, the window count over
        ``window_size - 1`` as nltk's finder passes it; the word counts int64);
        ``n_iii, (n_iix, n_ixi, n_xii), (n_ixx, n_xix, n_xxi), n_xxx`` for trigrams and
        ``n_iiii, (4 trigram counts), (6 pair counts), (4 word counts), n_xxxx`` for
        quadgrams (int64). The total is a Python int. ``count`` scores the first array.

    Returns
    -------
    scores : ndarray of float64
        nltk's ``BigramAssocMeasures`` / ``TrigramAssocMeasures`` /
        ``QuadgramAssocMeasures`` scores (``pmi`` in bits, ``fisher`` the one-sided
        p-value of ``alternative="less"``); ``npmi`` is gensim's ``npmi_scorer``.

    Notes
    -----
    The table measures (:data:`TABLE_MEASURES`) assume every cell of the contingency
    table is non-negative; callers check that first (see ``Collocations``).

    Examples
    --------
    >>> import numpy as np
    >>> from nlpfeat.text._association._measures import assoc_scores
    >>> n_ii, n_ix, n_xi = np.array([3.0]), np.array([4]), np.array([5])
    >>> assoc_scores("pmi", n_ii, (n_ix, n_xi), 100).round(6)
    array([3.906891])
    """
    measure = canonical_measure(measure)
    n = len(marginals) - 1
    count, n_all = marginals[0], marginals[-1]
    if measure == "count":
        return np.asarray(count, dtype=np.float64).copy()
    if n == 2:
        return _bigram(measure, *marginals)
    if measure in BIGRAM_ONLY:
        raise ValueError(f"measure={measure!r} is defined for bigrams only.")
    words = marginals[-2]
    scale = n_all ** (n - 1)                  # a Python int, as in nltk
    if measure == "raw_freq":
        return count / n_all
    if measure == "student_t":
        return (count - _int_ratio(words, (scale,))) / _pow(count + _SMALL, 0.5)
    if measure == "mi_like":
        return _int_ratio((count, count, count), words)
    if measure == "pmi":
        return _log2(_int_ratio((count, scale))) - _log2(_int_ratio(words))
    if measure == "poisson_stirling":
        expected = _int_ratio(words, (scale,))
        return count * (_log2(count / expected) - 1)
    cont = contingency(*marginals)
    if measure == "jaccard":
        return cont[0] / _int_sum(cont[:-1])
    total = 0.0
    for obs, exp in zip(cont, _expected(cont, n, n_all)):
        if measure == "chi_sq":
            total = total + _pow(obs - exp, 2) / (exp + _SMALL)
        else:     # likelihood_ratio
            total = total + obs * _log(obs / (exp + _SMALL) + _SMALL)
    return total if measure == "chi_sq" else 2 * total


def _bigram(measure, n_ii, n_ix_xi, n_xx):
    """``BigramAssocMeasures``: n_ii float, the word counts int, n_xx a Python int."""
    n_ix, n_xi = n_ix_xi
    n_ii = np.asarray(n_ii, dtype=np.float64)
    if measure == "raw_freq":
        return n_ii / n_xx
    if measure == "student_t":
        return (n_ii - _int_ratio((n_ix, n_xi), (n_xx,))) / _pow(n_ii + _SMALL, 0.5)
    if measure == "mi_like":
        return _pow(n_ii, 3) / _int_ratio((n_ix, n_xi))
    if measure == "pmi":
        return _log2(n_ii * n_xx) - _log2(_int_ratio((n_ix, n_xi)))
    if measure == "poisson_stirling":
        expected = _int_ratio((n_ix, n_xi), (n_xx,))
        return n_ii * (_log2(n_ii / expected) - 1)
    if measure == "dice":
        return 2 * n_ii / (n_ix + n_xi)
    if measure == "npmi":       # gensim's npmi_scorer, natural log
        p_ab = n_ii / float(n_xx)
        return _log(p_ab / ((n_ix / float(n_xx)) * (n_xi / float(n_xx)))) / -_log(p_ab)
    cont = contingency(n_ii, (n_ix, n_xi), n_xx)
    if measure == "jaccard":
        return cont[0] / (cont[0] + cont[1] + cont[2])
    if measure in ("phi_sq", "chi_sq"):
        # nltk's phi_sq unpacks the cells as n_ii, n_io, n_oi, n_oo (names swapped)
        c_ii, c_io, c_oi, c_oo = cont
        phi_sq = _pow(c_ii * c_oo - c_io * c_oi, 2) / (
            (c_ii + c_io) * (c_ii + c_oi) * (c_io + c_oo) * (c_oi + c_oo))
        return phi_sq if measure == "phi_sq" else n_xx * phi_sq
    if measure == "fisher":
        return _fisher_less(cont)
    if measure == "likelihood_ratio":
        total = 0.0
        for obs, exp in zip(cont, _expected(cont, 2, n_xx)):
            total = total + obs * _log(obs / (exp + _SMALL) + _SMALL)
        return 2 * total
    raise ValueError(f"Unknown association measure {measure!r}; expected one of "
                     f"{list(MEASURE_NAMES)}.")


def _fisher_less(cont):
    """scipy's ``fisher_exact([[n_ii, n_oi], [n_io, n_oo]], alternative="less")`` p-value,
    vectorised: the hypergeometric CDF at n_ii. The cells are truncated to integers as
    scipy's ``np.asarray(table, dtype=np.int64)`` does (window counts can be fractional);
    a table with an empty row or column has p-value 1."""
    from scipy.stats import hypergeom

    a, b, c, d = (np.asarray(cell).astype(np.int64) for cell in cont)
    row1, row2, col1 = a + b, c + d, a + c
    degenerate = (row1 == 0) | (row2 == 0) | (col1 == 0) | (b + d == 0)
    pvalue = np.ones(len(a))
    ok = ~degenerate
    if ok.any():
        pvalue[ok] = hypergeom.cdf(a[ok], (row1 + row2)[ok], row1[ok], col1[ok])
    return np.minimum(pvalue, 1.0)
