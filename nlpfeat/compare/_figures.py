"""The comparison's figures, drawn from what the harness fitted and the folds it used.

Figures are built on :class:`matplotlib.figure.Figure` objects, without pyplot, so that
running the comparison never changes the process's matplotlib backend.
"""
import os

import numpy as np

from nlpfeat.compare._attention import attention_of
from nlpfeat.compare._tasks import sine_truth

_MAX_TICKS = 6


def _grid(figure, n, ncols):
    nrows = int(np.ceil(n / ncols))
    axes = figure.subplots(nrows, ncols, squeeze=False, sharex=True, sharey=True).ravel()
    for extra in axes[n:]:
        extra.set_visible(False)
    return axes[:n]


def _score(row):
    return f"{row['metric'].upper()} {row['mean']:.3f} ± {row['std']:.3f}"


def fits_figure(sine):
    """Each sine-task model's curve over the first fold's training data, its CV score above."""
    from matplotlib.figure import Figure

    from nlpfeat.viz import plot_nw_fit

    X, y, train = sine["X"], sine["y"], sine["train"]
    names = list(sine["models"])
    ncols = min(4, len(names))
    fig = Figure(figsize=(4 * ncols, 3 * int(np.ceil(len(names) / ncols)) + 1.0),
                 layout="constrained")
    axes = _grid(fig, len(names), ncols)
    for ax, name in zip(axes, names):
        plot_nw_fit(sine["models"][name], X[train], y[train], ax=ax, label="fitted curve",
                    truth=sine_truth)
        ax.get_legend().remove()
        ax.set_title(f"{name}\n{_score(sine['rows'][name])} (CV)", fontsize="medium")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=len(labels))
    fig.suptitle("nlpfeat compare, sine task (y = 2 sin x + x^0.8 + noise): each model's fit "
                 "on the first CV fold; its cross-validated MSE in the title")
    return fig


def heatmaps_figure(sine):
    """Attention weights of the kernel and the learned models on a grid of queries."""
    from matplotlib.figure import Figure

    from nlpfeat.viz import plot_attention

    X, train = sine["X"], sine["train"]
    grid = np.linspace(0, 5, 40)[:, None]
    heat = {name: attention_of(model, grid) for name, model in sine["models"].items()
            if name == "nw-gaussian" or name.startswith(("attn-", "torch"))}
    heat = {name: w for name, w in heat.items() if w is not None}
    if not heat:
        return None
    # Every stored model was fitted on the first fold's training rows, in that order.
    order = np.argsort(X[train, 0], kind="stable")
    stack = np.stack([np.asarray(w)[:, order] for w in heat.values()])
    ncols = min(4, len(heat))
    fig = Figure(figsize=(4.2 * ncols, 3.4 * int(np.ceil(len(heat) / ncols)) + 0.8),
                 layout="constrained")
    axes = _grid(fig, len(heat), ncols)
    plot_attention(stack, [f"{v:.1f}" for v in grid[:, 0]],
                   [f"{v:.1f}" for v in X[train, 0][order]], ax=axes,
                   titles=list(heat), xlabel="training input x_i (sorted)", ylabel="query x",
                   scale="panel", colorbar_label="weight (panel's own scale)",
                   max_ticks=_MAX_TICKS)
    fig.suptitle("nlpfeat compare, sine task: attention weights of each query (row) over the "
                 "training inputs (columns); each panel on its own colour scale")
    return fig


def bandwidth_figure(sine):
    """The leave-one-out loss of each candidate bandwidth of the Gaussian NW model."""
    from matplotlib.figure import Figure

    from nlpfeat.viz import plot_bandwidth_curve

    model = sine["models"].get("nw-gaussian")
    if model is None:
        return None
    fig = Figure(figsize=(5.5, 3.8), layout="constrained")
    ax = fig.subplots()
    plot_bandwidth_curve(model[-1], ax=ax)
    ax.set_title("sine task, nw-gaussian (Gaussian kernel): leave-one-out loss\nof each "
                 "candidate bandwidth, first CV fold (standardised x)", fontsize="medium")
    return fig


def make_figures(store):
    """``{file name: Figure}`` for what the harness fitted (the sine task's models)."""
    sine = store.get("sine")
    if not sine or not sine["models"]:
        return {}
    figures = {"sine_fits.png": fits_figure(sine), "attention_heatmaps.png": heatmaps_figure(sine),
               "bandwidth_curve.png": bandwidth_figure(sine)}
    return {name: fig for name, fig in figures.items() if fig is not None}


def save_figures(store, out):
    """Write the figures into ``out``; returns their paths (or a note without matplotlib)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return ["(figures skipped: matplotlib is not installed; pip install \"nlpfeat[viz]\")"]
    written = []
    for name, fig in make_figures(store).items():
        path = os.path.join(out, name)
        fig.savefig(path, dpi=110)
        written.append(path)
    return written
