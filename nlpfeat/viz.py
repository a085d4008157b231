"""Plots of attention weights, kernel-regression fits, bandwidth curves and topics.

Every function takes an optional matplotlib ``ax`` (or builds its own figure), returns the
matplotlib objects it drew on, and holds no numerics: the numbers come from the fitted
estimators. matplotlib is an optional dependency (``pip install "nlpfeat[viz]"``).
"""
import os
import re
import warnings

import numpy as np

from nlpfeat._deprecation import DEPRECATED, renamed_value
from nlpfeat._validation import check_is_fitted, import_optional

__all__ = ["plot_attention", "plot_bandwidth_curve", "plot_nw_fit", "plot_topics", "save_figure"]


def _pyplot(caller):
    return import_optional("matplotlib.pyplot", "viz", caller)


#: Families with CJK glyphs, most common first (Debian's fonts-noto-cjk, Adobe's Source Han,
#: WenQuanYi, Windows' and macOS' system fonts).
CJK_FONTS = ("Noto Sans CJK SC", "Noto Sans CJK JP", "Noto Serif CJK SC", "Source Han Sans SC",
             "Source Han Sans CN", "WenQuanYi Zen Hei", "WenQuanYi Micro Hei", "Microsoft YaHei",
             "SimHei", "PingFang SC", "Hiragino Sans GB", "Heiti SC", "Arial Unicode MS")
_CJK = re.compile("[\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"
                  "\uf900-\ufaff\uff00-\uffef]")
_cjk_state = {}


def _find_cjk_font():
    """The first installed family of ``CJK_FONTS``, or None (looked up once)."""
    if "family" not in _cjk_state:
        from matplotlib import font_manager

        installed = {f.name for f in font_manager.fontManager.ttflist}
        _cjk_state["family"] = next((name for name in CJK_FONTS if name in installed), None)
    return _cjk_state["family"]


def _cjk_fontdict(labels):
    """Font properties for tick labels holding CJK characters (None when none do).

    With a CJK font installed the labels use it. Without one, one warning says what to
    install, instead of matplotlib's warning per missing glyph (which are then silenced)
    and boxes without explanation.
    """
    if not any(_CJK.search(str(label)) for label in labels):
        return None
    family = _find_cjk_font()
    if family is not None:
        return {"family": family}
    if not _cjk_state.get("warned"):
        _cjk_state["warned"] = True
        warnings.warn(
            "the labels hold Chinese, Japanese or Korean characters but no font with those "
            "glyphs is installed, so they show as boxes; install one (Debian/Ubuntu: apt "
            "install fonts-noto-cjk; or any of " + ", ".join(CJK_FONTS[:6]) + ") and restart "
            "Python.", UserWarning, stacklevel=3)
        warnings.filterwarnings("ignore", message=r"Glyph \d+ .* missing from", category=UserWarning)
    return None


def _thin(labels, max_ticks):
    """Indices of at most ``max_ticks`` evenly spread non-empty labels ("" gets no tick)."""
    at = [i for i, label in enumerate(labels) if str(label)]
    if max_ticks is not None and len(at) > max_ticks:
        at = [at[j] for j in np.unique(np.linspace(0, len(at) - 1, max_ticks).round().astype(int))]
    return at


def _heatmap(ax, matrix, row_labels, col_labels, title, cmap, vmax, max_ticks):
    image = ax.imshow(matrix, cmap=cmap, aspect="auto", vmin=0.0, vmax=vmax)
    if row_labels is not None:
        at = _thin(row_labels, max_ticks)
        labels = [str(row_labels[i]) for i in at]
        ax.set_yticks(at, labels=labels, fontdict=_cjk_fontdict(labels))
    if col_labels is not None:
        at = _thin(col_labels, max_ticks)
        labels = [str(col_labels[i]) for i in at]
        ax.set_xticks(at, labels=labels, rotation=90 if len(at) > 8 else 0,
                      fontdict=_cjk_fontdict(labels))
    if title:
        ax.set_title(title)
    return image


def _panels(plt, ax, n, max_cols, figsize):
    """``(fig, axes)``: the Axes given as ``ax``, or a new grid of ``n`` panels in at most
    ``max_cols`` columns, ``figsize(ncols, nrows)`` inches, its unused cells hidden."""
    if ax is not None:
        axes = np.atleast_1d(ax).ravel()
        return axes[0].figure, axes
    ncols = min(n, max_cols)
    nrows = int(np.ceil(n / ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=figsize(ncols, nrows), squeeze=False,
                             layout="constrained")
    axes = axes.ravel()
    for extra in axes[n:]:
        extra.set_visible(False)
    return fig, axes


def plot_attention(weights, row_labels=None, col_labels=None, ax=None, *, titles=None,
                   xlabel="keys", ylabel="queries", cmap="Reds", scale="shared",
                   colorbar_label="attention weight", max_ticks=None):
    """Show attention weights as a heatmap, or a grid of heatmaps for several heads.

    Parameters
    ----------
    weights : array-like of shape (n_queries, n_keys) or (n_heads, n_queries, n_keys)
        Non-negative weights, e.g. ``NadarayaWatsonRegressor.attention_weights(X)``
        (densified) or ``MultiHeadAttention.forward(..., average_attn_weights=False)[1][0]``.
    row_labels, col_labels : sequence of str, default=None
        Tick labels for the queries (rows) and keys (columns), e.g. the tokens of a
        sentence; an empty string leaves its row or column without a tick.
    ax : matplotlib Axes or array of Axes, default=None
        Where to draw; one Axes per head. A new figure is made when None.
    titles : sequence of str, default=None
        One title per head (default ``"head 0"``, ... for several heads).
    xlabel, ylabel : str
        Axis labels.
    cmap : str, default="Reds"
        Colour map, as the textbook's ``show_heatmaps``.
    scale : {"shared", "panel"}, default="shared"
        One colour scale (and colour bar) for every head, or one per panel: use
        ``"panel"`` when the panels' peaks differ by orders of magnitude (a kernel's
        near-one-hot weights beside a learned score's flat ones), so none looks blank.
    colorbar_label : str, default="attention weight"
        Label of the colour bar(s).
    max_ticks : int, default=None
        At most this many evenly spread tick labels per axis (all labels when None).

    Returns
    -------
    fig : matplotlib Figure
        ``fig.axes`` holds one Axes per head followed by the colour bar(s).

    Examples
    --------
    >>> import numpy as np
    >>> from nlpfeat.viz import plot_attention
    >>> w = np.eye(3)
    >>> fig = plot_attention(w, ["a", "b", "c"], ["a", "b", "c"])
    >>> len(fig.axes)  # the heatmap and its colour bar
    2
    """
    plt = _pyplot("plot_attention")
    if hasattr(weights, "toarray"):
        weights = weights.toarray()
    weights = np.asarray(weights, dtype=np.float64)
    if weights.ndim == 2:
        weights = weights[np.newaxis]
    if weights.ndim != 3:
        raise ValueError(
            "weights must have shape (n_queries, n_keys) or (n_heads, n_queries, n_keys); "
            f"got shape {weights.shape}."
        )
    n_heads = weights.shape[0]
    fig, axes = _panels(plt, ax, n_heads, 4, lambda ncols, nrows: (3.2 * ncols + 1, 3.0 * nrows))
    if len(axes) < n_heads:
        raise ValueError(f"got {len(axes)} Axes for {n_heads} heads; pass one Axes per head.")
    if titles is None:
        titles = [f"head {h}" for h in range(n_heads)] if n_heads > 1 else [None]
    if scale not in ("shared", "panel"):
        raise ValueError(f"scale must be 'shared' or 'panel'; got {scale!r}.")
    shared_vmax = float(weights.max()) or 1.0
    image = None
    for h in range(n_heads):
        vmax = shared_vmax if scale == "shared" else (float(weights[h].max()) or 1.0)
        image = _heatmap(axes[h], weights[h], row_labels, col_labels, titles[h], cmap, vmax,
                         max_ticks)
        axes[h].set_xlabel(xlabel)
        axes[h].set_ylabel(ylabel)
        if scale == "panel":
            fig.colorbar(image, ax=axes[h], shrink=0.8).set_label(colorbar_label)
    if scale == "shared":
        fig.colorbar(image, ax=list(axes[:n_heads]), shrink=0.8).set_label(colorbar_label)
    return fig


def plot_nw_fit(estimator, X, y, ax=None, *, X_grid=None, label=None, truth=None):
    """Plot a fitted 1-D regressor's curve over its training points.

    Parameters
    ----------
    estimator : fitted regressor with one input feature
        e.g. :class:`~nlpfeat.kernels.NadarayaWatsonRegressor` or an ``AttentionRegressor``.
    X : array-like of shape (n_samples, 1)
        Training inputs to scatter.
    y : array-like of shape (n_samples,)
        Training targets to scatter.
    ax : matplotlib Axes, default=None
    X_grid : array-like of shape (n_points, 1), default=None
        Where to evaluate the curve; 200 points over the range of ``X`` by default.
    label : str, default=None
        Legend label of the curve (the estimator's class name by default).
    truth : callable, default=None
        The noise-free function, drawn dashed if given.

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.neighbors import KNeighborsRegressor
    >>> from nlpfeat.viz import plot_nw_fit
    >>> X = np.linspace(0, 5, 20)[:, None]; y = np.sin(X[:, 0])
    >>> ax = plot_nw_fit(KNeighborsRegressor(3).fit(X, y), X, y)
    >>> len(ax.lines)
    1
    """
    plt = _pyplot("plot_nw_fit")
    check_is_fitted(estimator)
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] != 1:
        raise ValueError(f"plot_nw_fit draws 1-D inputs: X must have shape (n_samples, 1); got {X.shape}.")
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 3.5))
    if X_grid is None:
        X_grid = np.linspace(X.min(), X.max(), 200)[:, None]
    X_grid = np.asarray(X_grid, dtype=np.float64)
    ax.scatter(X[:, 0], np.asarray(y), s=12, alpha=0.5, color="gray", label="training data")
    ax.plot(X_grid[:, 0], estimator.predict(X_grid),
            label=label or type(estimator).__name__)
    if truth is not None:
        ax.plot(X_grid[:, 0], truth(X_grid[:, 0]), "k--", lw=1, label="truth")
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.legend(fontsize="small")
    return ax


def plot_bandwidth_curve(estimator, ax=None):
    """Plot the leave-one-out score against the bandwidth grid of a fitted NW estimator.

    Parameters
    ----------
    estimator : fitted NadarayaWatsonRegressor or NadarayaWatsonClassifier
        Fitted with ``bandwidth="loo"``, so that it has ``bandwidth_grid_`` and
        ``loo_scores_`` (the leave-one-out error at each grid point, lower is better).
    ax : matplotlib Axes, default=None

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> from nlpfeat.datasets import make_nw_regression
    >>> from nlpfeat.kernels import NadarayaWatsonRegressor
    >>> from nlpfeat.viz import plot_bandwidth_curve
    >>> X, y = make_nw_regression(50, random_state=0)
    >>> ax = plot_bandwidth_curve(NadarayaWatsonRegressor(bandwidth="loo").fit(X, y))
    >>> ax.get_xscale()
    'log'
    """
    plt = _pyplot("plot_bandwidth_curve")
    check_is_fitted(estimator)
    grid = getattr(estimator, "bandwidth_grid_", None)
    scores = getattr(estimator, "loo_scores_", None)
    if grid is None or scores is None:
        raise ValueError(
            f"{type(estimator).__name__} has no leave-one-out curve: fit it with "
            "bandwidth='loo' to record bandwidth_grid_ and loo_scores_."
        )
    grid = np.asarray(grid, dtype=np.float64)
    scores = np.asarray(scores, dtype=np.float64)
    scale = grid if grid.ndim == 1 else grid.mean(axis=1)
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 3.5))
    ax.plot(scale, scores, marker="o", ms=3)
    best = int(np.nanargmin(scores))
    ax.axvline(scale[best], color="k", ls=":", lw=1, label=f"chosen: {scale[best]:.3g}")
    ax.set_xscale("log")
    ax.set_xlabel("bandwidth" if grid.ndim == 1 else "mean bandwidth")
    ax.set_ylabel("leave-one-out loss")
    ax.legend(fontsize="small")
    return ax


def plot_topics(topic_model, topn=10, ax=None, *, n_words=DEPRECATED):
    """Horizontal bar charts of each topic's top words and their weights.

    Parameters
    ----------
    topic_model : fitted :class:`~nlpfeat.text.TopicModel`
        Uses ``components_`` (topics x words), ``top_words`` and, when present,
        ``coherence_`` (shown in each title).
    topn : int, default=10
        Words per topic.
    ax : array of matplotlib Axes, default=None
        One Axes per topic; a grid is made when None.
    n_words : default="deprecated"
        The former name of ``topn`` (nlpfeat's name for a top-k count): still accepted
        with a ``FutureWarning``, removed in 0.3.

    Returns
    -------
    fig : matplotlib Figure

    Examples
    --------
    >>> from nlpfeat.datasets import load_toy_corpus
    >>> from nlpfeat.text import TopicModel
    >>> from nlpfeat.viz import plot_topics
    >>> docs = [sentence.split() for sentence in load_toy_corpus("en").data]
    >>> tm = TopicModel(n_components=2, method="nmf", backend="sklearn", random_state=0)
    >>> fig = plot_topics(tm.fit(docs), topn=5)
    >>> len(fig.axes)
    2
    """
    n_words = renamed_value(n_words, topn, old="n_words", new="topn", default=10,
                            owner="plot_topics")
    plt = _pyplot("plot_topics")
    check_is_fitted(topic_model)
    components = np.asarray(topic_model.components_, dtype=np.float64)
    words = topic_model.top_words(n_words)
    n_topics = components.shape[0]
    fig, axes = _panels(plt, ax, n_topics, 5,
                        lambda ncols, nrows: (2.6 * ncols, 0.25 * n_words * nrows + 1.2))
    coherence = getattr(topic_model, "coherence_", None)
    for k in range(n_topics):
        order = np.argsort(components[k])[::-1][:n_words]
        labels = [w for w in words[k]][: len(order)]
        axes[k].barh(np.arange(len(order))[::-1], components[k, order])
        axes[k].set_yticks(np.arange(len(order))[::-1], labels=labels, fontsize="small",
                           fontdict=_cjk_fontdict(labels))
        title = f"topic {k}"
        if coherence is not None:
            title += f"\ncoherence {coherence[k]:.3f}"
        axes[k].set_title(title, fontsize="small")
    return fig


def save_figure(fig, folder, name, **savefig_kwargs):
    """Write ``fig`` as the file ``name`` in ``folder`` (made if missing) and close it.

    Scripts that save their figures instead of showing them (the examples, the gallery
    build that collects the files they write) do it this one way, so that no figure stays
    open and every file lands in the folder the user chose.

    Parameters
    ----------
    fig : matplotlib Figure
    folder : str or path-like
        Created with its parents if missing.
    name : str
        File name; its suffix picks the format (``.png``, ``.svg``, ``.pdf``, ...).
    **savefig_kwargs
        Passed to ``Figure.savefig`` (``dpi``, ``bbox_inches``, ...).

    Returns
    -------
    path : str
        ``os.path.join(folder, name)``.

    Examples
    --------
    >>> import os, tempfile
    >>> import matplotlib.pyplot as plt
    >>> from nlpfeat.viz import save_figure
    >>> fig, ax = plt.subplots()
    >>> _ = ax.plot([0, 1], [1, 0])
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = save_figure(fig, os.path.join(tmp, "figs"), "line.png", dpi=50)
    ...     print(os.path.basename(path), os.path.getsize(path) > 0, plt.fignum_exists(fig.number))
    line.png True False
    """
    plt = _pyplot("save_figure")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(os.fspath(folder), name)
    fig.savefig(path, **savefig_kwargs)
    plt.close(fig)
    return path
