"""nlpfeat.viz: every plot rendered to a PNG under Agg from real fitted estimators."""
import sys

import numpy as np
import pytest
from sklearn.base import is_regressor

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from nlpfeat.attention import MultiHeadAttention  # noqa: E402
from nlpfeat.datasets import load_toy_corpus, make_nw_regression  # noqa: E402
from nlpfeat.kernels import NadarayaWatsonClassifier, NadarayaWatsonRegressor  # noqa: E402
from nlpfeat.text import TopicModel  # noqa: E402
from nlpfeat.viz import (plot_attention, plot_bandwidth_curve, plot_nw_fit, plot_topics,  # noqa: E402
                         save_figure)

PLOTS = {"plot_attention": plot_attention, "plot_nw_fit": plot_nw_fit,
         "plot_bandwidth_curve": plot_bandwidth_curve, "plot_topics": plot_topics}
ARGS = {"plot_attention": (np.eye(2),), "plot_nw_fit": (None, np.zeros((2, 1)), np.zeros(2)),
        "plot_bandwidth_curve": (None,), "plot_topics": (None,)}


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def sine():
    X, y = make_nw_regression(80, noise=0.5, random_state=0)
    return X, y, NadarayaWatsonRegressor(bandwidth="loo").fit(X, y)


def _save(fig, path):
    fig.savefig(path, dpi=60)
    assert path.stat().st_size > 1000
    return path


def _heatmaps(fig):
    """The Axes of a figure that show an image (the colour bar is not one)."""
    return [ax for ax in fig.axes if ax.images]


def test_plot_attention_one_head_from_nadaraya_watson(sine, tmp_path):
    X, _, nw = sine
    queries = np.linspace(0, 5, 12)[:, None]
    weights = nw.attention_weights(queries)
    dense = weights.toarray() if hasattr(weights, "toarray") else np.asarray(weights)
    np.testing.assert_allclose(dense.sum(axis=1), 1.0)
    fig = plot_attention(weights, [f"{q:.1f}" for q in queries[:, 0]], None,
                         xlabel="training inputs", ylabel="queries")
    assert len(_heatmaps(fig)) == 1
    (ax,) = _heatmaps(fig)
    assert ax.get_xlabel() == "training inputs"
    np.testing.assert_allclose(ax.images[0].get_array(), dense)
    _save(fig, tmp_path / "nw_attention.png")


def test_plot_attention_grid_of_heads_from_multihead_attention(tmp_path):
    tokens = "the fat cat sat on the mat".split()
    x = np.random.default_rng(0).normal(size=(1, len(tokens), 8))
    mha = MultiHeadAttention(8, 4, rng=0)
    _, weights = mha.forward(x, x, x, average_attn_weights=False)  # (1, 4, 7, 7)
    fig = plot_attention(weights[0], tokens, tokens)
    maps = _heatmaps(fig)
    assert [ax.get_title() for ax in maps] == [f"head {h}" for h in range(4)]
    assert [t.get_text() for t in maps[0].get_xticklabels()] == tokens
    for h, ax in enumerate(maps):
        np.testing.assert_allclose(ax.images[0].get_array(), weights[0, h])
    _save(fig, tmp_path / "heads.png")


def test_plot_attention_grid_wraps_after_four_heads(tmp_path):
    weights = np.random.default_rng(1).dirichlet(np.ones(5), size=(6, 5))   # (6, 5, 5)
    fig = plot_attention(weights)
    maps = _heatmaps(fig)
    assert len(maps) == 6
    assert len({ax.get_position().y0 for ax in maps}) == 2             # two rows of heads
    assert sum(not ax.get_visible() for ax in fig.axes) == 2           # 2 x 4 grid, 2 unused
    _save(fig, tmp_path / "six_heads.png")


def test_plot_attention_on_given_axes_and_bad_shape():
    fig, axes = plt.subplots(1, 2)
    w = np.full((2, 3, 3), 1 / 3)
    assert plot_attention(w, ax=axes, titles=["a", "b"]) is fig
    with pytest.raises(ValueError, match="one Axes per head"):
        plot_attention(np.full((3, 3, 3), 1 / 3), ax=axes)
    with pytest.raises(ValueError, match=r"\(n_heads, n_queries, n_keys\)"):
        plot_attention(np.ones(4))


def test_plot_nw_fit(sine, tmp_path):
    X, y, nw = sine
    ax = plot_nw_fit(nw, X, y, label="NW, LOO bandwidth",
                     truth=lambda x: 2 * np.sin(x) + x ** 0.8)
    assert [line.get_label() for line in ax.lines] == ["NW, LOO bandwidth", "truth"]
    grid = ax.lines[0].get_xdata()[:, None]
    np.testing.assert_allclose(ax.lines[0].get_ydata(), nw.predict(grid))
    _save(ax.figure, tmp_path / "fit.png")
    with pytest.raises(ValueError, match="shape \\(n_samples, 1\\)"):
        plot_nw_fit(NadarayaWatsonRegressor(bandwidth=0.5).fit(np.c_[X, X], y), np.c_[X, X], y)


@pytest.mark.parametrize("estimator", [NadarayaWatsonRegressor(bandwidth="loo"),
                                       NadarayaWatsonClassifier(bandwidth="loo")])
def test_plot_bandwidth_curve(estimator, sine, tmp_path):
    X, y, _ = sine
    target = y if is_regressor(estimator) else (y > np.median(y)).astype(int)
    est = estimator.fit(X, target)
    ax = plot_bandwidth_curve(est)
    np.testing.assert_allclose(ax.lines[0].get_ydata(), est.loo_scores_)
    assert ax.get_xscale() == "log" and ax.get_ylabel() == "leave-one-out loss"
    _save(ax.figure, tmp_path / "bandwidth.png")


def test_plot_bandwidth_curve_needs_loo(sine):
    X, y, _ = sine
    with pytest.raises(ValueError, match="bandwidth='loo'"):
        plot_bandwidth_curve(NadarayaWatsonRegressor(bandwidth=0.5).fit(X, y))


def test_plot_topics(tmp_path):
    docs = [doc.lower().split() for doc in load_toy_corpus("en").data]
    tm = TopicModel(n_components=3, method="nmf", backend="sklearn", random_state=0).fit(docs)
    fig = plot_topics(tm, topn=6)
    assert len(fig.axes) == 3
    for k, ax in enumerate(fig.axes):
        labels = [t.get_text() for t in ax.get_yticklabels()]
        assert labels == tm.top_words(6)[k]
        assert f"coherence {tm.coherence_[k]:.3f}" in ax.get_title()
    _save(fig, tmp_path / "topics.png")


@pytest.mark.parametrize("name", sorted(PLOTS))
def test_missing_matplotlib_names_the_extra(monkeypatch, name):
    # None in sys.modules makes "import matplotlib..." raise ImportError, as if absent.
    for module in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.setitem(sys.modules, module, None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r'pip install "nlpfeat\[viz\]"') as info:
        PLOTS[name](*ARGS[name])
    assert name in str(info.value)


def test_cjk_labels_use_an_installed_cjk_font_or_warn_once(monkeypatch, tmp_path):
    import warnings

    import nlpfeat.viz as viz

    tokens = ["天气", "很", "好"]
    monkeypatch.setattr(viz, "_cjk_state", {"family": None})   # as on a machine without one
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        fig = plot_attention(np.eye(3), tokens, tokens)
        fig.savefig(tmp_path / "boxes.png", dpi=40)
        plot_attention(np.eye(3), tokens, tokens)
    ours = [w for w in seen if "fonts-noto-cjk" in str(w.message)]
    assert len(ours) == 1
    assert not [w for w in seen if "missing from" in str(w.message)]
    monkeypatch.setattr(viz, "_cjk_state", {"family": "Some CJK Font"})
    fig = plot_attention(np.eye(3), tokens, tokens)
    assert {t.get_fontfamily()[0] for t in fig.axes[0].get_xticklabels()} == {"Some CJK Font"}
    fig = plot_attention(np.eye(2), ["a", "b"], ["a", "b"])   # Latin labels: untouched
    assert "Some CJK Font" not in {t.get_fontfamily()[0] for t in fig.axes[0].get_xticklabels()}


def test_save_figure_makes_the_folder_writes_the_file_and_closes_the_figure(tmp_path):
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    path = save_figure(fig, tmp_path / "a" / "b", "line.svg")
    assert path == str(tmp_path / "a" / "b" / "line.svg")
    assert open(path, encoding="utf-8").read().lstrip().startswith("<?xml")   # format from the suffix
    assert not plt.fignum_exists(fig.number)
