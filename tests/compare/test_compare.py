"""nlpfeat.compare in-process: weight agreement, the torch model, input errors."""
import math
import sys

import numpy as np
import pytest

from nlpfeat.compare import run_comparison, weight_agreement


def test_weight_agreement_is_zero_for_equal_weights_and_positive_otherwise():
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(6), size=4)
    Q = rng.dirichlet(np.ones(6), size=4)
    kl, corr = weight_agreement(P, P)
    assert kl == pytest.approx(0.0, abs=1e-12) and corr == pytest.approx(1.0)
    kl, _ = weight_agreement(P, Q)
    expected = np.mean(np.sum(P * np.log(P / Q), axis=1))
    assert kl == pytest.approx(expected, rel=1e-12) and kl > 0
    with pytest.raises(ValueError, match="do not match"):
        weight_agreement(P, Q[:, :3])


def test_with_torch_adds_a_pytorch_attention_model(tmp_path):
    pytest.importorskip("torch")
    rows = run_comparison(tasks=["sine"], models=["nw-gaussian", "torch-mha"], quick=True,
                          with_torch=True, plots=False, progress=False, out=str(tmp_path),
                          stream=open(tmp_path / "log.txt", "w"))
    torch_row = next(r for r in rows if r["model"] == "torch-mha")
    assert math.isfinite(torch_row["mean"])
    assert math.isfinite(torch_row["weight_kl"]) and -1 <= torch_row["weight_corr"] <= 1


def test_with_torch_without_torch_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(ImportError, match=r'pip install "nlpfeat\[torch\]"'):
        run_comparison(tasks=["sine"], with_torch=True, out=str(tmp_path), progress=False)


@pytest.mark.parametrize("kwargs, message", [
    ({"tasks": ["nosuchtask"]}, "unknown task"),
    ({"models": ["nosuchmodel"]}, "unknown model"),
])
def test_unknown_names_are_rejected(tmp_path, kwargs, message):
    with pytest.raises(ValueError, match=message):
        run_comparison(out=str(tmp_path), progress=False, **kwargs)


@pytest.fixture(scope="module")
def sine_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("cmp")
    with open(out / "log.txt", "w", encoding="utf-8") as log:
        rows, folds = run_comparison(tasks=["sine"], models=["nw-gaussian", "attn-gaussian-1h",
                                                             "ridge"],
                                     quick=True, plots=True, progress=False, out=str(out),
                                     stream=log, return_folds=True)
    return out, rows, folds


def test_results_json_records_the_run_and_csv_leaves_missing_cells_empty(sine_run):
    import csv
    import json

    out, rows, _ = sine_run
    meta = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert meta["nlpfeat_version"] and meta["date"] and meta["seed"] == 0
    assert meta["options"]["quick"] is True and len(meta["rows"]) == len(rows)
    # AttentionRegressor with few epochs warns; the warning is reported, not hidden.
    assert any(w["category"] == "ConvergenceWarning" for w in meta["warnings"])
    assert "warnings raised while fitting" in (out / "log.txt").read_text(encoding="utf-8")
    with open(out / "results.csv", encoding="utf-8") as fh:
        ridge = next(r for r in csv.DictReader(fh) if r["model"] == "ridge")
    assert ridge["weight_kl"] == "" and ridge["weight_corr"] == ""


def test_the_harness_returns_its_folds(sine_run):
    from nlpfeat.compare._tasks import regression_cv, regression_data

    _, _, folds = sine_run
    X = regression_data("sine", True, 0)[0]
    expected = list(regression_cv(True, 0).split(X))
    assert len(folds["sine"]) == len(expected)
    for (train, test), (etrain, etest) in zip(folds["sine"], expected):
        np.testing.assert_array_equal(train, etrain)
        np.testing.assert_array_equal(test, etest)


def test_figures_are_titled_labelled_and_readable():
    pytest.importorskip("matplotlib")
    from nlpfeat.compare._figures import make_figures
    from nlpfeat._progress import progress_bar
    from nlpfeat.compare._harness import _run_regression, _Warnings

    store = {}
    _run_regression("sine", ["nw-gaussian", "attn-gaussian-1h", "attn-additive-1h"], True, 0,
                    progress_bar(0, "compare"), store, _Warnings())
    figures = make_figures(store)
    assert set(figures) == {"sine_fits.png", "attention_heatmaps.png", "bandwidth_curve.png"}
    for name, fig in figures.items():
        assert fig.get_suptitle() or all(ax.get_title() for ax in fig.axes), name
        assert "sine" in (fig.get_suptitle() + " ".join(ax.get_title() for ax in fig.axes))
    fits = figures["sine_fits.png"]
    panels = [ax for ax in fits.axes if ax.get_visible()]
    assert all("MSE" in ax.get_title() for ax in panels)
    assert all(ax.get_legend() is None for ax in panels) and fits.legends  # one shared legend
    heat = figures["attention_heatmaps.png"]
    images = [ax for ax in heat.axes if ax.images]
    colorbars = [ax for ax in heat.axes if not ax.images and ax.get_ylabel()]
    assert len(colorbars) == len(images) == 3
    assert all("weight" in ax.get_ylabel() for ax in colorbars)
    for ax in images:
        assert len([t for t in ax.get_xticklabels() if t.get_text()]) <= 8
        assert len([t for t in ax.get_yticklabels() if t.get_text()]) <= 8
        # each panel on its own scale: its colour range reaches its own maximum
        image = ax.images[0]
        assert image.get_clim()[1] == pytest.approx(image.get_array().max())
    curve = figures["bandwidth_curve.png"].axes[0]
    assert "gaussian" in curve.get_title().lower() and "sine" in curve.get_title()


def test_pandas_reads_typed_columns_from_the_csv_and_the_json_rows(sine_run):
    import json

    pd = pytest.importorskip("pandas")
    out, rows, _ = sine_run
    table = pd.read_csv(out / "results.csv")
    assert list(table.columns) == list(rows[0])
    kinds = {column: table[column].dtype.kind for column in table.columns}
    assert kinds == {"task": "O", "model": "O", "features": "O", "metric": "O",
                     "higher_is_better": "b", "mean": "f", "std": "f", "n_scores": "i",
                     "fit_seconds": "f", "predict_seconds": "f", "weight_kl": "f",
                     "weight_corr": "f"}, kinds
    ridge = table[table["model"] == "ridge"].iloc[0]
    assert np.isnan(ridge["weight_kl"]) and np.isnan(ridge["weight_corr"])
    with open(out / "results.json", encoding="utf-8") as fh:
        records = pd.DataFrame(json.load(fh)["rows"])
    assert {c: records[c].dtype.kind for c in records.columns} == kinds
    pd.testing.assert_frame_equal(records, table, check_exact=False, rtol=1e-12)
