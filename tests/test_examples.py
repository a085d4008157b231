"""CI smoke test: every script in examples/ runs in a subprocess (with --quick where it
takes it) and exits 0, printing what it should."""
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SCRIPTS = sorted(p.name for p in EXAMPLES.glob("*.py") if not p.name.startswith("_"))

#: Lines every run must print (regular expressions), per script. A script missing here
#: must still exit 0 and print something, so a new example is smoke-tested from day one.
EXPECTED = {
    "quickstart_pipeline.py": [
        r"TF-IDF -> NadarayaWatsonClassifier \(cosine\)\s+0\.\d{3} ± 0\.\d{3}",
        r"TF-IDF -> LogisticRegression\s+0\.\d{3} ± 0\.\d{3}",
        r"majority class \(chance\)\s+0\.500 ± 0\.000",
        r"near chance \(0\.5\)",
        r"the 3 keys with most weight",
    ],
    "compare_attention.py": [
        r"== sine",
        r"nw-gaussian\s+tabular\s+\d+\.\d{4} ± ",
        r"attn-gaussian-1h\s+tabular",
        r"attention, gaussian score\s+\d+\.\d{3}\s+-?\d\.\d{3}",
    ],
    "fat_cat_attention.py": [
        r"head 1 \(rows: queries",
        r"POS only\s+the₀ 0\.500, the₅ 0\.500",
        r"POS \+ causal mask\s+the₀ 0\.500, the₅ 0\.500",
        r"POS \+ position\s+the₀ 0\.000, the₅ 0\.999",
    ],
    "chinese_text.py": [
        r"\ncharacters\s+[01]\.\d{3} ± 0\.\d{3}\s+[01]\.\d{3} ± 0\.\d{3}",
        r"jieba words\s+([01]\.\d{3} ±|\(skipped: jieba is not installed)",
        r"Top 12 character collocations",
        r"好: .*坏",
    ],
    "warmup_init_study.py": [r"lr1e-3\s+3\.37\s+\d+\.\d{3}", r"lr1e-3-warmup\s+0\.10"],
    "heads_study.py": [
        r"\| lookup \| multi-query \(4 q, 1 kv\) \| 2060 \| [01]\.\d{4} ± 0\.\d{4} \|",
        r"- lookup-wide: multi-head \(4\) vs grouped \(4 q, 2 kv\): \S",
        r"- separated one head vs the bound 3/8: (at|below|above) ",
        r"\| 3v5-diff \| multi-head \(4\) \| 2 \| \[\d, \d\] \| ",
    ],
    "binned_million.py": [
        r"n = 20000: bandwidth \d\.\d+ \(leave-one-out on the grid\)",
        r"largest error of 2000 queries against the exact path: \d\.\de-(0[7-9]|1\d) x std",
    ],
    "grid_search_kernels.py": [
        r"Textbook task .* ranked",
        r"\n\s+1\s+\d+\.\d{4}\s+\d+\.\d{4}\s+bandwidth=",
        r"Diabetes .* ranked",
    ],
    "grid_search_dask.py": [
        r"fits on 2 Dask worker\(s\)",
        r"\n\s+1\s+\d+\.\d\s+\d+\.\d\s+(gaussian|epanechnikov), ",
        r"cv_results_ equal the in-process search: yes",
    ],
    "lee_similarity.py": [
        r"TF-IDF\s+0\.\d{3}",
        r"gensim log-entropy LSI \(reference\)\s+0\.\d{3}",
        r"Best: .*\(r = 0\.\d{3}\)",
    ],
    "pmi_substitutability.py": [
        r"\n\s+good\s+bad\s+\d+/\d+\s+\d+\s+\d+",
        r"\n\s+好\s+坏\s+\d+/\d+\s+\d+\s+\d+",
        r"antonym within the 10 nearest\s+\d+/\d+",
    ],
    "topics_lee.py": [r"held-out coherence", r"<- best", r"topics, most coherent first"],
    "dependency_features.py": [
        r"\n  square\s+5\s+-\s+yes\s+yes\s+yes",
        r"dependency \(\+ conjuncts\)\s+27/27\s+1\.00",
        r"window 2\s+\d+/27",
    ],
    "count_deviation.py": [
        r"TF-IDF \+ deviation \(poisson\)\s+0\.\d{3} ± 0\.\d{3}\s+minus TF-IDF [+-]0\.\d{3}",
        r"lee: .* \(se 0\.\d{3}\): (adds|hurts|no significant difference)",
    ],
    "semantic_units.py": [
        r"en kmeans\s+\d+/14 antonym pairs share a unit",
        r"good/bad: ",
        r"100 units \+ \d+ unknown words\s+\d+ features\s+0\.\d{3}",
        r"lee, 100 units: r [+-]0\.\d{3}",
    ],
}

#: Figures a script writes to --out when matplotlib is installed.
FIGURES = {
    "quickstart_pipeline.py": ["quickstart_polarity_cv.png"],
    "compare_attention.py": ["compare_attention_heatmaps.png", "compare_sine/sine_fits.png"],
    "grid_search_kernels.py": ["nw_fitted_curves.png", "nw_attention_heatmap.png"],
    "fat_cat_attention.py": ["fat_cat_model_heads.png", "fat_cat_article_heads.png"],
    "heads_study.py": ["heads_study.png"],
    "binned_million.py": ["binned_error_time.png"],
    "chinese_text.py": ["chinese_text_cv.png"],
    "count_deviation.py": ["count_deviation_gains.png"],
    "dependency_features.py": ["dependency_features.png"],
    "grid_search_dask.py": ["grid_search_dask.png"],
    "lee_similarity.py": ["lee_similarity_scatter.png"],
    "pmi_substitutability.py": ["pmi_substitutability.png"],
    "semantic_units.py": ["semantic_units_gain.png"],
    "topics_lee.py": ["topics_lee.png"],
    "warmup_init_study.py": ["warmup_init_losses.png"],
}


def _options(source):
    return set(re.findall(r"add_argument\(\s*\"(--[a-z-]+)\"", source))


#: The examples whose quick form costs over 6 CPU-s on a fresh clone (a study's grid, a
#: Dask cluster, a corpus's embeddings, a grid search): run by ``.ci/run`` after the
#: README's command, which keeps the two lightest (a pipeline, attention heads).
LONG = {"dependency_features.py", "topics_lee.py", "heads_study.py", "grid_search_dask.py", "count_deviation.py", "lee_similarity.py",
        "warmup_init_study.py", "chinese_text.py", "binned_million.py", "compare_attention.py",
        "semantic_units.py", "pmi_substitutability.py", "grid_search_kernels.py"}


@pytest.mark.parametrize("script", [
    pytest.param(name, marks=pytest.mark.slow) if name in LONG else name for name in SCRIPTS])
def test_example_runs(script, tmp_path):
    path = EXAMPLES / script
    options = _options(path.read_text(encoding="utf-8"))
    args = [sys.executable, str(path)]
    if "--quick" in options:
        args.append("--quick")
    if "--out" in options:
        args += ["--out", str(tmp_path / "out")]
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONIOENCODING="utf-8")
    proc = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, timeout=300)
    out, err = proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")
    assert proc.returncode == 0, f"{script} exited {proc.returncode}\n{out}\n{err}"
    assert out.strip(), f"{script} printed nothing"
    # a local Dask cluster shuts down cleanly: no worker process is killed at the end
    assert "still alive" not in err, f"{script}: {err}"
    for pattern in EXPECTED.get(script, []):
        assert re.search(pattern, out), f"{script}: no match for {pattern!r} in\n{out}"
    # Nothing is written outside --out (e.g. into the working directory).
    assert sorted(p.name for p in tmp_path.iterdir()) in ([], ["out"])
    if importlib.util.find_spec("matplotlib") is None:
        return  # the scripts print a note instead of writing figures
    for figure in FIGURES.get(script, []):
        assert (tmp_path / "out" / figure).stat().st_size > 1000, figure
    if script == "compare_attention.py":
        rows = (tmp_path / "out" / "compare_sine" / "results.csv").read_text().splitlines()
        assert rows[0].startswith("task,model") and len(rows) == 1 + 6  # --quick: 6 models


def test_every_example_has_a_docstring_and_quick_mode():
    for script in SCRIPTS:
        source = (EXAMPLES / script).read_text(encoding="utf-8")
        assert source.lstrip().startswith('"""'), f"{script} has no module docstring"
        assert "--quick" in _options(source), f"{script} takes no --quick"


def test_every_example_draws_a_figure():
    """Each gallery card has a thumbnail: every script writes a figure into --out."""
    assert sorted(FIGURES) == SCRIPTS
    for script in SCRIPTS:
        assert "--out" in _options((EXAMPLES / script).read_text(encoding="utf-8")), script


def test_grid_search_kernels_legend_leaves_the_data_visible():
    """The legend of the fitted curves lies outside the axes (inside, it covered the data)."""
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt
    import numpy as np

    spec = importlib.util.spec_from_file_location("grid_search_kernels",
                                                  EXAMPLES / "grid_search_kernels.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    search, X, y = example.search_textbook(["gaussian", "epanechnikov"], [0.3], n_samples=40)
    fig = example.curves_figure(search, X, y, np.linspace(0, 5, 20)[:, None])
    try:
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        ax = fig.axes[0]
        legend = ax.get_legend().get_window_extent(renderer)
        assert not legend.overlaps(ax.get_window_extent(renderer))
        assert len(ax.get_legend().get_texts()) == 4     # data, truth, two kernels
    finally:
        plt.close(fig)
