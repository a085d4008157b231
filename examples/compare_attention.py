"""Kernel attention vs learned attention on the textbook sine task.

Nadaraya-Watson regression predicts f(x) = sum_i softmax_i(-(x - x_i)^2 / (2 h^2)) y_i: a
softmax attention whose query is x, whose keys are the training inputs x_i and whose
values the targets y_i, with ONE number to choose, the bandwidth h (here by leave-one-out).
:class:`nlpfeat.attention.AttentionRegressor` learns the score instead, by gradient
descent on the leave-one-out error:

* ``gaussian``: -((x - x_i) w)^2 / 2, a learned inverse bandwidth w (a learned metric);
* ``additive``: v^T tanh(W_q x + W_k x_i), a small MLP;
* ``scaled_dot``: (W_q x) . (W_k x_i) / sqrt(d_k), the transformer's score.

This script runs :func:`nlpfeat.compare.run_comparison` on the sine task (the same table as
``nlpfeat compare --task sine``: cross-validated MSE, fit and predict seconds, and how far
each learned model's weights are from the NW weights, as mean KL(NW || attention) and the
correlation of all weights), then refits NW and one model per score on all the data and
draws their attention maps over sorted training inputs. Expect the Gaussian score to
rediscover the kernel (a diagonal band, small KL) and the others not to, even where they
predict about as well: the additive score spreads its weight widely, and the dot-product
score cannot localise at all, since in one dimension q . k = (a x + b)(c x_i) is linear in
x_i, so its softmax can only favour one end of the data, never "points near x".

Usage::

    python examples/compare_attention.py            # all models, 200 points, 5-fold CV
    python examples/compare_attention.py --quick    # a few models, 60 points, 3-fold CV
"""
import argparse
import os
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

from nlpfeat.attention import AttentionRegressor
from nlpfeat.compare import run_comparison, weight_agreement
from nlpfeat.datasets import make_nw_regression
from nlpfeat.kernels import NadarayaWatsonRegressor

QUICK_MODELS = ["nw-gaussian", "nw-epanechnikov", "attn-gaussian-1h", "attn-additive-1h",
                "attn-scaled_dot-1h", "ridge"]
SCORES = ["gaussian", "additive", "scaled_dot"]


def attention_maps(X, y, queries, quick, seed):
    """name -> (n_queries, n_train) weights, columns in the order of X."""
    maps = {"Nadaraya-Watson (LOO bandwidth)":
            NadarayaWatsonRegressor(bandwidth="loo").fit(X, y).attention_weights(queries)}
    for score in SCORES:
        model = AttentionRegressor(score_func=score, n_heads=1, max_iter=30 if quick else 150,
                                   random_state=seed)
        with warnings.catch_warnings():
            if quick:  # 30 epochs are known to stop short of convergence
                warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(X, y)
        maps[f"attention, {score} score"] = model.attention_weights(queries)
    return {k: (w.toarray() if hasattr(w, "toarray") else np.asarray(w)) for k, w in maps.items()}


def save_heatmaps(maps, X, queries, out):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print('(heatmaps skipped: matplotlib is not installed; pip install "nlpfeat[viz]")')
        return
    from nlpfeat.viz import plot_attention

    order = np.argsort(X[:, 0], kind="stable")
    stack = np.stack([w[:, order] for w in maps.values()])
    fig, axes = plt.subplots(1, len(maps), figsize=(3.3 * len(maps) + 1, 3.6),
                             layout="constrained")
    plot_attention(stack, ax=axes, titles=list(maps), xlabel="training input x_i (sorted)",
                   ylabel="query x")
    step_q, step_x = max(1, len(queries) // 5), max(1, len(order) // 5)
    # One colour scale for every panel, square-root so that diffuse weights stay visible.
    norm = matplotlib.colors.PowerNorm(0.5, vmin=0.0, vmax=stack.max())
    for ax in axes:
        ax.images[0].set_norm(norm)
        ax.set_yticks(np.arange(0, len(queries), step_q),
                      labels=[f"{q:.1f}" for q in queries[::step_q, 0]])
        ax.set_xticks(np.arange(0, len(order), step_x),
                      labels=[f"{v:.1f}" for v in X[order][::step_x, 0]], rotation=0)
    fig.axes[-1].set_ylabel("attention weight (square-root scale)")
    fig.suptitle("Attention weights on the sine task: the kernel, and three learned scores")
    path = os.path.join(out, "compare_attention_heatmaps.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"saved {path}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="a few models, 60 points, 3 folds, 30 epochs (for CI)")
    parser.add_argument("--out", default="nlpfeat-examples",
                        help="output folder (default: ./nlpfeat-examples); the comparison's "
                        "CSV, JSON and figures go to its compare_sine/ subfolder")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    rows = run_comparison(tasks=["sine"], models=QUICK_MODELS if args.quick else None,
                          out=os.path.join(args.out, "compare_sine"), seed=args.seed,
                          quick=args.quick, progress=False)
    best = min(rows, key=lambda r: r["mean"])
    print(f"\nlowest CV MSE: {best['model']} ({best['mean']:.3f} ± {best['std']:.3f}); "
          "the noise variance is 0.25, the lowest MSE to expect on noisy targets.")

    X, y = make_nw_regression(60 if args.quick else 200, noise=0.5, random_state=args.seed)
    queries = np.linspace(0, 5, 41)[:, None]
    maps = attention_maps(X, y, queries, args.quick, args.seed)
    reference = maps["Nadaraya-Watson (LOO bandwidth)"]
    print("\nRefit on all the data; weights over the same 41 queries and training memory:")
    print(f"{'model':<34}{'KL(NW || model)':>16}{'corr(NW, model)':>17}")
    for name, w in list(maps.items())[1:]:
        kl, corr = weight_agreement(reference, w)
        print(f"{name:<34}{kl:>16.3f}{corr:>17.3f}")
    save_heatmaps(maps, X, queries, args.out)


if __name__ == "__main__":
    with threadpool_limits(1):      # small matrices: BLAS threads only contend
        main()
