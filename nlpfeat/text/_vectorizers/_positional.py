"""Positional bag of words: counts of (position, term) pairs such as ``"0|你"``."""
from functools import partial
from typing import Any

from sklearn.base import BaseEstimator, TransformerMixin

from nlpfeat._docstrings import fill_doc
from nlpfeat._params import estimator_params
from nlpfeat._validation import Integral, Interval, StrOptions
from nlpfeat.text._base._analyzer import (
    Chain,
    char_pass_options,
    check_ngram_range,
    collapse_white_space,
    text_pass_options,
)
from nlpfeat.text._vectorizers._bow import (
    COUNTING_PARAMETER_CONSTRAINTS,
    CountingVectorizerMixin,
)

__all__ = ["PositionalBagOfWords", "position_values"]

def position_values(n_grams, n_units, n, position="absolute", n_bins=10):
    """Position value of each of the ``n_grams`` n-grams of a sequence of ``n_units`` units.

    The k-th n-gram starts at unit k. ``"absolute"``: k; ``"from_end"``: ``n_units - n - k``
    (0 for the n-gram that ends on the last unit); ``"relative"``: ``floor(n_bins * k / n_units)``
    (bins 0 .. n_bins - 1); ``"log"``: ``floor(log2(k + 1))`` (bin j holds starts
    ``2**j - 1 .. 2**(j + 1) - 2``: 0 | 1-2 | 3-6 | 7-14 ...).

    Examples
    --------
    >>> from nlpfeat.text._vectorizers._positional import position_values
    >>> modes = ["absolute", "from_end", "relative", "log"]
    >>> [list(position_values(5, 5, 1, mode, n_bins=2)) for mode in modes]
    [[0, 1, 2, 3, 4], [4, 3, 2, 1, 0], [0, 0, 0, 1, 1], [0, 1, 1, 2, 2]]
    """
    starts = range(n_grams)
    if position == "absolute":
        return starts
    if position == "from_end":
        return range(n_units - n, n_units - n - n_grams, -1)
    if position == "relative":
        return [n_bins * k // n_units for k in starts]
    return [(k + 1).bit_length() - 1 for k in starts]


@fill_doc
@estimator_params
class PositionalBagOfWords(CountingVectorizerMixin, TransformerMixin, BaseEstimator,
                           auto_wrap_output_keys=None):
    """Count (position, term) pairs: a bag of words that knows where each word occurs.

    Each feature is named ``"<position>|<term>"``: ``"0|你"`` is the term 你 at position 0.
    The position is that of the n-gram's first unit (token for ``analyzer="word"``, character
    for ``"char"``), counted from 0 and transformed by ``position``:

    - ``"absolute"``: the index of the n-gram's first unit (``"2|cat"``: "cat" is the third token);
    - ``"from_end"``: how many units follow the n-gram (``"0|mat"``: "mat" ends the document);
    - ``"relative"``: the bin ``floor(n_bins * index / n_units)`` of the relative position, from
      0 (start of the document) to ``n_bins - 1`` (end);
    - ``"log"``: the log-spaced bin ``floor(log2(index + 1))``: bin 0 holds position 0, bin 1
      positions 1-2, bin 2 positions 3-6, bin 3 positions 7-14, and so on.

    Only features whose position value is below ``max_position`` are kept.

    With the word or character options that the compiled text pass honours (see
    "Compiled text pass" in :class:`BagOfWords`), the features are formed and counted by
    compiled code, a ``str`` made only per distinct feature, with exactly the Python
    path's output.

    Parameters
    ----------
    input, encoding, decode_error, lowercase, tokenizer, token_pattern, stemmer, stop_words, \
ngram_range, strip_accents, preprocessor, binary, norm, min_df, max_df, max_features, \
vocabulary, dtype, working_memory, verbose
        As in :class:`BagOfWords` (positions count the tokens left after stop-word removal).
    analyzer : {"word", "char"} or callable, default="word"
        Units whose positions are counted: tokens, or characters (white space collapsed).
        A callable maps one document to its list of units.
    position : {"absolute", "from_end", "relative", "log"}, default="absolute"
        How positions are measured (see above).
    max_position : int or None, default=None
        Keep features whose position value is below ``max_position``; ``None`` keeps all.
    n_bins : int, default=10
        Number of bins of ``position="relative"``.

    Attributes
    ----------
    vocabulary_ : dict
        Feature name (``"position|term"``) -> column index.
    %(fixed_vocabulary_attribute)s

    See Also
    --------
    BagOfWords : The same counts without positions.

    Examples
    --------
    >>> from nlpfeat.text import PositionalBagOfWords
    >>> pbow = PositionalBagOfWords().fit(["你好", "这是一个好人"])
    >>> pbow.get_feature_names_out().tolist()
    ['0|你', '0|这', '1|好', '1|是', '2|一', '3|个', '4|好', '5|人']
    >>> PositionalBagOfWords(position="from_end", max_position=2).fit(
    ...     ["the fat cat sat on the mat"]).get_feature_names_out().tolist()
    ['0|mat', '1|the']
    """

    _parameter_constraints = {
        **COUNTING_PARAMETER_CONSTRAINTS,
        "analyzer": [StrOptions({"word", "char"}), callable],
        "norm": [StrOptions({"l1", "l2"}), None],
        "position": [StrOptions({"absolute", "from_end", "relative", "log"})],
        "max_position": [Interval(Integral, 1, None, closed="left"), None],
        "n_bins": [Interval(Integral, 1, None, closed="left")],
    }

    position: Any = "absolute"
    max_position: Any = None
    n_bins: Any = 10

    def _units_fn(self):
        """Callable doc -> units (tokens, characters or the callable analyzer's output)."""
        if callable(self.analyzer):
            return self._analyzer_fn()
        if self.analyzer == "word":
            return self._token_fn()
        return Chain([self._text_fn(), collapse_white_space])

    def _feature_fn(self):
        min_n, max_n = check_ngram_range(self.ngram_range)
        return partial(
            _positional_features, units_fn=self._units_fn(), ngram_range=(min_n, max_n),
            join="".join if self.analyzer == "char" else " ".join, position=self.position,
            n_bins=self.n_bins, max_position=self.max_position,
        )

    def _text_pass_options(self, *, lower_tokens=True):
        """The compiled pass's options (:class:`~nlpfeat.text._counting._analyzer_passes.
        PositionalPass`) when it gives exactly the Python path's features, else None: the
        word analyzer with the options :func:`text_pass_options` honours, ``"char"`` with
        those of :func:`char_pass_options`; a callable analyzer takes the Python path."""
        if not self._compiled_text or self.analyzer not in ("word", "char"):
            return None
        from nlpfeat.text._counting._analyzer_passes import PositionalPass  # numba: on use
        from nlpfeat.text._counting._position_ids import MAX_BINS, POSITION_MODES

        if self.n_bins > MAX_BINS:
            return None
        if self.analyzer == "word":
            found = text_pass_options(self, lower_tokens=lower_tokens, positions=True)
            fields = None if found is None else found._asdict()
        else:
            found = char_pass_options(self, positions=True)
            fields = None if found is None else {"text": found.text,
                                                 "normalise": found.normalise}
        if fields is None:
            return None
        fields.pop("ngram_range", None)
        max_position = MAX_BINS if self.max_position is None else self.max_position
        return PositionalPass(self.analyzer, check_ngram_range(self.ngram_range),
                              POSITION_MODES[self.position], int(self.n_bins),
                              int(min(max_position, MAX_BINS)), **fields)

    def _unused_text_params(self):
        # a callable analyzer gives the units, whose n-grams are still formed
        return [(name, reason) for name, reason in super()._unused_text_params()
                if name != "ngram_range"]


def _positional_features(doc, units_fn, ngram_range, join, position, n_bins, max_position):
    """``"position|n-gram"`` features of one decoded document."""
    units = units_fn(doc)
    n_units = len(units)
    features = []
    for n in range(ngram_range[0], min(ngram_range[1], n_units) + 1):
        grams = units if n == 1 else map(join, zip(*[units[k:] for k in range(n)]))
        positions = position_values(n_units - n + 1, n_units, n, position, n_bins)
        pairs = zip(positions, grams)
        if max_position is not None:
            pairs = [(p, g) for p, g in pairs if p < max_position]
        features.extend([f"{p}|{g}" for p, g in pairs])
    return features
