"""Grid-search Nadaraya-Watson kernels x bandwidths on a Dask cluster through joblib.

scikit-learn's ``GridSearchCV`` runs its fits through joblib; inside
``joblib.parallel_backend("dask")`` with ``n_jobs=-1`` each (candidate, fold) fit and
score becomes a task of the Dask cluster that the active ``distributed.Client`` points
at, so a grid search spreads over the workers of one machine or of many without a
change to the search itself. Nothing else differs: the table of cross-validated scores
(``cv_results_``) equals the one of the same search run in this process, which this
script checks. With matplotlib installed, the cross-validated error against the bandwidth,
per kernel, of both searches (the in-process one drawn over the Dask one) is saved as
``grid_search_dask.png`` in ``--out``.

Data: scikit-learn's diabetes set (442 patients, 10 standardised features; it ships with
scikit-learn, nothing is downloaded). Needs the ``dask`` extra
(``pip install "nlpfeat[dask]"``).

Run ``python examples/grid_search_dask.py --quick`` (a local cluster of 2 worker
processes), or ``--scheduler tcp://host:8786`` to use a running cluster whose workers
have nlpfeat installed.
"""
import argparse
import importlib.util
import time
import warnings

import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from nlpfeat.kernels import EmptySupportWarning, NadarayaWatsonRegressor

#: cv_results_ columns that hold measured times, which differ from run to run.
TIMING_KEYS = ("mean_fit_time", "std_fit_time", "mean_score_time", "std_score_time")


def grid_search(kernels, bandwidths, *, n_jobs=None):
    """A fitted ``GridSearchCV`` over ``kernels`` x ``bandwidths`` on the diabetes data,
    run by whatever joblib backend is active."""
    X, y = load_diabetes(return_X_y=True)
    pipe = make_pipeline(StandardScaler(), NadarayaWatsonRegressor(on_empty="mean"))
    key = "nadarayawatsonregressor__"
    grid = {key + "kernel": list(kernels), key + "bandwidth": list(bandwidths)}
    search = GridSearchCV(pipe, grid, scoring="neg_mean_squared_error", n_jobs=n_jobs,
                          cv=KFold(5, shuffle=True, random_state=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EmptySupportWarning)
        return search.fit(X, y)


def same_results(a, b, rtol=1e-12):
    """Whether two searches' ``cv_results_`` agree: the same keys and parameters, and
    scores and ranks equal (scores to ``rtol``; the timing columns are left out)."""
    ra, rb = a.cv_results_, b.cv_results_
    if set(ra) != set(rb) or ra["params"] != rb["params"]:
        return False
    for name in ra:
        if name in TIMING_KEYS or name == "params" or name.startswith("param_"):
            continue
        x, y = np.asarray(ra[name]), np.asarray(rb[name])
        if x.shape != y.shape or not (np.array_equal(x, y) if x.dtype.kind in "iub"
                                      else np.allclose(x, y, rtol=rtol, atol=0)):
            return False
    return True


def ranked_table(search, n_rows=8):
    """The best ``n_rows`` settings of a fitted search, as text lines."""
    res = search.cv_results_
    lines = [f"{'rank':>4}  {'CV MSE':>10}  {'+/-':>9}  kernel, bandwidth"]
    for i in np.argsort(res["rank_test_score"], kind="stable")[:n_rows]:
        params = res["params"][i]
        lines.append(f"{res['rank_test_score'][i]:>4}  {-res['mean_test_score'][i]:>10.1f}  "
                     f"{res['std_test_score'][i]:>9.1f}  "
                     f"{params['nadarayawatsonregressor__kernel']}, "
                     f"{params['nadarayawatsonregressor__bandwidth']:.3g}")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smaller grid, faster run")
    parser.add_argument("--scheduler", default=None,
                        help="address of a running Dask scheduler (default: start a local "
                        "cluster)")
    parser.add_argument("--n-workers", type=int, default=2,
                        help="worker processes of the local cluster")
    parser.add_argument("--out", default="nlpfeat-examples",
                        help="folder for the figure (default: ./nlpfeat-examples)")
    args = parser.parse_args(argv)
    import joblib
    from distributed import Client, LocalCluster

    if args.quick:
        kernels, bandwidths = ["gaussian", "epanechnikov"], np.geomspace(1.0, 8.0, 4)
    else:
        kernels = ["gaussian", "epanechnikov", "tricube", "laplacian", "cosine"]
        bandwidths = np.geomspace(0.5, 16.0, 11)
    if args.scheduler:
        cluster, client = None, Client(args.scheduler)
    else:
        cluster = LocalCluster(n_workers=args.n_workers, threads_per_worker=1,
                               processes=True, dashboard_address=":0")
        client = Client(cluster)
    try:
        n_workers = len(client.scheduler_info()["workers"])
        start = time.perf_counter()
        with joblib.parallel_backend("dask"):
            on_dask = grid_search(kernels, bandwidths, n_jobs=-1)
        seconds = time.perf_counter() - start
    finally:
        client.close()
        if cluster is not None:
            stop_workers(cluster)
            cluster.close()
    n_fits = len(on_dask.cv_results_["params"]) * on_dask.n_splits_
    print(f"Diabetes (442 x 10, standardised), {len(kernels)} kernels x {len(bandwidths)} "
          f"bandwidths, 5-fold CV: {n_fits} fits on {n_workers} Dask worker(s) in "
          f"{seconds:.1f} s; ranked:")
    print("\n".join(ranked_table(on_dask)))
    in_process = grid_search(kernels, bandwidths)
    agree = same_results(on_dask, in_process)
    print(f"\ncv_results_ equal the in-process search: {'yes' if agree else 'NO'}")
    if not agree:
        raise SystemExit(1)
    save_figure(on_dask, in_process, args.out)


def save_figure(on_dask, in_process, out):
    """CV error against the bandwidth per kernel: the Dask search, the in-process one over it."""
    if importlib.util.find_spec("matplotlib") is None:
        print('\n(figure skipped: matplotlib is not installed; pip install "nlpfeat[viz]")')
        return
    import matplotlib
    import matplotlib.pyplot as plt

    from nlpfeat import viz

    key = "param_nadarayawatsonregressor__"
    fig, ax = plt.subplots(figsize=(8.5, 4), layout="constrained")
    for i, kernel in enumerate(dict.fromkeys(on_dask.cv_results_[key + "kernel"])):
        for search, style, label in [(on_dask, dict(fmt="o-", capsize=3), "Dask"),
                                     (in_process, dict(fmt="x", ms=9), "in process")]:
            res = search.cv_results_
            at = np.flatnonzero(np.asarray(res[key + "kernel"]) == kernel)
            ax.errorbar(np.asarray(res[key + "bandwidth"], dtype=float)[at],
                        -res["mean_test_score"][at],
                        yerr=res["std_test_score"][at] if label == "Dask" else None,
                        color=f"C{i}", label=f"{kernel}, {label}", **style)
    best = on_dask.best_params_
    ax.axvline(best["nadarayawatsonregressor__bandwidth"], color="k", ls=":", lw=1,
               label=f"best: {best['nadarayawatsonregressor__kernel']}")
    ax.set_xscale("log")
    for axis in (ax.xaxis.set_major_formatter, ax.xaxis.set_minor_formatter):
        axis(matplotlib.ticker.StrMethodFormatter("{x:g}"))
    ax.set(xlabel="bandwidth (standardised features)", ylabel="CV mean squared error",
           title="Diabetes: NW grid search on Dask (bars: std over folds)")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
    path = viz.save_figure(fig, out, "grid_search_dask.png", dpi=100)
    print(f"\nsaved {path}")


def stop_workers(cluster, timeout=60):
    """Close a LocalCluster's worker processes, each given ``timeout`` seconds to exit.

    ``cluster.close()`` gives them 4 s, then kills them with "Worker process still alive
    after 4.0 seconds, killing" on a busy machine; closed first, none is killed.
    """
    import asyncio

    async def close_all():
        await asyncio.gather(*(worker.close(timeout=timeout)
                               for worker in list(cluster.workers.values())))

    cluster.sync(close_all)


if __name__ == "__main__":
    with threadpool_limits(1):      # small matrices: BLAS threads only contend
        main()
