"""The dataset loaders and the synthetic regression task behind :mod:`nlpfeat.datasets`.

Each loader reads files already on disk (gensim's test data, or nlpfeat's package data
``nlpfeat._data``) and returns a :class:`sklearn.utils.Bunch` described by its section of
``data/README.md``.
"""
import re
from importlib.resources import files

import numpy as np
from sklearn.utils import Bunch, check_random_state

from nlpfeat._docstrings import fill_doc
from nlpfeat._validation import Integral, Interval, Real, StrOptions, validate_params
from nlpfeat.datasets._corpus import split_lines

# Word-similarity name -> gensim test-data file.
_WORD_SIMILARITY_FILES = {"simlex999": "simlex999.txt", "wordsim353": "wordsim353.tsv"}
_TOY_FILES = {"en": "toy_en.txt", "zh": "toy_zh.txt"}
_DEPENDENCY_FILE = "dependency_sample.conllu"


def _gensim_path(filename):
    """Absolute path of a file shipped in gensim's test data (no network access)."""
    from gensim.test.utils import datapath

    return datapath(filename)


def _split_lines(text):
    """Strip each line of ``text`` (split by :func:`~nlpfeat.datasets._corpus.split_lines`,
    the one rule of a line: ``"\\n"`` only, not the characters such as U+0085 that a
    Latin-1 decode can produce)."""
    return [line.strip() for line in split_lines(text)]


def _read_lines(path, encoding):
    """Decode a one-record-per-line file and split it with :func:`_split_lines`."""
    with open(path, "rb") as f:
        return _split_lines(f.read().decode(encoding))


def _descr(loader_name):
    """The section of ``data/README.md`` whose ``##`` heading names ``loader_name``."""
    readme = files("nlpfeat._data").joinpath("README.md").read_text(encoding="utf-8")
    for section in re.split(r"\n(?=## )", readme):
        if section.startswith("## ") and f"`{loader_name}(" in section.splitlines()[0]:
            return section.strip() + "\n"
    raise LookupError(f"data/README.md has no section for {loader_name}().")  # packaging bug


def _labelled(data, target, target_names, return_X_y, **fields):
    """``(data, target)`` with ``return_X_y``, else the Bunch of a labelled dataset."""
    if return_X_y:
        return data, target
    return Bunch(data=data, target=target, target_names=target_names, **fields)


def load_lee():
    """Load the Lee news corpus and its 50 x 50 matrix of human similarity ratings.

    The Lee et al. (2005) benchmark for document similarity: 50 short news articles
    rated pairwise for similarity by people, plus 300 further articles from the same news
    service to train a model on (gensim's LSI/doc2vec test corpus). The files are read from
    gensim's test data and decoded as Latin-1 (``lee.cor`` holds the byte ``0xA3``, "£").

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        Dictionary-like object with the following attributes.

        background : list of str
            The 300 background documents (7 of them appear twice), one str each.
        test : list of str
            The 50 rated documents, one str each, in the order of ``similarity``.
        similarity : ndarray of shape (50, 50), dtype float64
            Symmetric matrix of mean human ratings, each mean of a 1-5 scale divided by
            5, so values lie in [0.2, 1]; the diagonal is 1.
        similarity_upper : ndarray of shape (1225,), dtype float64
            The strict upper triangle ``similarity[np.triu_indices(50, k=1)]``, the vector
            gensim's ``test_lee.py`` correlates model similarities with.
        filenames : dict
            Paths of the three source files (keys ``background``, ``test``, ``similarity``).
        DESCR : str
            Description of the dataset.

    See Also
    --------
    load_wiki_sample : A larger, already preprocessed corpus.

    Notes
    -----
    The rating file stores only the upper triangle (row ``i`` has zeros left of column
    ``i``); the loader mirrors it, ``S = U + U.T - diag(U)``.

    References
    ----------
    .. [1] Lee, M. D., Pincombe, B., & Welsh, M. (2005). An empirical evaluation of models
       of text document similarity. Proceedings of the 27th Annual Conference of the
       Cognitive Science Society, 1254-1259.

    Examples
    --------
    >>> from nlpfeat.datasets import load_lee
    >>> lee = load_lee()
    >>> len(lee.background), len(lee.test), lee.similarity.shape
    (300, 50, (50, 50))
    >>> bool((lee.similarity == lee.similarity.T).all())
    True
    >>> print(round(lee.similarity[0, 1], 2))
    0.3
    """
    paths = {
        "background": _gensim_path("lee_background.cor"),
        "test": _gensim_path("lee.cor"),
        "similarity": _gensim_path("similarities0-1.txt"),
    }
    upper = np.loadtxt(paths["similarity"], dtype=np.float64)
    similarity = np.triu(upper) + np.triu(upper, k=1).T
    return Bunch(
        background=_read_lines(paths["background"], "latin-1"),
        test=_read_lines(paths["test"], "latin-1"),
        similarity=similarity,
        similarity_upper=similarity[np.triu_indices(similarity.shape[0], k=1)],
        filenames=paths,
        DESCR=_descr("load_lee"),
    )


@fill_doc
@validate_params({"return_X_y": ["boolean"]}, prefer_skip_nested_validation=True)
def load_polarity(*, return_X_y=False):
    """Load 200 movie-review sentences labelled negative (0) or positive (1).

    A balanced sample of Pang & Lee's sentence polarity data (100 negative, then 100
    positive), lower-cased and tokenized with spaces around punctuation, as shipped in
    gensim's test data. The file is decoded as Windows-1252 (byte ``0x97`` is an em dash).

    Parameters
    ----------
    %(return_X_y_sections)s

        data : list of str
            The 200 sentences, the ``__label__`` prefix removed, in file order (all
            negatives first: shuffle or stratify before splitting).
        target : ndarray of shape (200,), dtype int64
            0 for negative, 1 for positive.
        target_names : ndarray of shape (2,)
            ``["neg", "pos"]``.
        filename : str
            Path of the source file.
        DESCR : str
            Description of the dataset.

    (data, target) : tuple if ``return_X_y`` is True

    References
    ----------
    .. [1] Pang, B., & Lee, L. (2005). Seeing stars: Exploiting class relationships for
       sentiment categorization with respect to rating scales. Proceedings of ACL 2005.

    Examples
    --------
    >>> from nlpfeat.datasets import load_polarity
    >>> X, y = load_polarity(return_X_y=True)
    >>> len(X), int(y.sum())
    (200, 100)
    >>> X[0]
    'simplistic , silly and tedious .'
    """
    path = _gensim_path("pang_lee_polarity.cor")
    target_names = np.array(["neg", "pos"])
    labels, sentences = zip(*(line.split(" ", 1) for line in _read_lines(path, "cp1252")))
    names = [label.removeprefix("__label__") for label in labels]
    unknown = set(names) - set(target_names)
    if unknown:  # guards against a changed upstream file
        raise ValueError(f"{path} has unexpected labels {sorted(unknown)}; expected neg/pos.")
    data = [sentence.strip() for sentence in sentences]
    target = np.searchsorted(target_names, names).astype(np.int64)
    return _labelled(data, target, target_names, return_X_y, filename=path,
                     DESCR=_descr("load_polarity"))


def load_wiki_sample():
    """Load 250 English Wikipedia articles, already lower-cased, stop-word-filtered and stemmed.

    gensim's ``head500.noblanks.cor``: one article per line, tokens separated by single
    spaces, already lower-cased, with stop words and punctuation removed and every token
    Porter-stemmed (``"philosophi"``, ``"anarch"``). Do not lower-case, filter or stem it
    again; split on whitespace (or use the default tokenizer) to get its tokens.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        Dictionary-like object with the following attributes.

        data : list of str
            The 250 articles (331,339 tokens in all), tokens joined by single spaces.
        filename : str
            Path of the source file (UTF-8 with CRLF line ends).
        DESCR : str
            Description of the dataset.

    Examples
    --------
    >>> from nlpfeat.datasets import load_wiki_sample
    >>> wiki = load_wiki_sample()
    >>> len(wiki.data)
    250
    >>> wiki.data[0].split()[:4]
    ['anarch', 'greek', 'rule', 'stem']
    """
    path = _gensim_path("head500.noblanks.cor")
    return Bunch(data=_read_lines(path, "utf-8"), filename=path, DESCR=_descr("load_wiki_sample"))


@validate_params(
    {"name": [StrOptions(set(_WORD_SIMILARITY_FILES))]}, prefer_skip_nested_validation=True
)
def load_word_similarity(name):
    """Load a word-pair similarity benchmark: SimLex-999 or WordSim-353.

    Parameters
    ----------
    name : {"simlex999", "wordsim353"}
        Which benchmark. SimLex-999 rates similarity proper (synonymy: ``old``-``new`` is
        low); WordSim-353 mixes similarity and relatedness (``money``-``bank`` is high).

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        Dictionary-like object with the following attributes.

        pairs : list of tuple of (str, str)
            The word pairs in file order; case as in the file (WordSim-353 has proper
            nouns such as ``"Jerusalem"``).
        scores : ndarray of shape (n_pairs,), dtype float64
            Mean human rating of each pair on a 0-10 scale.
        scale : tuple of (float, float)
            ``(0.0, 10.0)``, the rating scale.
        name : str
            The benchmark's name as passed.
        filename : str
            Path of the source file, which gensim's ``KeyedVectors.evaluate_word_pairs``
            also accepts.
        DESCR : str
            Description of the dataset.

    Examples
    --------
    >>> from nlpfeat.datasets import load_word_similarity
    >>> simlex = load_word_similarity("simlex999")
    >>> len(simlex.pairs), simlex.pairs[0], float(simlex.scores[0])
    (999, ('old', 'new'), 1.58)
    """
    path = _gensim_path(_WORD_SIMILARITY_FILES[name])
    rows = [line.split("\t") for line in _read_lines(path, "utf-8") if not line.startswith("#")]
    bad = [i for i, row in enumerate(rows) if len(row) != 3]
    if bad:  # guards against a changed upstream file
        raise ValueError(f"{path}: expected 'word1<TAB>word2<TAB>score'; rows {bad[:5]} differ.")
    return Bunch(
        pairs=[(w1, w2) for w1, w2, _ in rows],
        scores=np.array([float(score) for _, _, score in rows], dtype=np.float64),
        scale=(0.0, 10.0),
        name=name,
        filename=path,
        DESCR=_descr("load_word_similarity"),
    )


@validate_params(
    {"language": [StrOptions({"en", "zh"}), None]}, prefer_skip_nested_validation=True
)
def load_dependency_sample(language=None):
    """Load nlpfeat's small sample of hand-parsed sentences (CoNLL-U, English and Chinese).

    Twenty sentences with Universal Dependencies v2 parses written by hand for nlpfeat,
    among them the long-distance modifier example "a square, smooth, heat-resistant, cheap
    stainless-steel box" and its Chinese original 一个方方正正，表面光滑，耐高温，价格便宜的不锈钢盒子,
    and a three-sentence document whose "the former" and "the latter" are linked back to the
    two people they name, for :class:`~nlpfeat.text.DependencyBagOfWords`.

    Parameters
    ----------
    language : {"en", "zh"} or None, default=None
        Keep the English or the Chinese sentences only; None keeps both.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        Dictionary-like object with the following attributes.

        data : list of str
            One CoNLL-U block per sentence (comment lines included), in file order.
        text : list of str
            The sentences as plain text (their ``# text =`` lines).
        sent_id : list of str
            Their ids, ``en-1``, ..., ``zh-1``, ...
        language : ndarray of str
            ``"en"`` or ``"zh"`` per sentence.
        filename : str
            ``dependency_sample.conllu``, inside the package data.
        DESCR : str
            Description of the dataset.

    Examples
    --------
    >>> from nlpfeat.datasets import load_dependency_sample
    >>> sample = load_dependency_sample()
    >>> len(sample.data), sample.text[0]
    (20, 'a square, smooth, heat-resistant, cheap stainless-steel box')
    >>> load_dependency_sample("zh").text[0]
    '一个方方正正，表面光滑，耐高温，价格便宜的不锈钢盒子'
    """
    source = files("nlpfeat._data").joinpath(_DEPENDENCY_FILE).read_text(encoding="utf-8")
    blocks = [b.strip("\n") for b in re.split(r"\n[ \t]*\n", source.replace("\r\n", "\n"))]
    blocks = [b + "\n" for b in blocks
              if b.strip() and any(not line.startswith("#") for line in b.split("\n"))]

    def comment(block, key):
        found = re.search(rf"^# {key} = (.*)$", block, flags=re.M)
        return found.group(1).strip() if found else ""

    ids = [comment(b, "sent_id") for b in blocks]
    languages = np.array([i.split("-")[0] for i in ids])
    keep = [language is None or lang == language for lang in languages]
    pick = lambda items: [x for x, k in zip(items, keep) if k]  # noqa: E731
    return Bunch(
        data=pick(blocks),
        text=pick([comment(b, "text") for b in blocks]),
        sent_id=pick(ids),
        language=languages[np.array(keep, dtype=bool)],
        filename=_DEPENDENCY_FILE,
        DESCR=_descr("load_dependency_sample"),
    )


@fill_doc
@validate_params(
    {"language": [StrOptions(set(_TOY_FILES))], "return_X_y": ["boolean"]},
    prefer_skip_nested_validation=True,
)
def load_toy_corpus(language="en", *, return_X_y=False):
    """Load nlpfeat's own toy corpus of short topical sentences in English or Chinese.

    A few hundred sentences per language, written for the project's demos: seven topics
    a topic model can separate, antonym pairs used in the same contexts (good/bad, hot/cold,
    好/坏, 冷/热, ...) for distributional-similarity demos, and the classic examples of the
    attention literature ("the fat cat sat on the mat", "这是一个好人" / "这是一个坏人").

    Parameters
    ----------
    language : {"en", "zh"}, default="en"
        ``"en"`` reads ``toy_en.txt``, ``"zh"`` reads ``toy_zh.txt`` (UTF-8).
    %(return_X_y_sections)s

        data : list of str
            The sentences, in file order.
        target : ndarray of shape (n_sentences,), dtype int64
            Index of each sentence's topic in ``target_names``; -1 for a line without a
            label.
        target_names : ndarray of str
            The sorted topic labels (English words in both languages).
        language : str
            ``"en"`` or ``"zh"``.
        DESCR : str
            Description of the dataset.

    (data, target) : tuple if ``return_X_y`` is True

    Notes
    -----
    File format: UTF-8, one sentence per line, optionally followed by a tab and a topic
    label; blank lines and lines starting with ``#`` are ignored.

    Examples
    --------
    >>> from nlpfeat.datasets import load_toy_corpus
    >>> en = load_toy_corpus("en")
    >>> "the fat cat sat on the mat" in en.data
    True
    >>> zh = load_toy_corpus("zh")
    >>> "这是一个好人" in zh.data and "这是一个坏人" in zh.data
    True
    """
    text = files("nlpfeat._data").joinpath(_TOY_FILES[language]).read_text(encoding="utf-8")
    records = [line.split("\t") for line in _split_lines(text) if line and line[0] != "#"]
    data = [record[0].strip() for record in records]
    labels = [record[1].strip() if len(record) > 1 else "" for record in records]
    target_names = np.array(sorted(set(labels) - {""}))
    target = np.array(
        [np.searchsorted(target_names, label) if label else -1 for label in labels], dtype=np.int64
    )
    return _labelled(data, target, target_names, return_X_y, language=language,
                     DESCR=_descr("load_toy_corpus"))


@validate_params(
    {
        "n_samples": [Interval(Integral, 1, None, closed="left")],
        "noise": [Interval(Real, 0, None, closed="left")],
        "sort": ["boolean"],
        "return_true": ["boolean"],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_nw_regression(
    n_samples=50, *, noise=0.5, sort=False, return_true=False, random_state=None
):
    """Generate the textbook 1-D regression task of Nadaraya-Watson / attention pooling.

    ``y = 2 sin(x) + x**0.8 + eps`` with ``x ~ Uniform[0, 5)`` and
    ``eps ~ Normal(0, noise**2)``: the toy problem on which attention pooling is introduced
    as kernel regression (Zhang et al., *Dive into Deep Learning*, "Attention Pooling").

    Parameters
    ----------
    n_samples : int, default=50
        Number of samples.
    noise : float, default=0.5
        Standard deviation of the Gaussian noise added to the target; 0 gives the
        noiseless curve.
    sort : bool, default=False
        If True, order the samples by increasing ``x`` (handy for plotting a fitted curve).
        The default keeps them in draw order, i.i.d., which is safe for unshuffled
        cross-validation.
    return_true : bool, default=False
        If True, also return the noiseless target ``2 sin(x) + x**0.8``.
    random_state : int, RandomState instance or None, default=None
        Seed of the draws (``x`` first, then the noise), for reproducible output.

    Returns
    -------
    X : ndarray of shape (n_samples, 1), dtype float64
        The inputs ``x``, in [0, 5).
    y : ndarray of shape (n_samples,), dtype float64
        The noisy targets.
    y_true : ndarray of shape (n_samples,), dtype float64
        The noiseless targets; only if ``return_true`` is True.

    Notes
    -----
    .. math:: y_i = 2\\sin(x_i) + x_i^{0.8} + \\varepsilon_i,\\quad
              x_i \\sim U[0, 5),\\quad \\varepsilon_i \\sim N(0, \\sigma^2)

    References
    ----------
    .. [1] Zhang, A., Lipton, Z. C., Li, M., & Smola, A. J. (2023). Dive into Deep
       Learning, section 11.2 "Attention Pooling by Similarity". Cambridge University Press.

    Examples
    --------
    >>> from nlpfeat.datasets import make_nw_regression
    >>> X, y = make_nw_regression(n_samples=5, noise=0.0, sort=True, random_state=0)
    >>> X.shape, y.shape
    ((5, 1), (5,))
    >>> X[:, 0].round(2)
    array([2.12, 2.72, 2.74, 3.01, 3.58])
    """
    rng = check_random_state(random_state)
    x = rng.uniform(0.0, 5.0, size=n_samples)
    eps = rng.normal(0.0, noise, size=n_samples)
    if sort:
        order = np.argsort(x, kind="stable")
        x, eps = x[order], eps[order]
    y_true = 2.0 * np.sin(x) + x**0.8
    X = x.reshape(-1, 1)
    return (X, y_true + eps, y_true) if return_true else (X, y_true + eps)
