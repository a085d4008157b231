"""Kernel regression at a million points: binned Nadaraya-Watson on the sine task.

Fits ``NadarayaWatsonRegressor(algorithm="binned")`` with the leave-one-out bandwidth
(30-point grid, scored on the grid) to 10^6 noisy samples of ``sin(2x)``, predicts 10^6
queries, and checks 2000 of them against the exact path (same bandwidth). With
matplotlib it writes ``binned_error_time.png`` to ``--out``: the error against the exact
path as a function of an explicit ``bins`` (and the default grid's), and the time of
fit + predict against n for the exact and the binned paths.

Run ``python examples/binned_million.py --quick`` for a fast run (2 x 10^4 points).
"""
import argparse
import importlib.util
import os
import time
import warnings

import numpy as np

from nlpfeat.kernels import NadarayaWatsonRegressor


def sine(rng, n):
    X = rng.uniform(-3, 3, size=(n, 1))
    return X, np.sin(2 * X[:, 0]) + 0.3 * rng.normal(size=n)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="2 x 10^4 points")
    parser.add_argument("--out", default="binned_million_out", help="figure folder")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    n = 20_000 if args.quick else 1_000_000
    X, y = sine(rng, n)
    Q = rng.uniform(-3.5, 3.5, size=(n, 1))
    t = time.perf_counter()
    model = NadarayaWatsonRegressor(bandwidth="loo", algorithm="binned").fit(X, y)
    pred = model.predict(Q)
    wall = time.perf_counter() - t
    print(f"n = {n}: bandwidth {model.bandwidth_:.4g} (leave-one-out on the grid), "
          f"fit + predict {n} queries in {wall:.2f} s wall")
    exact = NadarayaWatsonRegressor(bandwidth=model.bandwidth_, algorithm="brute").fit(X, y)
    check = exact.predict(Q[:2000])
    err = np.abs(pred[:2000] - check).max() / np.std(y)
    print(f"largest error of 2000 queries against the exact path: {err:.1e} x std(y) "
          f"(bound 1e-06)")
    if importlib.util.find_spec("matplotlib") is None:
        print("matplotlib is not installed: no figure")
        return
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    h = model.bandwidth_
    bins = [50, 100, 200, 400, 800, 1600, 3200]
    errors = []
    for b in bins:
        got = NadarayaWatsonRegressor(bandwidth=h, algorithm="binned", bins=b).fit(X, y)
        errors.append(max(np.abs(got.predict(Q[:2000]) - check).max() / np.std(y), 1e-17))
    sizes = [2000, 5000, 10_000, 20_000] if args.quick else [10**4, 3 * 10**4, 10**5,
                                                             3 * 10**5, 10**6]
    times = {"exact": [], "binned": []}
    for m in sizes:
        Xm, ym = sine(rng, m)
        for name in times:
            if name == "exact" and m > 2 * 10**5:
                times[name].append(np.nan)
                continue
            t = time.process_time()
            NadarayaWatsonRegressor(bandwidth=h, algorithm="brute" if name == "exact"
                                    else "binned").fit(Xm, ym).predict(Xm[:20_000])
            times[name].append(time.process_time() - t)
    os.makedirs(args.out, exist_ok=True)
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    a.loglog(bins, errors, "o-", label="explicit bins")
    a.axhline(err if err > 0 else 1e-17, color="C2", ls=":", label="default grid")
    a.axhline(1e-6, color="k", ls="--", lw=0.8, label="bound 1e-6")
    a.set(xlabel="bins (intervals across the data)", ylabel="max error / std(y)",
          title=f"error vs grid (n = {n}, h = {h:.3g})")
    a.legend()
    for name, style in (("exact", "s-"), ("binned", "o-")):
        b.loglog(sizes, times[name], style, label=name)
    b.set(xlabel="training points n", ylabel="CPU s, fit + predict 20 000 queries",
          title="time vs n")
    b.legend()
    fig.tight_layout()
    path = os.path.join(args.out, "binned_error_time.png")
    fig.savefig(path, dpi=90)
    print(f"wrote {path}")


if __name__ == "__main__":
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        main()
