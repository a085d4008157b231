"""Grid-search Nadaraya-Watson kernels x bandwidths with scikit-learn's GridSearchCV.

Two tasks:

1. the textbook toy curve ``y = 2 sin(x) + x^0.8 + noise`` (attention pooling as kernel
   regression), 1 feature;
2. scikit-learn's diabetes data (442 patients, 10 standardised features; ships with
   scikit-learn, nothing is downloaded), where the rule-of-thumb, leave-one-out and
   learned per-feature (``"loo-ard"``) bandwidths compete with fixed ones.

For each task the ranked table of cross-validated mean squared errors is printed. With
matplotlib installed, the fitted curves of the best bandwidth per kernel and the
attention-weight heatmap (test queries x training points, as in the textbook figure)
are saved as PNG files in ``--out`` (default ``./grid_search_kernels_out``).

Run ``python examples/grid_search_kernels.py --quick`` for a fast run.
"""
import argparse
import importlib.util
import os
import warnings

import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from nlpfeat.datasets import make_nw_regression
from nlpfeat.kernels import EmptySupportWarning, NadarayaWatsonRegressor


def ranked_table(search, n_rows=10):
    """The best ``n_rows`` parameter settings of a fitted GridSearchCV, as text lines."""
    res = search.cv_results_
    order = np.argsort(res["rank_test_score"], kind="stable")[:n_rows]
    lines = [f"{'rank':>4}  {'CV MSE':>10}  {'+/-':>9}  parameters"]
    for i in order:
        params = ", ".join(f"{k.split('__')[-1]}={_fmt(v)}" for k, v in res["params"][i].items())
        lines.append(f"{res['rank_test_score'][i]:>4}  {-res['mean_test_score'][i]:>10.4f}  "
                     f"{res['std_test_score'][i]:>9.4f}  {params}")
    return lines


def _fmt(value):
    return f"{value:.3g}" if isinstance(value, float) else str(value)


def search_textbook(kernels, bandwidths, n_samples=100):
    X, y = make_nw_regression(n_samples, random_state=0)
    grid = {"kernel": kernels, "bandwidth": list(bandwidths)}
    search = GridSearchCV(NadarayaWatsonRegressor(), grid, scoring="neg_mean_squared_error",
                          cv=KFold(5, shuffle=True, random_state=0)).fit(X, y)
    return search, X, y


def search_diabetes(kernels, bandwidths):
    X, y = load_diabetes(return_X_y=True)
    pipe = make_pipeline(StandardScaler(), NadarayaWatsonRegressor())
    key = "nadarayawatsonregressor__"
    smooth = [k for k in kernels if k in ("gaussian", "laplacian", "logistic", "sigmoid")]
    grid = [{key + "kernel": kernels, key + "bandwidth": list(bandwidths) + ["scott", "loo"]},
            {key + "kernel": smooth, key + "bandwidth": ["loo-ard"]}]  # learned, per feature
    return GridSearchCV(pipe, grid, scoring="neg_mean_squared_error",
                        cv=KFold(5, shuffle=True, random_state=0)).fit(X, y)


def curves_figure(search, X, y, grid_x):
    """The fitted curves of the best bandwidth per kernel over the training data."""
    import matplotlib.pyplot as plt

    res = search.cv_results_
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.scatter(X[:, 0], y, s=10, color="gray", alpha=0.6, label="training data")
    ax.plot(grid_x[:, 0], 2 * np.sin(grid_x[:, 0]) + grid_x[:, 0] ** 0.8, "k--", lw=1,
            label="truth")
    for kernel in dict.fromkeys(p["kernel"] for p in res["params"]):
        idx = [i for i, p in enumerate(res["params"]) if p["kernel"] == kernel]
        best = res["params"][max(idx, key=lambda i: res["mean_test_score"][i])]
        reg = NadarayaWatsonRegressor(**best, on_empty="mean").fit(X, y)
        ax.plot(grid_x[:, 0], reg.predict(grid_x), lw=1.2,
                label=f"{kernel} (h={best['bandwidth']:.3g})")
    ax.set(xlabel="x", ylabel="y", title="Nadaraya-Watson fits, best bandwidth per kernel")
    # Outside the axes, on the right: inside, the legend of 10 curves covered the data.
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
    return fig


def save_figures(search, X, y, out_dir):
    """Fitted curves (best bandwidth per kernel) and the attention-weight heatmap."""
    import matplotlib.pyplot as plt

    from nlpfeat.viz import plot_attention

    order = np.argsort(X[:, 0])
    grid_x = np.linspace(0, 5, 200)[:, None]
    curves = os.path.join(out_dir, "nw_fitted_curves.png")
    curves_figure(search, X, y, grid_x).savefig(curves, dpi=120, bbox_inches="tight")
    best = search.best_estimator_
    weights = best.attention_weights(grid_x[::4])[:, order]
    fig = plot_attention(weights, xlabel="training inputs (sorted)", ylabel="test queries")
    fig.suptitle(f"attention weights: {best.kernel} kernel, h={best.bandwidth_:.3g}")
    heatmap = os.path.join(out_dir, "nw_attention_heatmap.png")
    fig.savefig(heatmap, dpi=120, bbox_inches="tight")
    plt.close("all")
    return [curves, heatmap]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller grids, faster run")
    parser.add_argument("--out", default="grid_search_kernels_out",
                        help="directory for the figures (created if missing)")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore", EmptySupportWarning)
    if args.quick:
        kernels = ["gaussian", "epanechnikov", "laplacian"]
        bandwidths = np.geomspace(0.1, 1.0, 4)
    else:
        kernels = ["gaussian", "epanechnikov", "tophat", "triangular", "tricube", "cosine",
                   "laplacian", "logistic", "sigmoid"]
        bandwidths = np.geomspace(0.05, 2.0, 12)
    search, X, y = search_textbook(kernels, bandwidths)
    print("Textbook task (y = 2 sin(x) + x^0.8 + noise), 5-fold CV, ranked:")
    print("\n".join(ranked_table(search)))
    diabetes = search_diabetes(["gaussian"] if args.quick else
                               ["gaussian", "epanechnikov", "tricube", "laplacian"],
                               [1.0, 4.0] if args.quick else np.geomspace(0.5, 8.0, 5))
    print("\nDiabetes (442 x 10, standardised), 5-fold CV, ranked:")
    print("\n".join(ranked_table(diabetes)))
    if importlib.util.find_spec("matplotlib") is None:
        print("\nmatplotlib is not installed: no figures (pip install 'nlpfeat[viz]').")
        return
    os.makedirs(args.out, exist_ok=True)
    for path in save_figures(search, X, y, args.out):
        print(f"saved {path}")


if __name__ == "__main__":
    with threadpool_limits(1):      # small matrices: BLAS threads only contend
        main()
