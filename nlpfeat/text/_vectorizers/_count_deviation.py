"""Count deviation: how far each frequent word's count in a document is from its expectation.

TF-IDF rewards what is present. ``CountDeviation`` also scores what is missing: a document
of ``n`` tokens is expected to hold ``n * p_w`` occurrences of a word of corpus rate
``p_w``; a frequent word that does not occur gets a negative score, a word too rare to be
expected in a document of that length gets a score near zero, whether it occurs or not.
"""
import dataclasses
from typing import Any

import numpy as np
from scipy.special import xlogy
from sklearn.base import BaseEstimator, TransformerMixin

from nlpfeat._docstrings import fill_doc
from nlpfeat._params import estimator_params
from nlpfeat._validation import Integral, Interval, StrOptions, check_is_fitted, fit_context
from nlpfeat.text._base._analyzer import TEXT_PARAMETER_CONSTRAINTS
from nlpfeat.text._base._documents import OnePassFitMixin, check_corpus_nonempty
from nlpfeat.text._base._options import NgramOptions
from nlpfeat.text._counting._vocabulary import (
    count_matrix,
    prune_vocabulary,
    terms_in_column_order,
)

__all__ = ["CountDeviation", "count_deviation"]

STATISTICS = ("poisson", "binomial", "g")


def count_deviation(counts, lengths, rates, statistic="poisson"):
    """Signed deviation of observed counts from ``lengths * rates``.

    Parameters
    ----------
    counts : ndarray of shape (n_documents, n_words)
        Observed count ``x`` of each word in each document.
    lengths : ndarray of shape (n_documents,)
        Number of tokens ``n`` of each document.
    rates : ndarray of shape (n_words,)
        Corpus rate ``p`` of each word, in (0, 1].
    statistic : {"poisson", "binomial", "g"}, default="poisson"
        ``"poisson"``: ``(x - E) / sqrt(E)``; ``"binomial"``: ``(x - E) / sqrt(E (1 - p))``;
        ``"g"``: ``sign(x - E) * G`` with the binomial log-likelihood ratio
        ``G = 2 [x ln(x / E) + (n - x) ln((n - x) / (n - E))]``, where ``E = n p``.

    Returns
    -------
    deviation : ndarray of shape (n_documents, n_words), float64
        Zero wherever the variance ``E (1 - p)`` (``E`` for ``"poisson"``) is zero: in a
        document of length 0, and for a word of rate 1 under ``"binomial"``/``"g"``.

    Examples
    --------
    >>> import numpy as np
    >>> from nlpfeat.text._vectorizers._count_deviation import count_deviation
    >>> counts, lengths, rates = np.array([[0.0, 3.0]]), np.array([100.0]), np.array([0.04, 0.01])
    >>> count_deviation(counts, lengths, rates).round(3)       # E = 4 and 1
    array([[-2.,  2.]])
    """
    x = np.asarray(counts, dtype=np.float64)
    n = np.asarray(lengths, dtype=np.float64)[:, None]
    p = np.asarray(rates, dtype=np.float64)[None, :]
    expected = n * p                                        # (n_documents, n_words)
    variance = expected if statistic == "poisson" else expected * (1.0 - p)
    out = np.zeros(np.broadcast_shapes(x.shape, expected.shape), dtype=np.float64)
    ok = np.broadcast_to(variance > 0, out.shape)
    diff = (x - expected)[ok]
    if statistic == "g":
        x_ok, e_ok = x[ok], np.broadcast_to(expected, out.shape)[ok]
        rest = np.broadcast_to(n, out.shape)[ok] - x_ok
        g = 2.0 * (xlogy(x_ok, x_ok / e_ok) + xlogy(rest, rest / (rest + x_ok - e_ok)))
        out[ok] = np.sign(diff) * np.maximum(g, 0.0)     # G >= 0; clip rounding below 0
    else:
        out[ok] = diff / np.sqrt(np.broadcast_to(variance, out.shape)[ok])
    return out


@fill_doc
@estimator_params
class CountDeviation(NgramOptions, OnePassFitMixin, TransformerMixin, BaseEstimator):
    """Score each frequent word by the deviation of its count from the expected count.

    ``fit`` learns the ``max_features`` words most frequent over the corpus and each word's
    corpus rate ``p_w`` (its count over the number of tokens of the corpus). ``transform``
    gives document ``d`` of ``n_d`` tokens (every token the analyzer yields, frequent or
    not) the deviation of each word's count ``x`` from its expectation ``E = n_d p_w``, as
    a signed z-score or signed log-likelihood ratio. A frequent word that is absent gets a
    negative value (about ``-sqrt(E)``), a word too rare to be expected in a document of
    that length a value near zero, present or not: absence counts as evidence only when
    presence was expected.

    Parameters
    ----------
    max_features : int, default=1000
        Number of words kept, the most frequent over the fit corpus (ties broken as
        scikit-learn's ``CountVectorizer`` does).
    %(token_options)s
    %(ngram_options)s
    statistic : {"poisson", "binomial", "g"}, default="poisson"
        ``"poisson"``: ``(x - E) / sqrt(E)``. ``"binomial"``: ``(x - E) / sqrt(E (1 - p))``,
        ``x`` out of ``n`` draws of probability ``p``. ``"g"``: the binomial log-likelihood
        ratio statistic ``G = 2 sum obs ln(obs / exp)`` over the cells ``(x, n - x)``
        against ``(E, n - E)``, signed by ``x - E`` (``G`` is on the scale of a squared
        z-score; ``sign * sqrt(|G|)`` puts it back on the z scale).
    %(verbose)s

    Attributes
    ----------
    vocabulary_ : dict
        Word -> column index (columns in sorted word order).
    rates_ : ndarray of shape (n_features_out,)
        Corpus rate ``p_w`` of each kept word, in column order.
    n_tokens_ : int
        Number of tokens of the fit corpus.

    See Also
    --------
    TfidfVectorizer : Reweights the words that are present.

    Notes
    -----
    For ``x`` occurrences among ``n`` tokens, with ``E = n p``:

    .. math:: z_P = \\frac{x - E}{\\sqrt{E}}, \\quad z_B = \\frac{x - E}{\\sqrt{E (1 - p)}},
              \\quad G = 2 \\left[x \\ln\\frac{x}{E} + (n - x) \\ln\\frac{n - x}{n - E}\\right]

    (``0 ln 0 = 0``). An absent word gives ``z_P = -sqrt(E)`` and ``G = -2 n ln(1 - p)
    ≈ 2E``. A document with no tokens has no expectation to deviate from: every value is 0.
    Likewise ``"binomial"`` and ``"g"`` give 0 for a word of rate 1 (the only word of the
    corpus), whose count is fixed by the length.

    Examples
    --------
    >>> from nlpfeat.text import CountDeviation
    >>> docs = ["the cat sat on the mat", "the dog ate the bone", "a cat and a dog"]
    >>> dev = CountDeviation(max_features=3).fit(docs)   # 14 tokens ("a" is too short)
    >>> dev.rates_.round(3)
    array([0.143, 0.143, 0.286])
    >>> dev.get_feature_names_out().tolist()
    ['cat', 'dog', 'the']
    >>> dev.transform(["the cat", "cat and dog and bird"]).round(2)
    array([[ 1.34, -0.53,  0.57],
           [ 0.34,  0.34, -1.2 ]])
    """

    _parameter_constraints = {
        **TEXT_PARAMETER_CONSTRAINTS,
        "max_features": [Interval(Integral, 1, None, closed="left")],
        "statistic": [StrOptions(set(STATISTICS))],
        "verbose": ["verbose"],
    }

    max_features: Any = dataclasses.field(default=1000, kw_only=False)
    statistic: Any = "poisson"
    verbose: Any = 0

    def _counts(self, X, vocabulary=None):
        """Counts over ``vocabulary`` (learned when None) and every document's length."""
        lengths = []
        analyze, record = self._feature_fn(), lengths.append   # documents decoded once

        def features():
            for doc in self._iter_docs(X):
                tokens = analyze(doc)
                record(len(tokens))
                yield tokens

        counts, vocabulary = count_matrix(features(), vocabulary)
        return counts, vocabulary, np.asarray(lengths, dtype=np.float64)

    @fit_context(prefer_skip_nested_validation=True)
    def fit_transform(self, X, y=None):
        """Learn the words and rates of ``X`` and return its deviations (one pass).

        %(fit_transform_parameters)s

        Returns
        -------
        X_dev : ndarray of shape (n_documents, n_features_out), float64
        """
        counts, lengths = self._fit(X)
        return count_deviation(counts.toarray(), lengths, self.rates_, self.statistic)

    def _fit(self, X):
        """Learn the attributes; return the kept words' counts and the documents' lengths."""
        self._check_text_params()
        counts, vocabulary, lengths = self._counts(X)
        check_corpus_nonempty(counts.shape[0])
        n_tokens = int(lengths.sum())
        if n_tokens == 0:
            raise ValueError("The documents hold no tokens; expected at least one token to "
                             "learn word rates from (check stop_words and the tokenizer).")
        counts, vocabulary = prune_vocabulary(counts, vocabulary,
                                              max_features=self.max_features)
        totals = np.asarray(counts.sum(axis=0), dtype=np.float64).ravel()
        self.vocabulary_ = vocabulary
        self.n_tokens_ = n_tokens
        self.rates_ = totals / n_tokens
        return counts, lengths

    def transform(self, X):
        """Deviation of each kept word's count in each document of ``X``.

        %(transform_parameters)s

        Returns
        -------
        X_dev : ndarray of shape (n_documents, n_features_out), float64
        """
        check_is_fitted(self, "vocabulary_")
        counts, _, lengths = self._counts(X, self.vocabulary_)
        return count_deviation(counts.toarray(), lengths, self.rates_, self.statistic)

    def get_feature_names_out(self, input_features=None):
        """The kept words, in column order.

        %(feature_names_sections)s
        """
        check_is_fitted(self, "vocabulary_")
        return np.asarray(terms_in_column_order(self.vocabulary_), dtype=object)
